#pragma once
/// \file
/// \brief What the ranks of a node share: the memory budget of each rank
/// (core/MemoryBudget.hpp) from what its node has, where the ranks of \p comm on one node
/// (MPI_Comm_split_type, shared memory) agree on the smallest headroom any of them sees and
/// share it equally; and whether all ranks are on one node.

#include "shardops/route/Comm.hpp"

namespace shardops {

/// \brief Collective over \p comm: sets this rank's memory budget. Call it once, after
/// MPI is initialised and before any work (the shardops command does).
void share_node_memory(const Comm& comm);

/// \brief Collective over \p comm: whether all its ranks run on one node, sharing its memory
/// and so the page cache an input file's pages are read through (MPI_COMM_TYPE_SHARED).
bool all_on_one_node(const Comm& comm);

}  // namespace shardops
