#pragma once
/// \file
/// \brief Kernels and helpers over string tensors' handles and pools
/// (core/StringPool.hpp): building pools, merging them, compacting them, and
/// ScatterNd's concatenation of duplicates.

#include <cstdint>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include "shardops/core/HostMemory.hpp"
#include "shardops/core/StringTensor.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/kernels/BucketSort.hpp"

namespace shardops {

/// \p t with a new pool holding exactly its strings, one entry per element in
/// element order, homed at \p home (handles must name t's own pool).
Tensor compact_strings(const Tensor& t, int home);

/// Copies of \p inputs (string tensors of one home) whose handles all name one
/// pool: the inputs' pools back to back. Ops that mix elements of several inputs
/// (stitch, tensor-scatter-update) run on these. Inputs sharing a pool keep it.
std::vector<Tensor> share_string_pool(const std::vector<Tensor>& inputs);

namespace kernels {

/// \brief offsets(i) = length_of(0) + ... + length_of(i - 1) for i in [0, n] (a new
/// View of n + 1 entries): the offsets of a pool whose entry i is length_of(i) long.
/// Returns the View; \p total receives the last offset.
template <class LengthOf>
Kokkos::View<std::int64_t*, MemSpace> offsets_of(const ExecSpace& space, std::int64_t n, const LengthOf& length_of,
                                                 std::int64_t& total, const std::string& label) {
  const auto offsets =
      allocate_uninitialized<Kokkos::View<std::int64_t*, MemSpace>>(label, static_cast<std::size_t>(n + 1));
  total = 0;
  Kokkos::parallel_scan(
      label, Kokkos::RangePolicy<ExecSpace>(space, 0, n + 1),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& partial, const bool final) {
        if (final) offsets(i) = partial;
        if (i < n) partial += length_of(i);
      },
      total);
  return offsets;
}

/// Pool entry \p entry's length.
KOKKOS_INLINE_FUNCTION std::int64_t entry_length(const Kokkos::View<const std::int64_t*, MemSpace>& offsets,
                                                 const StringHandle h) {
  if (h == 0) return 0;
  const std::int64_t e = string_handle_entry(h);
  return offsets(e + 1) - offsets(e);
}

}  // namespace kernels

/// \brief ScatterNd on strings: \p out_elems = out_rows x slice empty strings, then
/// each update row i with target(i) >= 0 appended to row target(i), element by
/// element, in row order ("b" then "c" at one index gives "bc"). \p updates is
/// [n, slice] with every handle in its own pool. The result has a fresh pool homed
/// at \p home.
template <class TargetOf>
Tensor concat_strings_by_target(const ExecSpace& space, std::int64_t n, const TargetOf& target, const Tensor& updates,
                                const Shape& out_shape, std::int64_t out_rows, std::int64_t slice, int home);

/// The non-template part of concat_strings_by_target: rows already grouped by
/// target (\p order: update rows, bucket t = order[begin[t], begin[t+1])).
Tensor concat_grouped_strings(const ExecSpace& space, const Kokkos::View<std::int64_t*, MemSpace>& order,
                              const Kokkos::View<std::int64_t*, MemSpace>& begin, const Tensor& updates,
                              const Shape& out_shape, std::int64_t out_rows, std::int64_t slice, int home);

template <class TargetOf>
Tensor concat_strings_by_target(const ExecSpace& space, std::int64_t n, const TargetOf& target, const Tensor& updates,
                                const Shape& out_shape, std::int64_t out_rows, std::int64_t slice, int home) {
  // A stable counting sort of the update rows by target keeps each target's rows in
  // index order: the order TF concatenates them in.
  auto bucket_of = KOKKOS_LAMBDA(const std::int64_t i)->std::int64_t { return target(i); };
  const auto layout = kernels::bucket_layout(space, n, out_rows, bucket_of, "shardops::strings::concat");
  const auto order = allocate_uninitialized<Kokkos::View<std::int64_t*, MemSpace>>(
      "shardops::strings::concat::order", static_cast<std::size_t>(layout.total));
  auto place = KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t s) { order(s) = i; };
  kernels::bucket_place(space, layout, bucket_of, place, "shardops::strings::concat");
  space.fence();
  return concat_grouped_strings(space, order, layout.bucket_begin, updates, out_shape, out_rows, slice, home);
}

}  // namespace shardops
