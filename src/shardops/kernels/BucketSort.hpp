#pragma once
/// \file
/// \brief Stable counting sort of rows into buckets, the one primitive behind
/// DynamicPartition and the deterministic scatter apply.
///
/// Rows are cut into chunks; each chunk counts its rows per bucket (no atomics),
/// one exclusive scan over (bucket, chunk) gives every chunk its first slot in each
/// bucket, and each chunk then places its rows in order. The result is stable
/// (rows of a bucket keep their input order) and identical on every backend and
/// thread count, which is what makes the ops deterministic.

#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/kokkos_ext/KokkosExt.hpp"

namespace shardops {
namespace kernels {

/// \brief Where each chunk's rows of each bucket start, for a given bucket function.
template <class MemorySpace>
struct BucketLayout {
  std::int64_t num_rows = 0;
  std::int64_t num_buckets = 0;
  std::int64_t num_chunks = 0;
  std::int64_t chunk_rows = 0;
  std::int64_t total = 0;  ///< rows that fell in a bucket (bucket >= 0)
  /// [chunk * num_buckets + bucket]: first output slot of that chunk's rows of that bucket.
  Kokkos::View<std::int64_t*, MemorySpace> cursor;
  /// [num_buckets + 1]: start of each bucket in the output; last = total.
  Kokkos::View<std::int64_t*, MemorySpace> bucket_begin;
};

/// Chunks: a few per thread for balance, at least 16 rows each, and at most 2^24
/// counters in all (so huge bucket counts degrade to fewer chunks, not to memory).
template <class ExecSpace>
std::int64_t choose_num_chunks(const ExecSpace& space, std::int64_t num_rows, std::int64_t num_buckets) {
  const std::int64_t threads = kx::concurrency(space);
  std::int64_t chunks = threads == 1 ? 1 : 4 * threads;
  chunks = kx::min<std::int64_t>(chunks, (num_rows + 15) / 16);
  chunks = kx::min<std::int64_t>(
      chunks, kx::max<std::int64_t>(1, (std::int64_t(1) << 24) / kx::max<std::int64_t>(num_buckets, 1)));
  return kx::max<std::int64_t>(chunks, 1);
}

/// \brief Counts rows per (chunk, bucket) and scans. \p bucket_of(i) returns the
/// bucket of row i in [0, num_buckets), or -1 to drop the row.
template <class ExecSpace, class BucketOf>
BucketLayout<typename ExecSpace::memory_space> bucket_layout(const ExecSpace& space, std::int64_t num_rows,
                                                             std::int64_t num_buckets, const BucketOf& bucket_of,
                                                             const std::string& label) {
  using Mem = typename ExecSpace::memory_space;
  BucketLayout<Mem> layout;
  layout.num_rows = num_rows;
  layout.num_buckets = num_buckets;
  layout.num_chunks = choose_num_chunks(space, num_rows, num_buckets);
  layout.chunk_rows = num_rows == 0 ? 0 : (num_rows + layout.num_chunks - 1) / layout.num_chunks;
  const std::int64_t nb = num_buckets;
  const std::int64_t nc = layout.num_chunks;
  const std::int64_t cr = layout.chunk_rows;
  const std::int64_t n = num_rows;
  Kokkos::View<std::int64_t*, Mem> cursor(label + "::cursor", static_cast<std::size_t>(nc * nb));
  Kokkos::View<std::int64_t*, Mem> begin(label + "::bucket_begin", static_cast<std::size_t>(nb + 1));

  Kokkos::parallel_for(
      label + "::count", Kokkos::RangePolicy<ExecSpace>(space, 0, nc), KOKKOS_LAMBDA(const std::int64_t c) {
        const std::int64_t lo = c * cr;
        const std::int64_t hi = kx::min(lo + cr, n);
        for (std::int64_t i = lo; i < hi; ++i) {
          const std::int64_t b = bucket_of(i);
          if (b >= 0) ++cursor(c * nb + b);
        }
      });
  // Exclusive scan in (bucket, chunk) order: bucket-major, so buckets are contiguous
  // and within a bucket the chunks (hence the rows) keep their order.
  std::int64_t total = 0;
  Kokkos::parallel_scan(
      label + "::scan", Kokkos::RangePolicy<ExecSpace>(space, 0, nb * nc),
      KOKKOS_LAMBDA(const std::int64_t j, std::int64_t& partial, const bool final) {
        const std::int64_t b = j / nc;
        const std::int64_t c = j % nc;
        const std::int64_t count = cursor(c * nb + b);
        if (final) {
          cursor(c * nb + b) = partial;
          if (c == 0) begin(b) = partial;
        }
        partial += count;
      },
      total);
  Kokkos::deep_copy(space, Kokkos::subview(begin, nb), total);
  space.fence();
  layout.total = total;
  layout.cursor = cursor;
  layout.bucket_begin = begin;
  return layout;
}

/// \brief Places every kept row: calls place(i, slot) for row i and its output slot,
/// rows of a chunk in order. Consumes layout.cursor.
template <class ExecSpace, class BucketOf, class Place>
void bucket_place(const ExecSpace& space, const BucketLayout<typename ExecSpace::memory_space>& layout,
                  const BucketOf& bucket_of, const Place& place, const std::string& label) {
  const std::int64_t nb = layout.num_buckets;
  const std::int64_t cr = layout.chunk_rows;
  const std::int64_t n = layout.num_rows;
  auto cursor = layout.cursor;
  Kokkos::parallel_for(
      label + "::place", Kokkos::RangePolicy<ExecSpace>(space, 0, layout.num_chunks),
      KOKKOS_LAMBDA(const std::int64_t c) {
        const std::int64_t lo = c * cr;
        const std::int64_t hi = kx::min(lo + cr, n);
        for (std::int64_t i = lo; i < hi; ++i) {
          const std::int64_t b = bucket_of(i);
          if (b >= 0) place(i, cursor(c * nb + b)++);
        }
      });
}

}  // namespace kernels
}  // namespace shardops
