#pragma once
/// \file
/// \brief Pieces shared by the distributed ops (not public API).

#include <cstdint>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Kokkos.hpp"
#include "shardops/core/MemoryBudget.hpp"
#include "shardops/kernels/FindWhere.hpp"
#include "shardops/kernels/Gather.hpp"
#include "shardops/kernels/RowCopy.hpp"
#include "shardops/ops/Ops.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/Route.hpp"
#include "shardops/route/RowLayout.hpp"

namespace shardops {

/// Records the bytes the op sent in options.stats, if the caller asked for them.
inline void record_bytes_sent(const OpOptions& options, std::int64_t bytes) {
  if (options.stats) options.stats->bytes_sent = bytes;
}

/// "float32[8,4]": a tensor argument as agree_on_op compares the ranks' calls. Local; \throws
/// InvalidArgument where \p t is not a tensor of \p comm (DistTensor::check_on).
std::string call_text(const Comm& comm, const DistTensor& t);

/// \brief Collective, before anything else a distributed op does: agree_on_call over
/// \p arguments (the op's tensors by call_text and its attributes, as text) and the
/// options that shape the exchange or the answer (the bad-index policy, denormals,
/// GatherNd's params, the route's rows per round), as "op(arguments options)" with \p op TF's
/// name (or options.tf_name).
void agree_on_op(const Comm& comm, const char* op, const std::string& arguments, const OpOptions& options);
/// agree_on_op for a call that takes no OpOptions (the element-wise helpers): "op(arguments)".
void agree_on_op(const Comm& comm, const char* op, const std::string& arguments);

/// Collective: raises on every rank the bad-index error with the smallest \p order
/// among the ranks that \p found one. Where some rank is \p changed (its second read of
/// an index it found bad saw a good one: a program wrote the input meanwhile), every rank
/// raises IOError(input_changed_text()) instead.
void agree_index_error(const Comm& comm, bool found, std::int64_t order, const std::string& message,
                       const std::string& subject, bool changed = false);

/// Collective: true when some rank met a bad index row (\p bad_here of them here).
inline bool any_bad_index(const Comm& comm, std::int64_t bad_here) { return comm.max(bad_here > 0 ? 1 : 0) != 0; }

/// \brief Collective: the bad-index check of the scatter/gather family. Finds this
/// rank's last bad row among the \p n index rows of \p linear (global row numbers
/// start at \p first_row) and raises on every rank the error of the globally last one,
/// as TF reports it: message_of(global row, its K index values) gives TF's text.
/// \p bad_here: how many bad rows a kernel of the op already met on this rank (the
/// route or the gather count them); when no rank met one, nothing is scanned. -1:
/// not known, scan.
template <class I, class MessageOf>
void agree_last_bad_index_row(const Comm& comm, const ExecSpace& space, std::int64_t n,
                              const kernels::IndexRowTarget<I, MemSpace>& linear, std::int64_t first_row,
                              const Tensor& indices, const std::string& label, const MessageOf& message_of,
                              std::int64_t bad_here = -1) {
  // Count first (a quick pass) where no kernel did; when some rank has a bad row, only
  // the ranks that have one look for their last.
  if (bad_here < 0) bad_here = kernels::count_bad_index_rows(space, n, linear, label);
  if (!any_bad_index(comm, bad_here)) return;
  const std::int64_t bad = kernels::last_bad_index_row(space, n, linear, label, bad_here);
  std::vector<std::int64_t> values;
  if (bad >= 0) values = index_row_values(indices, bad, linear.depth);
  // Bad rows counted, but none found now, or the one found in range when read for the
  // message: a program changed the indices meanwhile.
  const bool changed = bad_here > 0 && (bad < 0 || linear.bounds.linearize(values.data()) >= 0);
  // The largest global row wins: agree on the smallest -row.
  agree_index_error(comm, bad >= 0, -(first_row + bad), bad >= 0 ? message_of(first_row + bad, values) : std::string(),
                    "indices", changed);
}

/// \brief The scatter/gather family's error policy as one call: \p policy Error runs
/// agree_last_bad_index_row with these arguments, given the bad rows a kernel of the op
/// counted (-1: none did); Ignore does nothing. The references must outlive the result.
template <class I, class MessageOf>
auto bad_index_check(const Comm& comm, const ExecSpace& space, BadIndices policy, std::int64_t n,
                     const kernels::IndexRowTarget<I, MemSpace>& linear, std::int64_t first_row, const Tensor& indices,
                     const char* label, MessageOf message_of) {
  return [&comm, &space, policy, n, &linear, first_row, &indices, label, message_of](std::int64_t bad_here) {
    if (policy != BadIndices::Error) return;
    agree_last_bad_index_row(comm, space, n, linear, first_row, indices, label, message_of, bad_here);
  };
}

/// \brief Routes each of the \p n index rows of \p linear to the owner of its first
/// coordinate (the leaves of a Route): dest(i) is that rank, row(i) the target row in the owner's block of
/// \p rows_per_dim0 rows per dim-0 index (both -1 for a bad index). Returns the number
/// of bad index rows met, for agree_last_bad_index_row (no scan of its own when no
/// rank met one). A named function, not a lambda in the caller's
/// dtype dispatch: nvcc rejects a KOKKOS_LAMBDA defined inside a generic lambda.
template <bool OneCoordinate, class I>
std::int64_t route_to_first_coordinate_owner_as(const ExecSpace& space, const std::string& label, std::int64_t n,
                                                const kernels::IndexRowTarget<I, MemSpace>& linear,
                                                const OwnerOf& owner, std::int64_t rows_per_dim0,
                                                const Kokkos::View<int*, MemSpace>& dest,
                                                const Kokkos::View<std::int64_t*, MemSpace>& row) {
  const std::uint64_t dim = static_cast<std::uint64_t>(linear.bounds.dims[0]);
  return kernels::count_rows_streaming(
      space, label.c_str(), n, KOKKOS_LAMBDA(const std::int64_t i)->std::int64_t {
        // One coordinate per row (the usual case): one load, one unsigned compare for the
        // bounds, no loop over coordinates; the target row is the index itself less the
        // target's row offset, as linear() gives it. No branch on a bad row: it is rare.
        const std::int64_t first = static_cast<std::int64_t>(linear.idx[OneCoordinate ? i : i * linear.depth]);
        const std::int64_t target = OneCoordinate ? first - linear.row_offset : linear(i);
        const bool out = OneCoordinate ? static_cast<std::uint64_t>(first) >= dim : target < 0;
        const int r = owner(out ? 0 : first);
        dest(i) = out ? -1 : r;
        row(i) = out ? -1 : target - owner.offset(r) * rows_per_dim0;
        return out ? 1 : 0;
      });
}

template <class I>
std::int64_t route_to_first_coordinate_owner(const ExecSpace& space, const std::string& label, std::int64_t n,
                                             const kernels::IndexRowTarget<I, MemSpace>& linear, const OwnerOf& owner,
                                             std::int64_t rows_per_dim0, const Kokkos::View<int*, MemSpace>& dest,
                                             const Kokkos::View<std::int64_t*, MemSpace>& row) {
  return linear.depth == 1
             ? route_to_first_coordinate_owner_as<true>(space, label, n, linear, owner, rows_per_dim0, dest, row)
             : route_to_first_coordinate_owner_as<false>(space, label, n, linear, owner, rows_per_dim0, dest, row);
}

/// The bytes route_by_first_coordinate's route holds per index row (int owner rank, int64
/// owner row, int64 row of each send slot and int64 slot of each row).
inline constexpr std::size_t kRouteBytesPerRow = sizeof(int) + 3 * sizeof(std::int64_t);

/// \brief Collective: the route of the \p n index rows of \p linear (the leaves) to the
/// owner of their first coordinate in \p layout, each to its row in the owner's block of \p
/// rows_per_dim0 rows per dim-0 index; a bad index row has no owner. \p validate(bad) is
/// the op's error policy, given the bad rows the routing met, before the route is built.
template <class I, class Validate>
Route route_by_first_coordinate(const Comm& comm, const ExecSpace& space, const std::string& label, std::int64_t n,
                                const kernels::IndexRowTarget<I, MemSpace>& linear, const RowLayout& layout,
                                std::int64_t rows_per_dim0, const RouteOptions& options, const Validate& validate) {
  // The route's own arrays per index row (its owner's rank and row here, the row of each
  // send slot and its inverse in ExchangePlan), checked on every rank before any is made:
  // they fit on one rank and not on another.
  run_agreed(comm,
             [&] { check_count(n, kRouteBytesPerRow, label + ": the route of " + std::to_string(n) + " index rows"); });
  // Every entry is written by the route kernel: no need to zero them first.
  const auto rank =
      allocate_uninitialized<Kokkos::View<int*, MemSpace>>(label + "::owner_rank", static_cast<std::size_t>(n));
  const auto row =
      allocate_uninitialized<Kokkos::View<std::int64_t*, MemSpace>>(label + "::owner_row", static_cast<std::size_t>(n));
  validate(route_to_first_coordinate_owner(space, label, n, linear, layout.device_owner(), rows_per_dim0, rank, row));
  return Route::build(comm, rank, row, options);
}

}  // namespace shardops
