#pragma once
/// \file
/// \brief One positive divisor applied to many non-negative 64-bit integers in a kernel.
///
/// A 64-bit integer division takes tens of cycles and the next one waits for it; a kernel
/// that divides once per entry (which output piece a target row falls in, which rank owns
/// a row) spends more time dividing than moving the entry. A multiply by the divisor's
/// reciprocal in double precision is pipelined; below 2^52 its estimate is off by at most
/// one either way, which one multiply and compare each side correct, so the result is the
/// exact quotient. Dividends or divisors beyond that divide.

#include <cstdint>

#include <Kokkos_Core.hpp>

namespace shardops {
namespace kernels {

class Divisor {
 public:
  /// Where the reciprocal's estimate is off by at most one (and q * divisor cannot overflow).
  static constexpr std::int64_t kExactBelow = std::int64_t(1) << 52;

  Divisor() = default;
  /// \p divisor must be positive.
  KOKKOS_INLINE_FUNCTION explicit Divisor(const std::int64_t divisor)
      : divisor_(divisor), inverse_(divisor < kExactBelow ? 1.0 / static_cast<double>(divisor) : 0.0) {}

  KOKKOS_INLINE_FUNCTION std::int64_t divisor() const { return divisor_; }

  /// floor(x / divisor()) for x >= 0.
  KOKKOS_INLINE_FUNCTION std::int64_t quotient(const std::int64_t x) const {
    if (x >= kExactBelow || inverse_ == 0.0) return x / divisor_;
    std::int64_t q = static_cast<std::int64_t>(static_cast<double>(x) * inverse_);
    q -= q * divisor_ > x ? 1 : 0;
    q += (q + 1) * divisor_ <= x ? 1 : 0;
    return q;
  }

  /// x - quotient(x) * divisor() for x >= 0.
  KOKKOS_INLINE_FUNCTION std::int64_t remainder(const std::int64_t x) const { return x - quotient(x) * divisor_; }

 private:
  std::int64_t divisor_ = 1;
  double inverse_ = 1.0;
};

}  // namespace kernels
}  // namespace shardops
