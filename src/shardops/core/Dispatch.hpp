#pragma once
/// \file
/// \brief The one switch from a run-time DType to a compile-time element type.
///
/// Arithmetic kernels need the real type (dispatch_dtype); kernels that only move
/// rows need nothing but the row's size in bytes (dispatch_word), which keeps the
/// number of instantiations at five whatever the dtype. Index width is chosen at
/// the same point (dispatch_index).

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "shardops/core/DType.hpp"
#include "shardops/core/Error.hpp"

namespace shardops {

template <class T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<T>{}) with T the C++ type of \p dtype.
template <class F>
decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Bool: return f(TypeTag<bool>{});
    case DType::Int8: return f(TypeTag<std::int8_t>{});
    case DType::Int16: return f(TypeTag<std::int16_t>{});
    case DType::Int32: return f(TypeTag<std::int32_t>{});
    case DType::Int64: return f(TypeTag<std::int64_t>{});
    case DType::UInt8: return f(TypeTag<std::uint8_t>{});
    case DType::UInt16: return f(TypeTag<std::uint16_t>{});
    case DType::UInt32: return f(TypeTag<std::uint32_t>{});
    case DType::UInt64: return f(TypeTag<std::uint64_t>{});
    case DType::Float16: return f(TypeTag<half_t>{});
    case DType::Float32: return f(TypeTag<float>{});
    case DType::Float64: return f(TypeTag<double>{});
    case DType::Complex64: return f(TypeTag<complex64_t>{});
    case DType::Complex128: return f(TypeTag<complex128_t>{});
    case DType::String:
      // Callers that move elements use dispatch_word; only arithmetic lands here,
      // and the ops refuse strings with TF's text before they compute.
      throw InvalidArgument("string tensors have no arithmetic: this operation needs a numeric dtype");
  }
  throw InternalError("dispatch_dtype: dtype " + std::to_string(static_cast<int>(dtype)) + " has no C++ type");
}

/// The index dtypes a dispatch_index call is built for. TF has int16 kernels only for
/// GatherNd (ops/detail/TfKernels.hpp refuses int16 elsewhere first), so only the gather
/// pays for instantiating them.
enum class IndexDTypes { Int32Int64, WithInt16 };

/// Calls f(TypeTag<I>{}) with I = int32_t or int64_t (and int16_t with WithInt16).
template <IndexDTypes Set = IndexDTypes::Int32Int64, class F>
decltype(auto) dispatch_index(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Int16:
      if constexpr (Set == IndexDTypes::WithInt16) return f(TypeTag<std::int16_t>{});
      break;
    case DType::Int32: return f(TypeTag<std::int32_t>{});
    case DType::Int64: return f(TypeTag<std::int64_t>{});
    default: break;
  }
  throw InvalidArgument(std::string("indices must be ") + (Set == IndexDTypes::WithInt16 ? "int16, " : "") +
                        "int32 or int64, got " + dtype_name(dtype));
}

/// 16-byte word for moving rows whose byte size is a multiple of 16.
struct alignas(16) Word16 {
  std::uint64_t lo, hi;
};

/// Calls f(TypeTag<W>{}) with W the widest word (16, 8, 4, 2 or 1 bytes) that divides
/// \p row_bytes. Rows start at multiples of row_bytes from their tensor's first row,
/// which need not be aligned (a slice_rows() view starts wherever its first row does):
/// pass word_selector(row_bytes, {first rows}) so that W is aligned there too.
template <class F>
decltype(auto) dispatch_word(std::size_t row_bytes, F&& f) {
  if (row_bytes % 16 == 0) return f(TypeTag<Word16>{});
  if (row_bytes % 8 == 0) return f(TypeTag<std::uint64_t>{});
  if (row_bytes % 4 == 0) return f(TypeTag<std::uint32_t>{});
  if (row_bytes % 2 == 0) return f(TypeTag<std::uint16_t>{});
  return f(TypeTag<std::uint8_t>{});
}

/// \p row_bytes with the low address bits of every tensor's first row folded in: the
/// value to hand dispatch_word, whose W then divides the row size and every address.
inline std::size_t word_selector(std::size_t row_bytes, std::initializer_list<const void*> first_rows) {
  for (const void* p : first_rows) row_bytes |= static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(p) & 15u);
  return row_bytes;
}

}  // namespace shardops
