#pragma once
/// \file
/// \brief Copying one row of words; the inner loop of every movement kernel.

#include <cstdint>

#include <Kokkos_Core.hpp>

namespace shardops {
namespace kernels {

template <class W>
KOKKOS_INLINE_FUNCTION void copy_row(W* dst, const W* src, std::int64_t words) {
  for (std::int64_t k = 0; k < words; ++k) dst[k] = src[k];
}

template <class W>
KOKKOS_INLINE_FUNCTION void zero_row(W* dst, std::int64_t words) {
  for (std::int64_t k = 0; k < words; ++k) dst[k] = W{};
}

}  // namespace kernels
}  // namespace shardops
