#pragma once
/// \file
/// \brief The route: a star forest of rows, built once, and the verbs that move rows along it.
///
/// Each local *leaf* row i names its *owner*: a rank and a row there (the *root*), or no
/// owner at all (rank -1: a bad index the op ignores). One route serves every payload of an
/// op, in both directions:
/// - fetch(): every leaf gets its root's row (GatherNd);
/// - reduce(): the owners receive the leaf rows and apply them with a combine (sum,
///   last writer, min, max, ...), seeing the rows of each root in global order (the
///   scatter family, DynamicStitch);
/// - collect(): every leaf row lands at its owner, in global order (strings, which
///   concatenate instead of combining);
/// - replicate_others(), a free function: every rank gets every other rank's block (the
///   all-gather that GatherNd uses when params are small).
///
/// Global order is (source rank, local leaf order) — for block-sharded inputs the order of
/// the rows in the whole tensor, the order TF applies them in. A route built with segments
/// (several inputs on each rank, such as DynamicStitch's indices[m]) orders them (segment,
/// source rank, local order) instead.
///
/// How the rows move is the route's business, not the caller's: rows whose owner is this
/// rank are neither packed nor copied (the combine reads them where they lie, listed), the
/// rows for other ranks are packed a bounded stage at a time where MPI allows, the counts
/// travel as rows so large exchanges split into rounds, and device memory goes through
/// host buffers when MPI cannot read it (RouteOptions, GpuAwareMpi.hpp).
///
/// Layouts: a payload is a Tensor of any dtype in MemSpace, read as a row-major block of rows
/// of `row_elements` elements each (a Tensor [rows, ...] whose trailing dimensions multiply
/// to row_elements, or a finer view of it: GatherNd's roots are params rows split into
/// slices); leaf i is row i of the leaf payloads; a root is a row of the owner's payload.
/// The owner arrays are Kokkos Views in MemSpace, one entry per leaf.
///
/// Every verb is collective over the route's Comm (every rank calls it, in the same order,
/// with payloads of the same dtype and row length); a route over Comm::self() moves nothing.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <Kokkos_Core.hpp>

#include "shardops/core/Error.hpp"
#include "shardops/core/Kokkos.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/kernels/BatchRows.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/GpuAwareMpi.hpp"
#include "shardops/route/RowLayout.hpp"

namespace shardops {

/// Device functor: the int64 at position i of an array (the root row of a leaf).
struct ReceivedRow {
  const std::int64_t* rows;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const { return rows[i]; }
};

/// \brief One batch of leaf rows at their owner, as reduce() hands them to a combine: \p rows
/// holds \p source_rows rows; entry k in [0, n) reads row row_of(k) and goes to root row
/// target(row_of(k)) (-1: skipped).
template <class TargetOf, class RowOf = kernels::SameRow>
struct RootBatch {
  std::int64_t n;
  TargetOf target;
  Tensor rows;
  RowOf row_of;
  std::int64_t source_rows;

  /// The root row of entry k.
  kernels::TargetOfEntry<TargetOf, RowOf> target_of_entry() const { return {target, row_of}; }
};

/// All \p n rows of \p rows, in order, to the roots \p target gives.
template <class TargetOf>
RootBatch<TargetOf> all_rows(std::int64_t n, const TargetOf& target, const Tensor& rows) {
  return RootBatch<TargetOf>{n, target, rows, kernels::SameRow{}, n};
}

/// A batch of rows that arrived from other ranks (one source's, or several in rank order).
using ReceivedBatch = RootBatch<ReceivedRow>;
/// A batch of a rank's own leaves, listed (the leaves whose owner is this rank).
using OwnBatch = RootBatch<ReceivedRow, kernels::ListedRows<>>;

namespace detail {
struct RouteState;
}

class Route;
class FetchedRows;

/// \brief The leaf rows of one reduce() at their owners: the batches that arrived from
/// other ranks and this rank's own leaves (read in place), visited in global order. Holds
/// the arrived rows and shares the route's state; the own rows are read from the Tensors
/// given to reduce().
class RootRows {
 public:
  /// \brief Calls \p f(batch, first_key) for every batch in global order; first_key is the
  /// order key of the batch's entry 0 (entry k has first_key + k): the keys of all batches
  /// increase in global order, for a keyed (parallel) combine. Not collective; may be
  /// called any number of times.
  template <class F>
  void for_each(F&& f) const {
    std::int64_t key = 0;
    for (std::size_t s = 0; s < segment_rows_.size(); ++s) {
      for (int r = 0; r < nranks_; ++r) {
        if (r == self_) {
          const OwnBatch b = own(s);
          f(b, key);
          key += b.n;
        } else {
          const ReceivedBatch b = received(r, s);
          f(b, key);
          key += b.n;
        }
      }
    }
  }

