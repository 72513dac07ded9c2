#pragma once
/// \file
/// \brief How a route hands its buffers to MPI: RouteOptions, and the environment
/// variables a default RouteOptions reads once, when it is made.
///
/// Host-accessible memory needs no decision: MPI reads it directly. For device
/// memory: SHARDOPS_GPU_AWARE_MPI=0/1 wins, then the build option
/// SHARDOPS_ENABLE_GPU_AWARE_MPI, then what Open MPI reports about CUDA support
/// (MPIX_Query_cuda_support) at run time; otherwise stage through host mirrors.
///
/// SHARDOPS_MPI_STAGING overrides all of that:
/// - `host`: always stage, whatever the memory. The exchange packs in MemSpace,
///   copies the rows for other ranks into a separate host buffer, calls MPI on host
///   buffers and copies what it received back into MemSpace. With host memory this
///   is only slower, and it is how a host-only build tests the path that a GPU
///   without GPU-aware MPI takes.
/// - unset, empty or `auto`: the rules above.
/// - anything else: shardops::InvalidArgument when a RouteOptions is made.
/// Ranks may decide differently (each stages only its own buffers), but an unknown
/// value throws only where it is seen: give every rank the same environment.

#include <climits>
#include <cstdint>

namespace shardops {

/// True when SHARDOPS_MPI_STAGING=host asks for host staging (read now).
bool mpi_staging_forced();

/// The decision for device memory alone, SHARDOPS_MPI_STAGING aside (read now).
bool gpu_aware_mpi_enabled();

/// \brief The settings of a route. A default one reads the environment (see the file
/// comment) once, when it is made; a route keeps the copy it was built with.
struct RouteOptions {
  /// Copy the rows for other ranks through host buffers around every MPI call.
  bool stage_through_host = mpi_staging_forced();
  /// MPI may read device memory (ignored when the memory is host memory).
  bool gpu_aware_mpi = gpu_aware_mpi_enabled();
  /// Largest rows in one message (per peer) and in one Alltoallv (in all); tests lower
  /// it to split an exchange into rounds. Default: what fits in an int.
  std::int64_t max_rows_per_round = INT_MAX;

  /// True when MPI gets MemSpace pointers: MemSpace is host-accessible or MPI is
  /// GPU-aware, and host staging is not asked for.
  bool mpi_takes_memspace_pointers() const;
  /// max_rows_per_round clamped to [1, INT_MAX].
  std::int64_t rows_per_round() const;
};

}  // namespace shardops
