#pragma once
/// \file
/// \brief A tensor sharded by rows (axis 0) across the ranks of a communicator.

#include <cstdint>

#include "shardops/core/Tensor.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/GpuAwareMpi.hpp"
#include "shardops/route/RowLayout.hpp"

namespace shardops {

/// \brief Global shape + row layout + this rank's block of rows.
///
/// Rank r holds global rows [layout.offset(r), layout.offset(r) + layout.count(r)),
/// all trailing dims whole. A scalar (rank-0 global shape) lives on rank 0: its
/// layout is one "row" on rank 0 and its local tensor there is the scalar; other
/// ranks hold an empty [0] tensor.
class DistTensor {
 public:
  DistTensor() = default;
  /// \throws InternalError if \p local does not match the layout's count for this rank.
  DistTensor(Tensor local, Shape global_shape, RowLayout layout, int rank);

  /// Collective: this rank's rows are \p local; the global shape is the concatenation
  /// along axis 0 (trailing dims must agree on all ranks: checked).
  static DistTensor from_local(const Comm& comm, const Tensor& local);
  /// Each rank takes its block of \p full (the same on every rank) under \p layout
  /// (balanced if omitted). For tests and small inputs.
  static DistTensor from_replicated(const Comm& comm, const Tensor& full);
  static DistTensor from_replicated(const Comm& comm, const Tensor& full, const RowLayout& layout);
  /// \brief \p t whole on the one rank of Comm::self(), without a copy: how the one-rank
  /// ops hand their tensors to the distributed ones.
  static DistTensor whole(const Tensor& t);

  const Tensor& local() const noexcept { return local_; }
  const Shape& shape() const noexcept { return shape_; }
  const RowLayout& layout() const noexcept { return layout_; }
  DType dtype() const noexcept { return local_.dtype(); }
  bool is_scalar() const noexcept { return shape_.rank() == 0; }
  /// Global row offset of this rank's block.
  std::int64_t row_offset() const { return layout_.offset(rank_); }
  /// The rank this block belongs to.
  int rank() const noexcept { return rank_; }
  /// Elements per row (product of dims 1..).
  std::int64_t row_elements() const { return is_scalar() ? 1 : shape_.product_from(1); }
  std::size_t row_bytes() const { return static_cast<std::size_t>(row_elements()) * dtype_size(dtype()); }

  /// \brief Local: \throws InvalidArgument (exit 2) unless this tensor was made for \p comm:
  /// its layout spreads it over comm.size() ranks and this is its block for comm.rank(). A
  /// tensor of another communicator would have each rank follow another plan (hangs, wrong
  /// rows, crashes). Every op and every collective of a DistTensor checks it first.
  void check_on(const Comm& comm) const;

  /// Collective: the same rows under another layout (same total), moved as \p route says.
  DistTensor redistribute(const Comm& comm, const RowLayout& target, const RouteOptions& route = RouteOptions()) const;
  /// Collective: balanced blocks.
  DistTensor rebalance(const Comm& comm, const RouteOptions& route = RouteOptions()) const;
  /// Collective: the whole tensor on every rank.
  Tensor allgather(const Comm& comm, const RouteOptions& route = RouteOptions()) const;

  /// \brief This tensor with \p all, every one of its rows, readable on this rank as well
  /// (an input file's pages mapped on every rank: io::ReadOptions::replicate). An op that
  /// would copy the whole tensor onto every rank reads it there instead, and moves no
  /// rows. Set on every rank or on none (ops decide collectively on has_replica()).
  /// \throws InternalError if \p all's dtype or shape is not this tensor's global one.
  DistTensor with_replica(Tensor all) const;
  /// Whether every row is readable on this rank (with_replica).
  bool has_replica() const noexcept { return has_replica_; }
  /// Every row of the tensor (global shape); an empty tensor unless has_replica().
  const Tensor& replica() const noexcept { return replica_; }

 private:
  Tensor local_;
  Shape shape_;
  RowLayout layout_;
  int rank_ = 0;
  Tensor replica_;
  bool has_replica_ = false;
};

/// \brief Collective: \p data moved to \p index's layout (a scalar index: all of data on
/// rank 0), as paired inputs (data with partitions, updates with indices) need. Returns
/// \p data itself when the layouts already agree, or when the totals differ (the op's
/// shape check reports that).
DistTensor align_to(const Comm& comm, const DistTensor& data, const DistTensor& index,
                    const RouteOptions& route = RouteOptions());

}  // namespace shardops
