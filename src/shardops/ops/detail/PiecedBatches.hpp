#pragma once
/// \file
/// \brief The batches of rows at their owner (RootBatch), listed by piece of the output,
/// so that an op that applies them in order (the scatter family, DynamicStitch) can make
/// its output a piece at a time as it is written (LazyTensor) instead of holding it.

#include <array>
#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>

#include "shardops/core/Kokkos.hpp"
#include "shardops/kernels/PieceList.hpp"
#include "shardops/route/LazyTensor.hpp"
#include "shardops/route/Route.hpp"

namespace shardops {

/// \brief The target rows of an output piece the output layer asks for at once
/// (LazyTensor::kPieceBytes of rows of \p rows_per_lazy_row targets of \p target_bytes each),
/// a whole number of the LazyTensor's rows.
inline std::int64_t piece_targets(std::int64_t rows_per_lazy_row, std::size_t target_bytes) {
  const auto row_bytes = static_cast<std::size_t>(rows_per_lazy_row) * target_bytes;
  const std::int64_t rows = row_bytes == 0 ? 1 : static_cast<std::int64_t>(LazyTensor::kPieceBytes / row_bytes);
  return std::max<std::int64_t>(rows, 1) * rows_per_lazy_row;
}

/// \brief A run of a batch's listed entries: those whose targets lie in one piece of the
/// output, in their order, as the apply kernels take a batch (RootBatch's members), their
/// targets counted from the piece's first row.
template <class RowOf>
struct PieceBatch {
  std::int64_t n;
  kernels::ListedTargetInPiece target;
  Tensor rows;
  kernels::ListedEntryRow<RowOf> row_of;
  std::int64_t source_rows;

  const kernels::ListedTargetInPiece& target_of_entry() const { return target; }
};

/// \brief Batches in global order, each with its entries listed by piece of the targets
/// (kernels::list_by_piece). Keeps what the batches point into alive.
template <class... Batch>
class PiecedBatches {
 public:
  /// \brief Lists the entries of \p batches (targets in [0, \p targets)) by piece of \p
  /// piece_rows targets; \p keep holds the memory the batches point into.
  PiecedBatches(std::shared_ptr<const void> keep, std::int64_t targets, std::int64_t piece_rows,
                const Batch&... batches)
      : keep_(std::move(keep)),
        batches_(batches...),
        lists_{kernels::list_by_piece(ExecSpace(), batches.n, batches.target_of_entry(), targets, piece_rows,
                                      "shardops::output piece lists")...} {}

  /// Entries of all batches without a target.
  std::int64_t skipped() const {
    std::int64_t n = 0;
    for (const auto& list : lists_) n += list.skipped;
    return n;
  }

  /// \brief Returns \p f(batches...): each batch cut to the entries whose targets lie in
  /// the pieces that hold [first, first + count), in their order (PieceBatch), their
  /// targets counted from \p first (-1 for those outside the range).
  template <class F>
  decltype(auto) visit(std::int64_t first, std::int64_t count, F&& f) const {
    return visit_each(first, count, std::forward<F>(f), std::index_sequence_for<Batch...>());
  }

 private:
  template <class F, std::size_t... I>
  decltype(auto) visit_each(std::int64_t first, std::int64_t count, F&& f, std::index_sequence<I...>) const {
    return f(cut(std::get<I>(batches_), lists_[I], first, count)...);
  }

  template <class TargetOf, class RowOf>
  static PieceBatch<RowOf> cut(const RootBatch<TargetOf, RowOf>& b, const kernels::PieceList<MemSpace>& list,
                               std::int64_t first, std::int64_t count) {
    const std::int64_t from = list.first_entry(first), to = list.end_entry(first, count);
    return {to - from, kernels::ListedTargetInPiece{list.targets.data() + from, first, count}, b.rows,
            kernels::ListedEntryRow<RowOf>{list.entries.data() + from, b.row_of}, b.source_rows};
  }

  std::shared_ptr<const void> keep_;
  std::tuple<Batch...> batches_;
  std::array<kernels::PieceList<MemSpace>, sizeof...(Batch)> lists_;
};

}  // namespace shardops
