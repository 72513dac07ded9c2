#include "shardops/route/Route.hpp"

#include <optional>
#include <string>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/kernels/RowCopy.hpp"
#include "shardops/route/detail/ExchangePlan.hpp"

namespace shardops {

namespace detail {

/// What a Route shares between its copies and its results: the exchange plan (the engine
/// that packs, moves and unpacks rows), the leaves' owners, and the segment counts.
struct RouteState {
  Comm comm;
  ExchangePlan plan;
  Kokkos::View<const int*, MemSpace> owner_rank;
  Kokkos::View<const std::int64_t*, MemSpace> owner_row;
  std::vector<std::int64_t> leaf_first;       ///< segments + 1: the first leaf of each segment
  std::vector<std::int64_t> sent;             ///< [rank * segments + s]: leaves of segment s sent to rank
  std::vector<std::int64_t> arrived;          ///< [rank * segments + s]: leaves of segment s from rank
  std::optional<ByteView> arrived_owner_row;  ///< the root rows of the leaves other ranks sent

  std::size_t segments() const noexcept { return leaf_first.size() - 1; }

  /// The root row of each leaf that arrived from another rank: moved on the first verb that
  /// needs it (every verb is collective, so every rank moves it at the same point).
  const ByteView& arrived_rows() {
    if (!arrived_owner_row)
      arrived_owner_row =
          plan.forward_remote(reinterpret_cast<const unsigned char*>(owner_row.data()), sizeof(std::int64_t));
    return *arrived_owner_row;
  }
};

}  // namespace detail

namespace {

/// Device functor: the owner rank of leaf i, as ExchangePlan::build reads destinations.
struct OwnerRankOf {
  Kokkos::View<const int*, MemSpace> rank;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const { return rank(i); }
};

/// [r * (segments + 1) + s]: how many of the leaves sent to rank r lie before segment s
/// (the first leaf leaf_first[s]), found by a binary search in the rows of r's send
/// positions, which increase.
std::vector<std::int64_t> segment_bounds(const ExchangePlan& plan, const std::vector<std::int64_t>& leaf_first) {
  const std::int64_t stride = static_cast<std::int64_t>(leaf_first.size());
  const std::int64_t entries = plan.nranks() * stride;
  const Kokkos::View<std::int64_t*, Kokkos::HostSpace> host_first("shardops::Route::leaf_first",
                                                                  static_cast<std::size_t>(stride));
  const Kokkos::View<std::int64_t*, Kokkos::HostSpace> host_send("shardops::Route::send_offsets",
                                                                 static_cast<std::size_t>(plan.nranks() + 1));
  for (std::int64_t s = 0; s < stride; ++s) host_first(s) = leaf_first[static_cast<std::size_t>(s)];
  for (int r = 0; r <= plan.nranks(); ++r) host_send(r) = plan.send_offsets()[static_cast<std::size_t>(r)];
  const auto first = Kokkos::create_mirror_view_and_copy(MemSpace(), host_first);
  const auto send = Kokkos::create_mirror_view_and_copy(MemSpace(), host_send);
  const Kokkos::View<std::int64_t*, MemSpace> bounds("shardops::Route::segment_bounds",
                                                     static_cast<std::size_t>(entries));
  const std::int64_t* rows = plan.slot_rows();
  Kokkos::parallel_for(
      "shardops::Route::segment_bounds", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, entries),
      KOKKOS_LAMBDA(const std::int64_t j) {
        const std::int64_t r = j / stride, s = j % stride;
        std::int64_t lo = send(r), hi = send(r + 1);
        while (lo < hi) {  // the first position whose row is >= first(s)
          const std::int64_t mid = lo + (hi - lo) / 2;
          if (rows[mid] < first(s))
            lo = mid + 1;
          else
            hi = mid;
        }
        bounds(j) = lo - send(r);
      });
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bounds);
  return std::vector<std::int64_t>(host.data(), host.data() + entries);
}

/// out[i] = the root row of leaf i: roots[owner_row(i)] for a leaf this rank owns, the
/// answer in its send position for the others (in \p answered, a remote-only buffer: the
/// self positions [self_first, self_first + self_count) are left out), zeros for a leaf
/// without owner. One streaming write of the leaves. A named template: nvcc rejects a
/// KOKKOS_LAMBDA defined inside the word dispatch's generic lambda.
template <class W>
void write_fetched(const ExecSpace& space, std::int64_t n, const Kokkos::View<const int*, MemSpace>& rank,
                   const Kokkos::View<const std::int64_t*, MemSpace>& row,
                   const Kokkos::View<std::int64_t*, MemSpace>& slot, std::int64_t self_first, std::int64_t self_count,
                   int self, const W* roots, const W* answered, W* out, std::int64_t words) {
  kernels::for_each_row_streaming(
      space, "shardops::Route::fetch", n, KOKKOS_LAMBDA(const std::int64_t i) {
        // Own and answered rows interleave at random: pick the source row by a select,
        // not a branch the CPU would mispredict half the time.
        // Random rows of the roots: keep cache misses in flight. One expression, no named
        // temporaries: device passes drop the prefetch whole.
        constexpr std::int64_t ahead = 16;
        if (i + ahead < n)
          SHARDOPS_PREFETCH_ROW(rank(i + ahead) == self ? roots + row(i + ahead) * words
                                                        : answered + ExchangePlan::remote_position(
                                                                         kx::max<std::int64_t>(slot(i + ahead), 0),
                                                                         self_first, self_count) *
                                                                         words,
                                words);
        const bool own = rank(i) == self;
        const std::int64_t s = slot(i);
        if (!own && s < 0) {
          kernels::zero_row(out + i * words, words);  // a leaf without owner: rare
        } else {
          kernels::stream_row(out + i * words,
                              own ? roots + row(i) * words
                                  : answered + ExchangePlan::remote_position(s, self_first, self_count) * words,
                              words);
        }
      });
}

