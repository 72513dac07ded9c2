#pragma once
/// \file
/// \brief The ops on row-sharded tensors (the public op headers, through Ops.hpp) and
/// the tensor-count check the commands use.

#include <cstdint>
#include <vector>

#include "shardops/ops/Ops.hpp"
#include "shardops/route/DistTensor.hpp"

namespace shardops {

/// \brief Host bytes a rank spends on each tensor an op takes or makes, before any of
/// its data: the tensor objects and their allocation's record, its row layout and counts
/// over \p ranks, the job's record and the names of its dataset, HDF5's objects for it.
/// Bounds counts such as num_partitions by what the job holds.
std::size_t per_tensor_overhead_bytes(int ranks);

/// Collective: check_count (core/MemoryBudget.hpp) of \p count tensors, agreed.
void check_tensor_count(const Comm& comm, std::int64_t count, const std::string& what);

}  // namespace shardops
