#include "shardops/ops/Elementwise.hpp"

#include <limits>
#include <sstream>
#include <type_traits>

#include "shardops/core/Dispatch.hpp"
#include "shardops/kernels/Combine.hpp"

namespace shardops {

namespace {

using kernels::IsComplex;

// The real type of a float, double or complex element (T itself for the others).
template <class T>
struct real_part {
  using type = T;
};
template <class R>
struct real_part<Kokkos::complex<R>> {
  using type = R;
};

// \p x as TF's CPU kernels read an operand under D (kernels::Arith's rules).
template <Denormals D, class T>
KOKKOS_INLINE_FUNCTION T tf_read(const T& x) {
  return kernels::Arith<T, D>::read(x);
}

template <class T>
T scalar_as(const Scalar& s) {
  if constexpr (std::is_integral<T>::value) {
    // TensorFlow converts no real value into an integer or bool tensor (2.5 would be 2).
    if (!s.is_integer) {
      throw InvalidArgument("cannot convert " + s.str() + " to dtype " + dtype_name(DTypeOf<T>::value) +
                            " (TensorFlow makes no integer of a real value)");
    }
    if constexpr (std::is_same<T, bool>::value) return s.i != 0;
    return static_cast<T>(s.i);
  } else if constexpr (std::is_same<T, half_t>::value) {
    return half_t(static_cast<float>(s.f));
  } else if constexpr (std::is_floating_point<T>::value) {
    return static_cast<T>(s.f);
  } else {
    return T(static_cast<typename T::value_type>(s.f));  // complex: a real scalar
  }
}

// a * b with integer wrap-around (no overflow UB: uint16 would multiply as int) and TF's
// meaning elsewhere: a complex product is two real products and a sum per part, each
// with TF's bits.
template <Denormals D, class T>
KOKKOS_INLINE_FUNCTION T multiply(const T& a, const T& b) {
  if constexpr (std::is_same<T, bool>::value) {
    return a && b;
  } else if constexpr (std::is_integral<T>::value) {
    return static_cast<T>(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
  } else if constexpr (std::is_same<T, half_t>::value) {
    return half_t(float(a) * float(b));
  } else if constexpr (IsComplex<T>::value) {
    return T(tf_sub<D>(tf_mul<D>(a.real(), b.real()), tf_mul<D>(a.imag(), b.imag())),
             tf_add<D>(tf_mul<D>(a.real(), b.imag()), tf_mul<D>(a.imag(), b.real())));
  } else {
    return tf_mul<D>(a, b);
  }
}

KOKKOS_INLINE_FUNCTION std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The kernels are named templates called from the dtype dispatch: nvcc rejects a
// KOKKOS_LAMBDA defined inside a generic lambda.
template <class T>
void fill_range(T* o, std::int64_t start, std::int64_t delta, std::int64_t first, std::int64_t count) {
  Kokkos::parallel_for(
      "shardops::range", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, count), KOKKOS_LAMBDA(const std::int64_t i) {
        // In unsigned arithmetic, which wraps where int64 would overflow: (first + i) * delta
        // may not fit although the value, between start and limit, does.
        const auto v = static_cast<std::uint64_t>(start) +
                       static_cast<std::uint64_t>(first + i) * static_cast<std::uint64_t>(delta);
        o[i] = static_cast<T>(static_cast<std::int64_t>(v));
      });
}

template <Denormals D, class T>
void compare_values(const T* in, T v, bool equal, std::int32_t* o, std::int64_t n) {
  v = tf_read<D>(v);
  Kokkos::parallel_for(
      "shardops::compare", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { o[i] = ((tf_read<D>(in[i]) == v) == equal) ? 1 : 0; });
}

// Values with an order TF compares: not bool, not complex.
template <class T>
struct is_ordered : std::integral_constant<bool, !std::is_same<T, bool>::value> {};
template <class R>
struct is_ordered<Kokkos::complex<R>> : std::false_type {};

// x > v (above) or x < v; with \p or_equal also x == v. Only '<' and '==' are asked of
// T, so a NaN gives false as IEEE comparisons do.
template <Denormals D, class T>
void order_values(const T* in, T v, bool above, bool or_equal, std::int32_t* o, std::int64_t n) {
  v = tf_read<D>(v);
  Kokkos::parallel_for(
      "shardops::compare", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        const T x = tf_read<D>(in[i]);
        const bool strict = above ? v < x : x < v;
        o[i] = (strict || (or_equal && x == v)) ? 1 : 0;
      });
}

template <Denormals D, class T>
void arith_values(const T* in, T v, bool add, T* o, std::int64_t n) {
  Kokkos::parallel_for(
      "shardops::arith", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, n), KOKKOS_LAMBDA(const std::int64_t i) {
        o[i] = add ? kernels::Arith<T, D>::add(in[i], v) : multiply<D>(in[i], v);
      });
}

