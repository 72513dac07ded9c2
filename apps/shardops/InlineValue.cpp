#include "InlineValue.hpp"

#include <array>
#include <cmath>
#include <limits>

namespace shardops {
namespace app {

namespace {

// TensorFlow's converters, each making one dtype; it has none for the other dtypes.
enum Converter { F32, F64, F16, I64, I32, U64, C128, Boolean, Str, kConverters };

// py_seq_tensor.cc's reasons a converter stops at an element.
enum class Fault { None, Mixed, OutOfRange, OutOfRangeDouble, FoundInt64, FoundFloat };

struct Failure {
  Fault fault = Fault::None;
  std::size_t at = 0;  ///< the element it stops at
};

const char* const kMixedText = "Can't convert Python sequence with mixed types to Tensor.";

DType made_by(Converter c) {
  static constexpr DType made[] = {DType::Float32, DType::Float64,    DType::Float16, DType::Int64, DType::Int32,
                                   DType::UInt64,  DType::Complex128, DType::Bool,    DType::String};
  return made[c];
}

std::optional<Converter> converter_for(DType d) {
  for (int c = 0; c < kConverters; ++c)
    if (made_by(static_cast<Converter>(c)) == d) return static_cast<Converter>(c);
  return std::nullopt;
}

bool is_real(DType d) { return d == DType::Float16 || d == DType::Float32 || d == DType::Float64; }

// Whether TensorFlow casts what a converter made (\p made) to \p wanted: integers into
// integers, integers and reals into reals, any number into complex.
bool castable(DType made, DType wanted) {
  const bool from_integer = is_integer(made), from_real = is_real(made);
  if (is_integer(wanted)) return from_integer;
  if (is_real(wanted)) return from_integer || from_real;
  if (is_complex(wanted)) return from_integer || from_real || is_complex(made);
  return false;
}

// A double as float16 holds it, through float32 as TensorFlow's converter rounds it.
double as_half(double d) { return static_cast<double>(static_cast<float>(half_t(static_cast<float>(d)))); }

// Where converter \p c stops on element \p e, if it does.
Fault fault_of(Converter c, const InlineElement& e) {
  const Literal& lit = e.literal;
  const bool text = lit.kind == Literal::Text, real = lit.kind == Literal::Real, integer = lit.kind == Literal::Integer;
  switch (c) {
    case Str: return text ? Fault::None : Fault::Mixed;
    case Boolean: return lit.kind == Literal::Bool ? Fault::None : Fault::Mixed;
    case F32:
    case F64:
    case F16:
    case C128: {
      if (text) return Fault::Mixed;
      if (integer && std::isinf(lit.f)) return Fault::OutOfRangeDouble;  // no double holds it
      if (!real || c == C128 || c == F64 || !std::isfinite(lit.f)) return Fault::None;
      const double rounded = c == F32 ? static_cast<double>(static_cast<float>(lit.f)) : as_half(lit.f);
      return std::isinf(rounded) ? Fault::OutOfRangeDouble : Fault::None;
    }
    case I64:
    case I32:
    case U64: {
      if (text) return Fault::Mixed;
      if (real) return Fault::FoundFloat;
      if (!integer) return Fault::None;  // a bool is the integer 0 or 1
      if (c == U64)
        return lit.range == Literal::Beyond || (lit.range == Literal::Int64 && lit.i < 0) ? Fault::OutOfRange
                                                                                          : Fault::None;
      if (lit.range != Literal::Int64) return Fault::OutOfRange;
      if (c == I32 && (lit.i < INT32_MIN || lit.i > INT32_MAX)) return Fault::FoundInt64;
      return Fault::None;
    }
    default: return Fault::None;
  }
}

// For each converter, the first element it stops on.
std::array<Failure, kConverters> failures_of(const std::vector<InlineElement>& elements) {
  std::array<Failure, kConverters> out{};
  for (int c = 0; c < kConverters; ++c) {
    for (std::size_t k = 0; k < elements.size(); ++k) {
      const Fault f = fault_of(static_cast<Converter>(c), elements[k]);
      if (f == Fault::None) continue;
      out[c] = Failure{f, k};
      break;
    }
  }
  return out;
}

const char* kind_words(Literal::Kind k) {
  switch (k) {
    case Literal::Text: return "strings";
    case Literal::Bool: return "booleans";
    default: return "numbers";
  }
}

[[noreturn]] void refuse(const InlineElement& e, const std::string& message) {
  throw InlineValueError{message, e.line};
}

// TensorFlow's ValueError for converter \p c stopping where \p f says.
[[noreturn]] void refuse_value(const std::vector<InlineElement>& elements, Converter c, const Failure& f,
                               std::optional<DType> wanted) {
  const InlineElement& e = elements[f.at];
  switch (f.fault) {
    case Fault::Mixed: {
      const Literal::Kind first = elements.front().literal.kind;
      std::string words = first == Literal::Text || e.literal.kind == Literal::Text
                              ? "mixes strings with numbers or booleans (quote every string element)"
                              : std::string("mixes ") + kind_words(first) + " and " + kind_words(e.literal.kind);
      refuse(e, words + ": " + e.text + " after " + elements.front().text + " (TensorFlow: \"" + kMixedText + "\")");
    }
    case Fault::OutOfRangeDouble:
      if (e.literal.kind == Literal::Integer) refuse(e, "out-of-range integer " + e.text + ": no double holds it");
      refuse(e, e.text + " is out of range for " + dtype_name(made_by(c)) +
                    (wanted ? "" : ", the dtype TensorFlow infers for reals (dtype: float64 holds it)"));
    default:
      refuse(e, "out-of-range integer " + e.text + ": " +
                    (c == U64 || wanted == DType::UInt64 ? "uint64 holds 0 to 2^64-1"
                                                         : "an integer must fit int64 (uint64's with dtype: uint64), "
                                                           "as in TensorFlow"));
  }
}

// TensorFlow's TypeError: converter \p c made a dtype that is not cast to \p wanted.
[[noreturn]] void refuse_type(const std::vector<InlineElement>& elements, Converter c, DType wanted) {
  const DType made = made_by(c);
  const Literal::Kind culprit = made == DType::Bool ? Literal::Bool : is_real(made) ? Literal::Real : Literal::Integer;
  const InlineElement* e = &elements.front();
  for (const InlineElement& x : elements) {
    if (x.literal.kind != culprit) continue;
    e = &x;
    break;
  }
  const std::string why = wanted == DType::Bool ? "TensorFlow makes no bool of a number; a cast step does"
                          : made == DType::Bool
                              ? "TensorFlow converts booleans to bool, int32, int64, uint64, float16, float32, float64 "
                                "and complex128 only; a cast step converts them"
                              : "TensorFlow makes no integer of a real value; a cast step truncates";
  refuse(*e, "cannot convert " + e->text + " to dtype " + dtype_name(wanted) + " (" + why + ")");
}

// The converter TensorFlow ends with, for a value of \p kind (its first element's).
Converter converter_by_kind(Literal::Kind kind, const std::array<Failure, kConverters>& failed, bool dtype_given) {
  switch (kind) {
    case Literal::Text: return Str;
    case Literal::Bool: return Boolean;
    case Literal::Real: return dtype_given ? F64 : F32;
    case Literal::Integer: {
      // An integer converter hands over to the next on a wider integer, or on a real.
      if (dtype_given) return failed[I64].fault == Fault::FoundFloat ? F64 : I64;
      const Converter c = failed[I32].fault == Fault::FoundInt64 ? I64 : I32;
      return failed[c].fault == Fault::FoundFloat ? F32 : c;
    }
  }
  return F32;
}

// A real result of a cast as TensorFlow's CPU kernels store it: a subnormal float32 (or
// float64) becomes a zero of its sign (flush to zero); float16 goes through float32.
double cast_real(double d, DType to) {
  if (to == DType::Float64 || to == DType::Complex128)
    return std::fabs(d) < std::numeric_limits<double>::min() ? std::copysign(0.0, d) : d;
  const float f = static_cast<float>(d);
  return std::fabs(f) < std::numeric_limits<float>::min() ? std::copysign(0.0, d) : static_cast<double>(f);
}

// An integer cast to a real dtype: rounded once, from the integer (a float from a
// double of the integer could round twice).
double integer_as(const Literal& lit, DType to, bool from_uint64) {
  const bool wide = to == DType::Float64 || to == DType::Complex128;
  if (from_uint64) {
    const auto u = static_cast<std::uint64_t>(lit.i);
    return wide ? static_cast<double>(u) : static_cast<double>(static_cast<float>(u));
  }
  return wide ? static_cast<double>(lit.i) : static_cast<double>(static_cast<float>(lit.i));
}

}  // namespace

InlineValue convert_inline_value(const std::vector<InlineElement>& elements, std::optional<DType> wanted) {
  InlineValue out;
  if (elements.empty()) {
    out.dtype = wanted.value_or(DType::Float32);
    return out;
  }
  const std::array<Failure, kConverters> failed = failures_of(elements);
  const std::optional<Converter> direct = wanted ? converter_for(*wanted) : std::nullopt;
  // uint64's converter leaves Python's OverflowError set where it stops on an integer
  // uint64 does not hold, so TensorFlow fails (with a SystemError, or the fallback's
  // error) even where its fallback through int64 would succeed.
  if (direct == U64 && failed[U64].fault == Fault::OutOfRange) refuse_value(elements, U64, failed[U64], wanted);
  Converter c;
  if (direct && failed[*direct].fault == Fault::None) {
    c = *direct;
  } else {
    c = converter_by_kind(elements.front().literal.kind, failed, wanted.has_value());
    if (failed[c].fault != Fault::None) refuse_value(elements, c, failed[c], wanted);
  }
  const DType made = made_by(c);
  out.dtype = wanted.value_or(made);
  if (made != out.dtype && (c == Str || is_string(out.dtype) || !castable(made, out.dtype)))
    refuse_type(elements, c, out.dtype);

  for (const InlineElement& e : elements) {
    const Literal& lit = e.literal;
    if (c == Str) {
      out.strings.push_back(e.text);
      continue;
    }
    const bool made_integer = is_integer(made) || made == DType::Bool;
    out.ints.push_back(lit.kind == Literal::Real ? 0 : lit.i);
    double d = lit.f;  // a converter of reals reads an integer as Python's float() does
    if (made_integer && !is_integer(out.dtype) && out.dtype != DType::Bool) {
      d = integer_as(lit, out.dtype, made == DType::UInt64);
    } else if (made != out.dtype && !made_integer) {
      d = cast_real(made == DType::Float16 ? as_half(d) : d, out.dtype);
    }
    out.reals.push_back(d);
  }
  return out;
}

}  // namespace app
}  // namespace shardops
