#include "shardops/route/GpuAwareMpi.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "shardops/core/Error.hpp"
#include "shardops/core/Kokkos.hpp"
#include "shardops/core/Settings.hpp"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

namespace shardops {

bool gpu_aware_mpi_enabled() {
  if (const std::optional<bool> chosen = switch_setting("SHARDOPS_GPU_AWARE_MPI")) return *chosen;
#ifdef SHARDOPS_ENABLE_GPU_AWARE_MPI
  return true;
#elif defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

bool mpi_staging_forced() { return word_setting("SHARDOPS_MPI_STAGING").value_or("auto") == "host"; }

bool RouteOptions::mpi_takes_memspace_pointers() const {
  if (stage_through_host) return false;
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) return true;
  return gpu_aware_mpi;
}

std::int64_t RouteOptions::rows_per_round() const {
  return std::max<std::int64_t>(1, std::min<std::int64_t>(max_rows_per_round, INT_MAX));
}

}  // namespace shardops
