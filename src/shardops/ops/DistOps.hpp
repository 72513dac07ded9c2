#pragma once
/// \file
/// \brief The ops on row-sharded tensors. Every function is collective over \p comm.
///
/// Results are byte-identical for any number of ranks, hence equal to TensorFlow's
/// CPU result (the one-rank ops of ops/Ops.hpp are these over Comm::self()).
/// Validation is collective:
/// shape checks use global shapes (every rank reaches the same verdict), index
/// checks are agreed with one allreduce, and every rank raises the message a
/// one-rank run would raise. Output layouts: DynamicPartition
/// outputs stay where their rows were; DynamicStitch and ScatterNd are balanced;
/// TensorScatter* keep the layout of \p tensor; GatherNd the layout of \p indices.
/// Paired inputs (data with partitions, data[m] with indices[m], updates with
/// indices) are moved to their index tensor's layout first if it differs.

#include <cstdint>
#include <vector>

#include "shardops/ops/Ops.hpp"
#include "shardops/route/DistTensor.hpp"

namespace shardops {

std::vector<DistTensor> dynamic_partition(const Comm& comm, const DistTensor& data, const DistTensor& partitions,
                                          std::int64_t num_partitions, const OpOptions& options = {});

DistTensor dynamic_stitch(const Comm& comm, const std::vector<DistTensor>& indices, const std::vector<DistTensor>& data,
                          const OpOptions& options = {});

DistTensor scatter_nd(const Comm& comm, const DistTensor& indices, const DistTensor& updates,
                      const std::vector<std::int64_t>& shape, const OpOptions& options = {});

DistTensor tensor_scatter(const Comm& comm, ScatterOp op, const DistTensor& tensor, const DistTensor& indices,
                          const DistTensor& updates, const OpOptions& options = {});

DistTensor gather_nd(const Comm& comm, const DistTensor& params, const DistTensor& indices,
                     const OpOptions& options = {});

/// \brief Host bytes a rank spends on each tensor an op takes or makes, before any of
/// its data: the tensor objects, its row layout and counts over \p ranks, and the
/// names of its dataset. Bounds counts such as num_partitions by what the job holds.
std::size_t per_tensor_overhead_bytes(int ranks);

/// Collective: check_count (core/MemoryBudget.hpp) of \p count tensors, agreed.
void check_tensor_count(const Comm& comm, std::int64_t count, const std::string& what);

}  // namespace shardops
