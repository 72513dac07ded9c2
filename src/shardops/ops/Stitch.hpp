#pragma once
/// \file
/// \brief DynamicStitch.
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

/// \brief DynamicStitch (and ParallelDynamicStitch, one of the outcomes TF allows):
/// merged[indices[m][i]] = data[m][i]; of several writers of one row the last (m, i)
/// wins; rows no index names are zero.
/// \param comm the ranks holding the tensors (collective over them)
/// \param indices int32 index tensors
/// \param data data[m] of shape indices[m].shape + the slice shape, one dtype
/// \param options bad-index policy (Ignore skips negative indices), schedule, route
/// settings, where to report bytes sent
/// \return [max index + 1, slice...] in balanced row blocks (RowLayout::balanced).
DistTensor dynamic_stitch(const Comm& comm, const std::vector<DistTensor>& indices, const std::vector<DistTensor>& data,
                          const OpOptions& options = {});

/// \brief dynamic_stitch whose output rows are made when they are written (LazyTensor), a
/// piece at a time: the writers of each rank's rows (in place, or after the same route) are
/// listed by the piece of the output they land in, and each piece is assigned from them,
/// last writer wins, its other rows zero: the same bytes as the held output. For
/// fixed-size dtypes in host memory, rows of at least one element and no more index
/// elements than output rows; elsewhere the output is the held op's. Every check the held
/// op makes comes first, with the same messages. Collective, as dynamic_stitch.
LazyTensor dynamic_stitch_lazy(const Comm& comm, const std::vector<DistTensor>& indices,
                               const std::vector<DistTensor>& data, const OpOptions& options = {});

/// DynamicStitch on one rank's tensors (see above).
Tensor dynamic_stitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data,
                      const OpOptions& options = {});

}  // namespace shardops
