#pragma once
/// \file
/// \brief Whether MPI may be handed MemSpace pointers, or the exchange stages its
/// buffers through host memory.
///
/// Host-accessible memory needs no decision: MPI reads it directly. For device
/// memory: the environment variable SHARDOPS_GPU_AWARE_MPI=0/1 wins, then the build
/// option SHARDOPS_ENABLE_GPU_AWARE_MPI, then what Open MPI reports about CUDA
/// support (MPIX_Query_cuda_support) at run time; otherwise stage through host
/// mirrors.
///
/// The environment variable SHARDOPS_MPI_STAGING overrides all of that:
/// - `host`: always stage, whatever the memory. The exchange packs in MemSpace,
///   copies the rows for other ranks into a separate host buffer, calls MPI on host
///   buffers and copies what it received back into MemSpace. With host memory this
///   is only slower, and it is how a host-only build tests the path that a GPU
///   without GPU-aware MPI takes.
/// - unset, empty or `auto`: the rules above.
/// - anything else: shardops::InvalidArgument when an exchange asks.
/// Both variables are read at every exchange. Ranks may decide differently (each
/// stages only its own buffers), but an unknown value throws only where it is seen:
/// give every rank the same environment.

namespace shardops {

/// True when MPI gets MemSpace pointers: MemSpace is host-accessible or MPI is
/// GPU-aware, and SHARDOPS_MPI_STAGING does not ask for host staging.
bool mpi_takes_memspace_pointers();

/// True when SHARDOPS_MPI_STAGING=host forces host staging.
bool mpi_staging_forced();

/// For tests and reports: the decision for device memory alone (SHARDOPS_MPI_STAGING
/// aside).
bool gpu_aware_mpi_enabled();

}  // namespace shardops
