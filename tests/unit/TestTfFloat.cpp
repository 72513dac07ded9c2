// TensorFlow's CPU float rules (core/TfFloat.hpp, kernels/Combine.hpp): NaN payloads,
// FTZ/DAZ, half's NaNs, and the vectorised row path against the element-by-element rules.
// The expected bits are what tf.raw_ops.TensorScatterAdd/Sub gives on x86 (TF 2.21).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "shardops/core/Half.hpp"
#include "shardops/core/TfFloat.hpp"
#include "shardops/kernels/Combine.hpp"

namespace shardops {
namespace {

constexpr Denormals kFlush = Denormals::Flush;
constexpr Denormals kKeep = Denormals::Keep;

float f(std::uint32_t bits) { return kx::bit_cast<float>(bits); }
std::uint32_t bits(float x) { return kx::bit_cast<std::uint32_t>(x); }
double d(std::uint64_t b) { return kx::bit_cast<double>(b); }
std::uint64_t bits(double x) { return kx::bit_cast<std::uint64_t>(x); }

TEST(TfFloat, NanOperandsAsX86) {
  // Of two NaNs the first (the tensor's) wins; a signalling NaN comes back quiet.
  EXPECT_EQ(bits(tf_add<kFlush>(f(0x7fc00001u), f(0xffc00002u))), 0x7fc00001u);
  EXPECT_EQ(bits(tf_add<kFlush>(f(0x7f800001u), f(0x7fc00002u))), 0x7fc00001u);
  EXPECT_EQ(bits(tf_add<kFlush>(f(0x3f800000u), f(0x7f800002u))), 0x7fc00002u);
  // x - NaN is the NaN itself, its sign unchanged.
  EXPECT_EQ(bits(tf_sub<kFlush>(f(0x3f800000u), f(0xffc00002u))), 0xffc00002u);
  // inf - inf: x86's default NaN, which is negative.
  EXPECT_EQ(bits(tf_sub<kKeep>(f(0x7f800000u), f(0x7f800000u))), 0xffc00000u);
  EXPECT_EQ(bits(tf_add<kFlush>(d(0x7ff8000000000001u), d(0xfff8000000000002u))), 0x7ff8000000000001u);
  EXPECT_EQ(bits(tf_sub<kKeep>(d(0xfff0000000000000u), d(0xfff0000000000000u))), 0xfff8000000000000u);
}

TEST(TfFloat, FlushesSubnormalOperandsAndResults) {
  const float den = f(1), min = f(0x00800000u);
  EXPECT_EQ(bits(tf_add<kFlush>(den, 0.0f)), 0u);             // DAZ
  EXPECT_EQ(bits(tf_add<kFlush>(-den, -0.0f)), 0x80000000u);  // a zero of its sign
  EXPECT_EQ(bits(tf_add<kFlush>(-den, 0.0f)), 0u);
  EXPECT_EQ(bits(tf_sub<kFlush>(1.5f * min, min)), 0u);  // FTZ
  EXPECT_EQ(bits(tf_add<kFlush>(-1.5f * min, min)), 0x80000000u);
  EXPECT_EQ(bits(tf_add<kFlush>(min, den)), bits(min));  // a + b rounds to a anyway
  EXPECT_EQ(bits(tf_add<kKeep>(den, 0.0f)), 1u);         // Keep: IEEE gradual underflow
  EXPECT_EQ(bits(tf_sub<kKeep>(1.5f * min, min)), 0x00400000u);
  EXPECT_EQ(bits(tf_add<kFlush>(d(1), d(1))), 0u);
  EXPECT_EQ(bits(tf_add<kKeep>(d(1), d(1))), 2u);
}

TEST(TfFloat, MinMaxReadSubnormalsAsZeros) {
  float out = f(1);  // a subnormal output row an update touches becomes zero, even when it wins
  kernels::CombineMax<kFlush>::apply(out, -1.0f);
  EXPECT_EQ(bits(out), 0u);
  out = 1.0f;
  kernels::CombineMin<kFlush>::apply(out, -f(1));
  EXPECT_EQ(bits(out), 0x80000000u);
  out = f(1);
  kernels::CombineMax<kKeep>::apply(out, -1.0f);
  EXPECT_EQ(bits(out), 1u);
}

TEST(TfFloat, HalfKeepsNanPayloads) {
  const auto h = [](std::uint16_t b) { return half_t::from_bits(b); };
  EXPECT_EQ((h(0x7e01) + h(0x3c00)).bits, 0x7e01);
  EXPECT_EQ((h(0x3c00) + h(0x7e01)).bits, 0x7e01);
  EXPECT_EQ((h(0x7e01) + h(0xfe02)).bits, 0x7e01);
  EXPECT_EQ((h(0x7c01) + h(0x3c00)).bits, 0x7e01);  // signalling: quieted
  EXPECT_EQ((h(0x3c00) - h(0xfe02)).bits, 0xfe02);
  EXPECT_EQ((h(0x7c00) - h(0x7c00)).bits, 0xfe00);
  EXPECT_EQ((h(0x0001) + h(0x0000)).bits, 0x0001);  // half subnormals are normal floats: kept
}

TEST(TfFloat, HalfMinMaxQuietNansInPacketsOfEight) {
  // TF (Eigen's AVX packets of 8 halves through float): the row's first 8 * (n / 8)
  // elements come back quiet, the last n % 8 keep their bits.
  std::vector<half_t> row(11, half_t::from_bits(0x7c03)), ones(11, half_t(1.0f));
  kernels::CombineMax<kFlush>::apply_row(row.data(), ones.data(), 11);
  for (std::size_t k = 0; k < row.size(); ++k) EXPECT_EQ(row[k].bits, k < 8 ? 0x7e03 : 0x7c03) << k;
}

TEST(TfFloat, ComplexPartsKeepTheTensorsNans) {
  const complex64_t t(f(0x7fc00001u), f(0x7fc00003u)), u(f(0xffc00002u), f(0xffc00004u));
  const complex64_t r = kernels::Arith<complex64_t, kFlush>::add(t, u);
  EXPECT_EQ(bits(r.real()), 0x7fc00001u);
  EXPECT_EQ(bits(r.imag()), 0x7fc00003u);
}

// The row path (one plain pass when maybe_not_plain says the results need no rules)
// must give the bits of the rules applied element by element, for every input.
template <class F, class Bits, Denormals D, class Combine>
void expect_row_matches_elements(std::mt19937_64& rng, int exponent_bits, int mantissa_bits) {
  const int bias = (1 << (exponent_bits - 1)) - 1;
  // Exponents spread over the whole range, and crowded near the subnormals and the
  // 2^-100 / 2^-966 floor of the plain path, where the rules matter.
  std::vector<int> near{0,
                        1,
                        2,
                        3,
                        bias - 100,
                        bias - 101,
                        bias - 99,
                        bias - 966,
                        bias - 967,
                        bias - 965,
                        (1 << exponent_bits) - 1,
                        (1 << exponent_bits) - 2};
  const auto random_value = [&]() {
    const Bits sign = static_cast<Bits>(rng() & 1u) << (exponent_bits + mantissa_bits);
    int e = static_cast<int>(rng() % 3 == 0 ? near[rng() % near.size()] : rng() % (1u << exponent_bits));
    if (e < 0 || e >= (1 << exponent_bits)) e = 0;
    Bits mant = static_cast<Bits>(rng()) & ((Bits{1} << mantissa_bits) - 1);
    if (rng() % 4 == 0) mant = rng() % 2;  // powers of two, infinities and zeros
    return kx::bit_cast<F>(static_cast<Bits>(sign | (static_cast<Bits>(e) << mantissa_bits) | mant));
  };
  for (int trial = 0; trial < 4000; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 20);
    std::vector<F> o(static_cast<std::size_t>(n)), u(o.size());
    for (int k = 0; k < n; ++k) {
      o[static_cast<std::size_t>(k)] = random_value();
      u[static_cast<std::size_t>(k)] = random_value();
    }
    std::vector<F> by_row = o, by_element = o;
    Combine::apply_row(by_row.data(), u.data(), n);
    for (int k = 0; k < n; ++k) Combine::apply(by_element[static_cast<std::size_t>(k)], u[static_cast<std::size_t>(k)]);
    for (int k = 0; k < n; ++k) {
      const std::size_t i = static_cast<std::size_t>(k);
      ASSERT_EQ(kx::bit_cast<Bits>(by_row[i]), kx::bit_cast<Bits>(by_element[i]))
          << "element " << k << " of " << n << ": " << std::hexfloat << o[i] << " op " << u[i];
    }
  }
}

TEST(TfFloat, RowPathMatchesTheRules) {
  std::mt19937_64 rng(18);
  expect_row_matches_elements<float, std::uint32_t, kFlush, kernels::CombineAdd<kFlush>>(rng, 8, 23);
  expect_row_matches_elements<float, std::uint32_t, kFlush, kernels::CombineSub<kFlush>>(rng, 8, 23);
  expect_row_matches_elements<float, std::uint32_t, kKeep, kernels::CombineAdd<kKeep>>(rng, 8, 23);
  expect_row_matches_elements<double, std::uint64_t, kFlush, kernels::CombineAdd<kFlush>>(rng, 11, 52);
  expect_row_matches_elements<double, std::uint64_t, kFlush, kernels::CombineSub<kFlush>>(rng, 11, 52);
  expect_row_matches_elements<double, std::uint64_t, kKeep, kernels::CombineSub<kKeep>>(rng, 11, 52);
}

}  // namespace
}  // namespace shardops
