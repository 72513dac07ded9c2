// TensorScatterUpdate / Add / Sub / Min / Max on one rank: TensorFlow's documented
// examples, duplicate and NaN semantics, edge cases, every error text (checked against
// TF 2.21), and a randomized comparison with the sequential reference over every dtype
// (Min/Max: every non-complex dtype), both index dtypes and both schedules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "OpsTestUtil.hpp"
#include "Reference.hpp"
#include "shardops/core/Half.hpp"
#include "shardops/ops/Validation.hpp"
#include "shardops/ops/detail/TfKernels.hpp"

namespace shardops {
namespace test {
namespace {

constexpr ScatterOp kOps[] = {ScatterOp::Update, ScatterOp::Add, ScatterOp::Sub, ScatterOp::Min, ScatterOp::Max};

Tensor apply(ScatterOp op, const Tensor& tensor, const Tensor& indices, const Tensor& updates,
             Schedule schedule = Schedule::Auto, BadIndices bad = BadIndices::Error) {
  return tensor_scatter(op, tensor, indices, updates, options(schedule, bad));
}

/// Runs \p check for every index dtype and schedule.
template <class F>
void for_each_config(F&& check) {
  for (DType index : kIndexDTypes) {
    for (Schedule schedule : kSchedules) {
      SCOPED_TRACE(std::string(dtype_name(index)) + " indices, " + schedule_name(schedule));
      check(index, schedule);
    }
  }
}

// The [4,4,4] rank-3 slice example of the add/sub docs: slices 5..8 at rows 0 and 2.
std::vector<std::int32_t> doc_slices() {
  std::vector<std::int32_t> slice;
  for (std::int32_t v = 5; v <= 8; ++v) slice.insert(slice.end(), 4, v);
  std::vector<std::int32_t> both = slice;
  both.insert(both.end(), slice.begin(), slice.end());
  return both;
}
std::vector<std::int32_t> doc_slices_expected(std::int32_t sign) {
  std::vector<std::int32_t> out;
  for (int row = 0; row < 4; ++row) {
    for (std::int32_t v = 5; v <= 8; ++v) {
      for (int k = 0; k < 4; ++k) out.push_back(row % 2 == 0 ? 1 + sign * v : 1);
    }
  }
  return out;
}

// ------------------------------------------------------------ Update

TEST(TensorScatterUpdate, DocExamples) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(
        has_values<std::int32_t>(apply(ScatterOp::Update, i32({8}, {0, 0, 0, 0, 0, 0, 0, 0}),
                                       index_tensor(index, {4, 1}, {1, 3, 4, 7}), i32({4}, {9, 10, 11, 12}), schedule),
                                 DType::Int32, {8}, {0, 9, 0, 10, 11, 0, 0, 12}));
    EXPECT_TRUE(has_values<std::int32_t>(apply(ScatterOp::Update, i32({3, 2}, {1, 1, 1, 1, 1, 1}),
                                               index_tensor(index, {2, 2}, {0, 1, 2, 0}), i32({2}, {5, 10}), schedule),
                                         DType::Int32, {3, 2}, {1, 5, 1, 1, 10, 1}));
    EXPECT_TRUE(
        has_values<std::int32_t>(apply(ScatterOp::Update, zeros(DType::Int32, {6, 3}),
                                       index_tensor(index, {2, 1}, {2, 4}), i32({2, 3}, {1, 2, 3, 4, 5, 6}), schedule),
                                 DType::Int32, {6, 3}, {0, 0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0, 0}));
    // "Folded indices": draw an X on a 5x5 matrix with a [2,5,2] index batch.
    const Tensor x_indices =
        index_tensor(index, {2, 5, 2}, {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 0, 4, 1, 3, 2, 2, 3, 1, 4, 0});
    const std::vector<float> ones(10, 1.0f);
    EXPECT_TRUE(has_values<float>(
        apply(ScatterOp::Update, zeros(DType::Float32, {5, 5}), x_indices, f32({2, 5}, ones), schedule), DType::Float32,
        {5, 5}, {1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1}));
  });
}

