// GatherNd on one rank: TensorFlow's documented examples (their strings spelled as
// numbers), index depth 0..rank, edge cases, every error text (checked against TF
// 2.21), and a randomized comparison with the sequential reference over every dtype,
// both index dtypes and both schedules.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "OpsTestUtil.hpp"
#include "Reference.hpp"
#include "shardops/ops/Validation.hpp"

namespace shardops {
namespace test {
namespace {

Tensor gather(const Tensor& params, const Tensor& indices, Schedule schedule = Schedule::Auto,
              BadIndices bad = BadIndices::Error) {
  return gather_nd(params, indices, options(schedule, bad));
}

template <class F>
void for_each_config(F&& check) {
  for (DType index : kGatherIndexDTypes) {
    for (Schedule schedule : kSchedules) {
      SCOPED_TRACE(std::string(dtype_name(index)) + " indices, " + schedule_name(schedule));
      check(index, schedule);
    }
  }
}

// [['a','b'],['c','d']] and [[['a0','b0'],['c0','d0']],[['a1','b1'],['c1','d1']]] of the docs.
// (Built on each call: a static Tensor would outlive Kokkos::finalize.)
Tensor matrix() { return i32({2, 2}, {1, 2, 3, 4}); }
Tensor cube() { return i32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}); }

TEST(GatherNd, DocGatheringScalarsAndSlices) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(has_values<std::int32_t>(gather(matrix(), index_tensor(index, {2, 2}, {0, 0, 1, 1}), schedule),
                                         DType::Int32, {2}, {1, 4}));
    EXPECT_TRUE(
        has_values<std::int32_t>(gather(i32({2, 3}, {1, 2, 3, 4, 5, 6}), index_tensor(index, {2, 1}, {1, 0}), schedule),
                                 DType::Int32, {2, 3}, {4, 5, 6, 1, 2, 3}));
    // Batch positions in the index vectors: one row of each of five [7,3] matrices.
    EXPECT_EQ(
        gather(zeros(DType::Float32, {5, 7, 3}), index_tensor(index, {5, 2}, {0, 1, 1, 0, 2, 4, 3, 2, 4, 1}), schedule)
            .shape(),
        (Shape{5, 3}));
  });
}

TEST(GatherNd, DocMoreExamples) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(has_values<std::int32_t>(gather(cube(), index_tensor(index, {1, 1}, {1}), schedule), DType::Int32,
                                         {1, 2, 2}, {5, 6, 7, 8}));
    EXPECT_TRUE(has_values<std::int32_t>(gather(cube(), index_tensor(index, {2, 2}, {0, 1, 1, 0}), schedule),
                                         DType::Int32, {2, 2}, {3, 4, 5, 6}));
    EXPECT_TRUE(has_values<std::int32_t>(gather(cube(), index_tensor(index, {2, 3}, {0, 0, 1, 1, 0, 1}), schedule),
                                         DType::Int32, {2}, {2, 6}));
    // Batched indexing into a matrix / batched slice indexing.
    EXPECT_TRUE(has_values<std::int32_t>(gather(matrix(), index_tensor(index, {2, 1, 2}, {0, 0, 0, 1}), schedule),
                                         DType::Int32, {2, 1}, {1, 2}));
    EXPECT_TRUE(has_values<std::int32_t>(gather(matrix(), index_tensor(index, {2, 1, 1}, {1, 0}), schedule),
                                         DType::Int32, {2, 1, 2}, {3, 4, 1, 2}));
    // Batched indexing into a 3-tensor.
    EXPECT_TRUE(has_values<std::int32_t>(gather(cube(), index_tensor(index, {2, 1, 1}, {1, 0}), schedule), DType::Int32,
                                         {2, 1, 2, 2}, {5, 6, 7, 8, 1, 2, 3, 4}));
    EXPECT_TRUE(
        has_values<std::int32_t>(gather(cube(), index_tensor(index, {2, 2, 2}, {0, 1, 1, 0, 0, 0, 1, 1}), schedule),
                                 DType::Int32, {2, 2, 2}, {3, 4, 5, 6, 1, 2, 7, 8}));
    EXPECT_TRUE(has_values<std::int32_t>(
        gather(cube(), index_tensor(index, {2, 2, 3}, {0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 1, 0}), schedule), DType::Int32,
        {2, 2}, {2, 6, 4, 7}));
  });
}

