// The deck helpers' scalars: converted to the tensor's dtype as TensorFlow converts a
// Python number into a tensor's dtype.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "shardops/core/Error.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/ops/Elementwise.hpp"

namespace shardops {
namespace test {
namespace {

TEST(Elementwise, RealScalarForIntegerTensorIsRefused) {
  const Tensor x(DType::Int32, Shape{3}, Init::Zero, "x");
  try {
    arith_scalar(ArithOp::Add, x, Scalar::real(2.5));
    FAIL() << "2.5 was added to an int32 tensor";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "cannot convert 2.5 to dtype int32 (TensorFlow makes no integer of a real value)");
  }
  const Tensor flags(DType::Bool, Shape{2}, Init::Zero, "flags");
  EXPECT_THROW(compare_scalar(CompareOp::Equal, flags, Scalar::real(1.0)), InvalidArgument);
  const Tensor sum = arith_scalar(ArithOp::Add, x, Scalar::integer(2));
  EXPECT_EQ(reinterpret_cast<const std::int32_t*>(sum.data())[2], 2);
}

}  // namespace
}  // namespace test
}  // namespace shardops
