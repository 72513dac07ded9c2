// DynamicStitch / ParallelDynamicStitch on one rank: TensorFlow's documented examples,
// edge cases, every error text (checked against TF 2.21), and a randomized comparison
// with the sequential reference over every dtype and both schedules.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "OpsTestUtil.hpp"
#include "Reference.hpp"

namespace shardops {
namespace test {
namespace {

Tensor stitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data, Schedule schedule = Schedule::Auto,
              BadIndices bad = BadIndices::Error) {
  return dynamic_stitch(indices, data, options(schedule, bad));
}

// tf.dynamic_stitch docs: scalar, vector and matrix indices in one call.
TEST(DynamicStitch, DocMixedRanks) {
  const std::vector<Tensor> indices = {i32({}, {6}), i32({2}, {4, 1}), i32({2, 2}, {5, 2, 0, 3})};
  const std::vector<Tensor> data = {i32({2}, {61, 62}), i32({2, 2}, {41, 42, 11, 12}),
                                    i32({2, 2, 2}, {51, 52, 21, 22, 1, 2, 31, 32})};
  for (Schedule schedule : kSchedules) {
    EXPECT_TRUE(has_values<std::int32_t>(stitch(indices, data, schedule), DType::Int32, {7, 2},
                                         {1, 2, 11, 12, 21, 22, 31, 32, 41, 42, 51, 52, 61, 62}))
        << schedule_name(schedule);
  }
}

// tf.dynamic_stitch docs: partition by a mask, add 1 to one side, stitch back; the
// -1 values come back unchanged. Bits checked against TF 2.21.
TEST(DynamicStitch, DocPartitionThenStitch) {
  const Tensor x = f32({6}, {0.1f, -1.f, 5.2f, 4.3f, -1.f, 7.4f});
  const Tensor mask = i32({6}, {1, 0, 1, 1, 0, 1});  // tf.cast(tf.not_equal(x, -1), tf.int32)
  std::vector<Tensor> parts = dynamic_partition(x, mask, 2);
  std::vector<float> plus_one = parts[1].to_vector<float>();
  for (float& v : plus_one) v += 1.0f;
  parts[1] = f32({static_cast<std::int64_t>(plus_one.size())}, plus_one);
  const std::vector<Tensor> condition_indices = dynamic_partition(i32({6}, {0, 1, 2, 3, 4, 5}), mask, 2);
  const std::vector<std::uint32_t> tf_bits = {1066192077u, 3212836864u, 1086744166u,
                                              1084856730u, 3212836864u, 1090938470u};
  for (Schedule schedule : kSchedules) {
    EXPECT_TRUE(has_values<std::uint32_t>(stitch(condition_indices, parts, schedule), DType::Float32, {6}, tf_bits))
        << schedule_name(schedule);
  }
}

TEST(DynamicStitch, DuplicatesLastWins) {
  // TF: [5, 4]: within an input the later position wins, across inputs the later input.
  const std::vector<Tensor> indices = {i32({3}, {0, 1, 0}), i32({2}, {1, 0})};
  const std::vector<Tensor> data = {i32({3}, {1, 2, 3}), i32({2}, {4, 5})};
  for (Schedule schedule : kSchedules) {
    EXPECT_TRUE(has_values<std::int32_t>(stitch(indices, data, schedule), DType::Int32, {2}, {5, 4}));
  }
  const std::vector<Tensor> same = {i32({4}, {2, 2, 2, 2})};
  for (Schedule schedule : kSchedules) {
    EXPECT_TRUE(
        has_values<float>(stitch(same, {f32({4, 1}, {1, 2, 3, 4})}, schedule), DType::Float32, {3, 1}, {0, 0, 4}));
  }
}

TEST(DynamicStitch, UnnamedRowsAreZeroAndScalarsWork) {
  for (Schedule schedule : kSchedules) {
    EXPECT_TRUE(has_values<float>(stitch({i32({1}, {3})}, {f32({1, 2}, {1, 2})}, schedule), DType::Float32, {4, 2},
                                  {0, 0, 0, 0, 0, 0, 1, 2}));
    EXPECT_TRUE(has_values<float>(stitch({i32({}, {2})}, {f32({}, {7})}, schedule), DType::Float32, {3}, {0, 0, 7}));
    EXPECT_TRUE(
        has_values<float>(stitch({i32({}, {1}), i32({1}, {0})}, {f32({2}, {7, 8}), f32({1, 2}, {1, 2})}, schedule),
                          DType::Float32, {2, 2}, {1, 2, 7, 8}));
  }
}

// The output starts uninitialised and only the rows nobody names are zeroed: check
// that on memory an earlier stitch of the same size left full of values (32 MB, large
// enough to be kept for reuse: core/HostMemory.hpp).
TEST(DynamicStitch, UnnamedRowsAreZeroOnReusedMemory) {
  const std::int32_t rows = 1 << 19;
  const std::int64_t cols = 16;
  for (Schedule schedule : kSchedules) {
    {
      std::vector<std::int32_t> all(static_cast<std::size_t>(rows));
      for (std::int32_t i = 0; i < rows; ++i) all[static_cast<std::size_t>(i)] = i;
      const Tensor full = stitch({Tensor::from_vector(DType::Int32, Shape{rows}, all)},
                                 {Tensor::from_vector(DType::Float32, Shape{rows, cols},
                                                      std::vector<float>(static_cast<std::size_t>(rows * cols), 1.5f))},
                                 schedule);
      ASSERT_EQ(full.shape(), (Shape{rows, cols}));
    }
    // Rows 3 and rows - 1 named now (3 twice: the later one wins).
    const Tensor got = stitch({i32({3}, {rows - 1, 3, 3})}, {f32({3, 16}, std::vector<float>(48, 2.5f))}, schedule);
    ASSERT_EQ(got.shape(), (Shape{rows, cols}));
    const std::vector<float> values = got.to_vector<float>();
    std::int64_t wrong = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float want = r == 3 || r == rows - 1 ? 2.5f : 0.0f;
      for (std::int64_t c = 0; c < cols; ++c) wrong += values[static_cast<std::size_t>(r * cols + c)] != want;
    }
    EXPECT_EQ(wrong, 0) << schedule_name(schedule);
  }
}

TEST(DynamicStitch, EmptyAndZeroSizeTensors) {
  for (Schedule schedule : kSchedules) {
    EXPECT_TRUE(has_values<float>(stitch({zeros(DType::Int32, {0})}, {zeros(DType::Float32, {0, 3})}, schedule),
                                  DType::Float32, {0, 3}, {}));
    // An empty input next to a non-empty one.
    EXPECT_TRUE(has_values<float>(stitch({zeros(DType::Int32, {2, 0}), i32({1}, {1})},
                                         {zeros(DType::Float32, {2, 0, 3}), f32({1, 3}, {1, 2, 3})}, schedule),
                                  DType::Float32, {2, 3}, {0, 0, 0, 1, 2, 3}));
    // Rows of zero elements: the output still has max index + 1 rows.
    EXPECT_TRUE(has_values<float>(stitch({i32({2}, {0, 4})}, {zeros(DType::Float32, {2, 0})}, schedule), DType::Float32,
                                  {5, 0}, {}));
  }
}

// With a scalar index the moved row is all of data[m], and a slice_rows() view of it
// need not be aligned to its size (16 bytes here): this crashed before the fix.
TEST(DynamicStitch, SlicedDataNeedNotBeAligned) {
  const Tensor data = i32({5}, {9, 1, 2, 3, 4}).slice_rows(1, 5);
  for (Schedule schedule : kSchedules) {
    EXPECT_TRUE(has_values<std::int32_t>(stitch({i32({}, {1}), i32({}, {0})}, {data, i32({4}, {5, 6, 7, 8})}, schedule),
                                         DType::Int32, {2, 4}, {5, 6, 7, 8, 1, 2, 3, 4}));
  }
}

TEST(DynamicStitch, NegativeIndexReportsTheFirstOne) {
  // The position is flat inside the one index tensor that holds it.
  EXPECT_INVALID_ARGUMENT(stitch({i32({2}, {0, 1}), i32({3}, {2, -1, 3})}, {i32({2}, {1, 2}), i32({3}, {3, 4, 5})}),
                          "indices[1] is out of range");
  EXPECT_INVALID_ARGUMENT(stitch({i32({2, 2}, {0, 1, 3, -1})}, {i32({2, 2}, {1, 2, 3, 4})}),
                          "indices[3] is out of range");
  EXPECT_INVALID_ARGUMENT(stitch({i32({2}, {-3, -4})}, {f32({2}, {1, 2})}), "indices[0] is out of range");
  EXPECT_INVALID_ARGUMENT(stitch({i32({2}, {0, -4})}, {zeros(DType::Float32, {2, 0})}), "indices[1] is out of range");
  // Index values are checked before data shapes (TF 2.21 gives this text for these inputs).
  EXPECT_INVALID_ARGUMENT(
      stitch({i32({2}, {0, -1}), i32({1, 5}, {1, 2, 3, 4, 5})}, {i32({2}, {1, 2}), i32({5}, {1, 2, 3, 4, 5})}),
      "indices[1] is out of range");
}

TEST(DynamicStitch, IgnorePolicySkipsNegativeIndices) {
  for (Schedule schedule : kSchedules) {
    EXPECT_TRUE(has_values<std::int32_t>(stitch({i32({2}, {0, 1}), i32({3}, {2, -1, 3})},
                                                {i32({2}, {1, 2}), i32({3}, {3, 4, 5})}, schedule, BadIndices::Ignore),
                                         DType::Int32, {4}, {1, 2, 3, 5}));
    EXPECT_TRUE(
        has_values<float>(stitch({i32({2}, {-3, -4})}, {f32({2, 2}, {1, 2, 3, 4})}, schedule, BadIndices::Ignore),
                          DType::Float32, {0, 2}, {}));
  }
}

TEST(DynamicStitch, ValidationMessages) {
  EXPECT_INVALID_ARGUMENT(
      stitch({i32({1}, {0}), i32({1, 5}, {1, 2, 3, 4, 5})}, {i32({1}, {1}), i32({5}, {1, 2, 3, 4, 5})}),
      "data[1].shape = [5] does not start with indices[1].shape = [1,5]");
  EXPECT_INVALID_ARGUMENT(
      stitch({i32({2}, {0, 1}), i32({1}, {2})}, {zeros(DType::Float32, {2, 3}), zeros(DType::Float32, {1, 4})}),
      "Need data[0].shape[1:] = data[1].shape[1:], got data[0].shape = [2,3], data[1].shape = "
      "[1,4], indices[0].shape = [2], indices[1].shape = [1]");
  EXPECT_INVALID_ARGUMENT(
      stitch({i32({}, {0}), i32({1}, {2})}, {zeros(DType::Float32, {3}), zeros(DType::Float32, {1, 4})}),
      "Need data[0].shape[0:] = data[1].shape[1:], got data[0].shape = [3], data[1].shape = "
      "[1,4], indices[0].shape = [], indices[1].shape = [1]");
  EXPECT_INVALID_ARGUMENT(stitch({i64({1}, {0})}, {i32({1}, {1})}),
                          "cannot compute DynamicStitch as input #0(zero-based) was expected to be a int32 tensor but "
                          "is a int64 tensor");
  EXPECT_INVALID_ARGUMENT(stitch({i32({1}, {0}), i32({1}, {1})}, {f32({1}, {1}), f64({1}, {1})}),
                          "cannot compute DynamicStitch as input #3(zero-based) was expected to be a float tensor but "
                          "is a double tensor");
  // TF's op signature makes these two unreachable there (N >= 1, one N for both lists);
  // the texts are the kernel's.
  EXPECT_INVALID_ARGUMENT(stitch({}, {}), "DynamicStitchOp: Must have some inputs");
  EXPECT_INVALID_ARGUMENT(stitch({i32({1}, {0}), i32({1}, {1})}, {f32({1}, {1})}),
                          "DynamicStitchOp: Must have the same number of indices and data tensors, got 2 and 1");
}

// ------------------------------------------------------------ randomized

class DynamicStitchRandom : public ::testing::TestWithParam<DType> {};

TEST_P(DynamicStitchRandom, MatchesReference) {
  const DType dtype = GetParam();
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    Random rng(seed);
    const int inputs = static_cast<int>(rng.uniform(1, 4));
    const Shape slice = random_shape(static_cast<int>(rng.uniform(0, 2)), 0, 3, rng);
    const std::int64_t range = rng.pick<std::int64_t>({1, 3, 8, 40});  // small ranges: many duplicates
    const bool with_bad = rng.chance(1, 3);
    std::vector<Tensor> indices, data;
    std::string shapes;
    for (int m = 0; m < inputs; ++m) {
      const int irank = rng.pick<int>({0, 1, 1, 1, 2});
      const Shape ishape = irank == 1 ? Shape{random_rows(rng)} : random_shape(irank, 0, 4, rng);
      std::vector<std::int32_t> ids;
      for (std::int64_t i = 0; i < ishape.num_elements(); ++i) {
        ids.push_back(with_bad && rng.chance(1, 6) ? static_cast<std::int32_t>(-rng.uniform(1, 3))
                                                   : static_cast<std::int32_t>(rng.uniform(0, range - 1)));
      }
      indices.push_back(maybe_sliced(i32(ishape, ids), rng));
      std::vector<std::int64_t> ddims = ishape.dims();
      ddims.insert(ddims.end(), slice.dims().begin(), slice.dims().end());
      data.push_back(maybe_sliced(random_tensor(dtype, Shape(ddims), rng), rng));
      shapes += " " + shape_text(ishape);
    }
    SCOPED_TRACE("seed " + std::to_string(seed) + ", indices" + shapes + ", slice " + shape_text(slice));

    const HostTensor expected = ref_dynamic_stitch(indices, data);
    const std::string error = ref_stitch_error(indices);
    for (Schedule schedule : kSchedules) {
      for (BadIndices policy : kPolicies) {
        SCOPED_TRACE(std::string(schedule_name(schedule)) + ", " + policy_name(policy));
        if (policy == BadIndices::Error && !error.empty()) {
          EXPECT_INVALID_ARGUMENT(dynamic_stitch(indices, data, options(schedule, policy)), error);
          continue;
        }
        EXPECT_TRUE(same_bytes(dynamic_stitch(indices, data, options(schedule, policy)), expected));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, DynamicStitchRandom, ::testing::ValuesIn(kAllDTypes), dtype_param_name);

}  // namespace
}  // namespace test
}  // namespace shardops
