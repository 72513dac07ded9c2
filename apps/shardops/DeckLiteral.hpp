#pragma once

#include <cstdint>
#include <string>

namespace shardops {
namespace app {

// What a deck's scalar reads as: YAML 1.2's core schema (true/True/TRUE, 0x1F, 0o17,
// 1.5e3, .inf, -.inf, .nan), the words nan, inf and infinity that decks always read as
// reals, and the tags !!str, !!int, !!float and !!bool.
struct Literal {
  enum Kind { Text, Bool, Integer, Real } kind = Text;
  // Integers: the smallest of int64 and uint64 that holds the value, or neither.
  enum Range { Int64, UInt64, Beyond } range = Int64;
  std::int64_t i = 0;  ///< Bool 0/1, Integer (a uint64 above int64's range: its bits)
  double f = 0;        ///< Bool, Integer and Real
};

/// An integer that uint64 holds and int64 does not: a number for a uint64 tensor alone.
inline bool beyond_int64(const Literal& lit) { return lit.kind == Literal::Integer && lit.range == Literal::UInt64; }

/// "!!int" for YAML's "tag:yaml.org,2002:int", as a deck writes it.
std::string shown_tag(const std::string& tag);

/// Whether a scalar may carry \p tag: none ("" or "?"), "!" (quoted), or one of the tags
/// decks read (!!str, !!int, !!float, !!bool).
bool known_scalar_tag(const std::string& tag);

/// The text of the error for a tag that known_scalar_tag() refuses.
std::string unknown_tag_text(const std::string& tag);

/// Reads \p t, the text of a scalar with YAML tag \p tag ("!": quoted, so text; "?" or
/// empty: plain). \throws InvalidArgument (no location) for a tag it does not match.
Literal read_literal(const std::string& t, const std::string& tag);

/// An integer that int64 holds, written plainly or with !!int.
bool read_int64(const std::string& t, const std::string& tag, std::int64_t& v);

}  // namespace app
}  // namespace shardops
