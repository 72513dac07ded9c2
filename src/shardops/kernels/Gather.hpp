#pragma once
/// \file
/// \brief Copy source rows by row number (GatherNd, one rank or replicated params),
/// the index-row target they are found by, and the count of out-of-range index rows.

#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/core/Kokkos.hpp"
#include "shardops/kernels/FindWhere.hpp"
#include "shardops/kernels/IndexBounds.hpp"
#include "shardops/kernels/RowCopy.hpp"

namespace shardops {
namespace kernels {

/// Source row r of one matrix of \p words words per row.
template <class W>
struct ContiguousRows {
  const W* src;
  std::int64_t words;
  KOKKOS_INLINE_FUNCTION const W* operator()(const std::int64_t r) const { return src + r * words; }
};

/// Source rows [first, first + count) from \p own (its row 0 is row first), the
/// others from \p rest, which holds the rows before first and then those after the
/// range: a rank's own params block where it lies, the other ranks' blocks received.
template <class W>
struct SplitRows {
  const W* own;
  const W* rest;
  std::int64_t first, count, words;
  KOKKOS_INLINE_FUNCTION const W* operator()(const std::int64_t r) const {
    // Random rows fall on either side at random, so a branch here mispredicts about
    // every other row (and a ternary is compiled to one): both addresses are
    // computed and one is picked by a mask.
    const std::uintptr_t mine = static_cast<std::uint64_t>(r - first) < static_cast<std::uint64_t>(count);
    const std::int64_t in_rest = r - count * static_cast<std::int64_t>(r >= first + count);
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(own + (r - first) * words);
    const std::uintptr_t b = reinterpret_cast<std::uintptr_t>(rest + in_rest * words);
    const std::uintptr_t mask = std::uintptr_t(0) - mine;
    return reinterpret_cast<const W*>((a & mask) | (b & ~mask));
  }
};

/// out[i] = the source row row_at(row_of(i)), or zeros where row_of(i) is -1 (a bad
/// index: ignored, or an error the caller raises). Returns how many rows were -1,
/// counted in the same pass (no separate scan of the indices when none is bad).
template <class ExecSpace, class W, class RowOf, class RowAt>
std::int64_t gather_rows_from(const ExecSpace& space, std::int64_t n, const RowOf& row_of, const RowAt& row_at,
                              const MatrixView<W, typename ExecSpace::memory_space>& out,
                              RowStores stores = RowStores::Streaming) {
  const std::int64_t words = static_cast<std::int64_t>(out.extent(1));
  if (n == 0 || words == 0) return 0;
  W* d = out.data();
  const bool streaming = stores == RowStores::Streaming;
  return count_rows_streaming(
      space, "shardops::gather_rows", n, KOKKOS_LAMBDA(const std::int64_t i)->std::int64_t {
        constexpr std::int64_t ahead = 16;  // random rows: keep cache misses in flight
        if (i + ahead < n) {
          const std::int64_t rp = row_of(i + ahead);
          if (rp >= 0) SHARDOPS_PREFETCH_ROW(row_at(rp), words);
        }
        const std::int64_t r = row_of(i);
        if (r >= 0) {
          store_row(d + i * words, row_at(r), words, streaming);
          return 0;
        }
        zero_row(d + i * words, words);
        return 1;
      });
}

/// gather_rows_from() one matrix: out[i] = src[row_of(i)].
template <class ExecSpace, class W, class RowOf>
std::int64_t gather_rows(const ExecSpace& space, std::int64_t n, const RowOf& row_of,
                         const MatrixView<const W, typename ExecSpace::memory_space>& src,
                         const MatrixView<W, typename ExecSpace::memory_space>& out,
                         RowStores stores = RowStores::Streaming) {
  return gather_rows_from<ExecSpace, W>(
      space, n, row_of, ContiguousRows<W>{src.data(), static_cast<std::int64_t>(out.extent(1))}, out, stores);
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

/// How many of the \p n index rows of \p target are out of range. With one coordinate
/// per row (the usual depth) that is one unsigned compare per index (a negative one
/// wraps to a large value), a loop the compiler vectorizes; deeper rows take the full
/// test.
template <class ExecSpace, class Index, class MemorySpace>
std::int64_t count_bad_index_rows(const ExecSpace& space, std::int64_t n,
                                  const IndexRowTarget<Index, MemorySpace>& target, const std::string& label) {
  std::int64_t bad = 0;
  if (target.depth == 1) {
    const Index* idx = target.idx;
    const std::uint64_t dim = static_cast<std::uint64_t>(target.bounds.dims[0]);
    Kokkos::parallel_reduce(
        label, Kokkos::RangePolicy<ExecSpace>(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& count) {
          count += static_cast<std::uint64_t>(static_cast<std::int64_t>(idx[i])) >= dim ? 1 : 0;
        },
        bad);
  } else {
    const IndexBounds bounds = target.bounds;
    const Index* idx = target.idx;
    const int depth = target.depth;
    Kokkos::parallel_reduce(
        label, Kokkos::RangePolicy<ExecSpace>(space, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& count) {
          count += bounds.linearize(idx + i * depth) < 0 ? 1 : 0;
        },
        bad);
  }
  return bad;
}

/// The last out-of-range index row of \p target, or -1: counted first (the quick pass
/// above), searched for only when there is one. \p known: the count a kernel of the
/// op already made (-1: count here).
template <class ExecSpace, class Index, class MemorySpace>
std::int64_t last_bad_index_row(const ExecSpace& space, std::int64_t n,
                                const IndexRowTarget<Index, MemorySpace>& target, const std::string& label,
                                std::int64_t known = -1) {
  if (known < 0) known = count_bad_index_rows(space, n, target, label);
  return known > 0 ? last_where(space, n, negative(target), label) : -1;
}

}  // namespace kernels
}  // namespace shardops