  /// \brief A route of one segment: \p f(lower, own, higher) with the rows that arrived
  /// from the ranks below this one, this rank's own, and those from the ranks above, the
  /// three batches in global order. Returns what \p f returns. Not collective.
  template <class F>
  decltype(auto) apply(F&& f) const {
    if (segment_rows_.size() != 1) throw InternalError("RootRows::apply: a route with several segments");
    return f(received_range(0, lower_end_), own(0), received_range(lower_end_, arrived_.rows()));
  }

  /// Rows that arrived from other ranks.
  std::int64_t num_arrived() const noexcept { return arrived_.rows(); }

 private:
  friend class Route;
  ReceivedBatch received_range(std::int64_t first, std::int64_t last) const {
    return all_rows(last - first, ReceivedRow{arrived_owner_row_ + first}, arrived_.slice_rows(first, last));
  }
  ReceivedBatch received(int rank, std::size_t segment) const {
    const std::size_t at = static_cast<std::size_t>(rank) * (segment_rows_.size() + 1) + segment;
    return received_range(arrived_starts_[at], arrived_starts_[at + 1]);
  }
  OwnBatch own(std::size_t segment) const {
    const std::int64_t first = own_starts_[segment], count = own_starts_[segment + 1] - first;
    const Tensor& rows = segment_rows_[segment];
    return OwnBatch{count, ReceivedRow{leaf_owner_row_ + leaf_first_[segment]}, rows,
                    kernels::ListedRows<>{own_leaves_ + first, leaf_first_[segment]},
                    leaf_first_[segment + 1] - leaf_first_[segment]};
  }

  std::shared_ptr<detail::RouteState> state_;  ///< keeps the pointers below valid
  int nranks_ = 1, self_ = 0;
  Tensor arrived_;                                   ///< rows from other ranks, by source rank, then segment
  const std::int64_t* arrived_owner_row_ = nullptr;  ///< their root rows
  std::vector<std::int64_t> arrived_starts_;         ///< [r * (segments + 1) + s]: first arrived row of (r, s)
  std::int64_t lower_end_ = 0;                       ///< arrived rows from ranks below this one
  std::vector<Tensor> segment_rows_;                 ///< this rank's leaf rows, segment by segment
  std::vector<std::int64_t> leaf_first_;             ///< first leaf of each segment (segments + 1)
  const std::int64_t* own_leaves_ = nullptr;         ///< the leaves this rank owns, increasing
  std::vector<std::int64_t> own_starts_;             ///< where each segment starts in own_leaves_
  const std::int64_t* leaf_owner_row_ = nullptr;     ///< the root row of every leaf
};

/// \brief The leaf rows of a collect(): every leaf row, this rank's own included, at its
/// owner in global order, with its root row.
struct CollectedRows {
  Tensor rows;     ///< [n, row elements]
  Tensor targets;  ///< int64 [n]: the root row of each
};

/// \brief What a fetch() brought: the root rows other ranks sent back, and this rank's own
/// roots, to be written into the leaves. Shares the route's state.
class FetchedRows {
 public:
  /// \brief Row i of \p leaves becomes leaf i's root row, or zeros for a leaf without owner:
  /// one streaming write of every row. Not collective.
  /// \param leaves num_leaves() rows of the fetch's row length and dtype, written whole
  void write(const Tensor& leaves) const;

