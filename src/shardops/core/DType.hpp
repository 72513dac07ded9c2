#pragma once
/// \file
/// \brief The closed set of element types shardops handles, and their C++ types.
///
/// Names follow NumPy ("float32", "complex64"), so h5py users read them as they
/// write them. Every switch over DType goes through dispatch_dtype() (Dispatch.hpp),
/// the one place a new type has to be added.
///
/// String is the one dtype without arithmetic: a string tensor's elements are
/// 8-byte handles into the tensor's StringPool (core/StringPool.hpp), so the
/// movement kernels move strings as they move any 8-byte element, and
/// dispatch_dtype() refuses it (no op computes on string values).

#include <Kokkos_Complex.hpp>
#include <cstddef>
#include <cstdint>
#include <string>

#include "shardops/core/Half.hpp"

namespace shardops {

enum class DType : std::uint8_t {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  Float32,
  Float64,
  Complex64,
  Complex128,
  String,
};

/// The dtypes with arithmetic (all but String), in enum order: the fixed-size
/// element types the numeric tests run over.
inline constexpr DType kAllDTypes[] = {
    DType::Bool,   DType::Int8,   DType::Int16,   DType::Int32,   DType::Int64,   DType::UInt8,     DType::UInt16,
    DType::UInt32, DType::UInt64, DType::Float16, DType::Float32, DType::Float64, DType::Complex64, DType::Complex128,
};

using complex64_t = Kokkos::complex<float>;
using complex128_t = Kokkos::complex<double>;

/// NumPy's name of a dtype.
const char* dtype_name(DType dtype) noexcept;
/// TensorFlow's DataTypeString ("float", "half", "double", ...), for TF-style messages.
const char* tf_dtype_name(DType dtype) noexcept;
/// Inverse of dtype_name. \throws InvalidArgument for an unknown name.
DType dtype_from_name(const std::string& name);
/// Bytes per element.
std::size_t dtype_size(DType dtype) noexcept;
bool is_complex(DType dtype) noexcept;
bool is_string(DType dtype) noexcept;
/// int8 … int64 and uint8 … uint64 (not bool).
bool is_integer(DType dtype) noexcept;

/// The DType of a C++ element type.
template <class T>
struct DTypeOf;
#define SHARDOPS_DTYPE_OF(T, D)              \
  template <>                                \
  struct DTypeOf<T> {                        \
    static constexpr DType value = DType::D; \
  }
SHARDOPS_DTYPE_OF(bool, Bool);
SHARDOPS_DTYPE_OF(std::int8_t, Int8);
SHARDOPS_DTYPE_OF(std::int16_t, Int16);
SHARDOPS_DTYPE_OF(std::int32_t, Int32);
SHARDOPS_DTYPE_OF(std::int64_t, Int64);
SHARDOPS_DTYPE_OF(std::uint8_t, UInt8);
SHARDOPS_DTYPE_OF(std::uint16_t, UInt16);
SHARDOPS_DTYPE_OF(std::uint32_t, UInt32);
SHARDOPS_DTYPE_OF(std::uint64_t, UInt64);
SHARDOPS_DTYPE_OF(half_t, Float16);
SHARDOPS_DTYPE_OF(float, Float32);
SHARDOPS_DTYPE_OF(double, Float64);
SHARDOPS_DTYPE_OF(complex64_t, Complex64);
SHARDOPS_DTYPE_OF(complex128_t, Complex128);
#undef SHARDOPS_DTYPE_OF

}  // namespace shardops
