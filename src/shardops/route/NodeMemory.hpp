#pragma once
/// \file
/// \brief The memory budget of each rank (core/MemoryBudget.hpp) from what its node
/// has: the ranks of \p comm on one node (MPI_Comm_split_type, shared memory) agree on
/// the smallest headroom any of them sees and share it equally.

#include "shardops/route/Comm.hpp"

namespace shardops {

/// \brief Collective over \p comm: sets this rank's memory budget. Call it once, after
/// MPI is initialised and before any work (the shardops command does).
void share_node_memory(const Comm& comm);

}  // namespace shardops