// The video-batch examples of the docs: [batch, time, width, height, channels].
TEST(TensorScatterUpdate, DocVideoSlices) {
  const Shape video{13, 11, 7, 5, 3};
  const std::int64_t clip = 11 * 7 * 5 * 3, frame = 7 * 5 * 3;
  for_each_config([&](DType index, Schedule schedule) {
    // Replace the first two clips with ones (depth 1).
    std::vector<float> expected(static_cast<std::size_t>(video.num_elements()), 0.0f);
    std::fill(expected.begin(), expected.begin() + 2 * clip, 1.0f);
    EXPECT_TRUE(
        has_values<float>(apply(ScatterOp::Update, zeros(DType::Float32, video), index_tensor(index, {2, 1}, {0, 1}),
                                f32({2, 11, 7, 5, 3}, std::vector<float>(2 * clip, 1.0f)), schedule),
                          DType::Float32, video, expected));
    // Replace the first frame of the first three clips (depth 2).
    std::fill(expected.begin(), expected.end(), 0.0f);
    for (int c = 0; c < 3; ++c) std::fill_n(expected.begin() + c * clip, frame, 1.0f);
    EXPECT_TRUE(has_values<float>(
        apply(ScatterOp::Update, zeros(DType::Float32, video), index_tensor(index, {3, 2}, {0, 0, 1, 0, 2, 0}),
              f32({3, 7, 5, 3}, std::vector<float>(3 * frame, 1.0f)), schedule),
        DType::Float32, video, expected));
  });
}

TEST(TensorScatterUpdate, DuplicatesLastWins) {
  for_each_config([](DType index, Schedule schedule) {
    // TF: [0, 4, 3].
    EXPECT_TRUE(has_values<float>(apply(ScatterOp::Update, f32({3}, {0, 0, 0}),
                                        index_tensor(index, {4, 1}, {1, 1, 2, 1}), f32({4}, {1, 2, 3, 4}), schedule),
                                  DType::Float32, {3}, {0, 4, 3}));
    EXPECT_TRUE(
        has_values<float>(apply(ScatterOp::Update, f32({2, 2}, {9, 9, 9, 9}), index_tensor(index, {3, 1}, {0, 0, 0}),
                                f32({3, 2}, {1, 2, 3, 4, 5, 6}), schedule),
                          DType::Float32, {2, 2}, {5, 6, 9, 9}));
  });
}

// ------------------------------------------------------------ Add / Sub

TEST(TensorScatterAdd, DocExamples) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(
        has_values<std::int32_t>(apply(ScatterOp::Add, i32({8}, {1, 1, 1, 1, 1, 1, 1, 1}),
                                       index_tensor(index, {4, 1}, {4, 3, 1, 7}), i32({4}, {9, 10, 11, 12}), schedule),
                                 DType::Int32, {8}, {1, 12, 1, 11, 10, 1, 1, 13}));
    EXPECT_TRUE(
        has_values<std::int32_t>(apply(ScatterOp::Add, i32({4, 4, 4}, std::vector<std::int32_t>(64, 1)),
                                       index_tensor(index, {2, 1}, {0, 2}), i32({2, 4, 4}, doc_slices()), schedule),
                                 DType::Int32, {4, 4, 4}, doc_slices_expected(+1)));
  });
}

TEST(TensorScatterSub, DocExamples) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(
        has_values<std::int32_t>(apply(ScatterOp::Sub, i32({8}, {1, 1, 1, 1, 1, 1, 1, 1}),
                                       index_tensor(index, {4, 1}, {4, 3, 1, 7}), i32({4}, {9, 10, 11, 12}), schedule),
                                 DType::Int32, {8}, {1, -10, 1, -9, -8, 1, 1, -11}));
    EXPECT_TRUE(
        has_values<std::int32_t>(apply(ScatterOp::Sub, i32({4, 4, 4}, std::vector<std::int32_t>(64, 1)),
                                       index_tensor(index, {2, 1}, {0, 2}), i32({2, 4, 4}, doc_slices()), schedule),
                                 DType::Int32, {4, 4, 4}, doc_slices_expected(-1)));
  });
}

