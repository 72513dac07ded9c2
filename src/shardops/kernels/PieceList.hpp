#pragma once
/// \file
/// \brief Entries listed by the piece of the output their target row falls in, so that an
/// output can be made a piece at a time from the entries that land in it.
///
/// An op whose entries (update rows, data rows) land on any output row holds the whole
/// output while it applies them in order. Listed first by piece — a stable counting sort,
/// so each piece keeps its entries in their order — the output can instead be made piece
/// by piece into a small reused buffer, each piece seeing its entries in the same order as
/// the whole output would (the order TensorFlow applies them in).

#include <cstdint>
#include <stdexcept>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/core/HostMemory.hpp"
#include "shardops/core/MemoryBudget.hpp"
#include "shardops/kernels/BatchRows.hpp"
#include "shardops/kernels/BucketSort.hpp"
#include "shardops/kernels/Divisor.hpp"

namespace shardops {
namespace kernels {

/// \brief Whether batches of at most \p rows source rows can be listed in pieces of at most
/// \p piece_rows target rows: a PieceList numbers both in 32-bit integers (kMaxListed32),
/// the targets counted from their piece's first row. A caller lists only where this says
/// so, and holds its output otherwise.
inline bool fits_piece_list(std::int64_t rows, std::int64_t piece_rows) {
  return rows <= kMaxListed32 && piece_rows <= kMaxListed32;
}

/// \brief The entries [0, n) of a batch grouped by piece of \p piece_rows target rows,
/// each piece's in entry order, as the source row each reads and its target (both read in
/// order then, where an entry's own target would be a random read of its index row);
/// entries without a target (-1) left out.
template <class MemorySpace>
struct PieceList {
  using Listed = std::uint32_t;                          ///< source rows and targets: up to kMaxListed32
  Kokkos::View<Listed*, MemorySpace> rows;               ///< the source row of each entry, piece by piece
  Kokkos::View<Listed*, MemorySpace> targets;            ///< the target of each, from its piece's first row
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> begin;  ///< [pieces + 1]: where each piece starts
  std::int64_t piece_rows = 1;
  std::int64_t skipped = 0;  ///< entries without a target
};

namespace detail {
template <class TargetOf>
struct PieceOf {
  TargetOf target_of;
  Divisor piece_rows;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t k) const {
    const std::int64_t t = target_of(k);
    return t < 0 ? -1 : piece_rows.quotient(t);
  }
};
}  // namespace detail

/// \brief Lists the entries [0, n) by the piece of target_of(k) (a row in [0, num_targets)
/// or -1), pieces of \p piece_rows rows; entry k reads source row row_of(k), one of \p
/// source_rows. Throws std::length_error unless fits_piece_list(source_rows, piece_rows).
template <class ExecSpace, class TargetOf, class RowOf>
PieceList<typename ExecSpace::memory_space> list_by_piece(const ExecSpace& space, std::int64_t n,
                                                          const TargetOf& target_of, const RowOf& row_of,
                                                          std::int64_t source_rows, std::int64_t num_targets,
                                                          std::int64_t piece_rows, const std::string& label) {
  using Mem = typename ExecSpace::memory_space;
  using Listed = typename PieceList<Mem>::Listed;
  using Index = Kokkos::View<Listed*, Mem>;
  if (!fits_piece_list(source_rows, piece_rows))
    throw std::length_error(label + ": " + std::to_string(source_rows) + " source rows and pieces of " +
                            std::to_string(piece_rows) + " targets are more than a piece list numbers");
  PieceList<Mem> list;
  list.piece_rows = kx::max<std::int64_t>(piece_rows, 1);
  const Divisor rows_per_piece(list.piece_rows);
  const std::int64_t pieces = (kx::max<std::int64_t>(num_targets, 0) + list.piece_rows - 1) / list.piece_rows;
  const detail::PieceOf<TargetOf> piece_of{target_of, rows_per_piece};
  const auto layout = bucket_layout(space, n, pieces, piece_of, label);
  const auto size = static_cast<std::size_t>(layout.total);
  check_count(layout.total, 2 * sizeof(Listed), label);  // the callers agree on it between the ranks
  const Index rows = allocate_uninitialized<Index>(label + "::rows", size);
  const Index targets = allocate_uninitialized<Index>(label + "::targets", size);
  auto place = KOKKOS_LAMBDA(const std::int64_t k, const std::int64_t slot) {
    rows(slot) = static_cast<Listed>(row_of(k));
    targets(slot) = static_cast<Listed>(rows_per_piece.remainder(target_of(k)));
  };
  bucket_place(space, layout, piece_of, place, label);
  space.fence();
  list.rows = rows;
  list.targets = targets;
  list.begin = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), layout.bucket_begin);
  list.skipped = n - layout.total;
  return list;
}

/// \brief Target of entry j of a piece's listed entries, in the part of the piece that
/// starts at its target row \p first (counted from the piece's first row) and holds \p
/// count rows; -1 where it lands outside it.
struct ListedTargetInPiece {
  const std::uint32_t* targets;  ///< the piece's first listed target (PieceList::Listed)
  std::int64_t first;
  std::int64_t count;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t j) const {
    const std::int64_t t = static_cast<std::int64_t>(targets[j]) - first;
    return t >= 0 && t < count ? t : -1;
  }
};

}  // namespace kernels
}  // namespace shardops
