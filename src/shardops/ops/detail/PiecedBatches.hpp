#pragma once
/// \file
/// \brief The batches of rows at their owner (RootBatch), listed by piece of the output,
/// so that an op that applies them in order (the scatter family, DynamicStitch) can make
/// its output a piece at a time as it is written (LazyTensor) instead of holding it.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "shardops/core/Kokkos.hpp"
#include "shardops/kernels/BatchRows.hpp"
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
/// targets counted from the first row of the part of the piece asked for. Entry j reads
/// source row row_of(j), which increases with j.
struct PieceBatch {
  std::int64_t n;
  kernels::ListedTargetInPiece target;
  Tensor rows;
  kernels::ListedRows<kernels::PieceList<MemSpace>::Listed> row_of;
  std::int64_t source_rows;

  const kernels::ListedTargetInPiece& target_of_entry() const { return target; }
};

/// \brief Batches in global order, each with its entries listed by piece of the targets
/// (kernels::list_by_piece): the source row and the target of each entry, and the batch's
/// rows (a Tensor, which keeps them alive). Nothing else of a batch is kept.
class PiecedBatches {
 public:
  /// Batches of targets in [0, \p targets), listed by piece of \p piece_rows targets.
  PiecedBatches(std::int64_t targets, std::int64_t piece_rows)
      : targets_(targets), piece_rows_(std::max<std::int64_t>(piece_rows, 1)) {}

  /// Lists the entries of \p batch (RootBatch), the next in global order.
  template <class TargetOf, class RowOf>
  void add(const RootBatch<TargetOf, RowOf>& batch) {
    batches_.push_back(
        Listed{batch.rows, batch.source_rows,
               kernels::list_by_piece(ExecSpace(), batch.n, batch.target_of_entry(), batch.row_of, batch.source_rows,
                                      targets_, piece_rows_, "shardops::output piece lists")});
  }

  /// Entries of all batches without a target.
  std::int64_t skipped() const {
    std::int64_t n = 0;
    for (const Listed& b : batches_) n += b.list.skipped;
    return n;
  }

  /// \brief Calls \p f(at, n, cut) for each part [at, at + n) of the targets [first, first +
  /// count) that lies in one piece, in order: \p cut holds the batches, in global order, cut
  /// to the entries of that piece, in their order, their targets counted from \p at (-1 for
  /// those outside the part). The output layer asks for whole pieces, one part each.
  template <class F>
  void for_each_piece(std::int64_t first, std::int64_t count, const F& f) const {
    using Rows = kernels::ListedRows<kernels::PieceList<MemSpace>::Listed>;
    std::vector<PieceBatch> cut;
    cut.reserve(batches_.size());
    for (std::int64_t at = first, end = first + count; at < end;) {
      const std::int64_t piece = at / piece_rows_, piece_first = piece * piece_rows_;
      const std::int64_t n = std::min(end, piece_first + piece_rows_) - at;
      cut.clear();
      for (const Listed& b : batches_) {
        const std::int64_t from = b.list.begin(piece), to = b.list.begin(piece + 1);
        cut.push_back(PieceBatch{to - from,
                                 kernels::ListedTargetInPiece{b.list.targets.data() + from, at - piece_first, n},
                                 b.rows, Rows{b.list.rows.data() + from, 0}, b.source_rows});
      }
      f(at, n, static_cast<const std::vector<PieceBatch>&>(cut));
      at += n;
    }
  }

 private:
  struct Listed {
    Tensor rows;
    std::int64_t source_rows;
    kernels::PieceList<MemSpace> list;
  };
  std::int64_t targets_, piece_rows_;
  std::vector<Listed> batches_;
};

}  // namespace shardops
