#include "Reference.hpp"

#include <algorithm>
#include <complex>
#include <cstring>
#include <type_traits>

#include "shardops/core/Half.hpp"

// The compiler's IEEE half (GCC >= 12, Clang on x86-64/ARM) keeps the reference
// independent of shardops' own half_t; device compilers fall back to half_t, which
// TestHalf checks on all 65536 values.
#if defined(__FLT16_MANT_DIG__) && !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__SYCL_DEVICE_ONLY__)
#define SHARDOPS_TEST_HAVE_FLOAT16 1
#else
#define SHARDOPS_TEST_HAVE_FLOAT16 0
#endif

namespace shardops {
namespace test {

namespace {

// ------------------------------------------------------------ element arithmetic
//
// Storage types keyed by dtype (a half and a uint16 are both 2 bytes but add
// differently). Integers wrap (computed in unsigned arithmetic); bool adds as OR and
// subtracts as XOR (int arithmetic converted back to bool); half adds in float and
// rounds to nearest even; complex adds componentwise; Min/Max are Eigen's
// std::min/std::max: `u < out` replaces, so NaN outputs stick and ties keep out.

struct RefBool {
  std::uint8_t v;
};
struct RefHalf {
  std::uint16_t bits;
};

float half_to_float(RefHalf h) {
#if SHARDOPS_TEST_HAVE_FLOAT16
  _Float16 x;
  std::memcpy(&x, &h.bits, sizeof x);
  return static_cast<float>(x);
#else
  return static_cast<float>(half_t::from_bits(h.bits));
#endif
}

RefHalf float_to_half(float f) {
#if SHARDOPS_TEST_HAVE_FLOAT16
  const _Float16 x = static_cast<_Float16>(f);  // IEEE round to nearest even
  RefHalf h;
  std::memcpy(&h.bits, &x, sizeof h.bits);
  return h;
#else
  return RefHalf{half_t(f).bits};
#endif
}

template <class T>
struct Arith {
  static_assert(std::is_integral<T>::value, "integers only here");
  using U = std::make_unsigned_t<T>;
  static T add(T a, T b) { return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b))); }
  static T sub(T a, T b) { return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b))); }
  static bool less(T a, T b) { return a < b; }
};
template <>
struct Arith<RefBool> {
  static RefBool add(RefBool a, RefBool b) { return RefBool{static_cast<std::uint8_t>((a.v + b.v) != 0)}; }
  static RefBool sub(RefBool a, RefBool b) { return RefBool{static_cast<std::uint8_t>((a.v - b.v) != 0)}; }
  static bool less(RefBool a, RefBool b) { return a.v < b.v; }
};
template <>
struct Arith<RefHalf> {
  static RefHalf add(RefHalf a, RefHalf b) { return float_to_half(half_to_float(a) + half_to_float(b)); }
  static RefHalf sub(RefHalf a, RefHalf b) { return float_to_half(half_to_float(a) - half_to_float(b)); }
  static bool less(RefHalf a, RefHalf b) { return half_to_float(a) < half_to_float(b); }
};
template <class F>
struct FloatArith {
  static F add(F a, F b) { return a + b; }
  static F sub(F a, F b) { return a - b; }
  static bool less(F a, F b) { return a < b; }
};
template <>
struct Arith<float> : FloatArith<float> {};
template <>
struct Arith<double> : FloatArith<double> {};
template <class F>
struct Arith<std::complex<F>> {
  static std::complex<F> add(std::complex<F> a, std::complex<F> b) { return a + b; }
  static std::complex<F> sub(std::complex<F> a, std::complex<F> b) { return a - b; }
  static bool less(std::complex<F>, std::complex<F>) { throw std::logic_error("complex numbers have no order"); }
};

template <class T>
void combine_as(ScatterOp op, unsigned char* out, const unsigned char* u) {
  T a, b;
  std::memcpy(&a, out, sizeof(T));
  std::memcpy(&b, u, sizeof(T));
  switch (op) {
    case ScatterOp::ScatterNd:
    case ScatterOp::Add: a = Arith<T>::add(a, b); break;
    case ScatterOp::Sub: a = Arith<T>::sub(a, b); break;
    case ScatterOp::Min:
      if (Arith<T>::less(b, a)) a = b;
      break;
    case ScatterOp::Max:
      if (Arith<T>::less(a, b)) a = b;
      break;
    case ScatterOp::Update: a = b; break;
  }
  std::memcpy(out, &a, sizeof(T));
}

// ------------------------------------------------------------ index rows

// The flat output row of index row i (depth values from \p idx), or -1 if any
// coordinate is outside [0, dims[k]).
std::int64_t target_row(const std::vector<std::int64_t>& idx, std::int64_t i, int depth, const Shape& shape) {
  std::int64_t row = 0;
  for (int k = 0; k < depth; ++k) {
    const std::int64_t v = idx[static_cast<std::size_t>(i * depth + k)];
    if (v < 0 || v >= shape.dim(k)) return -1;
    row = row * shape.dim(k) + v;
  }
  return row;
}