// Calls f with D as a compile-time Denormals.
template <class F>
void with_denormals(Denormals d, F&& f) {
  if (d == Denormals::Flush) {
    f(std::integral_constant<Denormals, Denormals::Flush>());
  } else {
    f(std::integral_constant<Denormals, Denormals::Keep>());
  }
}

template <class T>
void uniform_real(T* o, std::int64_t n, std::uint64_t key, std::int64_t first, double lo, double span) {
  constexpr int bits = std::is_same<T, float>::value ? 24 : 53;
  Kokkos::parallel_for(
      "shardops::random_uniform", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const std::uint64_t h = splitmix64(key ^ static_cast<std::uint64_t>(first + i));
        const T u = static_cast<T>(h >> (64 - bits)) / static_cast<T>(std::uint64_t(1) << bits);
        o[i] = static_cast<T>(lo + span * u);
      });
}

template <class T>
void uniform_int(T* o, std::int64_t n, std::uint64_t key, std::int64_t first, std::int64_t lo, std::uint64_t span) {
  Kokkos::parallel_for(
      "shardops::random_uniform", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const std::uint64_t h = splitmix64(key ^ static_cast<std::uint64_t>(first + i));
        o[i] = static_cast<T>(lo + static_cast<std::int64_t>(h % span));
      });
}

// One element of a cast (see cast_values) in C++'s conversions; a float -> integer value
// has been checked.
template <class To, class From>
KOKKOS_INLINE_FUNCTION To cast_plain(const From& x) {
  if constexpr (IsComplex<From>::value) {
    if constexpr (IsComplex<To>::value) {
      using R = typename To::value_type;
      return To(static_cast<R>(x.real()), static_cast<R>(x.imag()));
    } else if constexpr (std::is_same<To, bool>::value) {
      return x.real() != 0;  // TensorFlow's: the imaginary part is not looked at
    } else {
      return cast_plain<To>(x.real());
    }
  } else if constexpr (std::is_same<From, half_t>::value) {
    return cast_plain<To>(static_cast<float>(x));
  } else if constexpr (IsComplex<To>::value) {
    using R = typename To::value_type;
    return To(cast_plain<R>(x), R(0));
  } else if constexpr (std::is_same<To, bool>::value) {
    return x != From(0);
  } else if constexpr (std::is_same<To, half_t>::value) {
    return half_t(static_cast<float>(x));
  } else {
    return static_cast<To>(x);
  }
}

// One element of a cast with TF's CPU bits under D: a conversion between float and
// double (in either part of a complex number) or to bool reads a subnormal as a zero
// (DAZ), and a double made a subnormal float is written as a zero (FTZ); a cast within
// one width moves the bits. float16 converts in software, through float, which holds
// its subnormals as normal numbers.
template <class To, Denormals D, class From>
KOKKOS_INLINE_FUNCTION To cast_one(const From& x) {
  using RF = typename real_part<From>::type;
  using RT = typename real_part<To>::type;
  constexpr bool from_ieee = std::is_floating_point<RF>::value;
  constexpr bool widths = from_ieee && std::is_floating_point<RT>::value && !std::is_same<RF, RT>::value;
  if constexpr (widths || (from_ieee && std::is_same<To, bool>::value)) {
    const To r = cast_plain<To>(tf_read<D>(x));
    return std::is_same<RT, float>::value ? tf_read<D>(r) : r;
  } else {
    return cast_plain<To>(x);
  }
}

