#pragma once
/// \file
/// \brief What one rank may allocate, checked before every allocation whose size
/// comes from the input (shapes, counts, deck values), so that a job too big for its
/// memory fails with exit 2 and a message instead of being OOM-killed.
///
/// The budget of a rank is the memory the job has on its node when it starts, shared
/// equally by the ranks on that node: the smaller of the host's MemAvailable and its
/// memory cgroup's limit minus the group's working set (core/CgroupMemory.hpp; Slurm
/// puts a job's ranks of one node in one group), divided by the ranks sharing the
/// node (route/NodeMemory.hpp sets it with MPI_Comm_split_type; without it a process
/// counts as alone). What the job already holds counts against it: every tensor holds
/// its bytes until its last copy goes, and the memory kept for reuse
/// (core/HostMemory.hpp) is returned to the OS before a request is refused.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace shardops {

/// Memory the job can still take on this node now, and where that figure comes from.
struct MemoryHeadroom {
  std::uint64_t bytes = 0;
  std::string source;  ///< "the cgroup v1 memory limit of /g (L bytes, U in use)", or MemAvailable
};

/// min(MemAvailable, the tightest cgroup limit minus its working set), read now.
MemoryHeadroom memory_headroom();

/// This rank's share, and where it comes from (for messages).
struct MemoryBudget {
  std::uint64_t bytes = 0;  ///< what this rank may hold
  int ranks_on_node = 1;
  std::string source;
};

/// What the ranks' libraries and small allocations take beside what the budget tracks (MPI's
/// and HDF5's buffers, page tables, allocations under kKeepFrom), per rank on the node.
inline constexpr std::uint64_t kUntrackedPerRank = std::uint64_t(8) << 20;

/// The part of \p node_headroom kept out of the ranks' budgets for what they allocate
/// untracked: kUntrackedPerRank per rank, or a twentieth of the headroom where that is more.
std::uint64_t untracked_reserve(std::uint64_t node_headroom, int ranks_on_node);

/// \brief Sets this rank's budget to (\p node_headroom - untracked_reserve) / \p
/// ranks_on_node (called once the ranks of a node agree on their headroom; see
/// route/NodeMemory.hpp).
void set_memory_budget(std::uint64_t node_headroom, int ranks_on_node, const std::string& source);

/// The budget set, or (never set) this process's memory_headroom() when first asked.
MemoryBudget memory_budget();

/// Bytes of tensors this process holds now (see hold_memory).
std::uint64_t memory_held() noexcept;

/// \brief Counts \p bytes as held until the returned token (shared by a tensor's
/// copies) is destroyed.
std::shared_ptr<void> hold_memory(std::size_t bytes);

/// \brief \throws InvalidArgument if \p nbytes more do not fit this rank's budget
/// (what is held already included) or the memory the node has now; \p what names the
/// input, the message gives the bytes, the limit and how to raise it. Only host memory
/// is checked (a failed device allocation raises from Kokkos).
void check_allocation(std::size_t nbytes, const std::string& what);

/// \brief check_allocation of \p count items of \p bytes_each: for counts that size
/// work or output (partitions, inputs, deck values), so that each is bounded by what
/// the job can hold. \throws InvalidArgument naming \p what when they do not fit.
void check_count(std::int64_t count, std::size_t bytes_each, const std::string& what);

/// Bytes of host memory available now (MemAvailable), or a large number if unknown.
std::size_t available_host_memory();

}  // namespace shardops
