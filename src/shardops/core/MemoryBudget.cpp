#include "shardops/core/MemoryBudget.hpp"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>

#include "shardops/core/CgroupMemory.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Kokkos.hpp"
#include "shardops/core/NumberText.hpp"

namespace shardops {

namespace {

std::atomic<std::uint64_t> g_held{0};

struct BudgetState {
  std::mutex mutex;
  std::optional<MemoryBudget> budget;
};

BudgetState& budget_state() {
  static BudgetState* state = new BudgetState;  // never destroyed: tensors may die after static destruction
  return *state;
}

std::string bytes_text(std::uint64_t bytes) {
  const double gib = static_cast<double>(bytes) / double(1ULL << 30);
  return std::to_string(bytes) + " bytes (" + fixed_text(gib, 2) + " GiB)";
}

[[noreturn]] void refuse(std::size_t nbytes, const std::string& what, const MemoryBudget& budget, std::uint64_t held,
                         const std::string& limit) {
  std::string text = readable_label(what) + " needs " + bytes_text(nbytes) + ", more than " + limit;
  text += kMemoryBudgetText + bytes_text(budget.bytes) + " (" + budget.source;
  if (budget.ranks_on_node > 1) text += ", shared by " + std::to_string(budget.ranks_on_node) + " ranks on this node";
  text += ")";
  if (held > 0) text += ", of which the job holds " + bytes_text(held) + " already";
  text += ". Run on more ranks spread over more nodes, or give the job more memory (e.g. a larger Slurm --mem)";
  throw InvalidArgument(text);
}

}  // namespace

std::size_t available_host_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t value = 0;
  std::string unit;
  while (meminfo >> key >> value >> unit) {
    if (key == "MemAvailable:") return value * 1024;
  }
  return std::numeric_limits<std::size_t>::max() / 2;
}

MemoryHeadroom memory_headroom() {
  MemoryHeadroom h{available_host_memory(), "the host's MemAvailable"};
  if (const auto cg = cgroup_memory_limit()) {
    const std::uint64_t left = cg->limit > cg->usage ? cg->limit - cg->usage : 0;
    if (left < h.bytes) {
      h.bytes = left;
      h.source = "the cgroup v" + std::to_string(cg->version) + " memory limit of " + cg->group + ": " +
                 std::to_string(cg->limit) + " bytes, " + std::to_string(cg->usage) + " in use";
    }
  }
  return h;
}

std::uint64_t untracked_reserve(std::uint64_t node_headroom, int ranks_on_node) {
  const auto ranks = static_cast<std::uint64_t>(ranks_on_node > 0 ? ranks_on_node : 1);
  return std::min(node_headroom, std::max(kUntrackedPerRank * ranks, node_headroom / 20));
}

void set_memory_budget(std::uint64_t node_headroom, int ranks_on_node, const std::string& source) {
  const int ranks = ranks_on_node > 0 ? ranks_on_node : 1;
  const std::uint64_t shared = node_headroom - untracked_reserve(node_headroom, ranks);
  BudgetState& s = budget_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.budget = MemoryBudget{shared / static_cast<std::uint64_t>(ranks), ranks, source};
}

MemoryBudget memory_budget() {
  BudgetState& s = budget_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.budget) {
    const MemoryHeadroom h = memory_headroom();
    s.budget = MemoryBudget{h.bytes, 1, h.source};
  }
  return *s.budget;
}

std::uint64_t memory_held() noexcept { return g_held.load(); }

std::shared_ptr<void> hold_memory(std::size_t bytes) {
  g_held += bytes;
  return std::shared_ptr<void>(nullptr, [bytes](void*) { g_held -= bytes; });
}

void check_allocation(std::size_t nbytes, const std::string& what) {
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) return;
  const MemoryBudget budget = memory_budget();
  // Tensors, and the large scratch arrays in use (a route's buffers and lists), which no
  // tensor counts.
  const std::uint64_t held = memory_held() + scratch_in_use_bytes();
  // Memory kept for reuse is resident too: give it back before refusing.
  if (held + kept_memory_bytes() + nbytes > budget.bytes) release_kept_memory();
  if (nbytes > budget.bytes || held > budget.bytes - nbytes) {
    refuse(nbytes, what, budget, held, "this rank can hold");
  }
  // The node may have less now than at the start (other jobs, page cache that stays):
  // large requests are checked against this rank's share of what is there now, too (the
  // other ranks on the node may be asking at this moment, as all do in a route).
  if (nbytes >= kKeepFrom) {
    const MemoryHeadroom now = memory_headroom();
    const std::uint64_t share = now.bytes / static_cast<std::uint64_t>(std::max(budget.ranks_on_node, 1));
    if (nbytes > share + kept_memory_bytes()) {
      refuse(nbytes, what, budget, held,
             "this rank's share (" + bytes_text(share) + ") of the memory left on this node now (" +
                 bytes_text(now.bytes) + ", " + now.source + ")");
    }
  }
}

void check_count(std::int64_t count, std::size_t bytes_each, const std::string& what) {
  if (count <= 0) return;
  const auto n = static_cast<std::uint64_t>(count);
  if (bytes_each != 0 && n > std::numeric_limits<std::size_t>::max() / bytes_each) {
    check_allocation(std::numeric_limits<std::size_t>::max(), what);
  }
  check_allocation(static_cast<std::size_t>(n * bytes_each), what);
}

}  // namespace shardops