// The real value a float -> integer cast reads (the real part of a complex).
template <class From>
KOKKOS_INLINE_FUNCTION double real_of(const From& x) {
  if constexpr (IsComplex<From>::value) {
    return static_cast<double>(x.real());
  } else if constexpr (std::is_same<From, half_t>::value) {
    return static_cast<double>(static_cast<float>(x));
  } else {
    return static_cast<double>(x);
  }
}

template <Denormals D, class From, class To>
void cast_kernel(const From* in, To* out, std::int64_t n) {
  Kokkos::parallel_for(
      "shardops::cast", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { out[i] = cast_one<To, D>(in[i]); });
}

// The first element (or n) whose value does not fit integer type To.
template <class From, class To>
std::int64_t first_unfit(const From* in, std::int64_t n) {
  const double lo = static_cast<double>(std::numeric_limits<To>::lowest());
  // max + 1 is exact in double for every integer type; values below it truncate into range.
  const double hi = static_cast<double>(std::numeric_limits<To>::max()) + 1.0;
  std::int64_t first = n;
  Kokkos::parallel_reduce(
      "shardops::cast::check", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& m) {
        const double v = real_of(in[i]);
        if (!(v > lo - 1.0 && v < hi) && i < m) m = i;
      },
      Kokkos::Min<std::int64_t>(first));
  return first;
}

}  // namespace

Tensor cast_values(const Tensor& x, DType to, std::int64_t first_element, Denormals denormals) {
  if (is_string(x.dtype()) || is_string(to)) {
    throw InvalidArgument(std::string("cast: strings are not cast (from ") + dtype_name(x.dtype()) + " to " +
                          dtype_name(to) + ")");
  }
  Tensor out(to, x.shape(), Init::Uninitialized, "shardops::cast");
  const std::int64_t n = x.num_elements();
  dispatch_dtype(x.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    dispatch_dtype(to, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* in = reinterpret_cast<const From*>(x.data());
      constexpr bool from_float =
          std::is_floating_point<From>::value || std::is_same<From, half_t>::value || IsComplex<From>::value;
      if constexpr (from_float && std::is_integral<To>::value && !std::is_same<To, bool>::value) {
        const std::int64_t bad = first_unfit<From, To>(in, n);
        if (bad < n) {
          std::ostringstream value;
          value << real_of(in[bad]);
          throw InvalidArgument("cast: element " + std::to_string(first_element + bad) + " (" + value.str() +
                                ") does not fit " + dtype_name(to) + " (a NaN, an infinity or a value beyond " +
                                dtype_name(to) + "'s range has no defined cast)");
        }
      }
      with_denormals(denormals,
                     [&](auto d) { cast_kernel<decltype(d)::value>(in, reinterpret_cast<To*>(out.data()), n); });
    });
  });
  ExecSpace().fence();
  return out;
}

std::string Scalar::str() const {
  std::ostringstream os;
  if (is_integer)
    os << i;
  else
    os << f;
  return os.str();
}

Tensor range_values(DType dtype, std::int64_t start, std::int64_t delta, std::int64_t first, std::int64_t count) {
  if (dtype != DType::Int32 && dtype != DType::Int64) {
    throw InvalidArgument(std::string("range: dtype must be int32 or int64, got ") + dtype_name(dtype));
  }
  Tensor out(dtype, Shape{count}, Init::Uninitialized, "shardops::range");
  dispatch_index(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_range(reinterpret_cast<T*>(out.data()), start, delta, first, count);
  });
  ExecSpace().fence();
  return out;
}

