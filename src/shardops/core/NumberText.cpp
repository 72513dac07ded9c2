#include "shardops/core/NumberText.hpp"

#include <charconv>
#include <system_error>

namespace shardops {

std::string fixed_text(double value, int digits) {
  char text[512];  // the longest double in fixed notation has 309 digits before the point
  const std::to_chars_result r = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, digits);
  return r.ec == std::errc() ? std::string(text, r.ptr) : std::string("?");
}

std::optional<double> decimal_of(const std::string& text) {
  double value = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;  // strtod took a sign; from_chars only a minus
  const std::from_chars_result r = std::from_chars(first, last, value);
  if (r.ec != std::errc() || r.ptr != last || first == last) return std::nullopt;
  return value;
}

}  // namespace shardops