TEST(GatherNd, DepthZeroCopiesAllOfParams) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(has_values<std::int32_t>(gather(matrix(), index_tensor(index, {3, 0}, {}), schedule), DType::Int32,
                                         {3, 2, 2}, {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}));
    EXPECT_TRUE(has_values<std::int32_t>(gather(matrix(), index_tensor(index, {2, 2, 0}, {}), schedule), DType::Int32,
                                         {2, 2, 2, 2}, {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}));
    // Rank-1 indices of length 0: one index row, the whole of params.
    EXPECT_TRUE(has_values<std::int32_t>(gather(matrix(), index_tensor(index, {0}, {}), schedule), DType::Int32, {2, 2},
                                         {1, 2, 3, 4}));
  });
}

// With index depth 0 the moved row is all of params, and a slice_rows() view of it
// need not be aligned to its size (16 bytes here): this crashed before the fix.
TEST(GatherNd, SlicedParamsNeedNotBeAligned) {
  const Tensor params = i32({5}, {9, 1, 2, 3, 4}).slice_rows(1, 5);
  for_each_config([&](DType index, Schedule schedule) {
    EXPECT_TRUE(has_values<std::int32_t>(gather(params, index_tensor(index, {2, 0}, {}), schedule), DType::Int32,
                                         {2, 4}, {1, 2, 3, 4, 1, 2, 3, 4}));
  });
}

TEST(GatherNd, RankOneIndicesGiveOneRow) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(has_values<float>(gather(f32({2, 2}, {1, 2, 3, 4}), index_tensor(index, {2}, {1, 0}), schedule),
                                  DType::Float32, {}, {3}));
    EXPECT_TRUE(has_values<float>(gather(f32({2, 2}, {1, 2, 3, 4}), index_tensor(index, {1}, {1}), schedule),
                                  DType::Float32, {2}, {3, 4}));
  });
}

TEST(GatherNd, MaximumIndexDepthSeven) {
  std::vector<float> params(16 * 2);
  for (std::size_t i = 0; i < params.size(); ++i) params[i] = static_cast<float>(i);
  const Tensor p = f32({2, 1, 2, 1, 2, 1, 2, 2}, params);
  for_each_config([&](DType index, Schedule schedule) {
    // [1,0,1,0,1,0,1] is row 15, [0,0,0,0,0,0,1] row 1.
    EXPECT_TRUE(
        has_values<float>(gather(p, index_tensor(index, {2, 7}, {1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1}), schedule),
                          DType::Float32, {2, 2}, {30, 31, 2, 3}));
  });
}

TEST(GatherNd, EmptyAndZeroSizeTensors) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(has_values<float>(gather(f32({2, 2}, {1, 2, 3, 4}), index_tensor(index, {0, 2}, {}), schedule),
                                  DType::Float32, {0}, {}));
    EXPECT_TRUE(has_values<float>(gather(f32({2, 2}, {1, 2, 3, 4}), index_tensor(index, {0, 1}, {}), schedule),
                                  DType::Float32, {0, 2}, {}));
    EXPECT_TRUE(has_values<float>(gather(zeros(DType::Float32, {0, 3}), index_tensor(index, {0, 1}, {}), schedule),
                                  DType::Float32, {0, 3}, {}));
    EXPECT_TRUE(has_values<float>(
        gather(zeros(DType::Float32, {1, 1, 1, 1, 1, 1, 1, 1}), index_tensor(index, {0, 8}, {}), schedule),
        DType::Float32, {0}, {}));
  });
}

