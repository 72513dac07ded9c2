#pragma once
/// \file
/// \brief The element-wise combiners of the scatter family, with TensorFlow's
/// CPU semantics (Eigen's on x86 with denormals flushed) for every dtype.
///
/// - Add/Sub: out = out + u, out - u. bool is computed as int and converted back,
///   so add is OR and sub is XOR (TF has no bool kernels for TensorScatterAdd/Sub;
///   ScatterNd on bool accumulates as OR, as TF does). Signed integers wrap
///   (computed in unsigned arithmetic: wrapping is what TF's kernels do in practice
///   and it avoids undefined behaviour here). float, double and the parts of complex
///   numbers follow core/TfFloat.hpp (NaN payloads, FTZ/DAZ under Denormals::Flush).
/// - Min/Max: std::min(out, u) / std::max(out, u): a NaN already in the output stays,
///   a NaN update is ignored, and of two equal values (0.0, -0.0) the output keeps
///   its own — exactly Eigen's scalar_min_op/scalar_max_op on CPU. Under
///   Denormals::Flush both are read with DAZ first, so a subnormal output row that
///   an update touches becomes a zero even when it wins.
/// Untouched rows and pure moves (TensorScatterUpdate, GatherNd, ...) never pass
/// through here: they stay bit-exact copies, as in TF.

#include <cstdint>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "shardops/core/DType.hpp"
#include "shardops/core/TfFloat.hpp"

