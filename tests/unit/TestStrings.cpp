// String tensors on one rank: TensorFlow's string cases for every string-capable op
// (results checked against TF 2.21), empty, long (> 64 KiB), non-ASCII and NUL-
// holding strings, the pool representation (shared, merged, compacted), and TF's
// no-kernel text for the ops that take no strings.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "OpsTestUtil.hpp"
#include "shardops/kernels/StringKernels.hpp"

namespace shardops {
namespace test {
namespace {

using Strings = std::vector<std::string>;

Tensor str(Shape shape, const Strings& values) { return make_string_tensor(std::move(shape), values); }

::testing::AssertionResult has_strings(const Tensor& t, const Shape& shape, const Strings& expected) {
  if (t.dtype() != DType::String) return ::testing::AssertionFailure() << "dtype " << dtype_name(t.dtype());
  if (t.shape() != shape) return ::testing::AssertionFailure() << "shape " << t.shape().str() << " != " << shape.str();
  const Strings got = string_values(t);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (got[i] != expected[i]) {
      return ::testing::AssertionFailure() << "element " << i << ": \"" << got[i] << "\" (" << got[i].size()
                                           << " bytes) != \"" << expected[i] << "\" (" << expected[i].size() << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

const std::string kLong(70000, 'x');  // over 64 KiB
const std::string kNul("a\0b", 3);    // an embedded NUL
const std::string kUtf8 =
    "gr\xC3\xB6\xC3\x9F"
    "e \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80";  // "größe 日本 😀"

TEST(Strings, PoolRoundTrip) {
  const Strings values{"", "a", kLong, kNul, kUtf8, ""};
  const Tensor t = str({2, 3}, values);
  EXPECT_EQ(t.itemsize(), 8u);
  EXPECT_TRUE(has_strings(t, {2, 3}, values));
  EXPECT_EQ(string_payload_bytes(t), static_cast<std::int64_t>(1 + kLong.size() + 3 + kUtf8.size()));
  // A new string tensor is all empty strings (handle 0).
  EXPECT_TRUE(has_strings(Tensor(DType::String, Shape{3}), {3}, {"", "", ""}));
  // Compacting keeps the strings and drops what no element names.
  const Tensor row = t.slice_rows(1, 2);
  const Tensor c = compact_strings(row, 0);
  EXPECT_TRUE(has_strings(c, {1, 3}, {kNul, kUtf8, ""}));
  EXPECT_EQ(c.strings().nbytes(), static_cast<std::int64_t>(3 + kUtf8.size()));
}

TEST(Strings, SharePoolRebasesHandles) {
  const Tensor a = str({2}, {"a0", "a1"}), b = str({3}, {"b0", "", "b2"});
  const std::vector<Tensor> shared = share_string_pool({a, b, a});
  ASSERT_EQ(shared.size(), 3u);
  EXPECT_EQ(shared[0].strings().bytes.data(), shared[1].strings().bytes.data());
  EXPECT_EQ(shared[1].strings().bytes.data(), shared[2].strings().bytes.data());
  EXPECT_TRUE(has_strings(shared[0], {2}, {"a0", "a1"}));
  EXPECT_TRUE(has_strings(shared[1], {3}, {"b0", "", "b2"}));
  EXPECT_TRUE(has_strings(shared[2], {2}, {"a0", "a1"}));
  EXPECT_EQ(shared[0].strings().nbytes(), 8);  // a's pool once, b's once
}

// tf.scatter_nd on strings (TF's scatter_nd_ops_test testString): empty strings
// start, duplicates concatenate in index order.
TEST(Strings, ScatterNdConcatenatesInIndexOrder) {
  for (DType index : kIndexDTypes) {
    EXPECT_TRUE(has_strings(
        scatter_nd(index_tensor(index, {4, 1}, {4, 3, 1, 7}), str({4}, {"four", "three", "one", "seven"}), {8}), {8},
        {"", "one", "", "three", "four", "", "", "seven"}));
    EXPECT_TRUE(has_strings(scatter_nd(index_tensor(index, {4, 1}, {4, 3, 3, 7}), str({4}, {"a", "b", "b", "c"}), {8}),
                            {8}, {"", "", "", "bb", "a", "", "", "c"}));
    EXPECT_TRUE(has_strings(scatter_nd(index_tensor(index, {4, 1}, {4, 3, 3, 7}), str({4}, {"a", "b", "c", "d"}), {8}),
                            {8}, {"", "", "", "bc", "a", "", "", "d"}));
  }
  // NULs, long and UTF-8 strings concatenate byte for byte; slices concatenate element-wise.
  EXPECT_TRUE(
      has_strings(scatter_nd(i32({3, 1}, {0, 0, 1}), str({3}, {kNul, "c", kUtf8}), {2}), {2}, {kNul + "c", kUtf8}));
  EXPECT_TRUE(has_strings(scatter_nd(i32({3, 1}, {1, 1, 1}), str({3, 2}, {"a", kLong, "", "b", "c", "d"}), {2, 2}),
                          {2, 2}, {"", "", "ac", kLong + "bd"}));
  // An ignored bad index adds nothing.
  OpOptions ignore;
  ignore.bad_indices = BadIndices::Ignore;
  EXPECT_TRUE(has_strings(scatter_nd(i32({3, 1}, {0, 9, 0}), str({3}, {"x", "y", "z"}), {2}, ignore), {2}, {"xz", ""}));
}

TEST(Strings, TensorScatterUpdateLastWins) {
  const Tensor tensor = str({8}, {"qq", "ww", "ee", "rr", "", "tt", "yy", "uu"});
  EXPECT_TRUE(
      has_strings(tensor_scatter(ScatterOp::Update, tensor, i32({4, 1}, {4, 3, 3, 7}), str({4}, {"a", "b", "c", "d"})),
                  {8}, {"qq", "ww", "ee", "c", "a", "tt", "yy", "d"}));
  // The input is left as it was.
  EXPECT_TRUE(has_strings(tensor, {8}, {"qq", "ww", "ee", "rr", "", "tt", "yy", "uu"}));
}

TEST(Strings, ArithmeticScattersHaveNoStringKernel) {
  const Tensor tensor = str({3}, {"a", "b", "c"});
  EXPECT_INVALID_ARGUMENT(tensor_scatter(ScatterOp::Add, tensor, i32({1, 1}, {1}), str({1}, {"q"})),
                          "Could not find device for node: {{node TensorScatterAdd}} = TensorScatterAdd[T=DT_STRING, "
                          "Tindices=DT_INT32, bad_indices_policy=\"\"]");
  EXPECT_INVALID_ARGUMENT(tensor_scatter(ScatterOp::Max, tensor, i64({1, 1}, {1}), str({1}, {"q"})),
                          "Could not find device for node: {{node TensorScatterMax}} = TensorScatterMax[T=DT_STRING, "
                          "Tindices=DT_INT64, bad_indices_policy=\"\"]");
  for (ScatterOp op : {ScatterOp::Sub, ScatterOp::Min}) {
    EXPECT_THROW(tensor_scatter(op, tensor, i32({1, 1}, {1}), str({1}, {"q"})), InvalidArgument);
  }
  // Mixed dtypes: TF's input type text names the string dtype.
  EXPECT_INVALID_ARGUMENT(tensor_scatter(ScatterOp::Update, tensor, i32({1, 1}, {1}), f32({1}, {1.0f})),
                          "cannot compute TensorScatterUpdate as input #2(zero-based) was expected to be a string "
                          "tensor but is a float tensor");
}

TEST(Strings, DynamicStitchMergesPools) {
  // tf.dynamic_stitch([[0,2],[1,2]], [["a","b"],["c","d"]]) == ["a","c","d"]
  EXPECT_TRUE(
      has_strings(dynamic_stitch({i32({2}, {0, 2}), i32({2}, {1, 2})}, {str({2}, {"a", "b"}), str({2}, {"c", "d"})}),
                  {3}, {"a", "c", "d"}));
  // Rows no index names are empty strings.
  EXPECT_TRUE(has_strings(dynamic_stitch({i32({1}, {0}), i32({1}, {3})}, {str({1}, {kUtf8}), str({1}, {kLong})}), {4},
                          {kUtf8, "", "", kLong}));
  // Slices of two strings.
  EXPECT_TRUE(has_strings(dynamic_stitch({i32({2}, {1, 0})}, {str({2, 2}, {"x", kNul, "", "z"})}), {2, 2},
                          {"", "z", "x", kNul}));
}

TEST(Strings, DynamicPartitionKeepsOrder) {
  const std::vector<Tensor> parts = dynamic_partition(str({3}, {"a", "b", "c"}), i32({3}, {1, 0, 1}), 2);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(has_strings(parts[0], {1}, {"b"}));
  EXPECT_TRUE(has_strings(parts[1], {2}, {"a", "c"}));
  const std::vector<Tensor> rows =
      dynamic_partition(str({3, 2}, {"", kLong, kNul, "d", kUtf8, "f"}), i32({3}, {2, 2, 0}), 3);
  EXPECT_TRUE(has_strings(rows[0], {1, 2}, {kUtf8, "f"}));
  EXPECT_TRUE(has_strings(rows[1], {0, 2}, {}));
  EXPECT_TRUE(has_strings(rows[2], {2, 2}, {"", kLong, kNul, "d"}));
}

TEST(Strings, GatherNd) {
  const Tensor params = str({2, 2}, {"a", "b", "c", "d"});
  EXPECT_TRUE(has_strings(gather_nd(params, i32({2, 2}, {0, 0, 1, 1})), {2}, {"a", "d"}));
  EXPECT_TRUE(has_strings(gather_nd(params, i64({2, 1}, {1, 0})), {2, 2}, {"c", "d", "a", "b"}));
  EXPECT_INVALID_ARGUMENT(gather_nd(params, i32({1, 1}, {5})),
                          "indices[0] = [5] does not index into param shape [2,2], node name: GatherNd");
  // An ignored bad index gives empty strings.
  OpOptions ignore;
  ignore.bad_indices = BadIndices::Ignore;
  EXPECT_TRUE(has_strings(gather_nd(params, i32({2, 1}, {1, 5}), ignore), {2, 2}, {"c", "d", "", ""}));
}

}  // namespace
}  // namespace test
}  // namespace shardops
