#pragma once
/// \file
/// \brief What a process sets before MPI_Init so that Open MPI does not load transport
/// libraries for hardware the machine does not have, nor a file component that fails on
/// long paths.
///
/// Open MPI's cm point-to-point layer opens every MTL component it finds when it starts.
/// Debian's Open MPI 4.1 ships the PSM (TrueScale) and PSM2 (Omni-Path) MTLs, and loading
/// their libraries runs constructors that calibrate a clock with ~450 sleeps of 125 us:
/// about 0.1 s each, in every rank's MPI_Init, on machines without that hardware too.
/// The components then give up at once (PSM needs /dev/ipath, PSM2 a /dev/hfi1_N). Leaving
/// them out of the MTL list where their device is absent changes no choice Open MPI makes;
/// it only skips the loads (docs/design.md, "Start-up and exit").

#include <string>

namespace shardops {

/// \brief Call before MPI_Init (not collective): whether this process starts MPI. A job of
/// one rank does not: every collective of a one-rank Comm (Comm::self()) is local, and
/// HDF5's serial driver reads and writes its files, so it is spared MPI_Init and
/// MPI_Finalize (tens of ms, most of what a small job costs above the launcher's own start).
/// The launcher's environment gives the job's rank count (Open MPI's OMPI_COMM_WORLD_SIZE,
/// PMI_SIZE, a Slurm step's SLURM_STEP_NUM_TASKS); a process that no launcher started is a
/// job of one rank, as MPI_Init would make it. MPI starts where a launcher names no size
/// (PMIx alone), and with SHARDOPS_ONE_RANK_MPI=1.
bool mpi_needed() noexcept;

/// \brief Call before MPI_Init (not collective). With Open MPI, where neither the environment
/// nor Open MPI's parameter files choose the MTLs by name, adds the MTLs whose device is
/// absent to the excluded ones by setting OMPI_MCA_mtl, keeping every exclusion the
/// parameter files make. Does nothing with another MPI, after MPI_Init, where the user set
/// OMPI_MCA_mtl or OMPI_MCA_pml, where a parameter file cannot be read or names MTLs to
/// include, or with SHARDOPS_SKIP_ABSENT_MTLS=0.
/// \return the value given to OMPI_MCA_mtl, or "" when nothing was set
std::string skip_absent_mtls() noexcept;

/// \brief Call before MPI_Init (not collective). With Open MPI, where neither the environment
/// nor Open MPI's parameter files choose the shared-file-pointer components, leaves out the
/// two that name files after the file opened (OMPI_MCA_sharedfp=^lockedfile,sm). Open MPI
/// 4.1's MPI-IO sets one up at every MPI_File_open, though shardops uses no shared file
/// pointer: lockedfile copies the file's path into a 256-byte buffer (a path longer than
/// about 240 bytes aborted the process) and creates "NAME.locktest.RANK" beside the file, an
/// input's folder included; sm maps "NAME_cid-N-PID.sm" in the session folder, which fails
/// for file names of about 240 bytes. What is left, individual, sets up nothing for a file
/// opened to read, and for one opened to write, two files beside it that go when it closes.
/// \return the value given to OMPI_MCA_sharedfp, or "" when nothing was set
std::string skip_path_bound_sharedfp() noexcept;

}  // namespace shardops
