#include "shardops/route/GpuAwareMpi.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "shardops/core/Error.hpp"
#include "shardops/core/Kokkos.hpp"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

namespace shardops {

bool gpu_aware_mpi_enabled() {
  if (const char* env = std::getenv("SHARDOPS_GPU_AWARE_MPI")) {
    const std::string v(env);
    return !(v.empty() || v == "0" || v == "false" || v == "no" || v == "off");
  }
#ifdef SHARDOPS_ENABLE_GPU_AWARE_MPI
  return true;
#elif defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

bool mpi_staging_forced() {
  const char* env = std::getenv("SHARDOPS_MPI_STAGING");
  if (env == nullptr) return false;
  const std::string v(env);
  if (v == "host") return true;
  if (v.empty() || v == "auto") return false;
  throw InvalidArgument("SHARDOPS_MPI_STAGING='" + v +
                        "': use host (always stage MPI buffers through host memory) or auto");
}

bool RouteOptions::mpi_takes_memspace_pointers() const {
  if (stage_through_host) return false;
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) return true;
  return gpu_aware_mpi;
}

std::int64_t RouteOptions::rows_per_round() const {
  return std::max<std::int64_t>(1, std::min<std::int64_t>(max_rows_per_round, INT_MAX));
}

}  // namespace shardops
