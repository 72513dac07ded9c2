#pragma once
/// \file
/// \brief First / last row satisfying a predicate: how kernels report bad indices
/// without throwing (TF reports the first bad partition/stitch index and the last
/// bad scatter/gather index, so both are needed).

#include <cstdint>
#include <limits>
#include <string>

#include <Kokkos_Core.hpp>

namespace shardops {
namespace kernels {

/// \brief Predicate f(i) < 0: a row without a target (a bad index). A named functor,
/// so that code inside a generic lambda (the dtype dispatch) can build one: nvcc
/// rejects a KOKKOS_LAMBDA defined inside a generic lambda.
template <class F>
struct Negative {
  F f;
  KOKKOS_INLINE_FUNCTION bool operator()(const std::int64_t i) const { return f(i) < 0; }
};
template <class F>
Negative<F> negative(const F& f) {
  return Negative<F>{f};
}

/// Smallest i in [0, n) with pred(i), or -1.
template <class ExecSpace, class Pred>
std::int64_t first_where(const ExecSpace& space, std::int64_t n, const Pred& pred, const std::string& label) {
  constexpr std::int64_t none = std::numeric_limits<std::int64_t>::max();
  std::int64_t found = none;
  Kokkos::parallel_reduce(
      label, Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& m) {
        if (i < m && pred(i)) m = i;
      },
      Kokkos::Min<std::int64_t>(found));
  return found == none ? -1 : found;
}

/// Largest i in [0, n) with pred(i), or -1.
template <class ExecSpace, class Pred>
std::int64_t last_where(const ExecSpace& space, std::int64_t n, const Pred& pred, const std::string& label) {
  std::int64_t found = -1;
  Kokkos::parallel_reduce(
      label, Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& m) {
        // Each thread visits its i in increasing order: a branch-free select keeps
        // the common all-valid scan a plain streaming loop.
        m = pred(i) ? (i > m ? i : m) : m;
      },
      Kokkos::Max<std::int64_t>(found));
  return found < 0 ? -1 : found;
}

}  // namespace kernels
}  // namespace shardops
