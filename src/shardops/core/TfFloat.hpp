#pragma once
/// \file
/// \brief Floating-point add and subtract as TensorFlow's CPU kernels compute them,
/// written out in arithmetic on the value so that every backend (Serial, OpenMP,
/// CUDA) gives the same bits.
///
/// TF's CPU kernels run on x86 SSE/AVX with denormals flushed (MXCSR FTZ and DAZ set
/// on TF's threads). That gives three rules the plain C++ `a + b` does not guarantee
/// everywhere (GPUs return one canonical NaN; compilers may swap a commutative
/// operand pair; our process does not set MXCSR):
/// - NaN: a NaN operand gives that operand, quieted; of two, the first (the tensor's
///   value, the left-hand side). An invalid operation (inf - inf) gives x86's default
///   NaN, which is negative.
/// - DAZ (Denormals::Flush): a subnormal operand is read as a zero of its sign.
/// - FTZ (Denormals::Flush): a subnormal result becomes a zero of its sign. Sums and
///   differences that land in the subnormal range are exact, so "subnormal result"
///   needs no rounding subtlety.
/// float16 is computed in float (half_t), where its subnormals are normal numbers:
/// TF flushes none of them, and neither does this.

#include <cstdint>

#include "shardops/kokkos_ext/KokkosExt.hpp"

namespace shardops {

/// What the arithmetic ops do with subnormal floats (OpOptions::denormals).
enum class Denormals {
  Flush,  ///< as TF's CPU kernels: subnormal operands and results are zeros (the default)
  Keep,   ///< IEEE gradual underflow
};

template <class F>
struct FloatBits;
template <>
struct FloatBits<float> {
  using Bits = std::uint32_t;
  static constexpr Bits sign = 0x80000000u;
  static constexpr Bits exponent = 0x7f800000u;
  static constexpr Bits quiet = 0x00400000u;
  static constexpr Bits default_nan = 0xffc00000u;
};
template <>
struct FloatBits<double> {
  using Bits = std::uint64_t;
  static constexpr Bits sign = 0x8000000000000000u;
  static constexpr Bits exponent = 0x7ff0000000000000u;
  static constexpr Bits quiet = 0x0008000000000000u;
  static constexpr Bits default_nan = 0xfff8000000000000u;
};

/// \p x, or a zero of its sign when \p x is subnormal (what DAZ reads and FTZ writes).
template <class F>
KOKKOS_INLINE_FUNCTION F flush_subnormal(F x) {
  using B = FloatBits<F>;
  const typename B::Bits bits = kx::bit_cast<typename B::Bits>(x);
  return (bits & B::exponent) == 0 ? kx::bit_cast<F>(static_cast<typename B::Bits>(bits & B::sign)) : x;
}

template <Denormals D, class F>
KOKKOS_INLINE_FUNCTION F read_operand(F x) {
  return D == Denormals::Flush ? flush_subnormal(x) : x;
}

namespace detail {

/// The NaN x86 returns for `a op b` when the result is NaN.
template <class F>
KOKKOS_INLINE_FUNCTION F x86_nan_result(F a, F b) {
  using B = FloatBits<F>;
  using Bits = typename B::Bits;
  if (a != a) return kx::bit_cast<F>(static_cast<Bits>(kx::bit_cast<Bits>(a) | B::quiet));
  if (b != b) return kx::bit_cast<F>(static_cast<Bits>(kx::bit_cast<Bits>(b) | B::quiet));
  return kx::bit_cast<F>(B::default_nan);
}

template <Denormals D, class F>
KOKKOS_INLINE_FUNCTION F finish(F r, F a, F b) {
  // Any NaN operand makes r NaN, so one test in the common path covers both rules.
  if (r != r) return x86_nan_result(a, b);
  return D == Denormals::Flush ? flush_subnormal(r) : r;
}

}  // namespace detail

/// a + b with TF's CPU bits (see the file comment).
template <Denormals D, class F>
KOKKOS_INLINE_FUNCTION F tf_add(F a, F b) {
  a = read_operand<D>(a);
  b = read_operand<D>(b);
  return detail::finish<D>(a + b, a, b);
}

/// a - b with TF's CPU bits: a NaN \p b comes back with its own sign.
template <Denormals D, class F>
KOKKOS_INLINE_FUNCTION F tf_sub(F a, F b) {
  a = read_operand<D>(a);
  b = read_operand<D>(b);
  return detail::finish<D>(a - b, a, b);
}

}  // namespace shardops
