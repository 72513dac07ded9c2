#pragma once
/// \file
/// \brief The index rows a rank owns, found among index rows every rank can read whole
/// (not public API).
///
/// Where the indices and the updates of a scatter are an input file's pages mapped on every
/// rank of one node (DistTensor::replica), a rank need not receive its updates: it reads all
/// index rows, lists those whose target it owns, and reads their update rows from the
/// file's pages (scatter_reads_replicas in ops/Scatter.hpp says when that pays).

#include <algorithm>
#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/core/Error.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Kokkos.hpp"
#include "shardops/core/MemoryBudget.hpp"
#include "shardops/kernels/BatchRows.hpp"
#include "shardops/kernels/Gather.hpp"

namespace shardops {

/// The index rows whose target a rank owns, increasing (global order), as 32-bit row numbers.
struct OwnedIndexRows {
  Kokkos::View<std::uint32_t*, MemSpace> rows;  ///< entries [0, count): the owned rows
  std::int64_t count = 0;
  std::int64_t bad = 0;  ///< index rows out of bounds, among all of them
};

/// \brief The rows among the \p n index rows of \p linear (row_offset 0, fewer than 2^32
/// rows) whose target lies in [\p first, \p first + \p count), and how many are out of
/// bounds. Two passes over chunks of rows: one counts (a loop the compiler vectorizes), the
/// other stores every row's number at the chunk's next free slot and moves on past the
/// owned ones, with no branch on the row. Throws IOError where the passes disagree (another
/// program wrote the input meanwhile), on this rank alone. A named function, not a lambda in
/// the caller's dtype dispatch: nvcc rejects a KOKKOS_LAMBDA defined inside a generic lambda.
template <bool OneCoordinate, class I>
OwnedIndexRows list_owned_index_rows_as(const ExecSpace& space, const std::string& label, std::int64_t n,
                                        const kernels::IndexRowTarget<I, MemSpace>& linear, std::int64_t first,
                                        std::int64_t count) {
  const std::uint64_t dim = static_cast<std::uint64_t>(linear.bounds.dims[0]);
  const I* idx = linear.idx;
  // Row i's target less first, as an unsigned integer: below count where this rank owns it.
  // A bad index (linear() gives -1; with one coordinate per row, the usual case, the index
  // is the target and a negative one wraps) is never below it: first + count <= dim.
  // A plain ?: on OneCoordinate, not if constexpr: nvcc rejects an extended lambda whose
  // first capture of a variable is inside an if constexpr branch.
  const auto offset_of = KOKKOS_LAMBDA(const std::int64_t i)->std::uint64_t {
    const std::int64_t target = OneCoordinate ? static_cast<std::int64_t>(idx[i]) : linear(i);
    return static_cast<std::uint64_t>(target) - static_cast<std::uint64_t>(first);
  };
  const auto is_bad = KOKKOS_LAMBDA(const std::int64_t i)->bool {
    return OneCoordinate ? static_cast<std::uint64_t>(static_cast<std::int64_t>(idx[i])) >= dim : linear(i) < 0;
  };
  const auto owned_count = static_cast<std::uint64_t>(count);
  // A few chunks per thread for balance, large enough that a chunk's own work dominates.
  const std::int64_t chunks =
      std::max<std::int64_t>(1, std::min<std::int64_t>(n / 4096, static_cast<std::int64_t>(space.concurrency()) * 4));
  const std::int64_t chunk_rows = (n + chunks - 1) / chunks;
  Kokkos::View<std::int64_t*, MemSpace> counts(label + "::counts", static_cast<std::size_t>(2 * chunks));
  Kokkos::parallel_for(
      label + "::count", Kokkos::RangePolicy<ExecSpace>(space, 0, chunks), KOKKOS_LAMBDA(const std::int64_t c) {
        const std::int64_t lo = c * chunk_rows, hi = lo + chunk_rows < n ? lo + chunk_rows : n;
        std::int64_t mine = 0, bad_rows = 0;
        for (std::int64_t i = lo; i < hi; ++i) {
          mine += offset_of(i) < owned_count ? 1 : 0;
          bad_rows += is_bad(i) ? 1 : 0;
        }
        counts(2 * c) = mine;
        counts(2 * c + 1) = bad_rows;
      });
  // Each chunk's first slot: a scan over the chunks, on the host (they are few).
  auto starts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
  OwnedIndexRows owned;
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t mine = starts(2 * c);
    owned.bad += starts(2 * c + 1);
    starts(2 * c) = owned.count;
    starts(2 * c + 1) = owned.count + mine;
    owned.count += mine;
  }
  Kokkos::deep_copy(counts, starts);
  check_count(owned.count, sizeof(std::uint32_t), label + ": the list of " + std::to_string(owned.count) + " rows");
  owned.rows = allocate_uninitialized<Kokkos::View<std::uint32_t*, MemSpace>>(label + "::rows",
                                                                              static_cast<std::size_t>(owned.count));
  const auto rows = owned.rows;
  std::int64_t differ = 0;
  Kokkos::parallel_reduce(
      label + "::place", Kokkos::RangePolicy<ExecSpace>(space, 0, chunks),
      KOKKOS_LAMBDA(const std::int64_t c, std::int64_t& changed) {
        const std::int64_t lo = c * chunk_rows, hi = lo + chunk_rows < n ? lo + chunk_rows : n;
        const std::int64_t end = counts(2 * c + 1);
        std::int64_t at = counts(2 * c);
        std::uint32_t* out = rows.data();
        for (std::int64_t i = lo; i < hi; ++i) {
          // Stored whatever the row; the next owned row overwrites it where it is not owned.
          if (at < end) out[at] = static_cast<std::uint32_t>(i);
          at += offset_of(i) < owned_count ? 1 : 0;
        }
        if (at != end) ++changed;
      },
      differ);
  if (differ > 0) throw IOError(input_changed_text());
  return owned;
}

/// list_owned_index_rows_as for any index depth.
template <class I>
OwnedIndexRows list_owned_index_rows(const ExecSpace& space, const std::string& label, std::int64_t n,
                                     const kernels::IndexRowTarget<I, MemSpace>& linear, std::int64_t first,
                                     std::int64_t count) {
  return linear.depth == 1 ? list_owned_index_rows_as<true>(space, label, n, linear, first, count)
                           : list_owned_index_rows_as<false>(space, label, n, linear, first, count);
}

}  // namespace shardops
