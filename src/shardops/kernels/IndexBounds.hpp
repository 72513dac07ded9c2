#pragma once
/// \file
/// \brief Turning an index row (K coordinates) into a row of the flattened
/// [prod(shape[:K]), slice] matrix, with the bounds check every scatter/gather needs.

#include <cstdint>
#include <vector>

#include <Kokkos_Core.hpp>

#include "shardops/core/Error.hpp"

namespace shardops {
namespace kernels {

/// TF supports index depths 1..7 (scatter) and 0..7 (gather).
constexpr int kMaxIndexDepth = 7;

/// \brief Dims and row-major strides of shape[:K], small enough to be captured by
/// value in a kernel (no View, no host container).
struct IndexBounds {
  int depth = 0;
  std::int64_t dims[kMaxIndexDepth] = {};
  std::int64_t strides[kMaxIndexDepth] = {};

  static IndexBounds from(const std::vector<std::int64_t>& dims) {
    if (dims.size() > static_cast<std::size_t>(kMaxIndexDepth)) {
      throw InternalError("IndexBounds: index depth " + std::to_string(dims.size()) + " > 7");
    }
    IndexBounds b;
    b.depth = static_cast<int>(dims.size());
    std::int64_t stride = 1;
    for (int k = b.depth - 1; k >= 0; --k) {
      b.dims[k] = dims[static_cast<std::size_t>(k)];
      b.strides[k] = stride;
      stride *= b.dims[k];
    }
    return b;
  }

  /// Flattened row of index \p idx (K consecutive values), or -1 if any coordinate
  /// is out of [0, dim). Negative coordinates are always out of range.
  template <class Index>
  KOKKOS_INLINE_FUNCTION std::int64_t linearize(const Index* idx) const {
    std::int64_t row = 0;
    for (int k = 0; k < depth; ++k) {
      const std::int64_t v = static_cast<std::int64_t>(idx[k]);
      if (v < 0 || v >= dims[k]) return -1;
      row += v * strides[k];
    }
    return row;
  }
};

}  // namespace kernels
}  // namespace shardops