TEST(TensorScatterAdd, DuplicatesCombineInIndexOrder) {
  for_each_config([](DType index, Schedule schedule) {
    // TF: [0, 0]: (1e8 + 1) - 1e8 and ((0 + 1e8) + 1) - 1e8, each rounded in float.
    EXPECT_TRUE(
        has_values<float>(apply(ScatterOp::Add, f32({2}, {1e8f, 0}), index_tensor(index, {5, 1}, {0, 0, 1, 1, 1}),
                                f32({5}, {1, -1e8f, 1e8f, 1, -1e8f}), schedule),
                          DType::Float32, {2}, {0, 0}));
    // half: 2048 - (-1) - (-1) stays 2048 (TF), each step rounded to half.
    EXPECT_TRUE(has_values<std::uint16_t>(
        apply(ScatterOp::Sub, make<std::uint16_t>(DType::Float16, {1}, {half_t(2048.f).bits}),
              index_tensor(index, {2, 1}, {0, 0}),
              make<std::uint16_t>(DType::Float16, {2}, {half_t(-1.f).bits, half_t(-1.f).bits}), schedule),
        DType::Float16, {1}, {half_t(2048.f).bits}));
    // Unsigned subtraction wraps (TF: 0u - 1u = 4294967295).
    EXPECT_TRUE(has_values<std::uint32_t>(
        apply(ScatterOp::Sub, make<std::uint32_t>(DType::UInt32, {1}, {0}), index_tensor(index, {1, 1}, {0}),
              make<std::uint32_t>(DType::UInt32, {1}, {1}), schedule),
        DType::UInt32, {1}, {4294967295u}));
  });
}

// ------------------------------------------------------------ Min / Max

TEST(TensorScatterMax, DocExample) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(has_values<std::int32_t>(apply(ScatterOp::Max, i32({8}, {0, 0, 0, 0, 0, 0, 0, 0}),
                                               index_tensor(index, {3, 1}, {1, 4, 5}), i32({3}, {1, -1, 1}), schedule),
                                         DType::Int32, {8}, {0, 1, 0, 0, 0, 1, 0, 0}));
  });
}

// tf.tensor_scatter_nd_min docs (tensorflow.org): the same inputs as the max example.
TEST(TensorScatterMin, DocExample) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(has_values<std::int32_t>(apply(ScatterOp::Min, i32({8}, {0, 0, 0, 0, 0, 0, 0, 0}),
                                               index_tensor(index, {3, 1}, {1, 4, 5}), i32({3}, {1, -1, 1}), schedule),
                                         DType::Int32, {8}, {0, 0, 0, 0, -1, 0, 0, 0}));
  });
}

// Eigen's scalar min/max: a NaN already in the output stays, a NaN update is ignored,
// and of 0.0 and -0.0 the output keeps its own. Bits checked against TF 2.21.
TEST(TensorScatterMin, NanAndSignedZero) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(has_values<std::uint32_t>(
        apply(ScatterOp::Min, f32({3}, {NAN, 1, 0}), index_tensor(index, {4, 1}, {0, 1, 1, 2}),
              f32({4}, {0, NAN, 0.5f, -0.0f}), schedule),
        DType::Float32, {3}, {0x7fc00000u, 0x3f000000u, 0x00000000u}));
  });
}

TEST(TensorScatterMax, NanAndSignedZero) {
  for_each_config([](DType index, Schedule schedule) {
    EXPECT_TRUE(has_values<std::uint32_t>(
        apply(ScatterOp::Max, f32({3}, {NAN, 1, -0.0f}), index_tensor(index, {4, 1}, {0, 1, 1, 2}),
              f32({4}, {0, NAN, 0.5f, 0.0f}), schedule),
        DType::Float32, {3}, {0x7fc00000u, 0x3f800000u, 0x80000000u}));
  });
}

