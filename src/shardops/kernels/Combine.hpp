#pragma once
/// \file
/// \brief The element-wise combiners of the scatter family, with TensorFlow's
/// (Eigen's) semantics for every dtype.
///
/// - Add/Sub: out = out + u, out - u. bool is computed as int and converted back,
///   so add is OR and sub is XOR (TF has no bool kernels for TensorScatterAdd/Sub;
///   ScatterNd on bool accumulates as OR, as TF does). Signed integers wrap
///   (computed in unsigned arithmetic: wrapping is what TF's kernels do in practice
///   and it avoids undefined behaviour here).
/// - Min/Max: std::min(out, u) / std::max(out, u): a NaN already in the output stays,
///   a NaN update is ignored, and of two equal values (0.0, -0.0) the output keeps
///   its own — exactly Eigen's scalar_min_op/scalar_max_op on CPU.

#include <cstdint>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "shardops/core/DType.hpp"

namespace shardops {
namespace kernels {

template <class T, class Enable = void>
struct Wrapping {
  KOKKOS_INLINE_FUNCTION static T add(const T& a, const T& b) { return static_cast<T>(a + b); }
  KOKKOS_INLINE_FUNCTION static T sub(const T& a, const T& b) { return static_cast<T>(a - b); }
};
template <class T>
struct Wrapping<T, std::enable_if_t<std::is_integral<T>::value && std::is_signed<T>::value>> {
  using U = std::make_unsigned_t<T>;
  KOKKOS_INLINE_FUNCTION static T add(const T& a, const T& b) {
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  }
  KOKKOS_INLINE_FUNCTION static T sub(const T& a, const T& b) {
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  }
};
template <>
struct Wrapping<bool> {
  KOKKOS_INLINE_FUNCTION static bool add(bool a, bool b) { return a || b; }
  KOKKOS_INLINE_FUNCTION static bool sub(bool a, bool b) { return a != b; }
};

struct CombineAdd {
  template <class T>
  KOKKOS_INLINE_FUNCTION static void apply(T& out, const T& u) {
    out = Wrapping<T>::add(out, u);
  }
};
struct CombineSub {
  template <class T>
  KOKKOS_INLINE_FUNCTION static void apply(T& out, const T& u) {
    out = Wrapping<T>::sub(out, u);
  }
};
struct CombineMin {
  template <class T>
  KOKKOS_INLINE_FUNCTION static void apply(T& out, const T& u) {
    if (u < out) out = u;
  }
};
struct CombineMax {
  template <class T>
  KOKKOS_INLINE_FUNCTION static void apply(T& out, const T& u) {
    if (out < u) out = u;
  }
};

}  // namespace kernels
}  // namespace shardops
