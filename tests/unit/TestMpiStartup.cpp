#include <mpi.h>

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "shardops/route/MpiStartup.hpp"
#include "shardops/route/detail/MpiStartupRules.hpp"

namespace {

using shardops::detail::mca_param_in_file;
using shardops::detail::mtl_excluding;

// Debian's openmpi-mca-params.conf, as Open MPI 4.1.4's package ships it (comments cut).
const char* const kDebianConf =
    "# This is the default system-wide MCA parameters defaults file.\n"
    "btl_base_warn_component_unused=0\n"
    "# Avoid openib an in case applications use fork: see issue #941995\n"
    "mtl = ^ofi\n"
    "btl = ^uct,openib,ofi\n"
    "pml = ^ucx\n"
    "osc = ^ucx,pt2pt\n";

TEST(MpiStartup, ReadsAParameterAsOpenMpiDoes) {
  EXPECT_EQ(mca_param_in_file(kDebianConf, "mtl"), std::optional<std::string>("^ofi"));
  EXPECT_EQ(mca_param_in_file(kDebianConf, "pml"), std::optional<std::string>("^ucx"));
  EXPECT_EQ(mca_param_in_file(kDebianConf, "btl_base_warn_component_unused"), std::optional<std::string>("0"));
  // Not set, only in a comment, or a longer name with the same start: none.
  EXPECT_EQ(mca_param_in_file(kDebianConf, "coll"), std::nullopt);
  EXPECT_EQ(mca_param_in_file("# mtl = psm2\n", "mtl"), std::nullopt);
  EXPECT_EQ(mca_param_in_file("mtl_base_verbose = 10\n", "mtl"), std::nullopt);
  // The last setting counts; a comment after the value is not part of it.
  EXPECT_EQ(mca_param_in_file("mtl = ^ofi\n  mtl=psm2   # Omni-Path\n", "mtl"), std::optional<std::string>("psm2"));
  EXPECT_EQ(mca_param_in_file("", "mtl"), std::nullopt);
}

TEST(MpiStartup, AddsTheAbsentMtlsToTheExcludedOnes) {
  EXPECT_EQ(mtl_excluding(std::string("^ofi"), {"psm", "psm2"}), std::optional<std::string>("^ofi,psm,psm2"));
  EXPECT_EQ(mtl_excluding(std::nullopt, {"psm", "psm2"}), std::optional<std::string>("^psm,psm2"));
  EXPECT_EQ(mtl_excluding(std::string(""), {"psm2"}), std::optional<std::string>("^psm2"));
  EXPECT_EQ(mtl_excluding(std::string("^ofi, psm"), {"psm", "psm2"}), std::optional<std::string>("^ofi,psm,psm2"));
}

TEST(MpiStartup, ChangesNothingItNeedNotOrMustNot) {
  // Every absent one already excluded, or nothing absent.
  EXPECT_EQ(mtl_excluding(std::string("^psm2,ofi,psm"), {"psm", "psm2"}), std::nullopt);
  EXPECT_EQ(mtl_excluding(std::string("^ofi"), {}), std::nullopt);
  // MTLs named to include: Open MPI opens only those, and the choice is the site's.
  EXPECT_EQ(mtl_excluding(std::string("ofi"), {"psm", "psm2"}), std::nullopt);
  EXPECT_EQ(mtl_excluding(std::string("psm2,ofi"), {"psm", "psm2"}), std::nullopt);
  // Not a plain list of component names: not ours to rewrite.
  EXPECT_EQ(mtl_excluding(std::string("^ofi,$X"), {"psm"}), std::nullopt);
  EXPECT_EQ(mtl_excluding(std::string("^ofi,,psm"), {"psm"}), std::nullopt);
}

// skip_absent_mtls() itself, before MPI_Init (this program never starts MPI), on parameter
// files of the test's making: OPAL_SYSCONFDIR names Open MPI's configuration folder, HOME
// the user's.
class SkipAbsentMtls : public ::testing::Test {
 protected:
  void SetUp() override {
#if !defined(OPEN_MPI)
    GTEST_SKIP() << "not Open MPI";
#endif
    if (!std::filesystem::exists("/dev/ipath")) absent_.push_back("psm");
    glob_t g{};
    const bool hfi1 = glob("/dev/hfi1_[0-9]*", 0, nullptr, &g) == 0 && g.gl_pathc > 0;
    globfree(&g);
    if (!hfi1) absent_.push_back("psm2");
    if (absent_.empty()) GTEST_SKIP() << "this machine has both PSM devices";
    char pattern[] = "/tmp/shardops-mtl-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    std::filesystem::create_directories(dir_ + "/etc");
    std::filesystem::create_directories(dir_ + "/home/.openmpi");
    for (const char* name : kVariables) {
      const char* v = std::getenv(name);
      saved_.emplace_back(v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(name);
    }
    setenv("OPAL_SYSCONFDIR", (dir_ + "/etc").c_str(), 1);
    setenv("HOME", (dir_ + "/home").c_str(), 1);
  }
  void TearDown() override {
    for (std::size_t i = 0; i < saved_.size(); ++i) {
      if (saved_[i])
        setenv(kVariables[i], saved_[i]->c_str(), 1);
      else
        unsetenv(kVariables[i]);
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void write(const std::string& file, const std::string& text) { std::ofstream(dir_ + "/" + file) << text; }
  /// skip_absent_mtls()'s result, which must be what it left in OMPI_MCA_mtl; then unset.
  std::string run() {
    const std::string set = shardops::skip_absent_mtls();
    const char* env = std::getenv("OMPI_MCA_mtl");
    EXPECT_EQ(set.empty() ? std::string("(unset)") : set, env ? std::string(env) : std::string("(unset)"));
    unsetenv("OMPI_MCA_mtl");
    return set;
  }
  std::string excluding(const std::optional<std::string>& current) const {
    return mtl_excluding(current, absent_).value_or("");
  }

  static constexpr const char* kVariables[] = {
      "OPAL_SYSCONFDIR",          "OPAL_PREFIX", "HOME", "OMPI_MCA_mtl", "OMPI_MCA_pml", "OMPI_MCA_sharedfp",
      "SHARDOPS_SKIP_ABSENT_MTLS"};
  std::vector<std::optional<std::string>> saved_;
  std::vector<std::string> absent_;
  std::string dir_;
};

// skip_path_bound_sharedfp(): Open MPI's lockedfile and sm components are left out unless the
// environment or a parameter file chose the shared-file-pointer components.
TEST_F(SkipAbsentMtls, LeavesOutTheLockedfileSharedFilePointer) {
  write("etc/openmpi-mca-params.conf", kDebianConf);
  EXPECT_EQ(shardops::skip_path_bound_sharedfp(), "^lockedfile,sm");
  EXPECT_STREQ(std::getenv("OMPI_MCA_sharedfp"), "^lockedfile,sm");
  setenv("OMPI_MCA_sharedfp", "individual", 1);
  EXPECT_EQ(shardops::skip_path_bound_sharedfp(), "");
  EXPECT_STREQ(std::getenv("OMPI_MCA_sharedfp"), "individual");
  unsetenv("OMPI_MCA_sharedfp");
  write("home/.openmpi/mca-params.conf", "sharedfp = lockedfile\n");
  EXPECT_EQ(shardops::skip_path_bound_sharedfp(), "");
  EXPECT_EQ(std::getenv("OMPI_MCA_sharedfp"), nullptr);
}

TEST_F(SkipAbsentMtls, KeepsTheSitesExclusions) {
  write("etc/openmpi-mca-params.conf", kDebianConf);
  EXPECT_EQ(run(), excluding(std::string("^ofi")));
  write("etc/openmpi-mca-params.conf", "btl = ^openib\n");
  EXPECT_EQ(run(), excluding(std::nullopt));
}

TEST_F(SkipAbsentMtls, TheUsersFileComesFirst) {
  write("etc/openmpi-mca-params.conf", kDebianConf);
  write("home/.openmpi/mca-params.conf", "mtl = ^ucx\n");
  EXPECT_EQ(run(), excluding(std::string("^ucx")));
  write("home/.openmpi/mca-params.conf", "mtl = psm2\n");  // named to include: left alone
  EXPECT_EQ(run(), "");
}

TEST_F(SkipAbsentMtls, LeavesAloneWhatItCannotKnowOrMustNotChange) {
  // No parameter file where Open MPI's folder should be: not the folder of this Open MPI.
  EXPECT_EQ(run(), "");
  write("etc/openmpi-mca-params.conf", kDebianConf);
  // The override file beats the environment.
  write("etc/openmpi-mca-params-override.conf", "mtl = ^ofi\n");
  EXPECT_EQ(run(), "");
  std::filesystem::remove(dir_ + "/etc/openmpi-mca-params-override.conf");
  // A choice in the environment, and the switch.
  setenv("OMPI_MCA_pml", "ob1", 1);
  EXPECT_EQ(run(), "");
  unsetenv("OMPI_MCA_pml");
  setenv("SHARDOPS_SKIP_ABSENT_MTLS", "0", 1);
  EXPECT_EQ(run(), "");
  unsetenv("SHARDOPS_SKIP_ABSENT_MTLS");
  setenv("OMPI_MCA_mtl", "^ofi", 1);
  EXPECT_EQ(shardops::skip_absent_mtls(), "");
  EXPECT_STREQ(std::getenv("OMPI_MCA_mtl"), "^ofi");
  unsetenv("OMPI_MCA_mtl");
  // A relocated installation whose folder is not named.
  unsetenv("OPAL_SYSCONFDIR");
  setenv("OPAL_PREFIX", dir_.c_str(), 1);
  EXPECT_EQ(run(), "");
  // And all in order again: it does set it.
  unsetenv("OPAL_PREFIX");
  setenv("OPAL_SYSCONFDIR", (dir_ + "/etc").c_str(), 1);
  EXPECT_EQ(run(), excluding(std::string("^ofi")));
}

// mpi_needed(): a job of one rank, as its launcher tells it (or no launcher at all), runs
// without MPI; more ranks, a launcher that names no rank count, or the switch start it.
TEST(MpiNeeded, OnlyWhereTheJobHasMoreThanOneRankOrCannotTell) {
  constexpr const char* kLauncher[] = {
      "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMI_SIZE", "PMI_RANK", "PMIX_RANK", "PMIX_NAMESPACE",
      "SLURM_STEP_NUM_TASKS", "SHARDOPS_ONE_RANK_MPI"};
  std::vector<std::optional<std::string>> saved;
  for (const char* name : kLauncher) {
    const char* v = std::getenv(name);
    saved.push_back(v ? std::optional<std::string>(v) : std::nullopt);
    unsetenv(name);
  }
  EXPECT_FALSE(shardops::mpi_needed()) << "no launcher: a job of one rank";
  setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  EXPECT_FALSE(shardops::mpi_needed()) << "mpirun -n 1";
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  EXPECT_TRUE(shardops::mpi_needed()) << "mpirun -n 2";
  setenv("SLURM_STEP_NUM_TASKS", "1", 1);
  EXPECT_TRUE(shardops::mpi_needed()) << "mpirun -n 2 inside a one-task Slurm step: mpirun's count comes first";
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("OMPI_COMM_WORLD_RANK");
  EXPECT_FALSE(shardops::mpi_needed()) << "srun -n 1";
  setenv("SLURM_STEP_NUM_TASKS", "4", 1);
  EXPECT_TRUE(shardops::mpi_needed()) << "srun -n 4";
  unsetenv("SLURM_STEP_NUM_TASKS");
  setenv("PMI_SIZE", "1", 1);
  EXPECT_FALSE(shardops::mpi_needed()) << "a PMI launcher of one rank";
  unsetenv("PMI_SIZE");
  setenv("PMIX_RANK", "0", 1);
  EXPECT_TRUE(shardops::mpi_needed()) << "PMIx without a rank count: only MPI can tell";
  unsetenv("PMIX_RANK");
  setenv("SHARDOPS_ONE_RANK_MPI", "1", 1);
  EXPECT_TRUE(shardops::mpi_needed()) << "asked for";
  for (std::size_t i = 0; i < saved.size(); ++i) {
    if (saved[i])
      setenv(kLauncher[i], saved[i]->c_str(), 1);
    else
      unsetenv(kLauncher[i]);
  }
}

}  // namespace
