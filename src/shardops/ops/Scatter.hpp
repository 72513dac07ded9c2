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

/// ScatterNd on one rank's tensors (see above).
Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const std::vector<std::int64_t>& shape,
                  const OpOptions& options = {});

/// TensorScatter* on one rank's tensors (see above).
Tensor tensor_scatter(ScatterOp op, const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                      const OpOptions& options = {});

}  // namespace shardops
