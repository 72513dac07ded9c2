// String tensors through every distributed routing path (partition, stitch,
// scatter-nd's concatenation, tensor-scatter-update, gather-nd, redistribute),
// compared string for string with the one-rank ops under every test layout: empty,
// long (> 64 KiB), non-ASCII UTF-8 and NUL-holding strings, mixed lengths,
// duplicates across ranks, and exchanges split into many rounds.
#include <gtest/gtest.h>

#include "DistTestUtil.hpp"
#include "shardops/kernels/StringKernels.hpp"
#include "shardops/ops/DistOps.hpp"

namespace shardops {
namespace {

using namespace test;

std::string random_string(Rng& rng) {
  static const std::vector<std::string> pieces{
      "a", "bc", "\xC3\xB6", "\xE6\x97\xA5", "\xF0\x9F\x98\x80", std::string("\0", 1), "xyz", " "};
  switch (rng() % 10) {
    case 0: return "";
    case 1: return rng() % 40 == 0 ? std::string(70000 + rng() % 100, static_cast<char>('A' + rng() % 26)) : "k";
    default: {
      std::string s;
      const std::size_t n = rng() % 6;
      for (std::size_t i = 0; i < n; ++i) s += pieces[rng() % pieces.size()];
      return s;
    }
  }
}

Tensor random_strings(Rng& rng, const Shape& shape) {
  std::vector<std::string> values(static_cast<std::size_t>(shape.num_elements()));
  for (std::string& v : values) v = random_string(rng);
  return make_string_tensor(shape, values);
}

TEST(DistStrings, RedistributeAndAllgather) {
  Rng rng(701);
  const Tensor full = random_strings(rng, Shape{23, 2});
  for (const RowLayout& from : test_layouts(rng, 23, world().size())) {
    const DistTensor d = shard(full, from);
    expect_same_tensor(d, full, "shard " + layout_str(from));
    for (const RowLayout& to : test_layouts(rng, 23, world().size()))
      expect_same_tensor(d.redistribute(world(), to), full, layout_str(from) + " -> " + layout_str(to));
  }
}

TEST(DistStrings, DynamicPartition) {
  Rng rng(702);
  const Tensor data = random_strings(rng, Shape{31, 3});
  const Tensor partitions = random_int32(rng, Shape{31}, 0, 3);
  const std::vector<Tensor> expected = dynamic_partition(data, partitions, 4);
  for (const RowLayout& layout : test_layouts(rng, 31, world().size())) {
    // Data sharded differently from the partitions: the data rows move first.
    const std::vector<DistTensor> got =
        dynamic_partition(world(), shard(data, random_layout(rng, 31, world().size())), shard(partitions, layout), 4);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t p = 0; p < got.size(); ++p)
      expect_same_tensor(got[p], expected[p], "partition " + std::to_string(p) + " " + layout_str(layout));
  }
}

TEST(DistStrings, DynamicStitchLastWinsAcrossInputsAndRanks) {
  Rng rng(703);
  const Tensor i0 = random_int32(rng, Shape{17}, 0, 12), i1 = random_int32(rng, Shape{9}, 0, 14);
  const Tensor d0 = random_strings(rng, Shape{17, 2}), d1 = random_strings(rng, Shape{9, 2});
  const Tensor expected = dynamic_stitch({i0, i1}, {d0, d1});
  for (const RowLayout& layout : test_layouts(rng, 17, world().size())) {
    const DistTensor got = dynamic_stitch(
        world(), {shard(i0, layout), shard(i1)},
        {shard(d0, random_layout(rng, 17, world().size())), shard(d1, random_layout(rng, 9, world().size()))});
    expect_same_tensor(got, expected, "stitch " + layout_str(layout));
  }
}

TEST(DistStrings, ScatterNdConcatenatesInGlobalIndexOrder) {
  Rng rng(704);
  for (DType index_dtype : {DType::Int32, DType::Int64}) {
    // 40 updates into 3 hot rows of 6: long concatenations whose order is visible.
    const Tensor indices = random_indices(rng, index_dtype, Shape{40}, {6}, 3);
    const Tensor updates = random_strings(rng, Shape{40, 2});
    const Tensor expected = scatter_nd(indices, updates, {6, 2});
    for (const RowLayout& layout : test_layouts(rng, 40, world().size())) {
      expect_same_tensor(scatter_nd(world(), shard(indices, layout), shard(updates, layout), {6, 2}), expected,
                         std::string("scatter_nd ") + dtype_name(index_dtype) + " " + layout_str(layout));
    }
    // Depth 2 into single elements, updates sharded unlike the indices.
    const Tensor idx2 = random_indices(rng, index_dtype, Shape{25}, {5, 3});
    const Tensor upd2 = random_strings(rng, Shape{25});
    const Tensor expected2 = scatter_nd(idx2, upd2, {5, 3});
    for (const RowLayout& layout : test_layouts(rng, 25, world().size())) {
      expect_same_tensor(
          scatter_nd(world(), shard(idx2, layout), shard(upd2, random_layout(rng, 25, world().size())), {5, 3}),
          expected2, "scatter_nd depth 2 " + layout_str(layout));
    }
  }
}

TEST(DistStrings, TensorScatterUpdateLastWins) {
  Rng rng(705);
  const Tensor tensor = random_strings(rng, Shape{11, 2});
  const Tensor indices = random_indices(rng, DType::Int64, Shape{30}, {11}, 4);
  const Tensor updates = random_strings(rng, Shape{30, 2});
  const Tensor expected = tensor_scatter(ScatterOp::Update, tensor, indices, updates);
  for (const RowLayout& layout : test_layouts(rng, 30, world().size())) {
    const DistTensor got =
        tensor_scatter(world(), ScatterOp::Update, shard(tensor, random_layout(rng, 11, world().size())),
                       shard(indices, layout), shard(updates, layout));
    expect_same_tensor(got, expected, "tensor_scatter_update " + layout_str(layout));
  }
  EXPECT_NE(error_of([&] {
              tensor_scatter(world(), ScatterOp::Add, shard(tensor), shard(indices), shard(updates));
            }).find("Could not find device for node: {{node TensorScatterAdd}}"),
            std::string::npos);
}

TEST(DistStrings, GatherNdDepthsAndIgnoredIndices) {
  Rng rng(706);
  const Tensor params = random_strings(rng, Shape{9, 3});
  for (int depth : {0, 1, 2}) {
    std::vector<std::int64_t> dims{9, 3};
    dims.resize(static_cast<std::size_t>(depth));
    Tensor indices =
        depth == 0 ? index_tensor(DType::Int32, Shape{4, 0}, {}) : random_indices(rng, DType::Int32, Shape{21}, dims);
    const Tensor expected = gather_nd(params, indices);
    for (const RowLayout& layout : test_layouts(rng, indices.shape().dim(0), world().size())) {
      // Rows fetched from their owners, and all of params brought to every rank.
      for (GatherParams how : {GatherParams::Fetch, GatherParams::Replicate}) {
        OpOptions opts;
        opts.gather_params = how;
        expect_same_tensor(
            gather_nd(world(), shard(params, random_layout(rng, 9, world().size())), shard(indices, layout), opts),
            expected,
            "gather_nd depth " + std::to_string(depth) + " " + layout_str(layout) +
                (how == GatherParams::Fetch ? " fetch" : " replicate"));
      }
    }
  }
  // An ignored bad index gathers empty strings.
  Tensor indices = random_indices(rng, DType::Int64, Shape{12}, {9});
  set_index_value(indices, 5, 99);
  for (GatherParams how : {GatherParams::Fetch, GatherParams::Replicate}) {
    OpOptions ignore;
    ignore.bad_indices = BadIndices::Ignore;
    ignore.gather_params = how;
    expect_same_tensor(gather_nd(world(), shard(params), shard(indices), ignore), gather_nd(params, indices, ignore),
                       std::string("gather_nd ignore") + (how == GatherParams::Fetch ? " fetch" : " replicate"));
  }
}

TEST(DistStrings, SplitRoundsMoveTheSameStrings) {
  // Rounds of 3 rows (bytes, for the string bytes) per message: many Alltoallv rounds.
  const OpOptions rounds = with_round_limit(3 * world().size());
  Rng rng(707);
  const Tensor indices = random_indices(rng, DType::Int32, Shape{20}, {7}, 2);
  const Tensor updates = random_strings(rng, Shape{20});
  expect_same_tensor(scatter_nd(world(), shard(indices), shard(updates), {7}, rounds),
                     scatter_nd(indices, updates, {7}), "scatter_nd split rounds");
  const Tensor params = random_strings(rng, Shape{7});
  expect_same_tensor(gather_nd(world(), shard(params), shard(indices), rounds), gather_nd(params, indices),
                     "gather_nd split rounds");
}

}  // namespace
}  // namespace shardops
