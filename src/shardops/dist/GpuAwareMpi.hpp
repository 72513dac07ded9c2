#pragma once
/// \file
/// \brief Whether MPI may be handed device pointers. Host-accessible memory needs no
/// decision. For device memory: the environment variable SHARDOPS_GPU_AWARE_MPI=0/1
/// wins, then the build option SHARDOPS_ENABLE_GPU_AWARE_MPI, then what Open MPI
/// reports about CUDA support (MPIX_Query_cuda_support) at run time; otherwise stage
/// through host mirrors.

namespace shardops {

/// True when MemSpace is host-accessible, or device pointers may go to MPI.
bool mpi_takes_memspace_pointers();

/// For tests and reports: the decision for device memory alone.
bool gpu_aware_mpi_enabled();

}  // namespace shardops
