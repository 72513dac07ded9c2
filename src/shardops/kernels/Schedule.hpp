#pragma once
/// \file
/// \brief How the order-dependent kernels (assign-last-wins, accumulate) run.

#include "shardops/kokkos_ext/KokkosExt.hpp"

namespace shardops {

/// \brief Both schedules give TensorFlow's sequential result bit for bit.
enum class Schedule {
  Auto,        ///< Sequential on a one-thread space, Parallel otherwise
  Sequential,  ///< one pass in index order: the fastest on one thread
  Parallel,    ///< stable sort by target row, then one thread per row applies its run in order
};

namespace kernels {
template <class ExecSpace>
Schedule resolve(Schedule s, const ExecSpace& space) {
  if (s != Schedule::Auto) return s;
  return kx::concurrency(space) == 1 ? Schedule::Sequential : Schedule::Parallel;
}
}  // namespace kernels

}  // namespace shardops
