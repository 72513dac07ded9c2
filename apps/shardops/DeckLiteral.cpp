#include "DeckLiteral.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "shardops/core/Error.hpp"

namespace shardops {
namespace app {

namespace {

const std::string kYamlTag = "tag:yaml.org,2002:";

bool read_bool(const std::string& t, Literal& out) {
  for (const char* word : {"true", "True", "TRUE", "false", "False", "FALSE"}) {
    if (t != word) continue;
    out.kind = Literal::Bool;
    out.i = t[0] == 't' || t[0] == 'T';
    out.f = static_cast<double>(out.i);
    return true;
  }
  return false;
}

// [-+]? then digits, 0x hex digits or 0o octal digits; exact where uint64 holds it.
bool read_integer(const std::string& t, Literal& out) {
  const bool negative = !t.empty() && t[0] == '-';
  std::size_t pos = !t.empty() && (t[0] == '-' || t[0] == '+') ? 1 : 0;
  int base = 10;
  if (t.compare(pos, 2, "0x") == 0 || t.compare(pos, 2, "0o") == 0) {
    base = t[pos + 1] == 'x' ? 16 : 8;
    pos += 2;
  }
  if (pos == t.size()) return false;
  std::uint64_t magnitude = 0;
  double approx = 0;
  bool overflow = false;
  for (std::size_t k = pos; k < t.size(); ++k) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(t[k])));
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : base;
    if (digit >= base) return false;
    overflow = overflow || magnitude > (UINT64_MAX - static_cast<std::uint64_t>(digit)) / base;
    magnitude = magnitude * base + static_cast<std::uint64_t>(digit);
    approx = approx * base + digit;
  }
  out.kind = Literal::Integer;
  // strtod rounds decimal text correctly; other bases are exact up to uint64.
  out.f = base == 10 ? std::strtod(t.c_str(), nullptr)
                     : (negative ? -1.0 : 1.0) * (overflow ? approx : static_cast<double>(magnitude));
  if (overflow || (negative && magnitude > std::uint64_t(1) << 63)) {
    out.range = Literal::Beyond;
  } else {
    out.range = !negative && magnitude > static_cast<std::uint64_t>(INT64_MAX) ? Literal::UInt64 : Literal::Int64;
    out.i = static_cast<std::int64_t>(negative ? 0 - magnitude : magnitude);
  }
  return true;
}

// [-+]? (.digits | digits[.digits]) [e[-+]digits], YAML's .inf/.nan, and nan/inf/infinity.
bool read_real(const std::string& t, Literal& out) {
  const std::size_t sign = !t.empty() && (t[0] == '-' || t[0] == '+') ? 1 : 0;
  std::string word = t.substr(sign);
  const bool dotted = !word.empty() && word[0] == '.';
  if (dotted &&
      (word == ".inf" || word == ".Inf" || word == ".INF" || word == ".nan" || word == ".NaN" || word == ".NAN")) {
    if (sign && word[1] != 'i' && word[1] != 'I') return false;  // YAML has no signed .nan
    word = word.substr(1);
  } else {
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
    if (word != "nan" && word != "inf" && word != "infinity") {
      std::size_t k = 0, digits = 0;
      while (k < word.size() && std::isdigit(static_cast<unsigned char>(word[k]))) ++k, ++digits;
      if (k < word.size() && word[k] == '.')
        for (++k; k < word.size() && std::isdigit(static_cast<unsigned char>(word[k]));) ++k, ++digits;
      if (digits == 0) return false;
      if (k < word.size() && word[k] == 'e') {
        if (++k < word.size() && (word[k] == '-' || word[k] == '+')) ++k;
        const std::size_t exponent = k;
        while (k < word.size() && std::isdigit(static_cast<unsigned char>(word[k]))) ++k;
        if (k == exponent) return false;
      }
      if (k != word.size()) return false;
    }
  }
  out.kind = Literal::Real;
  const double magnitude = std::strtod(word.c_str(), nullptr);
  out.f = t[0] == '-' ? -magnitude : magnitude;
  return true;
}

}  // namespace

std::string shown_tag(const std::string& tag) {
  return tag.compare(0, kYamlTag.size(), kYamlTag) == 0 ? "!!" + tag.substr(kYamlTag.size()) : tag;
}

bool known_scalar_tag(const std::string& tag) {
  if (tag.empty() || tag == "?" || tag == "!") return true;
  for (const char* known : {"str", "int", "float", "bool"})
    if (tag == kYamlTag + known) return true;
  return false;
}

std::string unknown_tag_text(const std::string& tag) {
  return "unsupported YAML tag '" + shown_tag(tag) + "' (decks know !!str, !!int, !!float and !!bool)";
}

Literal read_literal(const std::string& t, const std::string& tag) {
  Literal out;
  if (!known_scalar_tag(tag)) throw InvalidArgument(unknown_tag_text(tag));
  if (tag == "!" || tag == kYamlTag + "str") return out;
  if (tag.empty() || tag == "?") {
    if (!read_bool(t, out) && !read_integer(t, out)) read_real(t, out);
    return out;
  }
  const std::string shown = "'" + shown_tag(tag) + " " + t + "'";
  if (tag == kYamlTag + "bool") {
    if (!read_bool(t, out)) throw InvalidArgument(shown + " is not a boolean (true or false)");
  } else if (tag == kYamlTag + "int") {
    if (!read_integer(t, out)) throw InvalidArgument(shown + " is not an integer");
  } else if (tag == kYamlTag + "float") {
    if (!read_integer(t, out) && !read_real(t, out)) throw InvalidArgument(shown + " is not a number");
    out.kind = Literal::Real;
  }
  return out;
}

bool read_int64(const std::string& t, const std::string& tag, std::int64_t& v) {
  const Literal lit = read_literal(t, tag);
  if (lit.kind != Literal::Integer || lit.range != Literal::Int64) return false;
  v = lit.i;
  return true;
}

}  // namespace app
}  // namespace shardops
