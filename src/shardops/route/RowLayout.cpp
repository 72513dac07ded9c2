#include "shardops/route/RowLayout.hpp"

#include <algorithm>

#include "shardops/core/Error.hpp"
#include "shardops/route/Comm.hpp"

namespace shardops {

RowLayout::RowLayout(std::vector<std::int64_t> counts) : counts_(std::move(counts)) {
  if (counts_.empty()) throw InternalError("RowLayout needs at least one rank");
  offsets_.assign(counts_.size() + 1, 0);
  for (std::size_t r = 0; r < counts_.size(); ++r) {
    if (counts_[r] < 0) throw InternalError("RowLayout: negative row count");
    offsets_[r + 1] = offsets_[r] + counts_[r];
  }
  const std::int64_t n = static_cast<std::int64_t>(counts_.size());
  const std::int64_t q = total() / n, rem = total() % n;
  balanced_ = true;
  for (std::int64_t r = 0; r < n; ++r) {
    if (counts_[static_cast<std::size_t>(r)] != q + (r < rem ? 1 : 0)) balanced_ = false;
  }
}

RowLayout RowLayout::balanced(std::int64_t rows, int nranks) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) counts[static_cast<std::size_t>(r)] = rows / nranks + (r < rows % nranks ? 1 : 0);
  return RowLayout(std::move(counts));
}

RowLayout RowLayout::on_rank(std::int64_t rows, int nranks, int root) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(nranks), 0);
  counts.at(static_cast<std::size_t>(root)) = rows;
  return RowLayout(std::move(counts));
}

RowLayout RowLayout::from_local(const Comm& comm, std::int64_t local_rows) {
  return RowLayout(comm.allgather(local_rows));
}

int RowLayout::owner(std::int64_t row) const {
  if (row < 0 || row >= total())
    throw InternalError("RowLayout::owner: row " + std::to_string(row) + " outside [0, " + std::to_string(total()) +
                        ")");
  const auto it = std::upper_bound(offsets_.begin(), offsets_.end() - 1, row);
  return static_cast<int>(it - offsets_.begin()) - 1;
}

namespace {

// OwnerOf's table for \p layout, or an empty one where some block with rows is too small
// against the whole row space for kMaxSpans spans to cover it.
Kokkos::View<OwnerSpan*, MemSpace> owner_spans(const RowLayout& layout, int& shift) {
  const std::int64_t total = layout.total();
  std::int64_t smallest = total;
  for (const std::int64_t count : layout.counts())
    if (count > 0) smallest = std::min(smallest, count);
  shift = 0;
  while (shift < 62 && (std::int64_t(2) << shift) <= smallest) ++shift;  // 2^shift <= smallest
  const std::int64_t spans = total == 0 ? 0 : ((total - 1) >> shift) + 1;
  if (spans == 0 || spans > OwnerOf::kMaxSpans) return {};
  Kokkos::View<OwnerSpan*, Kokkos::HostSpace> host("shardops::RowLayout::owner_spans", static_cast<std::size_t>(spans));
  for (std::int64_t k = 0; k < spans; ++k) {
    OwnerSpan& s = host(static_cast<std::size_t>(k));
    s.first = layout.owner(k << shift);
    s.boundary = layout.offset(s.first) + layout.count(s.first);
    // A span is no longer than any block with rows: past its first rank's block, it is
    // within the next block that has rows.
    s.second = s.boundary < total ? layout.owner(s.boundary) : s.first;
  }
  Kokkos::View<OwnerSpan*, MemSpace> table("shardops::RowLayout::owner_spans", static_cast<std::size_t>(spans));
  Kokkos::deep_copy(table, host);
  return table;
}

}  // namespace

OwnerOf RowLayout::device_owner() const {
  Kokkos::View<std::int64_t*, MemSpace> offsets("shardops::RowLayout::offsets", offsets_.size());
  Kokkos::View<const std::int64_t*, Kokkos::HostSpace, UnmanagedTraits> host(offsets_.data(), offsets_.size());
  Kokkos::deep_copy(offsets, host);
  OwnerOf o;
  o.offsets = offsets;
  o.spans = owner_spans(*this, o.shift);
  o.nranks = nranks();
  o.balanced = balanced_ && total() >= nranks();
  if (o.balanced) {
    o.remainder = total() % nranks();
    o.big = kernels::Divisor(total() / nranks() + 1);
    o.small = kernels::Divisor(total() / nranks());
  }
  return o;
}

}  // namespace shardops
