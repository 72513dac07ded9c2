#pragma once
/// \file
/// \brief The memory limit the kernel enforces on this process: its memory cgroup
/// (v1 or v2, as Slurm and container runtimes set them) and every ancestor group,
/// since the tightest of them is the one that OOM-kills.
///
/// The usage that counts against a limit is the working set: what the group is
/// charged minus its inactive file cache, which the kernel reclaims before it kills
/// anything (the figure `kubectl top` and `docker stats` report).

#include <cstdint>
#include <optional>
#include <string>

namespace shardops {

/// The tightest limit found, with the usage of the group that has it.
struct CgroupMemory {
  std::uint64_t limit = 0;  ///< bytes
  std::uint64_t usage = 0;  ///< working set of the group that has the limit, bytes
  int version = 0;          ///< 1 or 2
  std::string group;        ///< e.g. "/slurm/uid_0/job_12" (the path in /proc/self/cgroup)
};

/// \brief The memory cgroup limit of this process, or none when no group on its path
/// has one (or cgroups are not mounted). \p root prefixes every path read
/// (/proc/self/cgroup, /proc/self/mountinfo and the cgroup files), for tests that
/// build a fake tree; "" reads the real ones.
std::optional<CgroupMemory> cgroup_memory_limit(const std::string& root = "");

}  // namespace shardops
