#pragma once
/// \file
/// \brief DynamicPartition.
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

/// \brief DynamicPartition: outputs[p] holds the rows data[j] with partitions[j] == p,
/// in order of j.
/// \param comm the ranks holding the tensors (collective over them)
/// \param data [partitions.shape, ...] rows to distribute, any dtype
/// \param partitions int32 ids in [0, num_partitions) (BadIndices::Ignore drops others)
/// \param num_partitions how many outputs
/// \param options bad-index policy, route settings, where to report bytes sent
/// \return num_partitions tensors; each rank's block of output p is its own rows of
/// partition p (no data moves between ranks), so the layouts follow the partitions.
std::vector<DistTensor> dynamic_partition(const Comm& comm, const DistTensor& data, const DistTensor& partitions,
                                          std::int64_t num_partitions, const OpOptions& options = {});

/// \brief dynamic_partition whose outputs' rows are made when they are read (LazyTensor),
/// a run of rows at a time, from data where it lies: only the order of the rows is worked
/// out here (every check dynamic_partition makes is made here first, with the same
/// messages). For fixed-size dtypes in host memory; elsewhere the outputs are
/// dynamic_partition's, held whole. The LazyTensors keep \p data alive. Collective, as
/// dynamic_partition.
std::vector<LazyTensor> dynamic_partition_lazy(const Comm& comm, const DistTensor& data, const DistTensor& partitions,
                                               std::int64_t num_partitions, const OpOptions& options = {});

/// DynamicPartition on one rank's tensors (see above).
std::vector<Tensor> dynamic_partition(const Tensor& data, const Tensor& partitions, std::int64_t num_partitions,
                                      const OpOptions& options = {});

}  // namespace shardops