// Only the arithmetic flushes: TensorScatterUpdate moves a subnormal's bits, and rows no
// update touches stay as they were.
TEST(TensorScatter, OnlyArithmeticFlushesSubnormals) {
  const Tensor t = make<std::uint32_t>(DType::Float32, {3}, {0x00000001u, 0x3f800000u, 0x00000001u});
  const Tensor u = make<std::uint32_t>(DType::Float32, {1}, {0x00000002u});
  EXPECT_TRUE(
      has_values<std::uint32_t>(apply(ScatterOp::Update, t, i32({1, 1}, {1}), u), DType::Float32, {3}, {1u, 2u, 1u}));
  EXPECT_TRUE(has_values<std::uint32_t>(apply(ScatterOp::Add, t, i32({1, 1}, {0}), u), DType::Float32, {3},
                                        {0u, 0x3f800000u, 1u}));
  EXPECT_TRUE(has_values<std::uint32_t>(apply(ScatterOp::Max, t, i32({1, 1}, {1}), u), DType::Float32, {3},
                                        {1u, 0x3f800000u, 1u}));
}

// TF registers no CPU kernel for these: its kernel lookup fails, before any shape check.
TEST(TensorScatter, KernelsTensorFlowDoesNotHave) {
  const Tensor c = make<float>(DType::Complex64, {1}, {0, 1});
  EXPECT_INVALID_ARGUMENT(
      apply(ScatterOp::Min, c, i32({1, 1}, {0}), c),
      "Could not find device for node: {{node TensorScatterMin}} = TensorScatterMin[T=DT_COMPLEX64, "
      "Tindices=DT_INT32, bad_indices_policy=\"\"]");
  const Tensor z = make<double>(DType::Complex128, {1}, {0, 1});
  EXPECT_INVALID_ARGUMENT(
      apply(ScatterOp::Max, z, i64({1, 1}, {0}), z, Schedule::Auto, BadIndices::Ignore),
      "Could not find device for node: {{node TensorScatterMax}} = TensorScatterMax[T=DT_COMPLEX128, "
      "Tindices=DT_INT64, bad_indices_policy=\"IGNORE\"]");
  const Tensor b = make<std::uint8_t>(DType::Bool, {3}, {1, 0, 1});
  for (ScatterOp op : {ScatterOp::Add, ScatterOp::Sub, ScatterOp::Min, ScatterOp::Max}) {
    // The updates' shape is wrong too: the missing kernel is reported first, as in TF.
    EXPECT_INVALID_ARGUMENT(apply(op, b, i32({1, 1}, {0}), make<std::uint8_t>(DType::Bool, {5}, {1, 1, 1, 1, 1})),
                            std::string("Could not find device for node: {{node ") + scatter_op_name(op) + "}} = " +
                                scatter_op_name(op) + "[T=DT_BOOL, Tindices=DT_INT32, bad_indices_policy=\"\"]");
  }
  // TensorScatterUpdate's definition allows int16 and uint16 indices, but no kernel takes them.
  EXPECT_INVALID_ARGUMENT(
      apply(ScatterOp::Update, b, index_tensor(DType::UInt16, {1, 1}, {0}), b),
      "Could not find device for node: {{node TensorScatterUpdate}} = TensorScatterUpdate[T=DT_BOOL, "
      "Tindices=DT_UINT16, bad_indices_policy=\"\"]");
  EXPECT_INVALID_ARGUMENT(apply(ScatterOp::Add, c, index_tensor(DType::Int16, {1, 1}, {0}), c),
                          "Value for attr 'Tindices' of int16 is not in the list of allowed values: int32, int64");
}

// ------------------------------------------------------------ all ops

TEST(TensorScatter, ScatterNdIsNotATensorScatterOp) {
  EXPECT_THROW(apply(ScatterOp::ScatterNd, f32({1}, {0}), i32({1, 1}, {0}), f32({1}, {1})), InternalError);
}

