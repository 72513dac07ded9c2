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
///
/// A caller may ask one thread to walk several chunks side by side, a row of each in turn
/// (the interleave): counting and placing a row both wait for the previous row of the same
/// bucket (one counter, read, incremented and written back), and with one chunk per thread
/// that wait is most of the time when rows alternate between a few buckets (the ranks of a
/// route). Interleaved chunks have counters of their own, so their waits overlap. It pays
/// where the buckets are few and placing a row writes a word (an index); where it copies
/// whole rows, interleaved chunks multiply the output streams, which costs more.
///
/// A row's bucket is worked out in both passes. Where it comes from memory that another
/// program can write meanwhile (an input file's mapped pages), the passes can disagree; the
/// placement then writes each slot of its own range only, and fails with an IOError
/// instead of leaving slots unwritten (whose stale contents could name any row).

#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/core/Error.hpp"
#include "shardops/kernels/BatchRows.hpp"
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
  std::int64_t interleave = 1;  ///< chunks one thread walks side by side
  std::int64_t total = 0;       ///< rows that fell in a bucket (bucket >= 0)
  /// [chunk * num_buckets + bucket]: first output slot of that chunk's rows of that bucket.
  Kokkos::View<std::int64_t*, MemorySpace> cursor;
  /// Where each of those ranges ends, with more than one chunk (one chunk: bucket_begin's
  /// next entry).
  Kokkos::View<std::int64_t*, MemorySpace> chunk_end;
  /// [num_buckets + 1]: start of each bucket in the output; last = total.
  Kokkos::View<std::int64_t*, MemorySpace> bucket_begin;
};

/// Chunks: a few groups of \p interleave per thread for balance, at least 16 rows each, and
/// at most 2^24 counters in all (so huge bucket counts degrade to fewer chunks, not to
/// memory).
template <class ExecSpace>
std::int64_t choose_num_chunks(const ExecSpace& space, std::int64_t num_rows, std::int64_t num_buckets,
                               std::int64_t interleave) {
  const std::int64_t threads = kx::concurrency(space);
  std::int64_t chunks = interleave * (threads == 1 ? 1 : 4 * threads);
  chunks = kx::min<std::int64_t>(chunks, (num_rows + 15) / 16);
  chunks = kx::min<std::int64_t>(
      chunks, kx::max<std::int64_t>(1, (std::int64_t(1) << 24) / kx::max<std::int64_t>(num_buckets, 1)));
  return kx::max<std::int64_t>(chunks, 1);
}

/// \brief Calls f(c, i) for every row i of the chunks [g * il, (g + 1) * il) of \p cr rows
/// each (rows below \p n, chunks below \p nc): each chunk's rows in order, the chunks side by
/// side (row t of each, then row t + 1).
template <class F>
KOKKOS_INLINE_FUNCTION void visit_chunk_group(const std::int64_t g, const std::int64_t il, const std::int64_t nc,
                                              const std::int64_t cr, const std::int64_t n, const F& f) {
  if (il == 1) {  // one chunk: a plain loop, which the compiler handles best
    const std::int64_t hi = kx::min(g * cr + cr, n);
    for (std::int64_t i = g * cr; i < hi; ++i) f(g, i);
    return;
  }
  for (std::int64_t t = 0; t < cr; ++t) {
    for (std::int64_t k = 0; k < il; ++k) {
      const std::int64_t c = g * il + k;
      const std::int64_t i = c * cr + t;
      if (c >= nc || i >= n) break;  // the chunks after it are shorter or absent too
      f(c, i);
    }
  }
}

