// libFuzzer target: the --shape text (apps/shardops/ShapeText.cpp) and the Shape it
// makes (core/Shape.cpp). Text is refused with shardops::Error, or gives dims that are
// exactly its comma-separated integers; a Shape is refused, or its element count is
// the product of its dims without overflow.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "ShapeText.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/Shape.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::int64_t> dims;
  try {
    dims = shardops::app::parse_shape(text);
  } catch (const shardops::Error&) {
    return 0;
  }
  std::string again;
  for (std::size_t i = 0; i < dims.size(); ++i) again += (i ? "," : "") + std::to_string(dims[i]);
  // The text may write a number differently ("007", "-0"), never another number or more of them.
  if (shardops::app::parse_shape(again) != dims) std::abort();
  try {
    const shardops::Shape shape(dims);
    std::int64_t n = 1;
    for (std::int64_t d : dims) {
      if (d < 0 || !shardops::checked_multiply(n, d, n)) std::abort();
    }
    if (shape.num_elements() != n || shape.rank() != static_cast<int>(dims.size())) std::abort();
    static_cast<void>(shape.str());
  } catch (const shardops::Error&) {
  }
  return 0;
}
