#pragma once
/// \file
/// \brief Which source row entry k of a batch of update rows reads.
///
/// Most batches use all their rows, in order (SameRow). A distributed scatter's own
/// rows are another matter: about one in R of its local update rows stays on its
/// rank, at random, so a pass over all of them that skips the others reads them all
/// and mispredicts a branch on every other one, paying per skipped row rather than
/// per applied one. ListedRows
/// visits only the listed rows (the exchange plan's rows to self, in local order).

#include <cstdint>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "shardops/kokkos_ext/KokkosExt.hpp"

namespace shardops {
namespace kernels {

/// Whether \p i lies in [0, \p n): one unsigned compare, so a target or bucket of -1 (none)
/// and one past the end (a value that changed since it was checked) both fail it.
KOKKOS_INLINE_FUNCTION bool within(const std::int64_t i, const std::int64_t n) {
  return static_cast<std::uint64_t>(i) < static_cast<std::uint64_t>(n);
}

/// Entry k reads row k.
struct SameRow {
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t k) const { return k; }
};

/// Entry k reads row rows[k] - first (increasing in k where order matters): \p first is
/// where the batch's rows start among the rows the list numbers. \p Index: the list's
/// integers (a list of 32-bit rows costs half the memory where the rows fit).
template <class Index = std::int64_t>
struct ListedRows {
  const Index* rows;
  std::int64_t first = 0;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t k) const {
    return static_cast<std::int64_t>(rows[k]) - first;
  }
};

/// The most rows a list of 32-bit row numbers (ListedRows<std::uint32_t>) numbers. Such a
/// list takes half the memory of a 64-bit one: memory that a one-op job touches for the
/// first time, which costs about as much as writing as many bytes into a file.
constexpr std::int64_t kMaxListed32 = 0xFFFFFFFFLL;

/// \brief The sequential loops' look-ahead on the source side: the row entry i + \p ahead
/// reads (\p width elements per row of \p src) prefetched, where the rows are read out of
/// order (listed). Rows read in order (SameRow) are left to the hardware's prefetch.
template <class RowOf, class T>
KOKKOS_INLINE_FUNCTION void prefetch_source_row(const RowOf& row_of, std::int64_t i, std::int64_t n, std::int64_t ahead,
                                                const T* src, std::int64_t width) {
  (void)row_of;  // device passes and in-order rows drop the prefetch
  (void)src;
  (void)width;
  if constexpr (!std::is_same<RowOf, SameRow>::value) {
    if (i + ahead < n) SHARDOPS_PREFETCH_ROW(src + row_of(i + ahead) * width, width);
  }
}

/// Target of entry k, from the target of each source row.
template <class TargetOfRow, class RowOf>
struct TargetOfEntry {
  TargetOfRow target_of_row;
  RowOf row_of;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t k) const { return target_of_row(row_of(k)); }
};

/// Order key of entry k: base + its source row, so a listed batch's keys are those
/// the whole batch would have (rows are found back from keys, see KeyedRows).
template <class RowOf>
struct KeyOfEntry {
  std::int64_t base;
  RowOf row_of;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t k) const { return base + row_of(k); }
};

}  // namespace kernels
}  // namespace shardops