TEST(GatherNd, BadIndexReportsTheLastOne) {
  for (DType index : kGatherIndexDTypes) {
    SCOPED_TRACE(dtype_name(index));
    EXPECT_INVALID_ARGUMENT(gather(f32({5}, {1, 2, 3, 4, 5}), index_tensor(index, {4, 1}, {9, 0, 7, 1})),
                            "indices[2] = [7] does not index into param shape [5], node name: GatherNd");
    EXPECT_INVALID_ARGUMENT(gather(f32({3}, {1, 2, 3}), index_tensor(index, {3, 1}, {0, -1, 2})),
                            "indices[1] = [-1] does not index into param shape [3], node name: GatherNd");
    EXPECT_INVALID_ARGUMENT(gather(f32({3}, {1, 2, 3}), index_tensor(index, {2, 2, 1}, {0, 7, 1, 2})),
                            "indices[0,1] = [7] does not index into param shape [3], node name: GatherNd");
    EXPECT_INVALID_ARGUMENT(gather(zeros(DType::Float32, {3, 2}), index_tensor(index, {3, 2}, {0, 1, 2, 5, 1, 1})),
                            "indices[1] = [2, 5] does not index into param shape [3,2], node name: GatherNd");
  }
  EXPECT_INVALID_ARGUMENT(gather(f32({3}, {1, 2, 3}), i64({1, 1}, {-(std::int64_t(1) << 40)})),
                          "indices[0] = [-1099511627776] does not index into param shape [3], node name: GatherNd");
}

TEST(GatherNd, IgnorePolicyWritesZeros) {
  for_each_config([](DType index, Schedule schedule) {
    // TF 2.21: [[0,0],[1,2],[0,0],[5,6]].
    EXPECT_TRUE(has_values<float>(gather(f32({3, 2}, {1, 2, 3, 4, 5, 6}), index_tensor(index, {4, 1}, {9, 0, -7, 2}),
                                         schedule, BadIndices::Ignore),
                                  DType::Float32, {4, 2}, {0, 0, 1, 2, 0, 0, 5, 6}));
    EXPECT_TRUE(has_values<float>(gather(f32({3, 2}, {1, 2, 3, 4, 5, 6}), index_tensor(index, {2, 2}, {2, 1, 2, 2}),
                                         schedule, BadIndices::Ignore),
                                  DType::Float32, {2}, {6, 0}));
  });
}

TEST(GatherNd, ValidationMessages) {
  EXPECT_INVALID_ARGUMENT(gather(f32({}, {1}), i32({1, 1}, {0})), "params must be at least a vector");
  EXPECT_INVALID_ARGUMENT(gather(i32({}, {5}), zeros(DType::Int32, {2, 0})), "params must be at least a vector");
  EXPECT_INVALID_ARGUMENT(gather(f32({1}, {1}), i32({}, {0})), "indices must be at least a vector");
  EXPECT_INVALID_ARGUMENT(gather(f32({1}, {1}), i32({1, 3}, {0, 0, 0})),
                          "index innermost dimension length must be <= params rank; saw: 3 vs. 1");
  EXPECT_INVALID_ARGUMENT(gather(zeros(DType::Float32, {0, 3}), i32({1, 1}, {0})),
                          "Requested more than 0 entries, but params is empty.  Params shape: [0,3]");
  EXPECT_INVALID_ARGUMENT(gather(zeros(DType::Float32, {0, 3}), zeros(DType::Int32, {2, 0})),
                          "Requested more than 0 entries, but params is empty.  Params shape: [0,3]");
  EXPECT_INVALID_ARGUMENT(gather(zeros(DType::Float32, {3, 0}), i32({2, 1}, {1, 5})),
                          "Requested more than 0 entries, but params is empty.  Params shape: [3,0]");
  EXPECT_INVALID_ARGUMENT(gather(zeros(DType::Float32, {1, 1, 1, 1, 1, 1, 1, 1}), zeros(DType::Int32, {1, 8})),
                          "Only indices.shape[-1] values between 1 and 7 are currently supported.  Requested rank: 8");
  EXPECT_INVALID_ARGUMENT(
      gather(f32({3}, {1, 2, 3}), f32({1, 1}, {1})),
      "Value for attr 'Tindices' of float is not in the list of allowed values: int16, int32, int64");
}