std::string index_row_text(const std::vector<std::int64_t>& idx, std::int64_t i, int depth) {
  std::string s = "[";
  for (int k = 0; k < depth; ++k) s += (k ? ", " : "") + std::to_string(idx[static_cast<std::size_t>(i * depth + k)]);
  return s + "]";
}

Shape suffix(const Shape& s, int from) {
  std::vector<std::int64_t> d;
  for (int i = from; i < s.rank(); ++i) d.push_back(s.dim(i));
  return Shape(d);
}

Shape prefix(const Shape& s, int n) {
  std::vector<std::int64_t> d;
  for (int i = 0; i < n; ++i) d.push_back(s.dim(i));
  return Shape(d);
}

Shape concat(const Shape& a, const Shape& b) {
  std::vector<std::int64_t> d = a.dims();
  d.insert(d.end(), b.dims().begin(), b.dims().end());
  return Shape(d);
}

void copy_row(std::vector<unsigned char>& dst, std::int64_t dst_row, const std::vector<unsigned char>& src,
              std::int64_t src_row, std::size_t row_bytes) {
  std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(src_row) * row_bytes), row_bytes,
              dst.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(dst_row) * row_bytes));
}

}  // namespace

void ref_combine(DType dtype, ScatterOp op, unsigned char* out, const unsigned char* u) {
  switch (dtype) {
    case DType::Bool: return combine_as<RefBool>(op, out, u);
    case DType::Int8: return combine_as<std::int8_t>(op, out, u);
    case DType::Int16: return combine_as<std::int16_t>(op, out, u);
    case DType::Int32: return combine_as<std::int32_t>(op, out, u);
    case DType::Int64: return combine_as<std::int64_t>(op, out, u);
    case DType::UInt8: return combine_as<std::uint8_t>(op, out, u);
    case DType::UInt16: return combine_as<std::uint16_t>(op, out, u);
    case DType::UInt32: return combine_as<std::uint32_t>(op, out, u);
    case DType::UInt64: return combine_as<std::uint64_t>(op, out, u);
    case DType::Float16: return combine_as<RefHalf>(op, out, u);
    case DType::Float32: return combine_as<float>(op, out, u);
    case DType::Float64: return combine_as<double>(op, out, u);
    case DType::Complex64: return combine_as<std::complex<float>>(op, out, u);
    case DType::Complex128: return combine_as<std::complex<double>>(op, out, u);
    case DType::String: break;  // no arithmetic on strings (tests/unit/TestStrings.cpp)
  }
  throw std::logic_error("ref_combine: unknown dtype");
}

// ------------------------------------------------------------ DynamicPartition

std::vector<HostTensor> ref_dynamic_partition(const Tensor& data, const Tensor& partitions, int num_partitions) {
  const Shape slice = suffix(data.shape(), partitions.rank());
  const std::size_t row_bytes = static_cast<std::size_t>(slice.num_elements()) * data.itemsize();
  const std::vector<unsigned char> bytes = data.to_host_bytes();
  const std::vector<std::int32_t> ids = partitions.to_vector<std::int32_t>();
  std::vector<HostTensor> outputs;
  for (int p = 0; p < num_partitions; ++p) {
    HostTensor out{data.dtype(), Shape{}, {}};
    std::int64_t count = 0;
    for (std::size_t j = 0; j < ids.size(); ++j) {
      if (ids[j] != p) continue;
      out.bytes.insert(out.bytes.end(), bytes.begin() + static_cast<std::ptrdiff_t>(j * row_bytes),
                       bytes.begin() + static_cast<std::ptrdiff_t>((j + 1) * row_bytes));
      ++count;
    }
    out.shape = concat(Shape{count}, slice);
    outputs.push_back(out);
  }
  return outputs;
}

std::string ref_partition_error(const Tensor& partitions, int num_partitions) {
  const std::vector<std::int32_t> ids = partitions.to_vector<std::int32_t>();
  for (std::size_t j = 0; j < ids.size(); ++j) {
    if (ids[j] < 0 || ids[j] >= num_partitions) {
      return "partitions" + position_text(partitions.shape(), static_cast<std::int64_t>(j)) + " = " +
             std::to_string(ids[j]) + " is not in [0, " + std::to_string(num_partitions) + ")";
    }
  }
  return "";
}

// ------------------------------------------------------------ DynamicStitch

