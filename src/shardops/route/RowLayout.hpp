#pragma once
/// \file
/// \brief How a tensor's rows (axis 0) are split into contiguous blocks, one per
/// rank in rank order. Every rank holds the whole table, so the owner of a row is
/// computed, never looked up remotely.

#include <cstdint>
#include <vector>

#include <Kokkos_Core.hpp>

#include "shardops/core/Kokkos.hpp"
#include "shardops/kernels/Divisor.hpp"
#include "shardops/kokkos_ext/KokkosExt.hpp"

namespace shardops {

class Comm;

/// \brief One entry of OwnerOf's table: the rows of one span of 2^shift rows belong to
/// \p first below \p boundary and to \p second from it on (the next rank with rows).
struct OwnerSpan {
  std::int64_t boundary = 0;
  int first = 0, second = 0;
};

/// \brief Device-side owner lookup. Where every block with rows holds at least 2^shift rows
/// and the row space is at most kMaxSpans spans of 2^shift rows, a span holds rows of at most
/// two ranks: one shift, one load from a small table and one compare (any layout, balanced or
/// not). Else balanced layouts by arithmetic, ragged ones by a binary search over the block
/// offsets (held in a View).
struct OwnerOf {
  /// Largest table: small enough to stay in the first-level cache.
  static constexpr std::int64_t kMaxSpans = 2048;

  Kokkos::View<const std::int64_t*, MemSpace> offsets;  ///< size+1 entries
  Kokkos::View<const OwnerSpan*, MemSpace> spans;       ///< the table (empty: not used)
  int shift = 0;                                        ///< log2 of the rows per span
  int nranks = 1;
  bool balanced = false;
  std::int64_t remainder = 0;   ///< balanced: the ranks with one row more, the first ones
  kernels::Divisor big, small;  ///< balanced: their rows each, and the others' rows each

  /// Rank owning global row \p row (0 <= row < total).
  KOKKOS_INLINE_FUNCTION int operator()(const std::int64_t row) const {
    // The ops call this once per index row: the table, where the layout allows it, costs
    // less than a division or a search, and has no branch on where the row lies (rows come
    // at random).
    if (spans.extent(0) > 0) {
      // Clamped, so that a row outside [0, total) (a caller's bug) reads no memory outside
      // the table.
      const std::uint64_t k = kx::min<std::uint64_t>(static_cast<std::uint64_t>(row) >> shift, spans.extent(0) - 1);
      const OwnerSpan& s = spans(static_cast<std::size_t>(k));
      return row < s.boundary ? s.first : s.second;
    }
    if (balanced) {
      const std::int64_t first_small = remainder * big.divisor();
      return static_cast<int>(row < first_small ? big.quotient(row) : remainder + small.quotient(row - first_small));
    }
    int lo = 0, hi = nranks;  // find the last r with offsets(r) <= row
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (offsets(mid) <= row)
        lo = mid;
      else
        hi = mid;
    }
    return lo;
  }
  KOKKOS_INLINE_FUNCTION std::int64_t offset(int rank) const { return offsets(rank); }
};

/// \brief Row counts and offsets of every rank.
class RowLayout {
 public:
  RowLayout() : RowLayout(std::vector<std::int64_t>{0}) {}
  explicit RowLayout(std::vector<std::int64_t> counts);
  /// \p rows split as evenly as possible: the first rows % nranks ranks get one more.
  static RowLayout balanced(std::int64_t rows, int nranks);
  /// All rows on rank \p root.
  static RowLayout on_rank(std::int64_t rows, int nranks, int root);
  /// Collective: each rank's local row count.
  static RowLayout from_local(const Comm& comm, std::int64_t local_rows);

  int nranks() const noexcept { return static_cast<int>(counts_.size()); }
  std::int64_t count(int rank) const { return counts_.at(static_cast<std::size_t>(rank)); }
  std::int64_t offset(int rank) const { return offsets_.at(static_cast<std::size_t>(rank)); }
  std::int64_t total() const noexcept { return offsets_.back(); }
  const std::vector<std::int64_t>& counts() const noexcept { return counts_; }
  const std::vector<std::int64_t>& offsets() const noexcept { return offsets_; }
  bool is_balanced() const noexcept { return balanced_; }
  /// Host lookup of the rank owning \p row.
  int owner(std::int64_t row) const;
  /// Device lookup (copies the offsets to MemSpace once per call).
  OwnerOf device_owner() const;

  friend bool operator==(const RowLayout& a, const RowLayout& b) { return a.counts_ == b.counts_; }
  friend bool operator!=(const RowLayout& a, const RowLayout& b) { return !(a == b); }

 private:
  std::vector<std::int64_t> counts_;
  std::vector<std::int64_t> offsets_;
  bool balanced_ = false;
};

}  // namespace shardops