TEST(TensorScatter, InputIsNotModified) {
  const Tensor tensor = f32({3}, {1, 2, 3});
  for (ScatterOp op : kOps) {
    const Tensor out = apply(op, tensor, i32({2, 1}, {1, 2}), f32({2}, {10, -10}));
    EXPECT_TRUE(has_values<float>(tensor, DType::Float32, {3}, {1, 2, 3})) << scatter_op_name(op);
    EXPECT_FALSE(same_bytes(out, tensor)) << scatter_op_name(op);
  }
}

TEST(TensorScatter, EmptyAndZeroSizeTensors) {
  for (ScatterOp op : kOps) {
    SCOPED_TRACE(scatter_op_name(op));
    for_each_config([op](DType index, Schedule schedule) {
      // No index rows: a copy.
      EXPECT_TRUE(has_values<float>(
          apply(op, f32({2}, {1, 2}), index_tensor(index, {0, 1}, {}), zeros(DType::Float32, {0}), schedule),
          DType::Float32, {2}, {1, 2}));
      EXPECT_TRUE(has_values<float>(apply(op, f32({2, 2}, {1, 2, 3, 4}), index_tensor(index, {3, 0, 1}, {}),
                                          zeros(DType::Float32, {3, 0, 2}), schedule),
                                    DType::Float32, {2, 2}, {1, 2, 3, 4}));
      // An empty tensor with nothing scattered into it.
      EXPECT_TRUE(has_values<float>(
          apply(op, zeros(DType::Float32, {0}), index_tensor(index, {0, 1}, {}), zeros(DType::Float32, {0}), schedule),
          DType::Float32, {0}, {}));
    });
  }
}

TEST(TensorScatter, BadIndexReportsTheLastOne) {
  for (ScatterOp op : kOps) {
    for (DType index : kIndexDTypes) {
      SCOPED_TRACE(std::string(scatter_op_name(op)) + ", " + dtype_name(index));
      EXPECT_INVALID_ARGUMENT(
          apply(op, zeros(DType::Float32, {5}), index_tensor(index, {4, 1}, {9, 0, 7, 1}), f32({4}, {1, 2, 3, 4})),
          "indices[2] = [7] does not index into shape [5]");
      EXPECT_INVALID_ARGUMENT(
          apply(op, zeros(DType::Float32, {2, 3}), index_tensor(index, {2, 2}, {0, 0, 1, 3}), f32({2}, {1, 2})),
          "indices[1] = [1, 3] does not index into shape [2,3]");
      EXPECT_INVALID_ARGUMENT(apply(op, zeros(DType::Float32, {5, 2}), index_tensor(index, {2, 2, 1}, {0, -4, 1, 2}),
                                    zeros(DType::Float32, {2, 2, 2})),
                              "indices[0,1] = [-4] does not index into shape [5,2]");
    }
  }
}

TEST(TensorScatter, IgnorePolicySkipsBadRows) {
  // TF 2.21 with bad_indices_policy="IGNORE".
  const std::vector<std::int64_t> idx = {9, 0, 7, 1, -3};
  for_each_config([&](DType index, Schedule schedule) {
    const Tensor ones = f32({5}, {1, 1, 1, 1, 1});
    const Tensor updates = f32({5}, {1, 2, 3, 4, 5});
    const Tensor indices = index_tensor(index, {5, 1}, idx);
    EXPECT_TRUE(has_values<float>(apply(ScatterOp::Update, ones, indices, updates, schedule, BadIndices::Ignore),
                                  DType::Float32, {5}, {2, 4, 1, 1, 1}));
    EXPECT_TRUE(has_values<float>(apply(ScatterOp::Add, ones, indices, updates, schedule, BadIndices::Ignore),
                                  DType::Float32, {5}, {3, 5, 1, 1, 1}));
    EXPECT_TRUE(has_values<float>(apply(ScatterOp::Sub, ones, indices, updates, schedule, BadIndices::Ignore),
                                  DType::Float32, {5}, {-1, -3, 1, 1, 1}));
    EXPECT_TRUE(has_values<float>(apply(ScatterOp::Min, ones, indices, updates, schedule, BadIndices::Ignore),
                                  DType::Float32, {5}, {1, 1, 1, 1, 1}));
    EXPECT_TRUE(has_values<float>(apply(ScatterOp::Max, ones, indices, updates, schedule, BadIndices::Ignore),
                                  DType::Float32, {5}, {2, 4, 1, 1, 1}));
  });
}