 private:
  friend class Route;
  std::shared_ptr<detail::RouteState> state_;
  Tensor roots_;
  Tensor answered_;  ///< the rows other ranks sent back, in the route's send order
  std::int64_t row_elements_ = 0;
};

/// \brief A star forest of rows: where each local leaf row's root is. See the file comment.
/// Copies share one route.
class Route {
 public:
  Route() = default;

  /// \brief Collective: the route of the leaves [0, n), n = \p owner_rank.extent(0).
  /// \param comm the ranks of the route; the owner ranks are ranks of it
  /// \param owner_rank the rank that owns each leaf's root, or -1 for a leaf with none
  ///        (fetch() gives it a zero row, reduce() and collect() leave it out)
  /// \param owner_row the root's row at that rank (read only where owner_rank >= 0); the
  ///        route keeps both views
  /// \param options how the exchanges hand their buffers to MPI (RouteOptions)
  /// \param segments the leaves split into consecutive segments of these sizes (their sum
  ///        is n), for global order (segment, source rank, local order); empty: one segment
  static Route build(const Comm& comm, const Kokkos::View<const int*, MemSpace>& owner_rank,
                     const Kokkos::View<const std::int64_t*, MemSpace>& owner_row,
                     const RouteOptions& options = RouteOptions(), std::vector<std::int64_t> segments = {});

  /// Local leaves.
  std::int64_t num_leaves() const noexcept;
  /// Bytes this rank sent to other ranks over all verbs of the route so far (for reports).
  std::int64_t bytes_sent() const noexcept;

  /// \brief Collective: brings every leaf its root's row: row owner_row(i) of \p roots at rank
  /// owner_rank(i). The roots other ranks ask for are sent back, gathered a stage at a time;
  /// the roots this rank owns are not moved.
  /// \param roots this rank's root rows (any number of them)
  /// \param row_elements elements per row, the same on every rank (the dtype too)
  /// \return the rows brought, for FetchedRows::write into the leaves (not collective)
  FetchedRows fetch(const Tensor& roots, std::int64_t row_elements) const;

  /// \brief Collective: moves each leaf row to its owner; the result visits them there in
  /// global order (RootRows::apply or RootRows::for_each), for the caller's combine. Rows
  /// that stay on this rank are neither packed nor copied.
  /// \return the arrived rows and this rank's own, batch by batch (not collective to visit)
  /// \param row_elements elements per row, the same on every rank
  /// \param segment_rows the leaf rows, one Tensor per segment (one for a route without
  ///        segments), each viewed as rows of \p row_elements elements of its dtype (the
  ///        same for all); the result keeps them, and its combine reads this rank's own
  ///        rows there
  RootRows reduce(const std::vector<Tensor>& segment_rows, std::int64_t row_elements) const;

  /// \brief Collective: every leaf row, own ones included, at its owner in global order, with
  /// its root row. For combines that need all of a root's rows at once (string
  /// concatenation).
  /// \param leaf_rows num_leaves() rows
  /// \param row_elements elements per row, the same on every rank
  /// \return the rows that arrived here (this rank's own among them) and their root rows
  CollectedRows collect(const Tensor& leaf_rows, std::int64_t row_elements) const;

 private:
  std::shared_ptr<detail::RouteState> state_;
};

/// \brief Collective: every other rank's block of rows, in rank order with this rank's
/// own left out. Sent with one MPI_Alltoallv, every peer the same rows, in rounds when
/// counts would overflow an int, staged through host buffers as \p options says.
/// \param comm the ranks; \p layout has one block per rank
/// \param layout how the rows are split across the ranks
/// \param block this rank's layout.count(rank) rows (any dtype, the same on every rank)
/// \param options how the exchange hands its buffers to MPI
/// \param bytes_sent if given, receives the bytes this rank sent
/// \return [layout.total() - layout.count(rank), ...] rows, the other ranks' blocks
Tensor replicate_others(const Comm& comm, const RowLayout& layout, const Tensor& block,
                        const RouteOptions& options = RouteOptions(), std::int64_t* bytes_sent = nullptr);

}  // namespace shardops