HostTensor ref_dynamic_stitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data) {
  std::int64_t max_index = -1;
  for (const Tensor& t : indices) {
    for (std::int32_t v : t.to_vector<std::int32_t>()) max_index = std::max<std::int64_t>(max_index, v);
  }
  const Shape slice = suffix(data[0].shape(), indices[0].rank());
  const std::size_t row_bytes = static_cast<std::size_t>(slice.num_elements()) * data[0].itemsize();
  HostTensor out{data[0].dtype(), concat(Shape{max_index + 1}, slice), {}};
  out.bytes.assign(static_cast<std::size_t>(max_index + 1) * row_bytes, 0);
  for (std::size_t m = 0; m < indices.size(); ++m) {
    const std::vector<std::int32_t> ids = indices[m].to_vector<std::int32_t>();
    const std::vector<unsigned char> rows = data[m].to_host_bytes();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] >= 0) copy_row(out.bytes, ids[i], rows, static_cast<std::int64_t>(i), row_bytes);
    }
  }
  return out;
}

std::string ref_stitch_error(const std::vector<Tensor>& indices) {
  for (const Tensor& t : indices) {
    const std::vector<std::int32_t> ids = t.to_vector<std::int32_t>();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] < 0) return "indices[" + std::to_string(i) + "] is out of range";
    }
  }
  return "";
}

// ------------------------------------------------------------ scatter family

HostTensor ref_scatter(ScatterOp op, DType dtype, const Shape& shape, const Tensor* tensor, const Tensor& indices,
                       const Tensor& updates) {
  HostTensor out{dtype, shape, {}};
  out.bytes = tensor
                  ? tensor->to_host_bytes()
                  : std::vector<unsigned char>(static_cast<std::size_t>(shape.num_elements()) * dtype_size(dtype), 0);
  if (shape.num_elements() == 0) return out;
  const int depth = static_cast<int>(indices.shape().dim(indices.rank() - 1));
  const std::int64_t rows = indices.num_elements() / depth;
  const std::int64_t slice = suffix(shape, depth).num_elements();
  const std::size_t item = dtype_size(dtype);
  const std::vector<std::int64_t> idx = index_values(indices);
  const std::vector<unsigned char> upd = updates.to_host_bytes();
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t row = target_row(idx, i, depth, shape);
    if (row < 0) continue;
    for (std::int64_t e = 0; e < slice; ++e) {
      ref_combine(dtype, op, &out.bytes[static_cast<std::size_t>(row * slice + e) * item],
                  &upd[static_cast<std::size_t>(i * slice + e) * item]);
    }
  }
  return out;
}

std::string ref_scatter_error(const Shape& shape, const Tensor& indices) {
  if (shape.num_elements() == 0) return "";
  const int depth = static_cast<int>(indices.shape().dim(indices.rank() - 1));
  const Shape batch = prefix(indices.shape(), indices.rank() - 1);
  const std::vector<std::int64_t> idx = index_values(indices);
  for (std::int64_t i = batch.num_elements() - 1; i >= 0; --i) {
    if (target_row(idx, i, depth, shape) < 0) {
      return "indices" + position_text(batch, i) + " = " + index_row_text(idx, i, depth) +
             " does not index into shape " + shape_text(shape);
    }
  }
  return "";
}

// ------------------------------------------------------------ GatherNd

HostTensor ref_gather_nd(const Tensor& params, const Tensor& indices) {
  const int depth = static_cast<int>(indices.shape().dim(indices.rank() - 1));
  const Shape batch = prefix(indices.shape(), indices.rank() - 1);
  const Shape slice = suffix(params.shape(), depth);
  const std::size_t row_bytes = static_cast<std::size_t>(slice.num_elements()) * params.itemsize();
  HostTensor out{params.dtype(), concat(batch, slice), {}};
  out.bytes.assign(static_cast<std::size_t>(batch.num_elements()) * row_bytes, 0);
  if (row_bytes == 0) return out;
  const std::vector<std::int64_t> idx = index_values(indices);
  const std::vector<unsigned char> src = params.to_host_bytes();
  for (std::int64_t i = 0; i < batch.num_elements(); ++i) {
    const std::int64_t row = target_row(idx, i, depth, params.shape());
    if (row >= 0) copy_row(out.bytes, i, src, row, row_bytes);
  }
  return out;
}

std::string ref_gather_error(const Tensor& params, const Tensor& indices) {
  const int depth = static_cast<int>(indices.shape().dim(indices.rank() - 1));
  const Shape batch = prefix(indices.shape(), indices.rank() - 1);
  const std::vector<std::int64_t> idx = index_values(indices);
  for (std::int64_t i = batch.num_elements() - 1; i >= 0; --i) {
    if (target_row(idx, i, depth, params.shape()) < 0) {
      return "indices" + position_text(batch, i) + " = " + index_row_text(idx, i, depth) +
             " does not index into param shape " + shape_text(params.shape()) + ", node name: GatherNd";
    }
  }
  return "";
}

}  // namespace test
}  // namespace shardops