namespace shardops {
namespace kernels {

/// TF's arithmetic on one element type: unsigned and half as C++ computes them.
template <class T, Denormals D, class Enable = void>
struct Arith {
  KOKKOS_INLINE_FUNCTION static T add(const T& a, const T& b) { return static_cast<T>(a + b); }
  KOKKOS_INLINE_FUNCTION static T sub(const T& a, const T& b) { return static_cast<T>(a - b); }
  /// The value a comparison sees (DAZ for float/double under Flush).
  KOKKOS_INLINE_FUNCTION static T read(const T& a) { return a; }
};
template <class T, Denormals D>
struct Arith<T, D, std::enable_if_t<std::is_integral<T>::value && std::is_signed<T>::value>> {
  using U = std::make_unsigned_t<T>;
  KOKKOS_INLINE_FUNCTION static T add(const T& a, const T& b) {
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  }
  KOKKOS_INLINE_FUNCTION static T sub(const T& a, const T& b) {
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  }
  KOKKOS_INLINE_FUNCTION static T read(const T& a) { return a; }
};
template <Denormals D>
struct Arith<bool, D> {
  KOKKOS_INLINE_FUNCTION static bool add(bool a, bool b) { return a || b; }
  KOKKOS_INLINE_FUNCTION static bool sub(bool a, bool b) { return a != b; }
  KOKKOS_INLINE_FUNCTION static bool read(bool a) { return a; }
};
template <class T, Denormals D>
struct Arith<T, D, std::enable_if_t<std::is_floating_point<T>::value>> {
  KOKKOS_INLINE_FUNCTION static T add(T a, T b) { return tf_add<D>(a, b); }
  KOKKOS_INLINE_FUNCTION static T sub(T a, T b) { return tf_sub<D>(a, b); }
  KOKKOS_INLINE_FUNCTION static T read(T a) { return read_operand<D>(a); }
};
/// Complex add/sub are two real ones (TF's and Eigen's too): the rules apply per part.
template <class R, Denormals D>
struct Arith<Kokkos::complex<R>, D> {
  using C = Kokkos::complex<R>;
  KOKKOS_INLINE_FUNCTION static C add(const C& a, const C& b) {
    return C(tf_add<D>(a.real(), b.real()), tf_add<D>(a.imag(), b.imag()));
  }
  KOKKOS_INLINE_FUNCTION static C sub(const C& a, const C& b) {
    return C(tf_sub<D>(a.real(), b.real()), tf_sub<D>(a.imag(), b.imag()));
  }
  KOKKOS_INLINE_FUNCTION static C read(const C& a) { return C(read_operand<D>(a.real()), read_operand<D>(a.imag())); }
};

template <class T>
struct IsComplex : std::false_type {};
template <class R>
struct IsComplex<Kokkos::complex<R>> : std::true_type {};

/// o[k] = Combine::apply(o[k], u[k]) for a row of n elements, one by one.
template <class Combine>
struct ByElement {
  template <class T>
  KOKKOS_INLINE_FUNCTION static void apply_row(T* o, const T* u, std::int64_t n) {
    for (std::int64_t k = 0; k < n; ++k) Combine::apply(o[k], u[k]);
  }
};

/// A row of add/sub. A float or double row whose plain results are TF's (the common
/// case: maybe_not_plain) is checked in one vectorised pass and computed in another;
/// any other row goes by the rules, element by element. Complex rows are rows of twice
/// as many real parts.
template <Denormals D, class Combine, class T, class Op>
KOKKOS_INLINE_FUNCTION void arith_row(T* o, const T* u, std::int64_t n, Op op) {
  if constexpr (IsComplex<T>::value) {
    using R = typename T::value_type;
    arith_row<D, Combine>(reinterpret_cast<R*>(o), reinterpret_cast<const R*>(u), 2 * n, op);
  } else {
    if constexpr (std::is_floating_point<T>::value) {
      typename FloatBits<T>::Bits special = 0;
      for (std::int64_t k = 0; k < n; ++k) special |= maybe_not_plain<D>(op(o[k], u[k]));
      if (!special) {
        for (std::int64_t k = 0; k < n; ++k) o[k] = op(o[k], u[k]);
        return;
      }
    }
    ByElement<Combine>::apply_row(o, u, n);
  }
}

/// Rows of Min/Max. float16 as TF's x86 wheels compute it: Eigen takes a row's half
/// values in packets of kTfHalfPacket through float and back, which quiets a
/// signalling NaN, and the row's last n % kTfHalfPacket one by one, which keeps its
/// bits. (float and double move their NaNs unchanged either way.)
constexpr std::int64_t kTfHalfPacket = 8;
template <class Combine>
struct MinMaxRow {
  template <class T>
  KOKKOS_INLINE_FUNCTION static void apply_row(T* o, const T* u, std::int64_t n) {
    if constexpr (std::is_same<T, half_t>::value) {
      const std::int64_t packed = n / kTfHalfPacket * kTfHalfPacket;
      for (std::int64_t k = 0; k < packed; ++k) {
        Combine::apply(o[k], u[k]);
        const bool nan = (o[k].bits & 0x7c00u) == 0x7c00u && (o[k].bits & 0x03ffu) != 0;
        if (nan) o[k].bits = static_cast<std::uint16_t>(o[k].bits | 0x0200u);
      }
      ByElement<Combine>::apply_row(o + packed, u + packed, n - packed);
    } else {
      ByElement<Combine>::apply_row(o, u, n);
    }
  }
};

/// The arithmetic combines: out = Rule::of(out, u) by Arith's rules, a row at a time by
/// arith_row with Rule's plain operator (one template, so a new arithmetic combine is a
/// Rule and an alias).
template <Denormals D, class Rule>
struct CombineArith {
  template <class T>
  KOKKOS_INLINE_FUNCTION static void apply(T& out, const T& u) {
    out = Rule::template of<T, D>(out, u);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION static void apply_row(T* o, const T* u, std::int64_t n) {
    arith_row<D, CombineArith>(o, u, n, typename Rule::Plain{});
  }
};
struct AddRule {
  using Plain = Plus;
  template <class T, Denormals D>
  KOKKOS_INLINE_FUNCTION static T of(const T& a, const T& b) {
    return Arith<T, D>::add(a, b);
  }
};
struct SubRule {
  using Plain = Minus;
  template <class T, Denormals D>
  KOKKOS_INLINE_FUNCTION static T of(const T& a, const T& b) {
    return Arith<T, D>::sub(a, b);
  }
};
template <Denormals D>
using CombineAdd = CombineArith<D, AddRule>;
template <Denormals D>
using CombineSub = CombineArith<D, SubRule>;
/// Min (\p Max false) and max: the values a comparison sees (Arith::read), the smaller or
/// the larger kept; MinMaxRow does the rows.
template <Denormals D, bool Max>
struct CombineMinMax : MinMaxRow<CombineMinMax<D, Max>> {
  template <class T>
  KOKKOS_INLINE_FUNCTION static void apply(T& out, const T& u) {
    const T o = Arith<T, D>::read(out), v = Arith<T, D>::read(u);
    out = (Max ? (o < v) : (v < o)) ? v : o;
  }
};
template <Denormals D>
using CombineMin = CombineMinMax<D, false>;
template <Denormals D>
using CombineMax = CombineMinMax<D, true>;

/// Whether \p D changes anything for T: only float, double and complex have
/// subnormals TF flushes (half's are normal floats when computed).
template <class T>
struct HasFlushedSubnormals : std::integral_constant<bool, std::is_floating_point<T>::value || IsComplex<T>::value> {};

}  // namespace kernels
}  // namespace shardops
