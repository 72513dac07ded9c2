#include "OpsTestUtil.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "shardops/core/Dispatch.hpp"

namespace shardops {
namespace test {

const char* schedule_name(Schedule schedule) {
  switch (schedule) {
    case Schedule::Auto: return "auto";
    case Schedule::Sequential: return "sequential";
    case Schedule::Parallel: return "parallel";
  }
  return "?";
}

const char* policy_name(BadIndices policy) { return policy == BadIndices::Error ? "error" : "ignore"; }

std::string dtype_param_name(const ::testing::TestParamInfo<DType>& info) { return dtype_name(info.param); }

Tensor index_tensor(DType index_dtype, Shape shape, const std::vector<std::int64_t>& values) {
  return dispatch_dtype(index_dtype, [&](auto tag) -> Tensor {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_integral<I>::value && !std::is_same<I, bool>::value) {
      std::vector<I> narrow;
      for (std::int64_t v : values) {
        if (v != static_cast<std::int64_t>(static_cast<I>(v)))
          throw std::logic_error("index_tensor: a value does not fit the index dtype");
        narrow.push_back(static_cast<I>(v));
      }
      return make<I>(index_dtype, std::move(shape), narrow);
    } else {
      throw std::logic_error("index_tensor: not an integer dtype");
    }
  });
}

std::vector<std::int64_t> index_values(const Tensor& t) {
  return dispatch_dtype(t.dtype(), [&](auto tag) -> std::vector<std::int64_t> {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_integral<I>::value && !std::is_same<I, bool>::value) {
      std::vector<std::int64_t> out;
      for (I v : t.to_vector<I>()) out.push_back(static_cast<std::int64_t>(v));
      return out;
    } else {
      throw std::logic_error("index_values: not an index tensor");
    }
  });
}

HostTensor host(const Tensor& t) { return HostTensor{t.dtype(), t.shape(), t.to_host_bytes()}; }

::testing::AssertionResult same_bytes(const Tensor& actual, const HostTensor& expected) {
  if (actual.dtype() != expected.dtype) {
    return ::testing::AssertionFailure() << "dtype " << dtype_name(actual.dtype()) << ", expected "
                                         << dtype_name(expected.dtype);
  }
  if (actual.shape() != expected.shape) {
    return ::testing::AssertionFailure() << "shape " << shape_text(actual.shape()) << ", expected "
                                         << shape_text(expected.shape);
  }
  const std::vector<unsigned char> bytes = actual.to_host_bytes();
  if (bytes.size() != expected.bytes.size()) {
    return ::testing::AssertionFailure() << bytes.size() << " bytes, expected " << expected.bytes.size();
  }
  if (bytes.empty() || std::memcmp(bytes.data(), expected.bytes.data(), bytes.size()) == 0) {
    return ::testing::AssertionSuccess();
  }
  const std::size_t item = dtype_size(expected.dtype);
  std::size_t first = 0;
  while (bytes[first] == expected.bytes[first]) ++first;
  const std::size_t element = first / item;
  auto hex = [&](const std::vector<unsigned char>& b) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (std::size_t k = item; k-- > 0;) {  // little-endian: most significant byte last
      s += digits[b[element * item + k] >> 4];
      s += digits[b[element * item + k] & 15];
    }
    return s;
  };
  return ::testing::AssertionFailure() << "bytes differ first at element " << element << " of " << bytes.size() / item
                                       << " (" << dtype_name(expected.dtype) << "): 0x" << hex(bytes) << ", expected 0x"
                                       << hex(expected.bytes);
}

std::string shape_text(const Shape& shape) {
  std::string s = "[";
  for (int i = 0; i < shape.rank(); ++i) s += (i ? "," : "") + std::to_string(shape.dim(i));
  return s + "]";
}

std::string position_text(const Shape& shape, std::int64_t flat) {
  if (shape.rank() == 0) return "";
  std::vector<std::int64_t> coords(static_cast<std::size_t>(shape.rank()));
  for (int i = shape.rank() - 1; i >= 0; --i) {
    coords[static_cast<std::size_t>(i)] = flat % shape.dim(i);
    flat /= shape.dim(i);
  }
  std::string s = "[";
  for (std::size_t i = 0; i < coords.size(); ++i) s += (i ? "," : "") + std::to_string(coords[i]);
  return s + "]";
}

