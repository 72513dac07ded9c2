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

/// The bit fields of an IEEE binary format with \p E exponent and \p M mantissa bits;
/// plain_floor is 2^PlainFloor, the least |r| a row's plain pass accepts (maybe_not_plain).
template <class B, int E, int M, int PlainFloor>
struct IeeeBits {
  using Bits = B;
  static constexpr Bits sign = Bits{1} << (E + M);
  static constexpr Bits exponent = ((Bits{1} << E) - 1) << M;
  static constexpr Bits quiet = Bits{1} << (M - 1);
  static constexpr Bits default_nan = sign | exponent | quiet;  // x86's "real indefinite"
  static constexpr Bits plain_floor = static_cast<Bits>((1 << (E - 1)) - 1 + PlainFloor) << M;
};
template <class F>
struct FloatBits;
template <>
struct FloatBits<float> : IeeeBits<std::uint32_t, 8, 23, -100> {};
template <>
struct FloatBits<double> : IeeeBits<std::uint64_t, 11, 52, -966> {};

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

/// `a op b` given r, its IEEE result: the NaN x86 returns when r is NaN, FTZ under
/// Flush. Written as selects, not branches, so that a row's loop stays vectorised.
template <Denormals D, class F>
KOKKOS_INLINE_FUNCTION F finish(F r, F a, F b) {
  using B = FloatBits<F>;
  using Bits = typename B::Bits;
  const Bits ab = kx::bit_cast<Bits>(a), bb = kx::bit_cast<Bits>(b), rb = kx::bit_cast<Bits>(r);
  // Any NaN operand makes r NaN, so r's test covers both NaN rules.
  const Bits nan =
      (a != a) ? static_cast<Bits>(ab | B::quiet) : ((b != b) ? static_cast<Bits>(bb | B::quiet) : B::default_nan);
  const Bits value = (D == Denormals::Flush && (rb & B::exponent) == 0) ? static_cast<Bits>(rb & B::sign) : rb;
  return kx::bit_cast<F>((r != r) ? nan : value);
}

}  // namespace detail

/// a + b with TF's CPU bits (see the file comment).
template <Denormals D, class F>
KOKKOS_INLINE_FUNCTION F tf_add(F a, F b) {
  a = read_operand<D>(a);
  b = read_operand<D>(b);
  return detail::finish<D>(a + b, a, b);
}

/// a * b with TF's CPU bits (x86's NaN rules; DAZ and FTZ under Flush).
template <Denormals D, class F>
KOKKOS_INLINE_FUNCTION F tf_mul(F a, F b) {
  a = read_operand<D>(a);
  b = read_operand<D>(b);
  return detail::finish<D>(a * b, a, b);
}

/// a - b with TF's CPU bits: a NaN \p b comes back with its own sign.
template <Denormals D, class F>
KOKKOS_INLINE_FUNCTION F tf_sub(F a, F b) {
  a = read_operand<D>(a);
  b = read_operand<D>(b);
  return detail::finish<D>(a - b, a, b);
}

/// \brief Whether plain IEEE \p r already is TF's result of an add or subtract, so
/// that a row of such results needs none of the rules (the common case, one
/// vectorised pass). 0 when it is, non-zero when it may not be.
///
/// Keep: when r is not NaN. Flush: when |r| >= 2^-100 (float; 2^-966 for double) and
/// not NaN, which excludes every r FTZ would flush. DAZ cannot change such an r either:
/// a subnormal operand b then meets a normal a with |a| > 2^-101, whose neighbours are
/// more than 2|b| away, so a + b rounds to a, which is what a + 0 gives. (A zero result
/// takes the rules: its sign may depend on a flushed operand.)
template <Denormals D, class F>
KOKKOS_INLINE_FUNCTION typename FloatBits<F>::Bits maybe_not_plain(F r) {
  using B = FloatBits<F>;
  using Bits = typename B::Bits;
  if (D == Denormals::Keep) return static_cast<Bits>(r != r);
  // One comparison of |r|, false for NaN (no branches, so the row's loop vectorises).
  const F magnitude = kx::bit_cast<F>(static_cast<Bits>(kx::bit_cast<Bits>(r) & static_cast<Bits>(~B::sign)));
  // A copy of plain_floor: bit_cast takes a reference, and binding one to the static member
  // itself would need its definition in device code (nvcc: undefined in device code).
  const Bits floor = B::plain_floor;
  return static_cast<Bits>(!(magnitude >= kx::bit_cast<F>(floor)));
}

/// The plain IEEE operations, for rows that need no rules (maybe_not_plain).
struct Plus {
  template <class F>
  KOKKOS_INLINE_FUNCTION F operator()(F a, F b) const {
    return a + b;
  }
};
struct Minus {
  template <class F>
  KOKKOS_INLINE_FUNCTION F operator()(F a, F b) const {
    return a - b;
  }
};

}  // namespace shardops
