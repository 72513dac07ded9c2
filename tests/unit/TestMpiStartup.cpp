#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

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

}  // namespace
