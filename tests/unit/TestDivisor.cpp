#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "shardops/kernels/Divisor.hpp"

using shardops::kernels::Divisor;

namespace {

// Whether d's quotient and remainder of x are those of / and %.
::testing::AssertionResult exact(const Divisor& d, std::int64_t x) {
  if (d.quotient(x) == x / d.divisor() && d.remainder(x) == x % d.divisor()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << x << " / " << d.divisor() << ": quotient " << d.quotient(x) << ", remainder "
                                       << d.remainder(x) << "; want " << x / d.divisor() << ", " << x % d.divisor();
}

}  // namespace

TEST(Divisor, QuotientAndRemainderAreExact) {
  // Divisors that are powers of two and not, up to and past 2^52 (where the reciprocal is
  // no longer used); dividends around each multiple of the divisor (where an estimate off
  // by one shows), around 2^52 and up to the largest int64.
  constexpr std::int64_t k52 = std::int64_t(1) << 52;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::int64_t> divisors = {1,
                                              2,
                                              3,
                                              7,
                                              64,
                                              131072,
                                              131073,
                                              87381,
                                              1000003,
                                              (std::int64_t(1) << 31) - 1,
                                              (std::int64_t(1) << 40) + 3,
                                              k52 - 1,
                                              k52,
                                              k52 + 1,
                                              std::int64_t(1) << 62,
                                              kMax};
  std::mt19937_64 random(12345);
  for (const std::int64_t divisor : divisors) {
    const Divisor d(divisor);
    for (std::int64_t x = 0; x < 3000; ++x) ASSERT_TRUE(exact(d, x));
    for (std::int64_t m : {std::int64_t(1), std::int64_t(2), std::int64_t(1000), std::int64_t(123457), k52 / divisor,
                           k52 / divisor + 1, kMax / divisor}) {
      if (m <= 0 || m > kMax / divisor) continue;
      const std::int64_t at = m * divisor;
      ASSERT_TRUE(exact(d, at - 1));
      ASSERT_TRUE(exact(d, at));
      if (at < kMax) {
        ASSERT_TRUE(exact(d, at + 1));
      }
    }
    for (std::int64_t x : {k52 - 2, k52 - 1, k52, k52 + 1, kMax - 1, kMax}) ASSERT_TRUE(exact(d, x));
    for (int i = 0; i < 20000; ++i) {
      const int bits = 1 + i % 63;
      const auto x = static_cast<std::int64_t>(random() >> (64 - bits));
      ASSERT_TRUE(exact(d, x));
    }
  }
}
