#pragma once
/// \file
/// \brief GatherNd.
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
#include <optional>
#include <vector>

#include "shardops/core/RowRuns.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/ops/OpOptions.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/DistTensor.hpp"
#include "shardops/route/LazyTensor.hpp"

namespace shardops {

/// \brief GatherNd: output[i] = params[indices[i]] (slices when the index depth K is
/// less than params' rank). A bad index fails with TF's message, or gives a zero row
/// under BadIndices::Ignore.
/// \param comm the ranks holding the tensors (collective over them)
/// \param params the tensor to read, any dtype
/// \param indices int16/int32/int64 [..., K]
/// \param options bad-index policy, how remote params rows are got (gather_params),
/// route settings, where to report bytes sent
/// \return indices.shape[:-1] + params.shape[K:] in \p indices' layout (a rank-1 index,
/// one index row: on rank 0).
DistTensor gather_nd(const Comm& comm, const DistTensor& params, const DistTensor& indices,
                     const OpOptions& options = {});

/// \brief gather_nd whose output rows are made when they are read (LazyTensor), a run of
/// rows at a time, where each rank can make them alone: one rank, or params readable
/// whole on every rank (brought there, or DistTensor::replica), for fixed-size dtypes and
/// an index depth above 0, in host memory. Every check gather_nd makes (shapes, dtypes,
/// every index under BadIndices::Error) is made here first, with the same messages;
/// elsewhere the output is gather_nd's, held whole. The LazyTensor keeps \p params and
/// \p indices alive. Collective, as gather_nd.
LazyTensor gather_nd_lazy(const Comm& comm, const DistTensor& params, const DistTensor& indices,
                          const OpOptions& options = {});

/// GatherNd on one rank's tensors (see above).
Tensor gather_nd(const Tensor& params, const Tensor& indices, const OpOptions& options = {});

/// \brief Whether gather_nd over \p nranks ranks copies all of params onto every rank
/// (rather than fetching rows from their owners), from the global shapes alone, as
/// gather_nd decides it. Where it does, params read with io::ReadOptions::replicate
/// (DistTensor::replica on every rank) are read there and no params row moves. False
/// for one rank and for shapes gather_nd refuses. Not collective.
bool gather_nd_replicates_params(const Shape& params, const Shape& indices, int nranks,
                                 GatherParams choice = GatherParams::Auto);

/// \brief Collective: the rows of params that gather_nd with \p indices reads, of this
/// rank's block of params (global shape \p params, dtype \p dtype) in \p layout, counted
/// from the block's first row: the dim-0 rows the index rows name on any rank (whichever
/// rank the op brings them to). For a job that reads params from a file and needs only a
/// few of its rows (a few frames of a compressed stack): io::ReadOptions::only_rows. Rows
/// a bad index names are left out (the op reports it, or gives zeros). std::nullopt where
/// the indices name so many rows that reading all of params costs no more than working
/// out which, where every row is read (index depth 0), and for strings and shapes or
/// dtypes gather_nd refuses (it reports them).
std::optional<RowRuns> gather_nd_params_rows(const Comm& comm, const Shape& params, DType dtype,
                                             const DistTensor& indices, const RowLayout& layout,
                                             const OpOptions& options = {});

}  // namespace shardops
