#pragma once
/// \file
/// \brief ScatterNd and TensorScatterUpdate/Add/Sub/Min/Max.
///
/// Every function taking a Comm is collective over it: all its ranks call it with
/// their blocks of the same global tensors. Results are byte-identical for any number
/// of ranks and equal to TensorFlow's CPU result; the overload without a Comm is the
/// same op over Comm::self() (one rank, MPI need not be initialised). Validation is
/// collective: shape checks use global shapes, index checks are agreed with one
/// allreduce, and every rank raises the message a one-rank run would raise. A paired
/// input (data with partitions, data[m] with indices[m], updates with indices) is
/// first moved to its index tensor's layout if it differs.

#include <cstdint>
#include <vector>

#include "shardops/core/Tensor.hpp"
#include "shardops/ops/OpOptions.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/DistTensor.hpp"
#include "shardops/route/LazyTensor.hpp"

namespace shardops {

/// \brief ScatterNd: zeros(shape), then output[index] += update for each index row in
/// global order (strings: concatenated in that order).
/// \param comm the ranks holding the tensors (collective over them)
/// \param indices int32/int64 [..., K] index rows into the first K dims of \p shape
/// \param updates indices.shape[:-1] + shape[K:]
/// \param shape the output shape
/// \param options bad-index policy, schedule, subnormal rule, route settings, where to
/// report bytes sent
/// \return the output in balanced row blocks (RowLayout::balanced).
DistTensor scatter_nd(const Comm& comm, const DistTensor& indices, const DistTensor& updates,
                      const std::vector<std::int64_t>& shape, const OpOptions& options = {});

/// \brief TensorScatterUpdate/Add/Sub/Min/Max: a copy of \p tensor with each index
/// row's update assigned (Update: the last in global order wins) or combined (Add,
/// Sub, Min, Max) in global order.
/// \param op the combine (not ScatterOp::ScatterNd)
/// \param tensor the tensor to update (not modified)
/// \return the result in \p tensor's layout.
DistTensor tensor_scatter(const Comm& comm, ScatterOp op, const DistTensor& tensor, const DistTensor& indices,
                          const DistTensor& updates, const OpOptions& options = {});

/// \brief scatter_nd and tensor_scatter whose output rows are made when they are written
/// (LazyTensor), a piece at a time: the update rows that reach each rank (after the same
/// route) are listed by the piece of the output they land in, and each piece is made from
/// zeros or the tensor's rows and its updates, in global order: the same bytes as the
/// held output. For fixed-size dtypes in host memory, an index depth above 0, an output
/// with elements and at most twice as many index rows as output rows (more are cheaper to
/// apply to a held output); elsewhere the output is the held op's. Every check the held op makes is
/// made first, with the same messages. The LazyTensor keeps the inputs it reads alive.
/// Collective, as the held op.
LazyTensor scatter_nd_lazy(const Comm& comm, const DistTensor& indices, const DistTensor& updates,
                           const std::vector<std::int64_t>& shape, const OpOptions& options = {});
/// See scatter_nd_lazy.
LazyTensor tensor_scatter_lazy(const Comm& comm, ScatterOp op, const DistTensor& tensor, const DistTensor& indices,
                               const DistTensor& updates, const OpOptions& options = {});

/// \brief Whether scatter_nd and tensor_scatter over \p nranks ranks, given indices and
/// updates that every rank can read whole (DistTensor::replica: an input file's pages mapped
/// on each rank of one node), take each rank's updates from them instead of routing them to
/// their owners. Each rank then reads every index row for those it owns, and no update row
/// moves: cheaper while the other ranks' index rows, (\p nranks - 1) per own one, cost no
/// more than routing a row does (its bookkeeping and its update row). For fixed-size dtypes,
/// an index depth above 0, and fewer than 2^32 index rows. From the global shapes and dtypes
/// alone, as the ops decide it; false for one rank. Not collective.
bool scatter_reads_replicas(const Shape& indices, DType index_dtype, const Shape& updates, DType dtype, int nranks);

/// ScatterNd on one rank's tensors (see above).
Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const std::vector<std::int64_t>& shape,
                  const OpOptions& options = {});

/// TensorScatter* on one rank's tensors (see above).
Tensor tensor_scatter(ScatterOp op, const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                      const OpOptions& options = {});

}  // namespace shardops
