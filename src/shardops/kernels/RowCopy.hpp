#pragma once
/// \file
/// \brief Copying one row of words; the inner loop of every movement kernel.

#include <cstdint>

#include <Kokkos_Core.hpp>

#include "shardops/kokkos_ext/KokkosExt.hpp"

// Non-temporal (streaming) stores: host x86 passes only; device passes and other
// CPUs copy the ordinary way.
#if defined(__SSE2__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#include <emmintrin.h>
#define SHARDOPS_STREAM_STORES 1
#endif

namespace shardops {
namespace kernels {

template <class W>
KOKKOS_INLINE_FUNCTION void copy_row(W* dst, const W* src, std::int64_t words) {
  for (std::int64_t k = 0; k < words; ++k) dst[k] = src[k];
}

/// \brief copy_row() with non-temporal stores where the CPU has them (x86, 16-byte
/// words): the destination lines are written without being read first, which saves
/// a third of the memory traffic of an output written once (gather, assign). The
/// writing thread must call stream_fence() before others read what it wrote.
template <class W>
KOKKOS_INLINE_FUNCTION void stream_row(W* dst, const W* src, std::int64_t words) {
#if defined(SHARDOPS_STREAM_STORES)
  if constexpr (sizeof(W) == 16 && alignof(W) == 16) {
    for (std::int64_t k = 0; k < words; ++k) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k)));
    }
    return;
  }
#endif
  copy_row(dst, src, words);
}

/// Orders this thread's streaming stores before its later stores (no-op elsewhere).
KOKKOS_INLINE_FUNCTION void stream_fence() {
#if defined(SHARDOPS_STREAM_STORES)
  _mm_sfence();
#endif
}

/// How a kernel that writes whole rows stores them.
enum class RowStores {
  Streaming,  ///< stream_row: an output written once and read much later (or never by this core)
  Cached,     ///< ordinary stores: a piece of an output that is read again at once (written
              ///< into a file, LazyTensor), which then finds it in the caches
};

/// stream_row() or copy_row(), as \p streaming (RowStores::Streaming) says.
template <class W>
KOKKOS_INLINE_FUNCTION void store_row(W* dst, const W* src, std::int64_t words, bool streaming) {
  if (streaming) {
    stream_row(dst, src, words);
  } else {
    copy_row(dst, src, words);
  }
}

template <class W>
KOKKOS_INLINE_FUNCTION void zero_row(W* dst, std::int64_t words) {
  for (std::int64_t k = 0; k < words; ++k) dst[k] = W{};
}

/// Rows per chunk of the streaming loops below: each chunk is one work item, ended by
/// a stream_fence() on the thread that ran it.
constexpr std::int64_t kStreamChunk = 4096;

/// \brief parallel_for of \p row(i) over [0, n) in chunks of rows, each chunk ending
/// with stream_fence() on the thread that ran it: the loop shape for kernels that
/// write rows with stream_row().
template <class ExecSpace, class Row>
void for_each_row_streaming(const ExecSpace& space, const char* label, std::int64_t n, const Row& row) {
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace>(space, 0, (n + kStreamChunk - 1) / kStreamChunk),
      KOKKOS_LAMBDA(const std::int64_t c) {
        const std::int64_t end = kx::min(c * kStreamChunk + kStreamChunk, n);
        for (std::int64_t i = c * kStreamChunk; i < end; ++i) row(i);
        stream_fence();
      });
}

/// for_each_row_streaming() where \p row(i) returns 1 for a row to count (0 else):
/// returns the count, so a kernel can report what it met (bad indices) in the same
/// pass instead of a separate scan.
template <class ExecSpace, class Row>
std::int64_t count_rows_streaming(const ExecSpace& space, const char* label, std::int64_t n, const Row& row) {
  std::int64_t count = 0;
  Kokkos::parallel_reduce(
      label, Kokkos::RangePolicy<ExecSpace>(space, 0, (n + kStreamChunk - 1) / kStreamChunk),
      KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& sum) {
        // Counted in a local: the reduction's own variable may alias the rows' stores, and
        // a count kept in memory makes every row wait for the one before it.
        std::int64_t met = 0;
        const std::int64_t end = kx::min(c * kStreamChunk + kStreamChunk, n);
        for (std::int64_t i = c * kStreamChunk; i < end; ++i) met += row(i);
        sum += met;
        stream_fence();
      },
      count);
  return count;
}

}  // namespace kernels
}  // namespace shardops
