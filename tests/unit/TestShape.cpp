#include <gtest/gtest.h>

#include <limits>

#include "shardops/core/Error.hpp"
#include "shardops/core/Shape.hpp"

using shardops::InvalidArgument;
using shardops::Shape;

TEST(Shape, PrintsLikeTensorFlow) {
  EXPECT_EQ(Shape({5, 3}).str(), "[5,3]");
  EXPECT_EQ(Shape().str(), "[]");
  EXPECT_EQ(Shape({0}).str(), "[0]");
}

TEST(Shape, CountsElements) {
  EXPECT_EQ(Shape().num_elements(), 1);
  EXPECT_EQ(Shape({2, 3, 4}).num_elements(), 24);
  EXPECT_EQ(Shape({2, 0, 4}).num_elements(), 0);
  EXPECT_EQ(Shape({2, 3, 4}).product_from(1), 12);
  EXPECT_EQ(Shape({2, 3, 4}).product(0, 2), 6);
}

TEST(Shape, RejectsNegativeDims) {
  try {
    Shape s({3, -1});
    FAIL() << s.str();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "Dimension -1 must be >= 0");
  }
}

TEST(Shape, RejectsElementCountOverflow) {
  const std::int64_t big = std::int64_t(1) << 40;
  EXPECT_THROW(Shape({big, big}), InvalidArgument);
  EXPECT_NO_THROW(Shape({big, 0, big}));
}

TEST(Shape, SliceDebugString) {
  EXPECT_EQ(shardops::slice_debug_string(Shape(), 0), "");
  EXPECT_EQ(shardops::slice_debug_string(Shape({7}), 3), "[3]");
  EXPECT_EQ(shardops::slice_debug_string(Shape({2, 3}), 4), "[1,1]");
  EXPECT_EQ(shardops::slice_debug_string(Shape({2, 3, 2}), 11), "[1,2,1]");
}

TEST(Shape, StartsWithAndSlices) {
  const Shape s({4, 5, 6});
  EXPECT_TRUE(s.starts_with(Shape({4, 5})));
  EXPECT_TRUE(s.starts_with(Shape()));
  EXPECT_FALSE(s.starts_with(Shape({5})));
  EXPECT_FALSE(Shape({4}).starts_with(s));
  EXPECT_EQ(s.suffix(1), Shape({5, 6}));
  EXPECT_EQ(s.prefix(1), Shape({4}));
  EXPECT_EQ(s.with_dim0(9), Shape({9, 5, 6}));
  EXPECT_EQ(Shape({5}).prepend(2), Shape({2, 5}));
}