// Gathers past 2^16 source rows, with repeated rows.
TEST(GatherNd, ManySourceRows) {
  Random rng(7);
  const Tensor params = random_tensor(DType::Complex128, Shape{70000, 3}, rng);
  std::vector<std::int64_t> idx;
  for (int i = 0; i < 1000; ++i) idx.push_back(i % 3 == 0 ? 69999 : rng.uniform(0, 69999));
  const Tensor indices = i64({1000, 1}, idx);
  for (Schedule schedule : kSchedules) {
    EXPECT_TRUE(same_bytes(gather(params, indices, schedule), ref_gather_nd(params, indices)));
  }
}

// ------------------------------------------------------------ randomized

class GatherNdRandom : public ::testing::TestWithParam<DType> {};

TEST_P(GatherNdRandom, MatchesReference) {
  const DType dtype = GetParam();
  for (DType index_dtype : kGatherIndexDTypes) {
    for (std::uint64_t seed = 0; seed < 150; ++seed) {
      Random rng(seed * 2 + (index_dtype == DType::Int64));
      // Params of rank 1..4 (a zero dim now and then), index depth 0..rank, an index
      // batch of rank 0..2 (nothing to gather from empty params).
      const int rank = static_cast<int>(rng.uniform(1, 4));
      const Shape pshape = random_shape(rank, rng.chance(1, 10) ? 0 : 1, 5, rng);
      const int depth = static_cast<int>(rng.uniform(0, rank));
      const std::int64_t rows = pshape.num_elements() == 0 ? 0 : random_rows(rng);
      const Shape batch = rows == 1 && rng.chance(1, 3) ? Shape{} : random_batch(rows, rng);
      const bool with_bad = rng.chance(1, 3) && depth > 0;
      std::vector<std::int64_t> idx;
      for (std::int64_t i = 0; i < rows; ++i) {
        const bool bad_row = with_bad && rng.chance(1, 5);
        const int bad_k = depth > 0 ? static_cast<int>(rng.uniform(0, depth - 1)) : 0;
        for (int k = 0; k < depth; ++k) {
          const std::int64_t dim = pshape.dim(k);
          idx.push_back(bad_row && k == bad_k ? rng.pick<std::int64_t>({-1, -2, dim, dim + 4})
                                              : rng.uniform(0, dim - 1));
        }
      }
      std::vector<std::int64_t> idims = batch.dims();
      idims.push_back(depth);
      const Tensor indices = maybe_sliced(index_tensor(index_dtype, Shape(idims), idx), rng);
      const Tensor params = maybe_sliced(random_tensor(dtype, pshape, rng), rng);
      SCOPED_TRACE(std::string(dtype_name(index_dtype)) + " indices, seed " + std::to_string(seed) + ", params " +
                   shape_text(pshape) + ", indices " + shape_text(Shape(idims)));

      const HostTensor expected = ref_gather_nd(params, indices);
      const std::string error = ref_gather_error(params, indices);
      for (Schedule schedule : kSchedules) {
        for (BadIndices policy : kPolicies) {
          SCOPED_TRACE(std::string(schedule_name(schedule)) + ", " + policy_name(policy));
          if (policy == BadIndices::Error && !error.empty()) {
            EXPECT_INVALID_ARGUMENT(gather(params, indices, schedule, policy), error);
            continue;
          }
          EXPECT_TRUE(same_bytes(gather(params, indices, schedule, policy), expected));
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, GatherNdRandom, ::testing::ValuesIn(kAllDTypes), dtype_param_name);

}  // namespace
}  // namespace test
}  // namespace shardops

namespace shardops {
namespace test {
namespace {

// TF's kernel indexes with the index dtype: params past it are refused with its message.
TEST(GatherNd, ParamsPastTheIndexDtypeAreRefused) {
  const Shape params{2, std::int64_t(1) << 30}, indices{1, 2};
  try {
    check_gather_nd(params, indices, DType::Int32);
    FAIL() << "params of 2^31 elements with int32 indices were taken";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "params.NumElements() too large for int32 indexing: 2147483648 > 2147483647");
  }
  EXPECT_NO_THROW(check_gather_nd(params, indices, DType::Int64));
}

}  // namespace
}  // namespace test
}  // namespace shardops
