#pragma once
/// \file
/// \brief Copy source rows by row number: GatherNd (and the reply side of the
/// distributed gather).

#include <cstdint>

#include <Kokkos_Core.hpp>

#include "shardops/core/Kokkos.hpp"
#include "shardops/kernels/IndexBounds.hpp"
#include "shardops/kernels/RowCopy.hpp"

namespace shardops {
namespace kernels {

/// out[i] = src[row_of(i)], or zeros where row_of(i) is -1 (a bad index: ignored,
/// or an error the caller raises). Returns how many rows were -1, counted in the
/// same pass (no separate scan of the indices when none is bad).
template <class ExecSpace, class W, class RowOf>
std::int64_t gather_rows(const ExecSpace& space, std::int64_t n, const RowOf& row_of,
                         const MatrixView<const W, typename ExecSpace::memory_space>& src,
                         const MatrixView<W, typename ExecSpace::memory_space>& out) {
  const std::int64_t words = static_cast<std::int64_t>(out.extent(1));
  if (n == 0 || words == 0) return 0;
  const W* s = src.data();
  W* d = out.data();
  return count_rows_streaming(
      space, "shardops::gather_rows", n, KOKKOS_LAMBDA(const std::int64_t i)->std::int64_t {
        constexpr std::int64_t ahead = 16;  // random rows: keep cache misses in flight
        if (i + ahead < n) {
          const std::int64_t rp = row_of(i + ahead);
          if (rp >= 0) SHARDOPS_PREFETCH(s + rp * words);
        }
        const std::int64_t r = row_of(i);
        if (r >= 0) {
          stream_row(d + i * words, s + r * words, words);
          return 0;
        }
        zero_row(d + i * words, words);
        return 1;
      });
}

/// \brief Flattened target row of index row i of an [n, K] index matrix, minus
/// \p row_offset (the first row this shard owns); -1 when out of range.
template <class Index, class MemorySpace>
struct IndexRowTarget {
  const Index* idx;
  int depth;
  IndexBounds bounds;
  std::int64_t row_offset;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const {
    const std::int64_t r = bounds.linearize(idx + i * depth);
    return r < 0 ? -1 : r - row_offset;
  }
};

}  // namespace kernels
}  // namespace shardops
