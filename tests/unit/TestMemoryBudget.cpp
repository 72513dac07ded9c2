// The memory budget (core/MemoryBudget.hpp) and the cgroup limits it starts from
// (core/CgroupMemory.hpp). The cgroup reader runs on fake trees of /proc and cgroup
// files, laid out as the kernel shows them for v1 and v2 (the e2e test test_limits.py
// runs the command under a real cgroup); the budget tests set a budget and check what
// is refused, with what the process holds counted.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "shardops/core/CgroupMemory.hpp"
#include "shardops/core/MemoryBudget.hpp"
#include "shardops/core/Tensor.hpp"

namespace {

namespace fs = std::filesystem;

/// A fresh directory that plays "/" for cgroup_memory_limit(root).
class FakeRoot {
 public:
  FakeRoot() {
    root_ = fs::temp_directory_path() /
            ("shardops-cgroup-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~FakeRoot() { fs::remove_all(root_); }
  void write(const std::string& path, const std::string& text) const {
    const fs::path p = root_ / path.substr(1);
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string str() const { return root_.string(); }

 private:
  fs::path root_;
};

constexpr std::uint64_t kGiB = std::uint64_t(1) << 30;
const std::string kV1Unlimited = "9223372036854771712\n";

TEST(CgroupMemory, V1TightestAncestorAndItsWorkingSet) {
  FakeRoot r;
  r.write("/proc/self/cgroup", "5:cpu,cpuacct:/slurm/job_7\n4:memory:/slurm/job_7/step_0\n1:name=systemd:/\n");
  r.write("/proc/self/mountinfo",
          "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
          "31 25 0:27 / /sys/fs/cgroup/memory rw,nosuid shared:14 - cgroup cgroup rw,memory\n");
  const std::string g = "/sys/fs/cgroup/memory";
  r.write(g + "/memory.limit_in_bytes", kV1Unlimited);
  r.write(g + "/slurm/memory.limit_in_bytes", kV1Unlimited);
  r.write(g + "/slurm/job_7/memory.limit_in_bytes", std::to_string(3 * kGiB) + "\n");
  r.write(g + "/slurm/job_7/memory.usage_in_bytes", std::to_string(kGiB) + "\n");
  r.write(g + "/slurm/job_7/memory.stat", "cache 400\ntotal_inactive_file 1000\ntotal_rss 5\n");
  r.write(g + "/slurm/job_7/step_0/memory.limit_in_bytes", kV1Unlimited);
  const auto cg = shardops::cgroup_memory_limit(r.str());
  ASSERT_TRUE(cg.has_value());
  EXPECT_EQ(cg->version, 1);
  EXPECT_EQ(cg->limit, 3 * kGiB);
  EXPECT_EQ(cg->usage, kGiB - 1000);  // inactive file cache is reclaimed before an OOM kill
  EXPECT_EQ(cg->group, "/slurm/job_7");
}

TEST(CgroupMemory, V2MaxIsNoLimitAndTheParentsLimitCounts) {
  FakeRoot r;
  r.write("/proc/self/cgroup", "0::/user.slice/job.scope\n");
  r.write("/proc/self/mountinfo", "35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
  r.write("/sys/fs/cgroup/user.slice/memory.max", std::to_string(2 * kGiB) + "\n");
  r.write("/sys/fs/cgroup/user.slice/memory.current", "4096\n");
  r.write("/sys/fs/cgroup/user.slice/memory.stat", "anon 4096\ninactive_file 96\n");
  r.write("/sys/fs/cgroup/user.slice/job.scope/memory.max", "max\n");
  const auto cg = shardops::cgroup_memory_limit(r.str());
  ASSERT_TRUE(cg.has_value());
  EXPECT_EQ(cg->version, 2);
  EXPECT_EQ(cg->limit, 2 * kGiB);
  EXPECT_EQ(cg->usage, 4000u);
  EXPECT_EQ(cg->group, "/user.slice");
}

TEST(CgroupMemory, ChildLimitTighterThanParentWins) {
  FakeRoot r;
  r.write("/proc/self/cgroup", "0::/a/b\n");
  r.write("/proc/self/mountinfo", "35 24 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  r.write("/sys/fs/cgroup/a/memory.max", std::to_string(8 * kGiB));
  r.write("/sys/fs/cgroup/a/b/memory.max", std::to_string(kGiB));
  r.write("/sys/fs/cgroup/a/b/memory.current", "0");
  const auto cg = shardops::cgroup_memory_limit(r.str());
  ASSERT_TRUE(cg.has_value());
  EXPECT_EQ(cg->limit, kGiB);
  EXPECT_EQ(cg->group, "/a/b");
}

TEST(CgroupMemory, ContainerMountRootIsStrippedFromThePath) {
  // Inside a container the hierarchy is mounted at the container's group: the files of
  // "/docker/abc" are at the mount point itself.
  FakeRoot r;
  r.write("/proc/self/cgroup", "4:memory:/docker/abc\n");
  r.write("/proc/self/mountinfo", "31 25 0:27 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n");
  r.write("/sys/fs/cgroup/memory/memory.limit_in_bytes", std::to_string(kGiB));
  const auto cg = shardops::cgroup_memory_limit(r.str());
  ASSERT_TRUE(cg.has_value());
  EXPECT_EQ(cg->limit, kGiB);
}

TEST(CgroupMemory, NoLimitAnywhereIsNone) {
  FakeRoot r;
  r.write("/proc/self/cgroup", "4:memory:/\n0::/\n");
  r.write("/proc/self/mountinfo",
          "31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
          "32 25 0:28 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
  r.write("/sys/fs/cgroup/memory/memory.limit_in_bytes", kV1Unlimited);
  EXPECT_FALSE(shardops::cgroup_memory_limit(r.str()).has_value());  // and no memory.max in the v2 tree
  FakeRoot empty;
  EXPECT_FALSE(shardops::cgroup_memory_limit(empty.str()).has_value());
}

std::string refusal(std::size_t bytes) {
  try {
    shardops::check_allocation(bytes, "the test's block");
  } catch (const shardops::InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(MemoryBudget, SharedByTheRanksOfTheNodeAndWhatIsHeldCounts) {
  const std::uint64_t node = 400 * (std::uint64_t(1) << 20);
  shardops::set_memory_budget(node, 4, "a test's node");
  const shardops::MemoryBudget b = shardops::memory_budget();
  EXPECT_EQ(b.bytes, (node - shardops::untracked_reserve(node, 4)) / 4);
  EXPECT_EQ(shardops::untracked_reserve(node, 4), 4 * (8ULL << 20));         // 8 MiB a rank: 32 MiB of 400
  EXPECT_EQ(shardops::untracked_reserve(1ULL << 30, 4), (1ULL << 30) / 20);  // a twentieth of 1 GiB: more
  EXPECT_EQ(shardops::untracked_reserve(1ULL << 20, 1), 1ULL << 20);         // never more than there is
  EXPECT_EQ(b.ranks_on_node, 4);
  const std::string over = refusal(b.bytes + 1);
  EXPECT_NE(over.find("the test's block needs " + std::to_string(b.bytes + 1) + " bytes"), std::string::npos) << over;
  EXPECT_NE(over.find("shared by 4 ranks on this node"), std::string::npos) << over;
  EXPECT_NE(over.find("more ranks"), std::string::npos) << over;
  EXPECT_EQ(refusal(b.bytes / 2), "");
  {
    // A tensor holds its bytes (mapped, not touched: nothing real is spent) until it goes.
    const shardops::Tensor held(shardops::DType::UInt8, shardops::Shape{static_cast<std::int64_t>(b.bytes * 3 / 4)},
                                shardops::Init::Uninitialized, "held");
    EXPECT_GE(shardops::memory_held(), b.bytes * 3 / 4);
    const std::string now = refusal(b.bytes / 2);
    EXPECT_NE(now.find("of which the job holds"), std::string::npos) << now;
    EXPECT_THROW(shardops::Tensor(shardops::DType::UInt8, shardops::Shape{static_cast<std::int64_t>(b.bytes / 2)},
                                  shardops::Init::Uninitialized, "second"),
                 shardops::InvalidArgument);
  }
  EXPECT_EQ(refusal(b.bytes / 2), "");
  shardops::set_memory_budget(shardops::memory_headroom().bytes, 1, "restored");
}

TEST(MemoryBudget, CountsBeyondWhatFitsAreRefusedWithoutOverflow) {
  EXPECT_THROW(shardops::check_count(std::numeric_limits<std::int64_t>::max(), 1 << 20, "a count"),
               shardops::InvalidArgument);
  EXPECT_NO_THROW(shardops::check_count(1000, 64, "a count"));
  EXPECT_NO_THROW(shardops::check_count(-5, 64, "a count"));  // negative counts are the op's own error
}

}  // namespace
