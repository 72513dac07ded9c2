#pragma once
/// \file
/// \brief The element-wise helpers decks use around the ops (TF's examples build
/// partition ids with not_equal and indices with range): range, comparisons with a
/// scalar (int32 0/1 results, ready to be partition ids), add/multiply by
/// a scalar, and a counter-based random fill. Each value depends only on its global
/// element position, so the results are the same at every rank count.

#include <cstdint>
#include <string>

#include "shardops/core/Tensor.hpp"
#include "shardops/core/TfFloat.hpp"

namespace shardops {

/// A scalar from a deck: an integer literal stays exact, anything else is a double.
struct Scalar {
  bool is_integer = true;
  std::int64_t i = 0;
  double f = 0.0;
  static Scalar integer(std::int64_t v) { return Scalar{true, v, static_cast<double>(v)}; }
  /// \p i is v truncated where int64 holds it (else 0: converting it would be undefined).
  static Scalar real(double v) {
    const bool fits = v >= -9223372036854775808.0 && v < 9223372036854775808.0;
    return Scalar{false, fits ? static_cast<std::int64_t>(v) : 0, v};
  }
  std::string str() const;
};

enum class CompareOp { Equal, NotEqual, Greater, GreaterEqual, Less, LessEqual };
enum class ArithOp { Add, Multiply };

/// int32/int64 values start + (first + i) * delta for i in [0, count). (Integer
/// dtypes only: TF accumulates float ranges step by step, which no block split can
/// reproduce.)
Tensor range_values(DType dtype, std::int64_t start, std::int64_t delta, std::int64_t first, std::int64_t count);

/// \brief int32 tensor of x == s, x != s, x > s, x >= s, x < s or x <= s, element-wise
/// (a NaN compares false but for !=). Under Denormals::Flush both sides are read as TF's
/// CPU kernels read them, a subnormal float or double as a zero (DAZ). \throws
/// InvalidArgument for an ordering of complex or bool values (TF has no such kernel).
Tensor compare_scalar(CompareOp op, const Tensor& x, const Scalar& s, Denormals denormals = Denormals::Flush);

/// The deck's name of \p op ("greater_equal").
const char* compare_op_name(CompareOp op) noexcept;

/// x + s or x * s in x's dtype (integers wrap, as TF's kernels do in practice); float,
/// double and complex parts with TF's CPU bits (core/TfFloat.hpp: DAZ and FTZ under Flush).
Tensor arith_scalar(ArithOp op, const Tensor& x, const Scalar& s, Denormals denormals = Denormals::Flush);

/// \brief tf.cast of \p x to \p to, element-wise: real -> complex gets a zero imaginary
/// part, complex -> real keeps the real part, anything -> bool is x != 0, a float ->
/// integer truncates toward zero. Under Denormals::Flush a cast that changes the width of
/// a float or double (float <-> double, complex64 <-> complex128 and across) or makes a
/// bool reads subnormals as zeros and writes a subnormal float as a zero, as the CPU
/// conversions TF's kernels run do; a cast within one width keeps the bits. \p
/// first_element is the global position of x's first element, for the message. \throws
/// InvalidArgument naming the first element that does not fit (a NaN, an infinity or a
/// value outside the integer's range: C++ and the CPU leave those undefined) or a string
/// dtype.
Tensor cast_values(const Tensor& x, DType to, std::int64_t first_element, Denormals denormals = Denormals::Flush);

/// \brief Uniform random values of shape \p local_shape whose first element has
/// global position \p first: floats in [minval, maxval), integers in [minval, maxval).
/// Value k is a hash of (seed, first + k): independent of how the tensor is split.
Tensor random_uniform(DType dtype, const Shape& local_shape, std::int64_t first, std::uint64_t seed,
                      const Scalar& minval, const Scalar& maxval);

}  // namespace shardops