std::size_t row_bytes_of(const Tensor& t, std::int64_t row_elements) {
  return static_cast<std::size_t>(row_elements) * t.itemsize();
}

}  // namespace

Route Route::build(const Comm& comm, const Kokkos::View<const int*, MemSpace>& owner_rank,
                   const Kokkos::View<const std::int64_t*, MemSpace>& owner_row, const RouteOptions& options,
                   std::vector<std::int64_t> segments) {
  const std::int64_t n = static_cast<std::int64_t>(owner_rank.extent(0));
  if (segments.empty()) segments.push_back(n);
  auto state = std::make_shared<detail::RouteState>(
      detail::RouteState{comm,
                         ExchangePlan::build(comm, n, OwnerRankOf{owner_rank}, options),
                         owner_rank,
                         owner_row,
                         std::vector<std::int64_t>(segments.size() + 1, 0),
                         {},
                         {},
                         std::nullopt});
  for (std::size_t s = 0; s < segments.size(); ++s) state->leaf_first[s + 1] = state->leaf_first[s] + segments[s];
  if (state->leaf_first.back() != n) throw InternalError("Route::build: the segments do not add up to the leaves");
  const ExchangePlan& plan = state->plan;
  const std::size_t nseg = segments.size(), nranks = static_cast<std::size_t>(comm.size());
  if (nseg == 1) {
    state->sent = plan.send_counts();
    state->arrived = plan.recv_counts();
  } else {
    // Each rank's leaves for one owner go in leaf order, so segment by segment: the counts
    // per (rank, segment) split what arrives from each rank into its segments.
    const std::vector<std::int64_t> bounds = segment_bounds(plan, state->leaf_first);
    state->sent.assign(nranks * nseg, 0);
    for (std::size_t r = 0; r < nranks; ++r) {
      for (std::size_t s = 0; s < nseg; ++s)
        state->sent[r * nseg + s] = bounds[r * (nseg + 1) + s + 1] - bounds[r * (nseg + 1) + s];
    }
    state->arrived.assign(nranks * nseg, 0);
    if (nranks == 1) {
      state->arrived = state->sent;
    } else {
      check_mpi(MPI_Alltoall(state->sent.data(), static_cast<int>(nseg), MPI_INT64_T, state->arrived.data(),
                             static_cast<int>(nseg), MPI_INT64_T, comm.get()),
                "MPI_Alltoall");
    }
  }
  Route route;
  route.state_ = std::move(state);
  return route;
}

std::int64_t Route::num_leaves() const noexcept { return state_ ? state_->plan.num_rows() : 0; }

std::int64_t Route::bytes_sent() const noexcept { return state_ ? state_->plan.bytes_sent() : 0; }

FetchedRows Route::fetch(const Tensor& roots, std::int64_t row_elements) const {
  detail::RouteState& st = *state_;
  const std::size_t row_bytes = row_bytes_of(roots, row_elements);
  // Requests to this rank itself are not sent: write() answers them from the roots.
  const ByteView& asked = st.arrived_rows();
  // The rows other ranks asked for go back, gathered from the roots a stage at a time as
  // they are sent.
  const ByteView answered = st.plan.reply_remote(roots.data(), asked, row_bytes);
  FetchedRows fetched;
  fetched.state_ = state_;
  fetched.roots_ = roots;
  fetched.answered_ = Tensor::adopt(roots.dtype(), Shape{st.plan.num_send_remote(), row_elements}, answered);
  fetched.row_elements_ = row_elements;
  return fetched;
}

void FetchedRows::write(const Tensor& leaves) const {
  const detail::RouteState& st = *state_;
  const ExchangePlan& plan = st.plan;
  const std::size_t row_bytes = row_bytes_of(roots_, row_elements_);
  const std::int64_t n = plan.num_rows();
  if (row_bytes == 0 || n == 0) return;
  const int me = st.comm.rank();
  // The roots may be a row slice of a larger tensor: pick a word their rows align to.
  dispatch_word(word_selector(row_bytes, {roots_.data()}), [&](auto wtag) {
    using W = typename decltype(wtag)::type;
    const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    write_fetched(ExecSpace(), n, st.owner_rank, st.owner_row, plan.slots(),
                  plan.send_offsets()[static_cast<std::size_t>(me)], plan.num_self(), me,
                  reinterpret_cast<const W*>(roots_.data()), reinterpret_cast<const W*>(answered_.data()),
                  reinterpret_cast<W*>(leaves.data()), words);
  });
  ExecSpace().fence();
}

