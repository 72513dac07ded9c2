#pragma once
/// \file
/// \brief IEEE binary16 storage type with Eigen::half's arithmetic on x86 (F16C):
/// operands are widened to float, the float result (TfFloat.hpp's rules, so NaN
/// payloads survive as TF's do) is rounded back to half (round to nearest even; a
/// NaN keeps the top ten bits of its payload). TensorFlow's CPU kernels compute half
/// this way, so our sums match theirs bit for bit. Kokkos' own half_t is not
/// available on every backend of Kokkos 3.4.

#include <cstdint>

#include "shardops/core/TfFloat.hpp"
#include "shardops/kokkos_ext/KokkosExt.hpp"

namespace shardops {

struct half_t {
  std::uint16_t bits;

  half_t() = default;
  KOKKOS_INLINE_FUNCTION explicit half_t(float f) : bits(from_float(f)) {}
  KOKKOS_INLINE_FUNCTION explicit operator float() const { return to_float(bits); }

  KOKKOS_INLINE_FUNCTION static half_t from_bits(std::uint16_t b) {
    half_t h;
    h.bits = b;
    return h;
  }

  /// float -> half, round to nearest even; overflow -> inf; a NaN keeps its sign and the
  /// top bits of its payload and is quiet (what x86's vcvtps2ph does).
  KOKKOS_INLINE_FUNCTION static std::uint16_t from_float(float value) {
    std::uint32_t f = kx::bit_cast<std::uint32_t>(value);
    const std::uint32_t f32_infinity = 255u << 23;
    const std::uint32_t f16_overflow = (127u + 16u) << 23;  // 65536.0f
    const std::uint32_t denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    const std::uint32_t sign = f & 0x80000000u;
    f ^= sign;
    std::uint16_t out;
    if (f >= f16_overflow) {
      out = (f > f32_infinity) ? static_cast<std::uint16_t>(0x7e00u | ((f >> 13) & 0x3ffu)) : 0x7c00;
    } else if (f < (113u << 23)) {
      // Subnormal half: let the FPU round by adding a magic number.
      const float sum = kx::bit_cast<float>(f) + kx::bit_cast<float>(denorm_magic);
      out = static_cast<std::uint16_t>(kx::bit_cast<std::uint32_t>(sum) - denorm_magic);
    } else {
      const std::uint32_t mant_odd = (f >> 13) & 1u;
      f += (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu;
      f += mant_odd;
      out = static_cast<std::uint16_t>(f >> 13);
    }
    return static_cast<std::uint16_t>(out | (sign >> 16));
  }

  /// half -> float, exact.
  KOKKOS_INLINE_FUNCTION static float to_float(std::uint16_t h) {
    const std::uint32_t shifted_exp = 0x7c00u << 13;
    std::uint32_t o = (static_cast<std::uint32_t>(h) & 0x7fffu) << 13;
    const std::uint32_t exp = shifted_exp & o;
    o += (127u - 15u) << 23;
    if (exp == shifted_exp) {
      o += (128u - 16u) << 23;  // inf / NaN
    } else if (exp == 0) {
      o += 1u << 23;  // zero / subnormal: renormalise
      o = kx::bit_cast<std::uint32_t>(kx::bit_cast<float>(o) - kx::bit_cast<float>(113u << 23));
    }
    o |= (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
    return kx::bit_cast<float>(o);
  }
};

// Half values are normal floats: no flushing applies to them (TfFloat.hpp).
KOKKOS_INLINE_FUNCTION half_t operator+(half_t a, half_t b) {
  return half_t(tf_add<Denormals::Keep>(float(a), float(b)));
}
KOKKOS_INLINE_FUNCTION half_t operator-(half_t a, half_t b) {
  return half_t(tf_sub<Denormals::Keep>(float(a), float(b)));
}
KOKKOS_INLINE_FUNCTION bool operator<(half_t a, half_t b) { return float(a) < float(b); }
KOKKOS_INLINE_FUNCTION bool operator==(half_t a, half_t b) { return float(a) == float(b); }

}  // namespace shardops