TEST(TensorScatter, ValidationMessages) {
  const Tensor f1 = f32({1}, {1});
  const Tensor v5 = zeros(DType::Float32, {5});
  for (ScatterOp op : kOps) {
    SCOPED_TRACE(scatter_op_name(op));
    EXPECT_INVALID_ARGUMENT(apply(op, v5, i32({}, {1}), f1), "Indices shape must have rank at least one. Found:[]");
    EXPECT_INVALID_ARGUMENT(apply(op, v5, i32({1, 1}, {1}), f32({}, {1})),
                            "Updates shape must have rank at least one. Found:[]");
    EXPECT_INVALID_ARGUMENT(apply(op, f32({}, {1}), i32({1, 1}, {0}), f1),
                            "Inner dimensions of output shape must match inner dimensions of updates shape. "
                            "Output: [] updates: [1]");
    EXPECT_INVALID_ARGUMENT(apply(op, f32({}, {1}), zeros(DType::Int32, {0, 1}), zeros(DType::Float32, {0})),
                            "Inner dimensions of output shape must match inner dimensions of updates shape. "
                            "Output: [] updates: [0]");
    EXPECT_INVALID_ARGUMENT(apply(op, zeros(DType::Float32, {0}), i32({1, 1}, {0}), f1),
                            "Indices and updates specified for empty output shape");
    EXPECT_INVALID_ARGUMENT(apply(op, zeros(DType::Float32, {3, 0}), i32({1, 1}, {5}), zeros(DType::Float32, {1, 0})),
                            "Indices and updates specified for empty output shape");
    EXPECT_INVALID_ARGUMENT(apply(op, f32({2}, {1, 2}), zeros(DType::Int32, {3, 0}), zeros(DType::Float32, {3, 2})),
                            "Indices and updates specified for empty output shape");
    EXPECT_INVALID_ARGUMENT(
        apply(op, zeros(DType::Float32, {4, 4, 4}), zeros(DType::Int32, {3, 2, 2}), zeros(DType::Float32, {2, 2, 2})),
        "Outer dimensions of indices and update must match. Indices shape: [3,2,2], updates "
        "shape:[2,2,2]");
    EXPECT_INVALID_ARGUMENT(apply(op, v5, i32({2, 1}, {1, 2}), f32({3}, {1, 2, 3})),
                            "Outer dimensions of indices and update must match. Indices shape: [2,1], updates "
                            "shape:[3]");
    EXPECT_INVALID_ARGUMENT(
        apply(op, zeros(DType::Float32, {4, 4}), zeros(DType::Int32, {3, 1}), zeros(DType::Float32, {3})),
        "Inner dimensions of output shape must match inner dimensions of updates shape. "
        "Output: [4,4] updates: [3]");
    EXPECT_INVALID_ARGUMENT(
        apply(op, zeros(DType::Float32, {4, 4}), zeros(DType::Int32, {3, 1}), zeros(DType::Float32, {3, 5})),
        "The inner 1 dimensions of output.shape=[4,4] must match the inner 1 dimensions of "
        "updates.shape=[3,5]");
    // Index depth greater than the tensor's rank.
    EXPECT_INVALID_ARGUMENT(apply(op, v5, i32({1, 2}, {1, 2}), f1),
                            "Inner dimensions of output shape must match inner dimensions of updates shape. "
                            "Output: [5] updates: [1]");
    // Rank-1 indices: one index row whose depth is their length.
    EXPECT_INVALID_ARGUMENT(apply(op, v5, i32({3}, {1, 2, 3}), zeros(DType::Float32, {3})),
                            "Inner dimensions of output shape must match inner dimensions of updates shape. "
                            "Output: [5] updates: [3]");
    EXPECT_INVALID_ARGUMENT(apply(op, zeros(DType::Float32, {3, 4, 5}), i32({2}, {1, 2}), zeros(DType::Float32, {5})),
                            "Dimensions [0,1) of indices[shape=[2]] = 2 must match dimensions [0,1) of "
                            "updates[shape=[5]] = 5");
    EXPECT_INVALID_ARGUMENT(apply(op, zeros(DType::Float32, {3, 4, 2}), i32({2}, {1, 2}), zeros(DType::Float32, {2})),
                            "Dimensions [1,3) of input[shape=[3,4,2]] must match dimensions [1,1) of "
                            "updates[shape=[2]]");
    EXPECT_INVALID_ARGUMENT(apply(op, zeros(DType::Float32, {5, 1}), i32({1}, {1}), f1),
                            "Dimensions [1,2) of input[shape=[5,1]] must match dimensions [1,1) of updates[shape=[1]]");
    EXPECT_INVALID_ARGUMENT(
        apply(op, v5, zeros(DType::Int32, {0, 0}), zeros(DType::Float32, {0, 5})),
        "Only indices.shape[-1] values between 1 and 5 are currently supported.  Requested rank: 0");
    EXPECT_INVALID_ARGUMENT(
        apply(op, zeros(DType::Float32, {1, 1, 1, 1, 1, 1, 1, 1}), zeros(DType::Int32, {1, 8}), f1),
        "Only indices.shape[-1] values between 1 and 5 are currently supported.  Requested rank: 8");
    EXPECT_INVALID_ARGUMENT(apply(op, v5, i32({1, 1}, {1}), f64({1}, {1})),
                            std::string("cannot compute ") + scatter_op_name(op) +
                                " as input #2(zero-based) was expected to be a float tensor but is a double tensor");
    EXPECT_INVALID_ARGUMENT(apply(op, v5, f32({1, 1}, {1}), f1),
                            std::string("Value for attr 'Tindices' of float is not in the list of allowed values: ") +
                                (op == ScatterOp::Update ? "int16, int32, int64, uint16" : "int32, int64"));
  }
}