namespace {

template <class T>
void put(std::vector<unsigned char>& out, std::int64_t i, T value) {
  std::memcpy(out.data() + static_cast<std::size_t>(i) * sizeof(T), &value, sizeof(T));
}

// A finite float of random sign and mantissa with exponent in [lo, hi], or a
// signed zero one time in 16.
float random_float(Random& rng, int lo, int hi) {
  if (rng.chance(1, 16)) return rng.chance(1, 2) ? 0.0f : -0.0f;
  const std::uint32_t sign = static_cast<std::uint32_t>(rng.uniform(0, 1)) << 31;
  const std::uint32_t exponent = static_cast<std::uint32_t>(rng.uniform(127 + lo, 127 + hi)) << 23;
  const std::uint32_t mantissa = static_cast<std::uint32_t>(rng.bits() & 0x7fffffu);
  const std::uint32_t bits = sign | exponent | mantissa;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

double random_double(Random& rng, int lo, int hi) {
  if (rng.chance(1, 16)) return rng.chance(1, 2) ? 0.0 : -0.0;
  const std::uint64_t sign = static_cast<std::uint64_t>(rng.uniform(0, 1)) << 63;
  const std::uint64_t exponent = static_cast<std::uint64_t>(rng.uniform(1023 + lo, 1023 + hi)) << 52;
  const std::uint64_t mantissa = rng.bits() & ((std::uint64_t(1) << 52) - 1);
  const std::uint64_t bits = sign | exponent | mantissa;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// A finite half (as bits) in about [2^-14, 2^8): normal, any mantissa.
std::uint16_t random_half_bits(Random& rng) {
  if (rng.chance(1, 16)) return rng.chance(1, 2) ? 0x0000 : 0x8000;
  const std::uint32_t sign = static_cast<std::uint32_t>(rng.uniform(0, 1)) << 15;
  const std::uint32_t exponent = static_cast<std::uint32_t>(rng.uniform(1, 15 + 7)) << 10;
  const std::uint32_t mantissa = static_cast<std::uint32_t>(rng.bits() & 0x3ffu);
  return static_cast<std::uint16_t>(sign | exponent | mantissa);
}

}  // namespace

std::vector<unsigned char> random_bytes(DType dtype, std::int64_t count, Random& rng) {
  std::vector<unsigned char> out(static_cast<std::size_t>(count) * dtype_size(dtype));
  for (std::int64_t i = 0; i < count; ++i) {
    switch (dtype) {
      case DType::Bool: put<std::uint8_t>(out, i, static_cast<std::uint8_t>(rng.uniform(0, 1))); break;
      case DType::Int8:
      case DType::UInt8: put<std::uint8_t>(out, i, static_cast<std::uint8_t>(rng.bits())); break;
      case DType::Int16:
      case DType::UInt16: put<std::uint16_t>(out, i, static_cast<std::uint16_t>(rng.bits())); break;
      case DType::Int32:
      case DType::UInt32: put<std::uint32_t>(out, i, static_cast<std::uint32_t>(rng.bits())); break;
      case DType::Int64:
      case DType::UInt64: put<std::uint64_t>(out, i, rng.bits()); break;
      case DType::Float16: put<std::uint16_t>(out, i, random_half_bits(rng)); break;
      case DType::Float32: put<float>(out, i, random_float(rng, -20, 40)); break;
      case DType::Float64: put<double>(out, i, random_double(rng, -60, 60)); break;
      case DType::Complex64: {
        const float parts[2] = {random_float(rng, -20, 40), random_float(rng, -20, 40)};
        std::memcpy(out.data() + static_cast<std::size_t>(i) * sizeof parts, parts, sizeof parts);
        break;
      }
      case DType::Complex128: {
        const double parts[2] = {random_double(rng, -60, 60), random_double(rng, -60, 60)};
        std::memcpy(out.data() + static_cast<std::size_t>(i) * sizeof parts, parts, sizeof parts);
        break;
      }
      case DType::String: throw std::logic_error("random_bytes: strings have their own tests (TestStrings.cpp)");
    }
  }
  return out;
}

Tensor maybe_sliced(const Tensor& t, Random& rng) {
  if (t.rank() == 0 || rng.chance(1, 2)) return t;
  const std::int64_t front = rng.uniform(0, 3), back = rng.uniform(0, 2);
  const std::int64_t rows = t.shape().dim(0);
  const Shape big = t.shape().with_dim0(front + rows + back);
  std::vector<unsigned char> bytes = random_bytes(t.dtype(), big.num_elements(), rng);
  const std::vector<unsigned char> mine = t.to_host_bytes();
  const std::size_t row_bytes = rows == 0 ? 0 : mine.size() / static_cast<std::size_t>(rows);
  std::copy(mine.begin(), mine.end(),
            bytes.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(front) * row_bytes));
  return Tensor::from_host_bytes(t.dtype(), big, bytes.data(), bytes.size()).slice_rows(front, front + rows);
}

Shape random_shape(int rank, std::int64_t lo, std::int64_t hi, Random& rng) {
  std::vector<std::int64_t> dims;
  for (int i = 0; i < rank; ++i) dims.push_back(rng.uniform(lo, hi));
  return Shape(dims);
}

Shape random_batch(std::int64_t rows, Random& rng) {
  if (rng.chance(1, 2)) return Shape{rows};
  std::vector<std::int64_t> divisors;
  for (std::int64_t a = 1; a <= rows; ++a) {
    if (rows % a == 0) divisors.push_back(a);
  }
  if (divisors.empty()) return Shape{rng.uniform(0, 3), 0};  // 0 rows: [a, 0]
  const std::int64_t a = rng.pick(divisors);
  return Shape{a, rows / a};
}

std::int64_t random_rows(Random& rng) { return rng.pick<std::int64_t>({0, 1, 2, 3, 7, 7, 12, 33, 33}); }

}  // namespace test
}  // namespace shardops
