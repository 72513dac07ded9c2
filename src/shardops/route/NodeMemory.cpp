#include "shardops/route/NodeMemory.hpp"

#include <cstdint>

#include "shardops/core/MemoryBudget.hpp"

namespace shardops {

void share_node_memory(const Comm& comm) {
  if (comm.get() == MPI_COMM_NULL) {  // Comm::self(): this process alone
    const MemoryHeadroom mine = memory_headroom();
    set_memory_budget(mine.bytes, 1, mine.source);
    return;
  }
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int ranks_on_node = 1;
  const MemoryHeadroom mine = memory_headroom();
  std::uint64_t node_headroom = mine.bytes;
  const int rc_size = MPI_Comm_size(node, &ranks_on_node);
  const int rc_min = MPI_Allreduce(&mine.bytes, &node_headroom, 1, MPI_UINT64_T, MPI_MIN, node);
  MPI_Comm_free(&node);
  check_mpi(rc_size, "MPI_Comm_size");
  check_mpi(rc_min, "MPI_Allreduce");
  // The ranks of a node read the same limits within moments of each other: the source
  // text of the rank that saw the least is not worth a broadcast, each names its own.
  set_memory_budget(node_headroom, ranks_on_node, mine.source);
}

bool all_on_one_node(const Comm& comm) {
  if (comm.size() == 1) return true;
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int ranks_on_node = 1;
  const int rc = MPI_Comm_size(node, &ranks_on_node);
  MPI_Comm_free(&node);
  check_mpi(rc, "MPI_Comm_size");
  // Every rank of a node sees the same count; the ranks of other nodes may not: agree.
  return comm.min(ranks_on_node == comm.size() ? 1 : 0) == 1;
}

}  // namespace shardops
