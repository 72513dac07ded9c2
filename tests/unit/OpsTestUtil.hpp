#pragma once
/// \file
/// \brief Helpers shared by the one-rank op tests: tensors from host values, exact
/// byte comparisons, TensorFlow-message assertions and random NaN-free tensors of
/// every dtype. Everything here runs on the host through the public Tensor API; no
/// Kokkos kernel is written in a test (so the tests build unchanged for CUDA).

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "shardops/core/DType.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/Shape.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/ops/Ops.hpp"

namespace shardops {
namespace test {

/// Both schedules must give the same bytes (and TensorFlow's).
constexpr Schedule kSchedules[] = {Schedule::Sequential, Schedule::Parallel};
/// Index dtypes of the scatter/gather family.
constexpr DType kIndexDTypes[] = {DType::Int32, DType::Int64};
/// GatherNd's: TF has int16 kernels for it alone (ops/detail/TfKernels.hpp).
constexpr DType kGatherIndexDTypes[] = {DType::Int16, DType::Int32, DType::Int64};
constexpr BadIndices kPolicies[] = {BadIndices::Error, BadIndices::Ignore};

const char* schedule_name(Schedule schedule);
const char* policy_name(BadIndices policy);
inline OpOptions options(Schedule schedule, BadIndices bad = BadIndices::Error) {
  OpOptions o;
  o.schedule = schedule;
  o.bad_indices = bad;
  return o;
}
/// gtest parameter names: "float32", "complex64", ...
std::string dtype_param_name(const ::testing::TestParamInfo<DType>& info);

// ------------------------------------------------------------------ building

/// A tensor of \p dtype from host values of a C++ type of the same size (or of its
/// parts: complex64 from float pairs).
template <class T>
Tensor make(DType dtype, Shape shape, const std::vector<T>& values) {
  if (dtype_size(dtype) % sizeof(T) != 0) throw std::logic_error("test::make: element size does not fit the dtype");
  return Tensor::from_vector(dtype, std::move(shape), values);
}
inline Tensor i32(Shape shape, const std::vector<std::int32_t>& v) { return make(DType::Int32, std::move(shape), v); }
inline Tensor i64(Shape shape, const std::vector<std::int64_t>& v) { return make(DType::Int64, std::move(shape), v); }
inline Tensor f32(Shape shape, const std::vector<float>& v) { return make(DType::Float32, std::move(shape), v); }
inline Tensor f64(Shape shape, const std::vector<double>& v) { return make(DType::Float64, std::move(shape), v); }
/// An int32 or int64 index tensor from int64 values (each must fit).
Tensor index_tensor(DType index_dtype, Shape shape, const std::vector<std::int64_t>& values);
/// A zero-filled tensor.
inline Tensor zeros(DType dtype, Shape shape) { return Tensor(dtype, std::move(shape)); }

/// The values of an int32 or int64 tensor, as int64.
std::vector<std::int64_t> index_values(const Tensor& t);

// ------------------------------------------------------------------ comparing

/// A tensor on the host: what the reference produces.
struct HostTensor {
  DType dtype = DType::Float32;
  Shape shape;
  std::vector<unsigned char> bytes;
};
HostTensor host(const Tensor& t);

/// Same dtype, shape and bytes (memcmp); the message names the first differing element.
::testing::AssertionResult same_bytes(const Tensor& actual, const HostTensor& expected);
inline ::testing::AssertionResult same_bytes(const Tensor& actual, const Tensor& expected) {
  return same_bytes(actual, host(expected));
}
/// \p actual has this dtype, shape and these element values.
template <class T>
::testing::AssertionResult has_values(const Tensor& actual, DType dtype, Shape shape, const std::vector<T>& values) {
  return same_bytes(actual, host(make(dtype, std::move(shape), values)));
}

// ------------------------------------------------------------------ errors

/// f() throws shardops::InvalidArgument (exit code 2) whose text is exactly \p message.
template <class F>
::testing::AssertionResult throws_invalid_argument(F&& f, const std::string& message) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    if (e.exit_code() != 2) return ::testing::AssertionFailure() << "exit code " << e.exit_code() << ", not 2";
    if (message == e.what()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "wrong message\n  actual: " << e.what() << "\nexpected: " << message;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw something else than InvalidArgument: " << e.what()
                                         << "\nexpected: " << message;
  }
  return ::testing::AssertionFailure() << "did not throw; expected: " << message;
}

/// TensorFlow's shape text: "[5,3]", "[]" (independent of Shape::str, which it checks).
std::string shape_text(const Shape& shape);
/// TensorFlow's position text of flat element \p flat of \p shape: "[1,2]", "[7]", "".
std::string position_text(const Shape& shape, std::int64_t flat);

}  // namespace test

/// gtest prints a DType by its name.
inline void PrintTo(DType dtype, std::ostream* os) { *os << dtype_name(dtype); }

}  // namespace shardops

/// The statement throws InvalidArgument with exactly this text.
#define EXPECT_INVALID_ARGUMENT(statement, message) \
  EXPECT_TRUE(::shardops::test::throws_invalid_argument([&]() { (void)(statement); }, (message)))

namespace shardops {
namespace test {

// ------------------------------------------------------------------ random

/// Deterministic random numbers (the same cases on every platform).
class Random {
 public:
  explicit Random(std::uint64_t seed) : gen_(seed * 0x9e3779b97f4a7c15ull + 12345) {}
  std::uint64_t bits() { return gen_(); }
  /// Uniform in [lo, hi] (hi >= lo).
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(gen_() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  /// True with probability num / den.
  bool chance(int num, int den) { return uniform(0, den - 1) < num; }
  /// One of the values.
  template <class T>
  T pick(const std::vector<T>& values) {
    return values[static_cast<std::size_t>(uniform(0, static_cast<std::int64_t>(values.size()) - 1))];
  }

 private:
  std::mt19937_64 gen_;
};

/// \brief count random elements of \p dtype as bytes. Never NaN or infinite; floats
/// mix magnitudes (so sums depend on their order), include +0.0 and -0.0 now and
/// then (ties of Min/Max), and stay small enough that 64 of them cannot overflow.
/// Bools are 0 or 1; integers are any bit pattern (sums wrap).
std::vector<unsigned char> random_bytes(DType dtype, std::int64_t count, Random& rng);
inline Tensor random_tensor(DType dtype, Shape shape, Random& rng) {
  const std::vector<unsigned char> bytes = random_bytes(dtype, shape.num_elements(), rng);
  return Tensor::from_host_bytes(dtype, std::move(shape), bytes.data(), bytes.size());
}
/// \p t itself, or (half of the time, rank >= 1) the same values as rows of a larger
/// random tensor: a slice_rows() view whose data does not start at its allocation,
/// as DynamicPartition's outputs and a shard's rows are.
Tensor maybe_sliced(const Tensor& t, Random& rng);
/// A shape of \p rank with dims in [lo, hi].
Shape random_shape(int rank, std::int64_t lo, std::int64_t hi, Random& rng);
/// A "batch" shape with \p rows elements: [rows], or [a, rows / a] for a divisor a
/// (rank 2 index batches exercise the "[i,j]" positions of error texts).
Shape random_batch(std::int64_t rows, Random& rng);
/// Row counts the randomized tests draw from: 0, 1, 7, 33 and a few odd others.
std::int64_t random_rows(Random& rng);

}  // namespace test
}  // namespace shardops
