#include "shardops/core/CgroupMemory.hpp"

#include <fstream>
#include <sstream>
#include <vector>

namespace shardops {

namespace {

/// A cgroup hierarchy that controls memory: where it is mounted and the process's group in it.
struct Hierarchy {
  int version = 0;
  std::string mount_point;  ///< where the hierarchy is mounted
  std::string mount_root;   ///< the group shown at mount_point (not "/" inside some containers)
  std::string group;        ///< the process's group, as /proc/self/cgroup names it
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

bool has_word(const std::string& list, const std::string& word) {
  for (const std::string& w : split(list, ',')) {
    if (w == word) return true;
  }
  return false;
}

/// The first whitespace-separated word of \p path as an unsigned number; false when
/// the file is missing or does not start with a number (v2's "max": no limit).
bool read_number(const std::string& path, std::uint64_t& value) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || word.find_first_not_of("0123456789") != std::string::npos) return false;
  try {
    value = std::stoull(word);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

/// The value of \p key in a "key value" file (memory.stat), or 0.
std::uint64_t read_stat(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  std::uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

/// The memory hierarchies of this process from /proc/self/cgroup and /proc/self/mountinfo.
std::vector<Hierarchy> memory_hierarchies(const std::string& root) {
  std::string v1_group, v2_group;
  bool has_v1 = false, has_v2 = false;
  {
    std::ifstream in(root + "/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
      const std::size_t a = line.find(':');
      const std::size_t b = a == std::string::npos ? a : line.find(':', a + 1);
      if (b == std::string::npos) continue;
      const std::string controllers = line.substr(a + 1, b - a - 1);
      const std::string group = line.substr(b + 1);
      if (line.compare(0, a, "0") == 0 && controllers.empty()) {
        v2_group = group;
        has_v2 = true;
      } else if (has_word(controllers, "memory")) {
        v1_group = group;
        has_v1 = true;
      }
    }
  }
  std::vector<Hierarchy> found;
  std::ifstream in(root + "/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // "ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS"
    const std::vector<std::string> f = split(line, ' ');
    std::size_t dash = 0;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 5 || dash + 1 >= f.size()) continue;
    const std::string& fstype = f[dash + 1];
    const std::string super_options = dash + 3 < f.size() ? f[dash + 3] : "";
    if (fstype == "cgroup" && has_v1 && has_word(super_options, "memory")) {
      found.push_back({1, root + f[4], f[3], v1_group});
    } else if (fstype == "cgroup2" && has_v2) {
      found.push_back({2, root + f[4], f[3], v2_group});
    }
  }
  return found;
}

/// The limits of \p h's group and its ancestors up to the mount point; the tightest wins.
void tightest_in(const Hierarchy& h, std::optional<CgroupMemory>& best) {
  std::string relative = h.group;
  if (h.mount_root != "/" && relative.compare(0, h.mount_root.size(), h.mount_root) == 0) {
    relative = relative.substr(h.mount_root.size());
  }
  if (relative == "/") relative.clear();
  // v1 writes "no limit" as the largest page-aligned value near 2^63.
  constexpr std::uint64_t kNoLimit = std::uint64_t(1) << 62;
  while (true) {
    const std::string dir = h.mount_point + relative;
    std::uint64_t limit = 0, charged = 0;
    const bool limited =
        h.version == 1 ? read_number(dir + "/memory.limit_in_bytes", limit) : read_number(dir + "/memory.max", limit);
    if (limited && limit < kNoLimit && (!best || limit < best->limit)) {
      read_number(dir + (h.version == 1 ? "/memory.usage_in_bytes" : "/memory.current"), charged);
      const std::uint64_t inactive =
          read_stat(dir + "/memory.stat", h.version == 1 ? "total_inactive_file" : "inactive_file");
      best = CgroupMemory{limit, charged > inactive ? charged - inactive : 0, h.version,
                          relative.empty() ? "/" : relative};
    }
    if (relative.empty()) break;
    const std::size_t slash = relative.find_last_of('/');
    relative = slash == std::string::npos || slash == 0 ? std::string() : relative.substr(0, slash);
  }
}

}  // namespace

std::optional<CgroupMemory> cgroup_memory_limit(const std::string& root) {
  std::optional<CgroupMemory> best;
  for (const Hierarchy& h : memory_hierarchies(root)) tightest_in(h, best);
  return best;
}

}  // namespace shardops
