#include "shardops/core/DType.hpp"

#include <type_traits>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/StringPool.hpp"

namespace shardops {

const char* dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::UInt8: return "uint8";
    case DType::UInt16: return "uint16";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Float16: return "float16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
    case DType::String: return "string";
  }
  return "unknown";
}

const char* tf_dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::Float16: return "half";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    default: return dtype_name(dtype);
  }
}

DType dtype_from_name(const std::string& name) {
  for (DType d : kAllDTypes) {
    if (name == dtype_name(d)) return d;
  }
  if (name == dtype_name(DType::String)) return DType::String;
  throw InvalidArgument("unknown dtype '" + name + "'");
}

std::size_t dtype_size(DType dtype) noexcept {
  if (dtype == DType::String) return sizeof(StringHandle);
  try {
    return dispatch_dtype(dtype, [](auto tag) { return sizeof(typename decltype(tag)::type); });
  } catch (...) {
    return 0;
  }
}

bool is_complex(DType dtype) noexcept { return dtype == DType::Complex64 || dtype == DType::Complex128; }

bool is_string(DType dtype) noexcept { return dtype == DType::String; }

bool is_integer(DType dtype) noexcept {
  if (is_string(dtype)) return false;
  try {
    return dispatch_dtype(dtype, [](auto tag) {
      using T = typename decltype(tag)::type;
      return std::is_integral<T>::value && !std::is_same<T, bool>::value;
    });
  } catch (...) {
    return false;
  }
}

}  // namespace shardops
