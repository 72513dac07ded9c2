#pragma once
/// \file
/// \brief Combine update rows into target rows in index order: ScatterNd (sum) and
/// TensorScatterAdd/Sub/Min/Max.
///
/// Float sums depend on order, so the result is TensorFlow's only if every target
/// row sees its updates in index order. Sequential schedule: one in-order pass (with
/// prefetch: random targets are latency bound). Parallel schedule: a stable LSD radix
/// sort of update rows by target row (BucketSort, 8 bits a pass), then one thread per
/// target row applies its run in order. No floating-point atomics on either path.

#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Kokkos.hpp"
#include "shardops/kernels/BatchRows.hpp"
#include "shardops/kernels/BucketSort.hpp"
#include "shardops/kernels/Schedule.hpp"

namespace shardops {
namespace kernels {

/// \brief Rows [0, n) ordered stably by target_of(i); rows with target -1 dropped.
/// Returns the permutation and the sorted targets (both of length kept).
template <class ExecSpace>
struct SortedByTarget {
  using Mem = typename ExecSpace::memory_space;
  Kokkos::View<std::int64_t*, Mem> perm;
  Kokkos::View<std::int64_t*, Mem> target;
  std::int64_t kept = 0;
};

namespace detail {
template <class Mem>
struct DigitOf {
  Kokkos::View<std::int64_t*, Mem> key;
  int shift;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t j) const { return (key(j) >> shift) & 0xff; }
};
template <class TargetOf>
struct FirstDigitOf {
  TargetOf target_of;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const {
    const std::int64_t t = target_of(i);
    return t < 0 ? -1 : (t & 0xff);
  }
};
}  // namespace detail

template <class ExecSpace, class TargetOf>
SortedByTarget<ExecSpace> sort_by_target(const ExecSpace& space, std::int64_t n, std::int64_t num_targets,
                                         const TargetOf& target_of) {
  using Mem = typename ExecSpace::memory_space;
  using Index = Kokkos::View<std::int64_t*, Mem>;
  const std::string label = "shardops::sort_by_target";
  int passes = 1;
  while (passes < 8 && (num_targets - 1) >> (8 * passes) > 0) ++passes;

  // Pass 0 reads the targets through target_of and drops the rows without one.
  const detail::FirstDigitOf<TargetOf> first{target_of};
  auto layout = bucket_layout(space, n, 256, first, label);
  Index perm = allocate_uninitialized<Index>(label + "::perm", static_cast<std::size_t>(layout.total));
  Index key = allocate_uninitialized<Index>(label + "::key", static_cast<std::size_t>(layout.total));
  {
    auto place = KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t slot) {
      perm(slot) = i;
      key(slot) = target_of(i);
    };
    bucket_place(space, layout, first, place, label);
  }
  const std::int64_t kept = layout.total;
  Index perm2 = allocate_uninitialized<Index>(label + "::perm2", static_cast<std::size_t>(kept));
  Index key2 = allocate_uninitialized<Index>(label + "::key2", static_cast<std::size_t>(kept));
  for (int p = 1; p < passes; ++p) {
    const detail::DigitOf<Mem> digit{key, 8 * p};
    auto pass_layout = bucket_layout(space, kept, 256, digit, label);
    Index src_perm = perm, src_key = key, dst_perm = perm2, dst_key = key2;
    auto place = KOKKOS_LAMBDA(const std::int64_t j, const std::int64_t slot) {
      dst_perm(slot) = src_perm(j);
      dst_key(slot) = src_key(j);
    };
    bucket_place(space, pass_layout, digit, place, label);
    kx::swap(perm, perm2);
    kx::swap(key, key2);
  }
  space.fence();
  return SortedByTarget<ExecSpace>{perm, key, kept};
}

/// \brief out[target_of(i)] = Combine(out[target_of(i)], upd[row_of(i)]) for i in
/// [0, n) in order (row_of: which row of \p upd entry i reads, see BatchRows.hpp).
/// Returns how many entries had no target (-1: not counted, for rows of no elements),
/// so a caller can check for bad indices without a pass of its own.
/// \tparam Combine CombineAdd / CombineSub / CombineMin / CombineMax.
template <class Combine, class ExecSpace, class T, class TargetOf, class RowOf = SameRow>
std::int64_t accumulate_rows(const ExecSpace& space, Schedule schedule, std::int64_t n, const TargetOf& target_of,
                             const MatrixView<const T, typename ExecSpace::memory_space>& upd,
                             const MatrixView<T, typename ExecSpace::memory_space>& out,
                             const RowOf& row_of = RowOf()) {
  const std::int64_t width = static_cast<std::int64_t>(out.extent(1));
  if (n == 0) return 0;
  if (width == 0) return -1;
  T* dst = out.data();
  const T* src = upd.data();
  if (resolve(schedule, space) == Schedule::Sequential) {
    std::int64_t skipped = 0;
    Kokkos::parallel_reduce(
        "shardops::accumulate::sequential", Kokkos::RangePolicy<ExecSpace>(space, 0, 1),
        KOKKOS_LAMBDA(const std::int64_t, std::int64_t& none) {
          constexpr std::int64_t ahead = 16;
          for (std::int64_t i = 0; i < n; ++i) {
            if (i + ahead < n) {
              const std::int64_t tp = target_of(i + ahead);
              if (tp >= 0) SHARDOPS_PREFETCH_WRITE(dst + tp * width);
            }
            prefetch_source_row(row_of, i, n, ahead, src, width);
            const std::int64_t t = target_of(i);
            if (t < 0) {
              ++none;
              continue;
            }
            T* o = dst + t * width;
            const T* u = src + row_of(i) * width;
            Combine::apply_row(o, u, width);
          }
        },
        skipped);
    return skipped;
  }
  const SortedByTarget<ExecSpace> sorted =
      sort_by_target(space, n, static_cast<std::int64_t>(out.extent(0)), target_of);
  auto perm = sorted.perm;
  auto key = sorted.target;
  const std::int64_t kept = sorted.kept;
  Kokkos::parallel_for(
      "shardops::accumulate::runs", Kokkos::RangePolicy<ExecSpace>(space, 0, kept),
      KOKKOS_LAMBDA(const std::int64_t j) {
        const std::int64_t t = key(j);
        if (j > 0 && key(j - 1) == t) return;  // not the start of a run
        T* o = dst + t * width;
        for (std::int64_t r = j; r < kept && key(r) == t; ++r) {
          const T* u = src + row_of(perm(r)) * width;
          Combine::apply_row(o, u, width);
        }
      });
  return n - kept;
}

}  // namespace kernels
}  // namespace shardops