/// \brief Counts rows per (chunk, bucket) and scans. \p bucket_of(i) returns the
/// bucket of row i in [0, num_buckets), or -1 to drop the row (so does any other value).
/// \p interleave: chunks one thread walks side by side, here and in bucket_place (see the
/// file comment).
template <class ExecSpace, class BucketOf>
BucketLayout<typename ExecSpace::memory_space> bucket_layout(const ExecSpace& space, std::int64_t num_rows,
                                                             std::int64_t num_buckets, const BucketOf& bucket_of,
                                                             const std::string& label, std::int64_t interleave = 1) {
  using Mem = typename ExecSpace::memory_space;
  BucketLayout<Mem> layout;
  layout.num_rows = num_rows;
  layout.num_buckets = num_buckets;
  layout.interleave = kx::max<std::int64_t>(1, interleave);
  layout.num_chunks = choose_num_chunks(space, num_rows, num_buckets, layout.interleave);
  layout.chunk_rows = num_rows == 0 ? 0 : (num_rows + layout.num_chunks - 1) / layout.num_chunks;
  const std::int64_t nb = num_buckets;
  const std::int64_t nc = layout.num_chunks;
  const std::int64_t cr = layout.chunk_rows;
  const std::int64_t n = num_rows;
  const std::int64_t il = layout.interleave;
  Kokkos::View<std::int64_t*, Mem> cursor(label + "::cursor", static_cast<std::size_t>(nc * nb));
  Kokkos::View<std::int64_t*, Mem> begin(label + "::bucket_begin", static_cast<std::size_t>(nb + 1));
  Kokkos::View<std::int64_t*, Mem> chunk_end(label + "::chunk_end", static_cast<std::size_t>(nc > 1 ? nc * nb : 0));

  Kokkos::parallel_for(
      label + "::count", Kokkos::RangePolicy<ExecSpace>(space, 0, (nc + il - 1) / il),
      KOKKOS_LAMBDA(const std::int64_t g) {
        visit_chunk_group(g, il, nc, cr, n, [&](const std::int64_t c, const std::int64_t i) {
          const std::int64_t b = bucket_of(i);
          if (within(b, nb)) ++cursor(c * nb + b);
        });
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
          if (nc > 1) chunk_end(c * nb + b) = partial + count;
          if (c == 0) begin(b) = partial;
        }
        partial += count;
      },
      total);
  Kokkos::deep_copy(space, Kokkos::subview(begin, nb), total);
  space.fence();
  layout.total = total;
  layout.cursor = cursor;
  layout.chunk_end = chunk_end;
  layout.bucket_begin = begin;
  return layout;
}

/// Where the slots of (chunk, bucket) end.
template <class MemorySpace>
struct RangeEnd {
  Kokkos::View<std::int64_t*, MemorySpace> chunk_end;
  Kokkos::View<std::int64_t*, MemorySpace> bucket_begin;
  std::int64_t nb, nc;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t c, const std::int64_t b) const {
    return nc > 1 ? chunk_end(c * nb + b) : bucket_begin(b + 1);
  }
};

/// \brief Places every kept row: calls place(i, slot) for row i and its output slot,
/// rows of a chunk in order. Consumes layout.cursor. Throws IOError where \p bucket_of
/// gave other buckets than in bucket_layout (see the file comment); place() was then
/// called for slots of the layout only, each at most once.
template <class ExecSpace, class BucketOf, class Place>
void bucket_place(const ExecSpace& space, const BucketLayout<typename ExecSpace::memory_space>& layout,
                  const BucketOf& bucket_of, const Place& place, const std::string& label) {
  const std::int64_t nb = layout.num_buckets;
  const std::int64_t cr = layout.chunk_rows;
  const std::int64_t n = layout.num_rows;
  const std::int64_t nc = layout.num_chunks;
  const std::int64_t il = layout.interleave;
  auto cursor = layout.cursor;
  const RangeEnd<typename ExecSpace::memory_space> end_of{layout.chunk_end, layout.bucket_begin, nb, nc};
  Kokkos::parallel_for(
      label + "::place", Kokkos::RangePolicy<ExecSpace>(space, 0, (nc + il - 1) / il),
      KOKKOS_LAMBDA(const std::int64_t g) {
        visit_chunk_group(g, il, nc, cr, n, [&](const std::int64_t c, const std::int64_t i) {
          const std::int64_t b = bucket_of(i);
          if (!within(b, nb)) return;
          const std::int64_t slot = cursor(c * nb + b)++;
          if (slot < end_of(c, b)) place(i, slot);
        });
      });
  // Every range filled exactly: the passes agreed.
  std::int64_t differ = 0;
  Kokkos::parallel_reduce(
      label + "::check", Kokkos::RangePolicy<ExecSpace>(space, 0, nc * nb),
      KOKKOS_LAMBDA(const std::int64_t j, std::int64_t& count) {
        if (cursor(j) != end_of(j / nb, j % nb)) ++count;
      },
      differ);
  if (differ > 0) throw IOError(input_changed_text());
}

}  // namespace kernels
}  // namespace shardops
