// ScatterNd on one rank: TensorFlow's documented examples, summation order, edge
// cases, every error text (checked against TF 2.21), and a randomized comparison with
// the sequential reference over every dtype, both index dtypes and both schedules.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "OpsTestUtil.hpp"
#include "Reference.hpp"
#include "shardops/core/Half.hpp"
#include "shardops/ops/detail/ScatterApply.hpp"

namespace shardops {
namespace test {
namespace {

Tensor scatter(const Tensor& indices, const Tensor& updates, const std::vector<std::int64_t>& shape,
               Schedule schedule = Schedule::Auto, BadIndices bad = BadIndices::Error) {
  return scatter_nd(indices, updates, shape, options(schedule, bad));
}

// tf.scatter_nd docs: four scalars into a vector of 8.
TEST(ScatterNd, DocInsertElements) {
  for (DType index : kIndexDTypes) {
    for (Schedule schedule : kSchedules) {
      EXPECT_TRUE(has_values<std::int32_t>(
          scatter(index_tensor(index, {4, 1}, {4, 3, 1, 7}), i32({4}, {9, 10, 11, 12}), {8}, schedule), DType::Int32,
          {8}, {0, 11, 0, 10, 9, 0, 0, 12}));
    }
  }
}

// tf.scatter_nd docs: two 4x4 slices into a rank-3 tensor.
TEST(ScatterNd, DocInsertSlices) {
  std::vector<std::int32_t> slice;
  for (std::int32_t v = 5; v <= 8; ++v) slice.insert(slice.end(), 4, v);
  std::vector<std::int32_t> updates = slice;
  updates.insert(updates.end(), slice.begin(), slice.end());
  std::vector<std::int32_t> expected(16, 0);
  expected.insert(expected.end(), slice.begin(), slice.end());
  expected.insert(expected.end(), 16, 0);
  expected.insert(expected.end(), slice.begin(), slice.end());
  for (DType index : kIndexDTypes) {
    for (Schedule schedule : kSchedules) {
      EXPECT_TRUE(has_values<std::int32_t>(
          scatter(index_tensor(index, {2, 1}, {1, 3}), i32({2, 4, 4}, updates), {4, 4, 4}, schedule), DType::Int32,
          {4, 4, 4}, expected));
    }
  }
}

TEST(ScatterNd, DuplicatesSumInIndexOrder) {
  for (Schedule schedule : kSchedules) {
    SCOPED_TRACE(schedule_name(schedule));
    // float: (1e8 + 1) - 1e8 = 0 in index order (TF gives 0); any other order gives 1 or 0 by luck.
    EXPECT_TRUE(has_values<float>(scatter(i32({3, 1}, {0, 0, 0}), f32({3}, {1e8f, 1, -1e8f}), {2}, schedule),
                                  DType::Float32, {2}, {0, 0}));
    EXPECT_TRUE(has_values<float>(scatter(i32({3, 1}, {0, 0, 0}), f32({3}, {1, 1e8f, -1e8f}), {1}, schedule),
                                  DType::Float32, {1}, {0}));
    EXPECT_TRUE(has_values<float>(scatter(i32({3, 1}, {0, 0, 0}), f32({3}, {1e8f, -1e8f, 1}), {1}, schedule),
                                  DType::Float32, {1}, {1}));
    // half: every partial sum is rounded to half: 2048 + 1 = 2048 (ties to even), three times (TF: 2048).
    const std::vector<std::uint16_t> h = {half_t(2048.f).bits, half_t(1.f).bits, half_t(1.f).bits, half_t(1.f).bits};
    EXPECT_TRUE(
        has_values<std::uint16_t>(scatter(i32({4, 1}, {0, 0, 0, 0}), make(DType::Float16, {4}, h), {1}, schedule),
                                  DType::Float16, {1}, {half_t(2048.f).bits}));
    // Integers wrap (TF: int8 127 + 1 = -128, uint8 250 + 10 = 4).
    EXPECT_TRUE(has_values<std::int8_t>(
        scatter(i32({2, 1}, {0, 0}), make<std::int8_t>(DType::Int8, {2}, {127, 1}), {1}, schedule), DType::Int8, {1},
        {-128}));
    EXPECT_TRUE(has_values<std::uint8_t>(
        scatter(i32({2, 1}, {0, 0}), make<std::uint8_t>(DType::UInt8, {2}, {250, 10}), {1}, schedule), DType::UInt8,
        {1}, {4}));
    // bool accumulates as OR (TF: [False, True, False]).
    EXPECT_TRUE(has_values<std::uint8_t>(
        scatter(i32({3, 1}, {1, 1, 2}), make<std::uint8_t>(DType::Bool, {3}, {1, 1, 0}), {3}, schedule), DType::Bool,
        {3}, {0, 1, 0}));
    // complex adds componentwise (TF: [1.5+2.5j, 3-1j]).
    EXPECT_TRUE(has_values<float>(
        scatter(i32({3, 1}, {0, 1, 0}), make<float>(DType::Complex64, {3}, {1, 2, 3, -1, 0.5f, 0.5f}), {2}, schedule),
        DType::Complex64, {2}, {1.5f, 2.5f, 3, -1}));
  }
}

TEST(ScatterNd, SliceUpdatesAndFullDepth) {
  // Depth 1 of a [3,2] output: rows; depth 2: elements; batch of rank 2.
  for (Schedule schedule : kSchedules) {
    EXPECT_TRUE(has_values<float>(scatter(i32({3, 1}, {2, 0, 2}), f32({3, 2}, {1, 2, 3, 4, 5, 6}), {3, 2}, schedule),
                                  DType::Float32, {3, 2}, {3, 4, 0, 0, 6, 8}));
    EXPECT_TRUE(has_values<float>(
        scatter(i64({2, 2, 2}, {0, 1, 2, 0, 2, 0, 1, 1}), f32({2, 2}, {1, 2, 3, 4}), {3, 2}, schedule), DType::Float32,
        {3, 2}, {0, 1, 0, 4, 5, 0}));
  }
}

TEST(ScatterNd, MaximumIndexDepthSeven) {
  const std::vector<std::int64_t> shape = {2, 1, 2, 1, 2, 1, 2, 3};
  std::vector<float> expected(48, 0);
  expected[45] = 1;  // [1,0,1,0,1,0,1] -> row 15 of 16
  expected[46] = 2;
  expected[47] = 3;
  for (Schedule schedule : kSchedules) {
    EXPECT_TRUE(has_values<float>(scatter(i32({1, 7}, {1, 0, 1, 0, 1, 0, 1}), f32({1, 3}, {1, 2, 3}), shape, schedule),
                                  DType::Float32, Shape(shape), expected));
  }
}

TEST(ScatterNd, EmptyAndZeroSizeTensors) {
  for (Schedule schedule : kSchedules) {
    // No updates: zeros.
    EXPECT_TRUE(has_values<float>(scatter(zeros(DType::Int32, {0, 1}), zeros(DType::Float32, {0}), {4}, schedule),
                                  DType::Float32, {4}, {0, 0, 0, 0}));
    EXPECT_TRUE(has_values<float>(scatter(zeros(DType::Int32, {0, 2}), zeros(DType::Float32, {0}), {2, 2}, schedule),
                                  DType::Float32, {2, 2}, {0, 0, 0, 0}));
    EXPECT_TRUE(
        has_values<float>(scatter(zeros(DType::Int64, {2, 0, 1}), zeros(DType::Float32, {2, 0, 2}), {3, 2}, schedule),
                          DType::Float32, {3, 2}, {0, 0, 0, 0, 0, 0}));
    // Empty output with nothing scattered into it.
    EXPECT_TRUE(has_values<float>(scatter(zeros(DType::Int32, {0, 1}), zeros(DType::Float32, {0}), {0}, schedule),
                                  DType::Float32, {0}, {}));
    EXPECT_TRUE(has_values<float>(scatter(zeros(DType::Int32, {0, 1}), zeros(DType::Float32, {0, 0}), {0, 0}, schedule),
                                  DType::Float32, {0, 0}, {}));
  }
}

TEST(ScatterNd, BadIndexReportsTheLastOne) {
  for (DType index : kIndexDTypes) {
    EXPECT_INVALID_ARGUMENT(scatter(index_tensor(index, {4, 1}, {9, 0, 7, 1}), f32({4}, {1, 2, 3, 4}), {5}),
                            "indices[2] = [7] does not index into shape [5]");
    EXPECT_INVALID_ARGUMENT(scatter(index_tensor(index, {3, 1}, {1, -1, 2}), f32({3}, {1, 2, 3}), {5}),
                            "indices[1] = [-1] does not index into shape [5]");
    EXPECT_INVALID_ARGUMENT(
        scatter(index_tensor(index, {2, 2, 2}, {0, 0, 5, 0, 1, 0, 0, 0}), f32({2, 2}, {1, 2, 3, 4}), {5, 1}),
        "indices[0,1] = [5, 0] does not index into shape [5,1]");
    EXPECT_INVALID_ARGUMENT(scatter(index_tensor(index, {3, 2}, {0, 1, 2, 5, 1, 1}), f32({3}, {1, 2, 3}), {3, 2}),
                            "indices[1] = [2, 5] does not index into shape [3,2]");
  }
  EXPECT_INVALID_ARGUMENT(scatter(i64({1, 1}, {std::int64_t(1) << 40}), f32({1}, {1}), {5}),
                          "indices[0] = [1099511627776] does not index into shape [5]");
}

TEST(ScatterNd, IgnorePolicySkipsBadRows) {
  for (DType index : kIndexDTypes) {
    for (Schedule schedule : kSchedules) {
      // TF: [2, 4, 0, 0, 0].
      EXPECT_TRUE(has_values<float>(scatter(index_tensor(index, {5, 1}, {9, 0, 7, 1, -1}), f32({5}, {1, 2, 3, 4, 5}),
                                            {5}, schedule, BadIndices::Ignore),
                                    DType::Float32, {5}, {2, 4, 0, 0, 0}));
      // A row is skipped as a whole when any of its coordinates is out of range.
      EXPECT_TRUE(has_values<float>(scatter(index_tensor(index, {3, 2}, {0, 1, 2, 5, -1, 0}), f32({3}, {1, 2, 3}),
                                            {3, 2}, schedule, BadIndices::Ignore),
                                    DType::Float32, {3, 2}, {0, 1, 0, 0, 0, 0}));
    }
  }
}

TEST(ScatterNd, ValidationMessages) {
  const Tensor f1 = f32({1}, {1});
  EXPECT_INVALID_ARGUMENT(scatter(i32({}, {1}), f1, {5}), "Indices shape must have rank at least one. Found:[]");
  EXPECT_INVALID_ARGUMENT(scatter(i32({1, 1}, {1}), f32({}, {1}), {5}),
                          "Updates shape must have rank at least one. Found:[]");
  EXPECT_INVALID_ARGUMENT(scatter(i32({1, 1}, {0}), f1, {-1}), "Dimension -1 must be >= 0");
  EXPECT_INVALID_ARGUMENT(scatter(i32({1, 1}, {0}), f1, {0}),
                          "Indices and updates specified for empty output.  indices shape: [1,1]");
  EXPECT_INVALID_ARGUMENT(scatter(i32({1, 1}, {0}), zeros(DType::Float32, {1, 0}), {0, 0}),
                          "Indices and updates specified for empty output shape");
  EXPECT_INVALID_ARGUMENT(scatter(i32({1, 1}, {7}), zeros(DType::Float32, {1, 0}), {2, 0}),
                          "Indices and updates specified for empty output shape");
  EXPECT_INVALID_ARGUMENT(scatter(i32({1, 1}, {0}), f1, {}), "Indices and updates specified for empty output shape");
  EXPECT_INVALID_ARGUMENT(scatter(zeros(DType::Int32, {0, 0}), zeros(DType::Float32, {0}), {}),
                          "Output must be at least 1-D, got shape: []");
  EXPECT_INVALID_ARGUMENT(scatter(zeros(DType::Int32, {3, 0}), zeros(DType::Float32, {3, 5}), {5}),
                          "Indices and updates specified for empty output shape");
  EXPECT_INVALID_ARGUMENT(scatter(zeros(DType::Int32, {3, 2, 2}), zeros(DType::Float32, {2, 2, 2}), {4, 4, 4}),
                          "Dimensions [0,2) of indices[shape=[3,2,2]] must match dimensions [0,2) of "
                          "updates[shape=[2,2,2]]");
  EXPECT_INVALID_ARGUMENT(scatter(i32({2, 1}, {1, 2}), f32({3}, {1, 2, 3}), {5}),
                          "Dimensions [0,1) of indices[shape=[2,1]] must match dimensions [0,1) of updates[shape=[3]]");
  EXPECT_INVALID_ARGUMENT(scatter(zeros(DType::Int32, {3, 1}), zeros(DType::Float32, {3, 5}), {4, 4}),
                          "Dimensions [1,2) of input[shape=[4,4]] must match dimensions [1,2) of updates[shape=[3,5]]");
  EXPECT_INVALID_ARGUMENT(scatter(zeros(DType::Int32, {3, 1}), zeros(DType::Float32, {3, 4, 1}), {4, 4}),
                          "Dimensions [1,2) of input[shape=[4,4]] must match dimensions [1,3) of "
                          "updates[shape=[3,4,1]]");
  // Index depth greater than the output rank.
  EXPECT_INVALID_ARGUMENT(scatter(zeros(DType::Int32, {3, 3}), zeros(DType::Float32, {3}), {4, 4}),
                          "Dimensions [3,2) of input[shape=[4,4]] must match dimensions [1,1) of updates[shape=[3]]");
  // Rank-1 indices are one index row whose depth is their length.
  EXPECT_INVALID_ARGUMENT(scatter(i32({3}, {1, 2, 3}), zeros(DType::Float32, {3}), {5}),
                          "Dimensions [3,1) of input[shape=[5]] must match dimensions [0,1) of updates[shape=[3]]");
  EXPECT_INVALID_ARGUMENT(scatter(i32({1}, {1}), f1, {5}),
                          "Dimensions [1,1) of input[shape=[5]] must match dimensions [0,1) of updates[shape=[1]]");
  EXPECT_INVALID_ARGUMENT(scatter(i32({2}, {1, 2}), zeros(DType::Float32, {5}), {3, 4, 5}),
                          "Dimensions [0,1) of indices[shape=[2]] = 2 must match dimensions [0,1) of "
                          "updates[shape=[5]] = 5");
  EXPECT_INVALID_ARGUMENT(scatter(i32({2}, {1, 2}), zeros(DType::Float32, {2}), {3, 4, 2}),
                          "Dimensions [1,3) of input[shape=[3,4,2]] must match dimensions [1,1) of updates[shape=[2]]");
  EXPECT_INVALID_ARGUMENT(scatter(i32({1}, {1}), f1, {5, 1}),
                          "Dimensions [1,2) of input[shape=[5,1]] must match dimensions [1,1) of updates[shape=[1]]");
  // Index depth 0 (with nothing to scatter) and 8.
  EXPECT_INVALID_ARGUMENT(scatter(zeros(DType::Int32, {0, 0}), zeros(DType::Float32, {0, 5}), {5}),
                          "Only indices.shape[-1] values between 1 and 5 are currently supported.  Requested rank: 0");
  EXPECT_INVALID_ARGUMENT(scatter(zeros(DType::Int32, {1, 8}), f1, {1, 1, 1, 1, 1, 1, 1, 1}),
                          "Only indices.shape[-1] values between 1 and 5 are currently supported.  Requested rank: 8");
  EXPECT_INVALID_ARGUMENT(scatter(i64({1, 1}, {0}), zeros(DType::Float32, {1, 4}), {std::int64_t(1) << 62, 4}),
                          "Shape [4611686018427387904,4] would have more than 2**63 - 1 elements");
  EXPECT_INVALID_ARGUMENT(
      scatter(f32({1, 1}, {1}), f1, {5}),
      "Value for attr 'Tindices' of float is not in the list of allowed values: int16, int32, int64");
  // int16 is allowed by the op's definition, but TF registers no kernel for it.
  EXPECT_INVALID_ARGUMENT(
      scatter(index_tensor(DType::Int16, {1, 1}, {0}), f1, {5}),
      "Could not find device for node: {{node ScatterNd}} = ScatterNd[T=DT_FLOAT, Tindices=DT_INT16, "
      "bad_indices_policy=\"\"]");
}

// An output larger than memory is refused before anything is allocated. (The text
// ends with the memory available, or Kokkos' reason on a device.)
TEST(ScatterNd, OutputLargerThanMemoryIsRefused) {
  try {
    // int64 indices: int32 ones index no more than 2^31 - 1 rows (TF's own message, first).
    scatter(zeros(DType::Int64, {0, 1}), zeros(DType::Float32, {0}), {std::int64_t(1) << 40});
    ADD_FAILURE() << "a 4 TiB output was allocated";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("ScatterNd output [1099511627776] float32", 0), 0u) << e.what();
  }
}

// TF's CPU kernels flush subnormals (FTZ/DAZ) in the sum; OpOptions::denormals keeps them.
TEST(ScatterNd, FlushesSubnormalsUnlessAskedToKeepThem) {
  for (Schedule schedule : kSchedules) {
    const Tensor upd = make<std::uint32_t>(DType::Float32, {3}, {0x00000001u, 0x3f800000u, 0x80000001u});
    EXPECT_TRUE(has_values<std::uint32_t>(scatter(i32({3, 1}, {0, 1, 2}), upd, {3}, schedule), DType::Float32, {3},
                                          {0u, 0x3f800000u, 0u}));
    OpOptions keep = options(schedule);
    keep.denormals = Denormals::Keep;
    EXPECT_TRUE(has_values<std::uint32_t>(scatter_nd(i32({3, 1}, {0, 1, 2}), upd, {3}, keep), DType::Float32, {3},
                                          {1u, 0x3f800000u, 0x80000001u}));
  }
}

// The --bad-indices option and TF's op names in messages.
TEST(ScatterNd, PolicyAndOpNames) {
  EXPECT_EQ(bad_indices_from_string("error"), BadIndices::Error);
  EXPECT_EQ(bad_indices_from_string("ERROR"), BadIndices::Error);
  EXPECT_EQ(bad_indices_from_string(""), BadIndices::Error);
  EXPECT_EQ(bad_indices_from_string("DEFAULT"), BadIndices::Error);  // TF's attr value
  EXPECT_EQ(bad_indices_from_string("default"), BadIndices::Error);
  EXPECT_EQ(bad_indices_from_string("Ignore"), BadIndices::Ignore);
  EXPECT_EQ(bad_indices_from_string("IGNORE"), BadIndices::Ignore);
  EXPECT_INVALID_ARGUMENT(bad_indices_from_string("skip"),
                          "bad indices policy must be 'error' (or 'default') or 'ignore', got 'skip'");
  EXPECT_STREQ(scatter_op_name(ScatterOp::ScatterNd), "ScatterNd");
  EXPECT_STREQ(scatter_op_name(ScatterOp::Update), "TensorScatterUpdate");
  EXPECT_STREQ(scatter_op_name(ScatterOp::Add), "TensorScatterAdd");
  EXPECT_STREQ(scatter_op_name(ScatterOp::Sub), "TensorScatterSub");
  EXPECT_STREQ(scatter_op_name(ScatterOp::Min), "TensorScatterMin");
  EXPECT_STREQ(scatter_op_name(ScatterOp::Max), "TensorScatterMax");
}

// Multi-pass radix sort of the parallel schedule: targets past 2^8, 2^16 and 2^24.
TEST(ScatterNd, OutputFaultedInAtOnceWhenUpdatesCoverIt) {
  using shardops::updates_cover_output;
  // 64-byte rows, 64 to a page: twice as many updates as pages touch nearly every page.
  EXPECT_TRUE(updates_cover_output(2 << 20, 1 << 20, std::int64_t(64) << 20));
  EXPECT_TRUE(updates_cover_output(2 << 14, 1 << 20, std::int64_t(64) << 20));
  EXPECT_FALSE(updates_cover_output((2 << 14) - 2, 1 << 20, std::int64_t(64) << 20));
  EXPECT_FALSE(updates_cover_output(1000, 1 << 20, std::int64_t(64) << 20));
  // 64 KiB rows: each update touches one row's 16 pages; twice as many updates as rows.
  EXPECT_TRUE(updates_cover_output(2000, 1000, std::int64_t(1000) << 16));
  EXPECT_FALSE(updates_cover_output(1000, 1000, std::int64_t(1000) << 16));
  // An empty output has nothing to fault in.
  EXPECT_FALSE(updates_cover_output(10, 0, 0));
}

TEST(ScatterNd, ManyTargetRowsSortInSeveralPasses) {
  for (std::int64_t rows : {std::int64_t(300), std::int64_t(70000), (std::int64_t(1) << 24) + 3}) {
    Random rng(static_cast<std::uint64_t>(rows));
    std::vector<std::int64_t> idx;
    for (int i = 0; i < 500; ++i) {
      const bool repeat = i > 0 && i % 5 == 0;  // every fifth row repeats an earlier target
      idx.push_back(repeat ? idx[static_cast<std::size_t>(rng.uniform(0, i - 1))] : rng.uniform(0, rows - 1));
    }
    idx.push_back(rows - 1);
    idx.push_back(0);
    const Tensor indices = i64({static_cast<std::int64_t>(idx.size()), 1}, idx);
    const Tensor updates = random_tensor(DType::UInt8, Shape{static_cast<std::int64_t>(idx.size())}, rng);
    const HostTensor expected = ref_scatter(ScatterOp::ScatterNd, DType::UInt8, Shape{rows}, nullptr, indices, updates);
    for (Schedule schedule : kSchedules) {
      EXPECT_TRUE(same_bytes(scatter(indices, updates, {rows}, schedule), expected))
          << rows << " rows, " << schedule_name(schedule);
    }
  }
}

// ------------------------------------------------------------ randomized

/// A random valid scatter problem: output shape, index depth, index rows (some bad
/// when \p with_bad), updates of the right shape.
struct ScatterCase {
  Shape shape;
  Tensor indices;
  Tensor updates;
};

ScatterCase random_scatter_case(DType dtype, DType index_dtype, bool with_bad, Random& rng) {
  ScatterCase c;
  const int rank = static_cast<int>(rng.uniform(1, 4));
  c.shape = random_shape(rank, rng.chance(1, 10) ? 0 : 1, 5, rng);
  const int depth = static_cast<int>(rng.uniform(1, rank));
  const std::int64_t rows = c.shape.num_elements() == 0 ? 0 : random_rows(rng);
  const Shape batch = random_batch(rows, rng);
  std::vector<std::int64_t> idx;
  for (std::int64_t i = 0; i < rows; ++i) {
    const bool bad_row = with_bad && rng.chance(1, 5);
    const int bad_k = static_cast<int>(rng.uniform(0, depth - 1));
    for (int k = 0; k < depth; ++k) {
      const std::int64_t dim = c.shape.dim(k);
      std::int64_t v = rng.uniform(0, dim - 1);
      if (bad_row && k == bad_k) {
        v = rng.pick<std::int64_t>({-1, -2, dim, dim + 3});
        if (index_dtype == DType::Int64 && rng.chance(1, 4))
          v = rng.pick<std::int64_t>({std::int64_t(1) << 40, -(std::int64_t(1) << 40)});
      }
      idx.push_back(v);
    }
  }
  std::vector<std::int64_t> idims = batch.dims();
  idims.push_back(depth);
  c.indices = maybe_sliced(index_tensor(index_dtype, Shape(idims), idx), rng);
  std::vector<std::int64_t> udims = batch.dims();
  for (int k = depth; k < rank; ++k) udims.push_back(c.shape.dim(k));
  c.updates = maybe_sliced(random_tensor(dtype, Shape(udims), rng), rng);
  return c;
}

class ScatterNdRandom : public ::testing::TestWithParam<DType> {};

TEST_P(ScatterNdRandom, MatchesReference) {
  const DType dtype = GetParam();
  for (DType index_dtype : kIndexDTypes) {
    for (std::uint64_t seed = 0; seed < 150; ++seed) {
      Random rng(seed * 2 + (index_dtype == DType::Int64));
      const ScatterCase c = random_scatter_case(dtype, index_dtype, rng.chance(1, 3), rng);
      SCOPED_TRACE(std::string(dtype_name(index_dtype)) + " indices, seed " + std::to_string(seed) + ", shape " +
                   shape_text(c.shape) + ", indices " + shape_text(c.indices.shape()));
      const HostTensor expected = ref_scatter(ScatterOp::ScatterNd, dtype, c.shape, nullptr, c.indices, c.updates);
      const std::string error = ref_scatter_error(c.shape, c.indices);
      for (Schedule schedule : kSchedules) {
        for (BadIndices policy : kPolicies) {
          SCOPED_TRACE(std::string(schedule_name(schedule)) + ", " + policy_name(policy));
          if (policy == BadIndices::Error && !error.empty()) {
            EXPECT_INVALID_ARGUMENT(scatter(c.indices, c.updates, c.shape.dims(), schedule, policy), error);
            continue;
          }
          EXPECT_TRUE(same_bytes(scatter(c.indices, c.updates, c.shape.dims(), schedule, policy), expected));
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, ScatterNdRandom, ::testing::ValuesIn(kAllDTypes), dtype_param_name);

}  // namespace
}  // namespace test
}  // namespace shardops
