#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "DeckLiteral.hpp"
#include "shardops/core/DType.hpp"

namespace shardops {
namespace app {

// A deck's inline value converted as tf.constant(value, dtype) converts the same Python
// list (TensorFlow's py_seq_tensor.cc): the first element decides the value's kind; the
// converter for the dtype asked for runs where TensorFlow has one; otherwise (or where
// that one fails) the value is converted by its kind, then cast to the dtype asked for.
// Which converter ends the conversion depends on the first element each converter fails
// on, so the rules below are TensorFlow's, not a table of pairs of dtypes.

/// One element of an inline value: what it reads as, its text and its line in the deck.
struct InlineElement {
  Literal literal;
  std::string text;
  int line = 0;
};

/// The converted value: its dtype and its elements, ready to be stored by a static_cast
/// to the dtype's type (integers in \p ints, modulo 2^bits where narrower; numbers in
/// \p reals, already rounded and flushed as TensorFlow's cast would; text in \p strings).
struct InlineValue {
  DType dtype = DType::Float32;
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
  std::vector<std::string> strings;
};

/// Why TensorFlow refuses a value: the message (without the tensor's name) and the line of
/// the element it names.
struct InlineValueError {
  std::string message;
  int line = 0;
};

/// \p elements (in row-major order) converted to \p wanted, or to the dtype TensorFlow
/// infers where none is given. \throws InlineValueError for what tf.constant refuses.
InlineValue convert_inline_value(const std::vector<InlineElement>& elements, std::optional<DType> wanted);

}  // namespace app
}  // namespace shardops
