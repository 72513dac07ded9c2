// DynamicPartition on one rank: TensorFlow's documented examples, edge cases, every
// error text (checked against TF 2.21), and a randomized comparison with the
// sequential reference over every dtype.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "OpsTestUtil.hpp"
#include "Reference.hpp"

namespace shardops {
namespace test {
namespace {

std::vector<Tensor> partition(const Tensor& data, const Tensor& partitions, std::int64_t n,
                              BadIndices bad = BadIndices::Error) {
  return dynamic_partition(data, partitions, n, options(Schedule::Auto, bad));
}

// tf.dynamic_partition docs, "Scalar partitions".
TEST(DynamicPartition, DocScalarPartitions) {
  const auto out = partition(i32({2}, {10, 20}), i32({}, {1}), 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(has_values<std::int32_t>(out[0], DType::Int32, {0, 2}, {}));
  EXPECT_TRUE(has_values<std::int32_t>(out[1], DType::Int32, {1, 2}, {10, 20}));
}

// tf.dynamic_partition docs, "Vector partitions".
TEST(DynamicPartition, DocVectorPartitions) {
  const auto out = partition(i32({5}, {10, 20, 30, 40, 50}), i32({5}, {0, 0, 1, 1, 0}), 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(has_values<std::int32_t>(out[0], DType::Int32, {3}, {10, 20, 50}));
  EXPECT_TRUE(has_values<std::int32_t>(out[1], DType::Int32, {2}, {30, 40}));
}

TEST(DynamicPartition, MatrixPartitionsKeepRowMajorOrder) {
  // TF: [[3,4],[5,6]], [[1,2]], [[7,8]].
  const Tensor data = i32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const auto out = partition(data, i32({2, 2}, {1, 0, 0, 2}), 3);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(has_values<std::int32_t>(out[0], DType::Int32, {2, 2}, {3, 4, 5, 6}));
  EXPECT_TRUE(has_values<std::int32_t>(out[1], DType::Int32, {1, 2}, {1, 2}));
  EXPECT_TRUE(has_values<std::int32_t>(out[2], DType::Int32, {1, 2}, {7, 8}));
}

TEST(DynamicPartition, ScalarDataAndOnePartition) {
  const auto out = partition(i32({}, {5}), i32({}, {0}), 2);
  EXPECT_TRUE(has_values<std::int32_t>(out[0], DType::Int32, {1}, {5}));
  EXPECT_TRUE(has_values<std::int32_t>(out[1], DType::Int32, {0}, {}));
  const auto all = partition(f32({3}, {1, 2, 3}), i32({3}, {0, 0, 0}), 1);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(has_values<float>(all[0], DType::Float32, {3}, {1, 2, 3}));
}

TEST(DynamicPartition, EmptyAndZeroSizeTensors) {
  const auto empty = partition(zeros(DType::Float32, {0, 3}), zeros(DType::Int32, {0}), 3);
  ASSERT_EQ(empty.size(), 3u);
  for (const Tensor& t : empty) EXPECT_TRUE(has_values<float>(t, DType::Float32, {0, 3}, {}));
  // Rows of zero elements are still counted per partition.
  const auto zero_rows = partition(zeros(DType::Float32, {3, 0}), i32({3}, {1, 1, 0}), 2);
  EXPECT_TRUE(has_values<float>(zero_rows[0], DType::Float32, {1, 0}, {}));
  EXPECT_TRUE(has_values<float>(zero_rows[1], DType::Float32, {2, 0}, {}));
  // ... and their ids are still checked.
  EXPECT_INVALID_ARGUMENT(partition(zeros(DType::Float32, {3, 0}), i32({3}, {1, 3, 0}), 2),
                          "partitions[1] = 3 is not in [0, 2)");
}

// A slice_rows() view starts at any multiple of its dim-0 row; with scalar partitions
// the moved row is all of data, so it is not aligned to its own size (16 bytes here).
// This crashed (misaligned 16-byte copies) before rows were moved in words aligned
// to both the row size and the addresses.
TEST(DynamicPartition, SlicedDataNeedNotBeAligned) {
  const Tensor data = i32({5}, {9, 1, 2, 3, 4}).slice_rows(1, 5);
  const auto out = partition(data, i32({}, {1}), 2);
  EXPECT_TRUE(has_values<std::int32_t>(out[0], DType::Int32, {0, 4}, {}));
  EXPECT_TRUE(has_values<std::int32_t>(out[1], DType::Int32, {1, 4}, {1, 2, 3, 4}));
  const Tensor pairs = make<double>(DType::Complex128, {3}, {9, 9, 1, 2, 3, 4}).slice_rows(1, 3);
  EXPECT_TRUE(has_values<double>(partition(pairs, i32({2}, {0, 0}), 1)[0], DType::Complex128, {2}, {1, 2, 3, 4}));
}

TEST(DynamicPartition, OutputsAreIndependentOfTheInput) {
  Tensor data = f32({3}, {1, 2, 3});
  const auto out = partition(data, i32({3}, {1, 0, 1}), 2);
  data.copy_from(f32({3}, {7, 7, 7}));
  EXPECT_TRUE(has_values<float>(out[1], DType::Float32, {2}, {1, 3}));
}

TEST(DynamicPartition, BadIdReportsTheFirstOne) {
  EXPECT_INVALID_ARGUMENT(partition(i32({5}, {10, 20, 30, 40, 50}), i32({5}, {0, 5, 1, -1, 9}), 4),
                          "partitions[1] = 5 is not in [0, 4)");
  EXPECT_INVALID_ARGUMENT(partition(i32({5}, {10, 20, 30, 40, 50}), i32({5}, {0, 1, -1, 5, 9}), 4),
                          "partitions[2] = -1 is not in [0, 4)");
  EXPECT_INVALID_ARGUMENT(partition(i32({2, 2}, {1, 2, 3, 4}), i32({2, 2}, {0, 1, 7, -1}), 4),
                          "partitions[1,0] = 7 is not in [0, 4)");
  EXPECT_INVALID_ARGUMENT(partition(i32({2}, {10, 20}), i32({}, {17}), 2), "partitions = 17 is not in [0, 2)");
}

TEST(DynamicPartition, IgnorePolicyDropsBadRows) {
  const auto out = partition(i32({5}, {10, 20, 30, 40, 50}), i32({5}, {0, 5, 1, -1, 0}), 2, BadIndices::Ignore);
  EXPECT_TRUE(has_values<std::int32_t>(out[0], DType::Int32, {2}, {10, 50}));
  EXPECT_TRUE(has_values<std::int32_t>(out[1], DType::Int32, {1}, {30}));
  const auto scalar = partition(i32({2}, {10, 20}), i32({}, {17}), 2, BadIndices::Ignore);
  EXPECT_TRUE(has_values<std::int32_t>(scalar[0], DType::Int32, {0, 2}, {}));
  EXPECT_TRUE(has_values<std::int32_t>(scalar[1], DType::Int32, {0, 2}, {}));
}

TEST(DynamicPartition, ValidationMessages) {
  EXPECT_INVALID_ARGUMENT(
      partition(zeros(DType::Float32, {3, 1}), zeros(DType::Int32, {2, 1}), 2),
      "data.shape must start with partitions.shape, got data.shape = [3,1], partitions.shape = [2,1]");
  // The shape is checked before the ids (TF: same inputs with a bad id give this text).
  EXPECT_INVALID_ARGUMENT(
      partition(zeros(DType::Float32, {3, 1}), i32({2, 1}, {0, 9}), 2),
      "data.shape must start with partitions.shape, got data.shape = [3,1], partitions.shape = [2,1]");
  EXPECT_INVALID_ARGUMENT(partition(zeros(DType::Float32, {}), zeros(DType::Int32, {1}), 2),
                          "data.shape must start with partitions.shape, got data.shape = [], partitions.shape = [1]");
  EXPECT_INVALID_ARGUMENT(partition(i32({1}, {1}), i32({1}, {0}), 0),
                          "Value for attr 'num_partitions' of 0 must be at least minimum 1");
  EXPECT_INVALID_ARGUMENT(partition(i32({1}, {1}), i32({1}, {0}), -3),
                          "Value for attr 'num_partitions' of -3 must be at least minimum 1");
  // TF's Python layer refuses this earlier ("Number of outputs is too big"); ours is its own text.
  EXPECT_INVALID_ARGUMENT(partition(i32({1}, {1}), i32({1}, {0}), std::int64_t(1) << 31),
                          "Value for attr 'num_partitions' of 2147483648 does not fit in int32");
  EXPECT_INVALID_ARGUMENT(partition(i32({1}, {1}), i64({1}, {0}), 1),
                          "cannot compute DynamicPartition as input #1(zero-based) was expected to be a int32 tensor "
                          "but is a int64 tensor");
}

// ------------------------------------------------------------ randomized

class DynamicPartitionRandom : public ::testing::TestWithParam<DType> {};

TEST_P(DynamicPartitionRandom, MatchesReference) {
  const DType dtype = GetParam();
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    Random rng(seed);
    const int num_partitions = static_cast<int>(rng.uniform(1, 5));
    // Partitions of rank 0..3 (mostly 1), data = partitions.shape + a slice of 0..5 elements.
    const int prank = rng.pick<int>({0, 1, 1, 1, 2, 3});
    Shape pshape = prank == 1 ? Shape{random_rows(rng)} : random_shape(prank, 0, 4, rng);
    const Shape slice = random_shape(static_cast<int>(rng.uniform(0, 2)), 0, 3, rng);
    std::vector<std::int64_t> ddims = pshape.dims();
    ddims.insert(ddims.end(), slice.dims().begin(), slice.dims().end());
    const Tensor data = maybe_sliced(random_tensor(dtype, Shape(ddims), rng), rng);
    const bool with_bad = rng.chance(1, 3);
    std::vector<std::int32_t> ids;
    for (std::int64_t j = 0; j < pshape.num_elements(); ++j) {
      ids.push_back(with_bad && rng.chance(1, 5)
                        ? static_cast<std::int32_t>(rng.pick<std::int64_t>({-1, -7, num_partitions, 99}))
                        : static_cast<std::int32_t>(rng.uniform(0, num_partitions - 1)));
    }
    const Tensor partitions = maybe_sliced(i32(pshape, ids), rng);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", data " + shape_text(data.shape()) + ", partitions " +
                 shape_text(pshape) + ", num_partitions " + std::to_string(num_partitions));

    const std::vector<HostTensor> expected = ref_dynamic_partition(data, partitions, num_partitions);
    const std::string error = ref_partition_error(partitions, num_partitions);
    for (Schedule schedule : kSchedules) {
      for (BadIndices policy : kPolicies) {
        SCOPED_TRACE(std::string(schedule_name(schedule)) + ", " + policy_name(policy));
        if (policy == BadIndices::Error && !error.empty()) {
          EXPECT_INVALID_ARGUMENT(dynamic_partition(data, partitions, num_partitions, options(schedule, policy)),
                                  error);
          continue;
        }
        const auto out = dynamic_partition(data, partitions, num_partitions, options(schedule, policy));
        ASSERT_EQ(out.size(), expected.size());
        for (std::size_t p = 0; p < out.size(); ++p) EXPECT_TRUE(same_bytes(out[p], expected[p])) << "output " << p;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, DynamicPartitionRandom, ::testing::ValuesIn(kAllDTypes), dtype_param_name);

}  // namespace
}  // namespace test
}  // namespace shardops
