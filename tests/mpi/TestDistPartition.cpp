// Distributed DynamicPartition against the one-rank op, byte for byte, and the
// output layout of docs/design.md: each output's rows stay where they were.
#include <gtest/gtest.h>

#include "DistTestUtil.hpp"
#include "shardops/ops/DistOps.hpp"

namespace shardops {
namespace {

using namespace test;

// Runs both ops and compares every output, its global shape and its layout.
void check_partition(const Tensor& data, const Tensor& partitions, std::int64_t num_partitions,
                     const RowLayout& partitions_layout, const RowLayout& data_layout, const OpOptions& options,
                     const std::string& what) {
  const std::vector<Tensor> expected = dynamic_partition(data, partitions, num_partitions, options);
  const DistTensor d = shard(data, data_layout);
  const DistTensor ids = shard(partitions, partitions_layout);
  const std::vector<DistTensor> got = dynamic_partition(world(), d, ids, num_partitions, options);
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (std::size_t p = 0; p < got.size(); ++p) {
    const std::string name = what + " output " + std::to_string(p);
    EXPECT_EQ(got[p].shape(), expected[p].shape()) << name;
    expect_same_tensor(got[p], expected[p], name);
    // Partition outputs stay where their rows were: rank r holds the rows of its own block.
    const RowLayout ids_layout = ids.layout();
    EXPECT_EQ(got[p].layout().counts(), counts_of(partitions, ids_layout, static_cast<std::int32_t>(p))) << name;
  }
  // The same outputs with their rows made later, from data where it lies.
  const std::vector<LazyTensor> lazy = dynamic_partition_lazy(world(), d, ids, num_partitions, options);
  ASSERT_EQ(lazy.size(), expected.size()) << what;
  const bool made_later =
      !is_string(data.dtype()) && partitions.rank() > 0 && data.shape().product_from(partitions.rank()) > 0;
  for (std::size_t p = 0; p < lazy.size(); ++p) {
    const std::string name = what + " output " + std::to_string(p) + " (made later)";
    expect_same_rows(lazy[p], got[p], name);
    EXPECT_EQ(!lazy[p].held(), made_later) << name;
  }
}

TEST(DistDynamicPartition, MatchesOneRankOpOverLayoutsAndDtypes) {
  Rng rng(101);
  const int p = world().size();
  for (DType dtype : movement_dtypes()) {
    for (std::int64_t rows : {0, 1, 3, 50}) {
      const Tensor data = random_tensor(rng, dtype, Shape{rows, 3});
      for (std::int64_t num : {1, 4}) {
        const Tensor ids = random_int32(rng, Shape{rows}, 0, static_cast<std::int32_t>(num - 1));
        for (const RowLayout& layout : test_layouts(rng, rows, p)) {
          check_partition(data, ids, num, layout, layout, {},
                          std::string(dtype_name(dtype)) + " rows " + std::to_string(rows) + " num " +
                              std::to_string(num) + " layout " + layout_str(layout));
        }
      }
    }
  }
}

TEST(DistDynamicPartition, PartitionsOfHigherRankAndOddRowSizes) {
  Rng rng(102);
  const int p = world().size();
  // partitions [R, 2] over data [R, 2, 5] of int8: 5-byte rows.
  const Tensor data = random_tensor(rng, DType::Int8, Shape{21, 2, 5});
  const Tensor ids = random_int32(rng, Shape{21, 2}, 0, 6);
  for (const RowLayout& layout : test_layouts(rng, 21, p)) {
    check_partition(data, ids, 7, layout, layout, {}, "rank-2 partitions " + layout_str(layout));
  }
  // partitions of the same shape as data: every output is rank 1.
  const Tensor flat = random_tensor(rng, DType::Float16, Shape{13, 3});
  const Tensor flat_ids = random_int32(rng, Shape{13, 3}, 0, 2);
  for (const RowLayout& layout : test_layouts(rng, 13, p)) {
    check_partition(flat, flat_ids, 3, layout, layout, {}, "scalar rows " + layout_str(layout));
  }
}

TEST(DistDynamicPartition, DataShardedDifferentlyFromPartitions) {
  Rng rng(103);
  const int p = world().size();
  const Tensor data = random_tensor(rng, DType::Float64, Shape{30, 2});
  const Tensor ids = random_int32(rng, Shape{30}, 0, 3);
  const std::vector<RowLayout> layouts = test_layouts(rng, 30, p);
  for (const RowLayout& ids_layout : layouts) {
    for (const RowLayout& data_layout : layouts) {
      check_partition(data, ids, 4, ids_layout, data_layout, {},
                      "partitions " + layout_str(ids_layout) + " data " + layout_str(data_layout));
    }
  }
}

TEST(DistDynamicPartition, AllRowsInOnePartition) {
  Rng rng(104);
  const int p = world().size();
  const Tensor data = random_tensor(rng, DType::Int32, Shape{17, 4});
  const Tensor ids = Tensor::from_vector(DType::Int32, Shape{17}, std::vector<std::int32_t>(17, 2));
  OpStats stats;
  OpOptions options;
  options.stats = &stats;
  for (const RowLayout& layout : test_layouts(rng, 17, p)) {
    stats.bytes_sent = -1;
    check_partition(data, ids, 5, layout, layout, options, "all in partition 2, layout " + layout_str(layout));
    EXPECT_EQ(stats.bytes_sent, 0);  // partition outputs stay where their rows are
  }
}

TEST(DistDynamicPartition, ScalarPartitions) {
  Rng rng(105);
  const int p = world().size();
  // Scalar partitions, scalar data: the one "row" lives on rank 0.
  const Tensor scalar = random_tensor(rng, DType::Float32, Shape());
  for (std::int32_t id : {0, 2}) {
    const Tensor ids = Tensor::from_vector(DType::Int32, Shape(), std::vector<std::int32_t>{id});
    check_partition(scalar, ids, 3, RowLayout::on_rank(1, p, 0), RowLayout::on_rank(1, p, 0), {},
                    "scalar data, id " + std::to_string(id));
    // Scalar partitions of a vector: the whole vector is the one row.
    const Tensor vec = random_tensor(rng, DType::Int64, Shape{6});
    for (const RowLayout& layout : test_layouts(rng, 6, p)) {
      check_partition(vec, ids, 3, RowLayout::on_rank(1, p, 0), layout, {},
                      "vector data " + layout_str(layout) + ", id " + std::to_string(id));
    }
  }
}

TEST(DistDynamicPartition, IgnorePolicyDropsBadRows) {
  Rng rng(106);
  const int p = world().size();
  const Tensor data = random_tensor(rng, DType::Float32, Shape{40, 2});
  const Tensor ids = random_int32(rng, Shape{40}, -2, 4);  // -2, -1 and 4 are out of [0, 4)
  OpOptions ignore;
  ignore.bad_indices = BadIndices::Ignore;
  for (const RowLayout& layout : test_layouts(rng, 40, p)) {
    check_partition(data, ids, 4, layout, layout, ignore, "ignore, layout " + layout_str(layout));
  }
}

TEST(DistDynamicPartition, EmptyRowsAndEmptyData) {
  Rng rng(107);
  const int p = world().size();
  // Rows of zero elements: outputs have the right shapes and layouts.
  const Tensor data(DType::Float32, Shape{8, 0});
  const Tensor ids = random_int32(rng, Shape{8}, 0, 1);
  for (const RowLayout& layout : test_layouts(rng, 8, p)) {
    check_partition(data, ids, 2, layout, layout, {}, "zero-width rows " + layout_str(layout));
  }
  const Tensor none(DType::Complex64, Shape{0, 3});
  const Tensor no_ids(DType::Int32, Shape{0});
  check_partition(none, no_ids, 3, RowLayout::balanced(0, p), RowLayout::balanced(0, p), {}, "no rows");
}

}  // namespace
}  // namespace shardops