const char* compare_op_name(CompareOp op) noexcept {
  switch (op) {
    case CompareOp::Equal: return "equal";
    case CompareOp::NotEqual: return "not_equal";
    case CompareOp::Greater: return "greater";
    case CompareOp::GreaterEqual: return "greater_equal";
    case CompareOp::Less: return "less";
    case CompareOp::LessEqual: return "less_equal";
  }
  return "?";
}

Tensor compare_scalar(CompareOp op, const Tensor& x, const Scalar& s, Denormals denormals) {
  const bool ordered = op != CompareOp::Equal && op != CompareOp::NotEqual;
  if (ordered && (is_complex(x.dtype()) || x.dtype() == DType::Bool)) {
    throw InvalidArgument(std::string(compare_op_name(op)) + ": " + dtype_name(x.dtype()) +
                          " values have no order (TensorFlow has no such kernel)");
  }
  Tensor out(DType::Int32, x.shape(), Init::Uninitialized, "shardops::compare");
  std::int32_t* o = reinterpret_cast<std::int32_t*>(out.data());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = scalar_as<T>(s);
    const T* in = reinterpret_cast<const T*>(x.data());
    with_denormals(denormals, [&](auto d) {
      constexpr Denormals D = decltype(d)::value;
      if constexpr (!is_ordered<T>::value) {
        compare_values<D>(in, v, op == CompareOp::Equal, o, x.num_elements());
      } else if (!ordered) {
        compare_values<D>(in, v, op == CompareOp::Equal, o, x.num_elements());
      } else {
        const bool above = op == CompareOp::Greater || op == CompareOp::GreaterEqual;
        const bool or_equal = op == CompareOp::GreaterEqual || op == CompareOp::LessEqual;
        order_values<D>(in, v, above, or_equal, o, x.num_elements());
      }
    });
  });
  ExecSpace().fence();
  return out;
}

Tensor arith_scalar(ArithOp op, const Tensor& x, const Scalar& s, Denormals denormals) {
  Tensor out(x.dtype(), x.shape(), Init::Uninitialized, "shardops::arith");
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = scalar_as<T>(s);
    with_denormals(denormals, [&](auto d) {
      arith_values<decltype(d)::value>(reinterpret_cast<const T*>(x.data()), v, op == ArithOp::Add,
                                       reinterpret_cast<T*>(out.data()), x.num_elements());
    });
  });
  ExecSpace().fence();
  return out;
}

Tensor random_uniform(DType dtype, const Shape& local_shape, std::int64_t first, std::uint64_t seed,
                      const Scalar& minval, const Scalar& maxval) {
  Tensor out(dtype, local_shape, Init::Uninitialized, "shardops::random_uniform");
  const std::uint64_t key = splitmix64(seed);
  const std::int64_t n = out.num_elements();
  if (dtype == DType::Float32 || dtype == DType::Float64) {
    const double lo = minval.f, span = maxval.f - minval.f;
    dispatch_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point<T>::value) {
        uniform_real(reinterpret_cast<T*>(out.data()), n, key, first, lo, span);
      }
    });
  } else if (dtype == DType::Int32 || dtype == DType::Int64) {
    if (!minval.is_integer || !maxval.is_integer || maxval.i <= minval.i) {
      throw InvalidArgument("random_uniform: integer dtypes need integer minval < maxval, got " + minval.str() +
                            " and " + maxval.str());
    }
    const std::int64_t lo = minval.i;
    const std::uint64_t span = static_cast<std::uint64_t>(maxval.i - minval.i);
    dispatch_index(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      uniform_int(reinterpret_cast<T*>(out.data()), n, key, first, lo, span);
    });
  } else {
    throw InvalidArgument(std::string("random_uniform: dtype must be float32, float64, int32 or int64, got ") +
                          dtype_name(dtype));
  }
  ExecSpace().fence();
  return out;
}

}  // namespace shardops