RootRows Route::reduce(const std::vector<Tensor>& segment_rows, std::int64_t row_elements) const {
  detail::RouteState& st = *state_;
  const ExchangePlan& plan = st.plan;
  const std::size_t nseg = st.segments();
  if (segment_rows.size() != nseg) throw InternalError("Route::reduce: one Tensor of rows per segment");
  const std::size_t row_bytes = row_bytes_of(segment_rows[0], row_elements);
  const ByteView& to = st.arrived_rows();
  ByteView arrived;
  if (nseg == 1) {
    // Rows that stay on this rank are neither packed nor copied: the combine reads them
    // in place.
    arrived = plan.forward_remote(segment_rows[0].data(), row_bytes);
  } else {
    ByteView send;
    run_agreed(st.comm, [&] {  // else a rank that cannot make it leaves the others waiting in the exchange
      send = allocate_uninitialized<ByteView>("shardops::Route::send",
                                              static_cast<std::size_t>(plan.num_send_remote()) * row_bytes);
    });
    for (std::size_t s = 0; s < nseg; ++s)
      plan.pack_remote(send, st.leaf_first[s], segment_rows[s].data(), st.leaf_first[s + 1] - st.leaf_first[s],
                       row_bytes);
    arrived = plan.exchange_remote(send, row_bytes);
  }
  RootRows rows;
  rows.state_ = state_;
  const int me = st.comm.rank(), nranks = st.comm.size();
  rows.nranks_ = nranks;
  rows.self_ = me;
  rows.arrived_ = Tensor::adopt(segment_rows[0].dtype(), Shape{plan.num_recv_remote(), row_elements}, arrived);
  rows.arrived_owner_row_ = reinterpret_cast<const std::int64_t*>(to.data());
  // Where each (source rank, segment) starts in what arrived: by rank, then segment; this
  // rank's own leaves never arrive.
  rows.arrived_starts_.assign(static_cast<std::size_t>(nranks) * (nseg + 1), 0);
  for (int r = 0; r < nranks; ++r) {
    const std::size_t u = static_cast<std::size_t>(r);
    std::int64_t at = plan.remote_recv_offsets()[u];
    for (std::size_t s = 0; s <= nseg; ++s) {
      rows.arrived_starts_[u * (nseg + 1) + s] = at;
      if (s < nseg && r != me) at += st.arrived[u * nseg + s];
    }
  }
  rows.lower_end_ = plan.remote_recv_offsets()[static_cast<std::size_t>(me)];
  rows.segment_rows_ = segment_rows;
  rows.leaf_first_ = st.leaf_first;
  rows.own_leaves_ = plan.self_rows();
  rows.own_starts_.assign(nseg + 1, 0);
  for (std::size_t s = 0; s < nseg; ++s)
    rows.own_starts_[s + 1] = rows.own_starts_[s] + st.sent[static_cast<std::size_t>(me) * nseg + s];
  rows.leaf_owner_row_ = st.owner_row.data();
  return rows;
}

CollectedRows Route::collect(const Tensor& leaf_rows, std::int64_t row_elements) const {
  const ExchangePlan& plan = state_->plan;
  const ByteView targets =
      plan.forward(reinterpret_cast<const unsigned char*>(state_->owner_row.data()), sizeof(std::int64_t));
  const ByteView rows = plan.forward(leaf_rows.data(), row_bytes_of(leaf_rows, row_elements));
  return CollectedRows{Tensor::adopt(leaf_rows.dtype(), Shape{plan.num_recv(), row_elements}, rows),
                       Tensor::adopt(DType::Int64, Shape{plan.num_recv()}, targets)};
}

Tensor replicate_others(const Comm& comm, const RowLayout& layout, const Tensor& block, const RouteOptions& options,
                        std::int64_t* bytes_sent) {
  const int me = comm.rank();
  const std::size_t row_bytes = static_cast<std::size_t>(block.shape().product_from(1)) * block.itemsize();
  const std::int64_t rows = layout.total() - layout.count(me);
  ByteView others;
  run_agreed(comm, [&] {  // else a rank that cannot make it leaves the others waiting in the exchange
    others =
        allocate_uninitialized<ByteView>("shardops::Route::replicated", static_cast<std::size_t>(rows) * row_bytes);
  });
  const std::int64_t sent = replicate_blocks(comm, layout, ByteView(block.data(), block.nbytes()), others, row_bytes,
                                             OwnBlock::LeftOut, options);
  if (bytes_sent) *bytes_sent = sent;
  return Tensor::adopt(block.dtype(), block.shape().with_dim0(rows), others);
}

}  // namespace shardops