// Multi-pass radix sort of the parallel schedule, and the atomic-max path of Update,
// on targets past 2^8 and 2^16; Update both by output row (600 updates for 300 or
// 600 rows) and by writer (601 or 70000 rows).
TEST(TensorScatter, ManyTargetRows) {
  for (std::int64_t rows : {std::int64_t(300), std::int64_t(600), std::int64_t(601), std::int64_t(70000)}) {
    Random rng(static_cast<std::uint64_t>(rows));
    std::vector<std::int64_t> idx;
    for (int i = 0; i < 600; ++i) {
      const bool repeat = i > 0 && i % 4 == 0;  // every fourth row repeats an earlier target
      idx.push_back(repeat ? idx[static_cast<std::size_t>(rng.uniform(0, i - 1))] : rng.uniform(0, rows - 1));
    }
    const Tensor indices = i64({static_cast<std::int64_t>(idx.size()), 1}, idx);
    const Tensor tensor = random_tensor(DType::Float32, Shape{rows, 2}, rng);
    const Tensor updates = random_tensor(DType::Float32, Shape{static_cast<std::int64_t>(idx.size()), 2}, rng);
    for (ScatterOp op : kOps) {
      const HostTensor expected = ref_scatter(op, DType::Float32, tensor.shape(), &tensor, indices, updates);
      for (Schedule schedule : kSchedules) {
        EXPECT_TRUE(same_bytes(apply(op, tensor, indices, updates, schedule), expected))
            << scatter_op_name(op) << ", " << rows << " rows, " << schedule_name(schedule);
      }
    }
  }
}

// ------------------------------------------------------------ randomized

class TensorScatterRandom : public ::testing::TestWithParam<DType> {};

