#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "shardops/core/Half.hpp"

using shardops::half_t;

TEST(Half, RoundTripsEveryHalf) {
  // Every finite half converts to float exactly and back to the same bits.
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto h = half_t::from_bits(static_cast<std::uint16_t>(b));
    const float f = static_cast<float>(h);
    if (std::isnan(f)) continue;
    EXPECT_EQ(half_t(f).bits, b) << b;
  }
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1).
  EXPECT_EQ(half_t(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: ties go to 1 + 2^-9.
  EXPECT_EQ(half_t(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
  EXPECT_EQ(half_t(65520.0f).bits, 0x7c00);               // rounds up to infinity
  EXPECT_EQ(half_t(65519.0f).bits, 0x7bff);               // largest finite half
  EXPECT_EQ(half_t(std::ldexp(1.0f, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(half_t(std::ldexp(1.0f, -26)).bits, 0x0000);  // below half of it
  EXPECT_EQ(half_t(-0.0f).bits, 0x8000);
  EXPECT_EQ(half_t(NAN).bits & 0x7e00, 0x7e00);
}

TEST(Half, AddsThroughFloat) {
  // 2048 + 1 is not representable: float gives 2049, half rounds to even (2048).
  const half_t a(2048.0f), b(1.0f);
  EXPECT_EQ(static_cast<float>(a + b), 2048.0f);
  EXPECT_EQ(static_cast<float>(half_t(2048.0f) + half_t(3.0f)), 2052.0f);
}