TEST_P(TensorScatterRandom, MatchesReference) {
  const DType dtype = GetParam();
  for (ScatterOp op : kOps) {
    for (DType index_dtype : kIndexDTypes) {
      if (!tf_has_cpu_kernel(scatter_op_name(op), dtype, index_dtype)) continue;
      for (std::uint64_t seed = 0; seed < 80; ++seed) {
        Random rng(seed * 16 + static_cast<std::uint64_t>(op) * 2 + (index_dtype == DType::Int64));
        // Tensor of rank 1..4 (a zero dim now and then), index depth 1..rank, a batch
        // of 0..33 index rows (some out of range in a third of the cases).
        const int rank = static_cast<int>(rng.uniform(1, 4));
        const Shape shape = random_shape(rank, rng.chance(1, 10) ? 0 : 1, 5, rng);
        const int depth = static_cast<int>(rng.uniform(1, rank));
        const std::int64_t rows = shape.num_elements() == 0 ? 0 : random_rows(rng);
        const Shape batch = random_batch(rows, rng);
        const bool with_bad = rng.chance(1, 3);
        std::vector<std::int64_t> idx;
        for (std::int64_t i = 0; i < rows; ++i) {
          const bool bad_row = with_bad && rng.chance(1, 5);
          const int bad_k = static_cast<int>(rng.uniform(0, depth - 1));
          for (int k = 0; k < depth; ++k) {
            const std::int64_t dim = shape.dim(k);
            idx.push_back(bad_row && k == bad_k ? rng.pick<std::int64_t>({-1, -3, dim, dim + 2})
                                                : rng.uniform(0, dim - 1));
          }
        }
        std::vector<std::int64_t> idims = batch.dims(), udims = batch.dims();
        idims.push_back(depth);
        for (int k = depth; k < rank; ++k) udims.push_back(shape.dim(k));
        const Tensor indices = maybe_sliced(index_tensor(index_dtype, Shape(idims), idx), rng);
        const Tensor tensor = maybe_sliced(random_tensor(dtype, shape, rng), rng);
        const Tensor updates = maybe_sliced(random_tensor(dtype, Shape(udims), rng), rng);
        SCOPED_TRACE(std::string(scatter_op_name(op)) + ", " + dtype_name(index_dtype) + " indices, seed " +
                     std::to_string(seed) + ", tensor " + shape_text(shape) + ", indices " + shape_text(Shape(idims)));

        const HostTensor expected = ref_scatter(op, dtype, shape, &tensor, indices, updates);
        const std::string error = ref_scatter_error(shape, indices);
        for (Schedule schedule : kSchedules) {
          for (BadIndices policy : kPolicies) {
            SCOPED_TRACE(std::string(schedule_name(schedule)) + ", " + policy_name(policy));
            if (policy == BadIndices::Error && !error.empty()) {
              EXPECT_INVALID_ARGUMENT(apply(op, tensor, indices, updates, schedule, policy), error);
              continue;
            }
            EXPECT_TRUE(same_bytes(apply(op, tensor, indices, updates, schedule, policy), expected));
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, TensorScatterRandom, ::testing::ValuesIn(kAllDTypes), dtype_param_name);

}  // namespace
}  // namespace test
}  // namespace shardops

namespace shardops {
namespace test {
namespace {

// TF's kernels index with the index dtype: shapes past it are refused with its messages
// (checked on shapes alone: a tensor of 2^31 rows need not exist).
TEST(TensorScatter, SizesPastTheIndexDtypeAreRefused) {
  const Shape tensor{std::int64_t(1) << 31};
  const Shape indices{1, 1}, updates{1};
  try {
    check_scatter(ScatterOp::Update, tensor.dims(), indices, updates, DType::Int32);
    FAIL() << "a tensor of 2^31 rows with int32 indices was taken";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "params_shape[0] too large for int32 indexing: 2147483648 > 2147483647");
  }
  EXPECT_NO_THROW(check_scatter(ScatterOp::Update, tensor.dims(), indices, updates, DType::Int64));
  try {
    check_scatter(ScatterOp::Add, {2, std::int64_t(1) << 31}, indices, Shape{1, std::int64_t(1) << 31}, DType::Int32);
    FAIL() << "a slice of 2^31 elements with int32 indices was taken";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "slice size is too large for indexing: 2147483648 > 2147483647");
  }
}

}  // namespace
}  // namespace test
}  // namespace shardops
