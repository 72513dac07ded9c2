#include "shardops/route/detail/ExchangePlan.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/MemoryBudget.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/kernels/RowCopy.hpp"
#include "shardops/route/GpuAwareMpi.hpp"

namespace shardops {

namespace {

// forward()'s stage: the rows for other ranks are packed and sent this many bytes at a
// time, so a route holds its receive buffer and a stage, not a whole send buffer too.
constexpr std::int64_t kStreamStageBytes = std::int64_t(8) << 20;

// A committed MPI datatype of one row, freed on scope exit.
class RowType {
 public:
  explicit RowType(std::size_t row_bytes) {
    if (row_bytes > static_cast<std::size_t>(INT_MAX))
      throw InvalidArgument("a row of " + std::to_string(row_bytes) + " bytes is too large to send");
    check_mpi(MPI_Type_contiguous(static_cast<int>(row_bytes), MPI_BYTE, &type_), "MPI_Type_contiguous");
    check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
  }
  ~RowType() { MPI_Type_free(&type_); }
  RowType(const RowType&) = delete;
  RowType& operator=(const RowType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

using HostBytes = Kokkos::View<unsigned char*, Kokkos::HostSpace>;

// Time inside MPI calls, kept apart as the sub-phase "mpi" of whatever phase is
// running: the benchmarks compare it with a raw MPI_Alltoallv of the same bytes.
class MpiTime {
 public:
  MpiTime() = default;
  ~MpiTime() { PhaseClock::add("mpi", timer_.seconds()); }
  MpiTime(const MpiTime&) = delete;
  MpiTime& operator=(const MpiTime&) = delete;

 private:
  Kokkos::Timer timer_;
};

// Copies rows [from, from+n) of src to rows [to, to+n) of dst (same row size).
template <class Dst, class Src>
void copy_rows(const Dst& dst, std::int64_t to, const Src& src, std::int64_t from, std::int64_t n,
               std::size_t row_bytes) {
  if (n == 0 || row_bytes == 0) return;
  const std::size_t b = row_bytes;
  Kokkos::deep_copy(
      Kokkos::subview(dst, std::make_pair(static_cast<std::size_t>(to) * b, static_cast<std::size_t>(to + n) * b)),
      Kokkos::subview(src, std::make_pair(static_cast<std::size_t>(from) * b, static_cast<std::size_t>(from + n) * b)));
}

using Counts = std::vector<std::int64_t>;

// One MPI_Alltoallv of the rows [soffs[r], soffs[r] + scounts[r]) of `send` to each
// other rank r, received at roffs[r] in `recv` (rows to self are not moved). If a
// count or displacement would overflow an int, or a peer's rows exceed the round
// limit, it runs in rounds of at most `cap` rows per peer through compact buffers in
// the memory space of `send` (device memory when MPI is GPU-aware: copied with
// deep_copy, never read by the host). Collective: every rank runs the same rounds.
template <class Bytes>
void alltoallv(const Comm& comm, const Bytes& send, const Bytes& recv, const Counts& scounts, const Counts& soffs,
               const Counts& rcounts, const Counts& roffs, std::size_t row_bytes, std::int64_t rows_per_round) {
  if (comm.size() == 1) return;  // rows to self are not moved: nothing to send
  const RowType type(row_bytes);
  const int n = comm.size(), self = comm.rank();
  const std::int64_t cap = std::max<std::int64_t>(1, rows_per_round / n);
  // Rounds this rank needs; every rank runs the largest number.
  std::int64_t my_rounds = 1;
  for (int r = 0; r < n; ++r) {
    if (r == self) continue;
    my_rounds = std::max(my_rounds, (scounts[static_cast<std::size_t>(r)] + cap - 1) / cap);
    my_rounds = std::max(my_rounds, (rcounts[static_cast<std::size_t>(r)] + cap - 1) / cap);
  }
  const bool single = my_rounds == 1 && soffs.back() <= INT_MAX && roffs.back() <= INT_MAX;
  const std::int64_t rounds = comm.max(single ? 1 : std::max<std::int64_t>(my_rounds, 2));

  std::vector<int> sc(static_cast<std::size_t>(n)), sd(static_cast<std::size_t>(n)), rc(static_cast<std::size_t>(n)),
      rd(static_cast<std::size_t>(n));
  if (rounds == 1) {
    for (int r = 0; r < n; ++r) {
      const std::size_t u = static_cast<std::size_t>(r);
      sc[u] = r == self ? 0 : static_cast<int>(scounts[u]);
      rc[u] = r == self ? 0 : static_cast<int>(rcounts[u]);
      sd[u] = static_cast<int>(soffs[u]);
      rd[u] = static_cast<int>(roffs[u]);
    }
    check_mpi(MPI_Alltoallv(send.data(), sc.data(), sd.data(), type.get(), recv.data(), rc.data(), rd.data(),
                            type.get(), comm.get()),
              "MPI_Alltoallv");
    return;
  }
  using Stage = Kokkos::View<unsigned char*, typename Bytes::memory_space>;
  const std::size_t stage_bytes = static_cast<std::size_t>(cap * n) * row_bytes;
  const Stage sstage(Kokkos::view_alloc(Kokkos::WithoutInitializing, "shardops::ExchangePlan::send_round"),
                     stage_bytes);
  const Stage rstage(Kokkos::view_alloc(Kokkos::WithoutInitializing, "shardops::ExchangePlan::recv_round"),
                     stage_bytes);
  for (std::int64_t round = 0; round < rounds; ++round) {
    const std::int64_t done = round * cap;
    int spos = 0, rpos = 0;
    for (int r = 0; r < n; ++r) {
      const std::size_t u = static_cast<std::size_t>(r);
      const std::int64_t s = r == self ? 0 : std::max<std::int64_t>(0, std::min(cap, scounts[u] - done));
      const std::int64_t q = r == self ? 0 : std::max<std::int64_t>(0, std::min(cap, rcounts[u] - done));
      copy_rows(sstage, spos, send, soffs[u] + done, s, row_bytes);
      sc[u] = static_cast<int>(s);
      sd[u] = spos;
      rc[u] = static_cast<int>(q);
      rd[u] = rpos;
      spos += static_cast<int>(s);
      rpos += static_cast<int>(q);
    }
    Kokkos::fence();  // the copies into sstage are done before MPI reads it
    check_mpi(MPI_Alltoallv(sstage.data(), sc.data(), sd.data(), type.get(), rstage.data(), rc.data(), rd.data(),
                            type.get(), comm.get()),
              "MPI_Alltoallv");
    for (int r = 0; r < n; ++r) {
      const std::size_t u = static_cast<std::size_t>(r);
      copy_rows(recv, roffs[u] + done, rstage, rd[u], rc[u], row_bytes);
    }
  }
}

// Moves the rows [soffs[r], soffs[r] + scounts[r]) of `send` to each other rank r,
// received at roffs[r] in `recv` (rows to self are not moved; send ranges may
// overlap). MPI reads MemSpace directly when it may (host memory, GPU-aware MPI);
// else the rows for other ranks go through separate host buffers — separate even
// when MemSpace is host memory, so SHARDOPS_MPI_STAGING=host runs this path on any
// build. (HostBytes, not a mirror: a device View's mirror may have another type, and
// a host View's mirror is the View itself.) Returns the bytes staged through host
// buffers (sent plus received).
std::int64_t move_rows(const Comm& comm, const ByteView& send, const ByteView& recv, const Counts& scounts,
                       const Counts& soffs, const Counts& rcounts, const Counts& roffs, std::size_t row_bytes,
                       const RouteOptions& route) {
  if (row_bytes == 0) return 0;
  const std::int64_t rows_per_round = route.rows_per_round();
  if (route.mpi_takes_memspace_pointers()) {
    const MpiTime mpi_time;
    alltoallv(comm, send, recv, scounts, soffs, rcounts, roffs, row_bytes, rows_per_round);
    return 0;
  }
  const std::size_t me = static_cast<std::size_t>(comm.rank());
  const HostBytes send_host(Kokkos::view_alloc(Kokkos::WithoutInitializing, "shardops::ExchangePlan::send_host"),
                            send.extent(0));
  const HostBytes recv_host(Kokkos::view_alloc(Kokkos::WithoutInitializing, "shardops::ExchangePlan::recv_host"),
                            recv.extent(0));
  std::int64_t staged_rows = 0;
  for (std::size_t r = 0; r < scounts.size(); ++r) {
    if (r == me) continue;
    copy_rows(send_host, soffs[r], send, soffs[r], scounts[r], row_bytes);
    staged_rows += scounts[r] + rcounts[r];
  }
  {
    const MpiTime mpi_time;
    alltoallv(comm, send_host, recv_host, scounts, soffs, rcounts, roffs, row_bytes, rows_per_round);
  }
  for (std::size_t r = 0; r < rcounts.size(); ++r) {
    if (r != me) copy_rows(recv, roffs[r], recv_host, roffs[r], rcounts[r], row_bytes);
  }
  return staged_rows * static_cast<std::int64_t>(row_bytes);
}

// The pack and unpack kernels are named templates: nvcc rejects a KOKKOS_LAMBDA
// defined inside dispatch_word's generic lambda.
template <class W>
void pack_words_by_row(const ExecSpace& space, const Kokkos::View<std::int64_t*, MemSpace>& slot, std::int64_t first,
                       const W* src, W* dst, std::int64_t count, std::int64_t words, std::int64_t lo, std::int64_t hi) {
  // Part of the rows (one of several sources): walk them, each to its slot.
  kernels::for_each_row_streaming(
      space, "shardops::ExchangePlan::pack", count, KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t s = slot(first + i);
        if (s >= 0 && (s < lo || s >= hi))  // [lo, hi): skipped, and left out of dst
          kernels::stream_row(dst + ExchangePlan::remote_position(s, lo, hi - lo) * words, src + i * words, words);
      });
}

template <class W>
void pack_slot_range(const ExecSpace& space, const std::int64_t* row_of_slot, const W* src, W* dst, std::int64_t words,
                     std::int64_t first_slot, std::int64_t count) {
  // Send slots [first_slot, first_slot + count) to dst[0, count), each from its row
  // src[row_of_slot[slot]]: the send buffer is written once, in order, with streaming
  // stores, and the rows of one destination are read in increasing order. (Walking the
  // rows instead would branch on each row's destination, at random.)
  if (count <= 0 || words == 0) return;
  const std::int64_t end = first_slot + count;
  // Rows of a cache line or more, with gaps between them: prefetch to keep misses in flight.
  // Smaller rows (the root row of each leaf) lie a few to a line, read in increasing order,
  // which the hardware prefetches by itself.
  const std::int64_t ahead = words * static_cast<std::int64_t>(sizeof(W)) >= 64 ? 16 : 0;
  kernels::for_each_row_streaming(
      space, "shardops::ExchangePlan::pack", count, KOKKOS_LAMBDA(const std::int64_t k) {
        const std::int64_t j = first_slot + k;
        if (ahead > 0 && j + ahead < end) SHARDOPS_PREFETCH_ROW(src + row_of_slot[j + ahead] * words, words);
        kernels::stream_row(dst + k * words, src + row_of_slot[j] * words, words);
      });
}

// The send-buffer position of each of the n local rows, from the row of each position.
Kokkos::View<std::int64_t*, MemSpace> slots_of_rows(std::int64_t n,
                                                    const Kokkos::View<std::int64_t*, MemSpace>& row_of_slot) {
  const ExecSpace space;
  const auto slot = allocate_uninitialized<Kokkos::View<std::int64_t*, MemSpace>>("shardops::ExchangePlan::slot",
                                                                                  static_cast<std::size_t>(n));
  const std::int64_t sent = static_cast<std::int64_t>(row_of_slot.extent(0));
  // Only rows that are not sent keep -1: when every row is sent, the inversion writes them all.
  if (sent < n) Kokkos::deep_copy(space, slot, std::int64_t(-1));
  Kokkos::parallel_for(
      "shardops::ExchangePlan::slot", Kokkos::RangePolicy<ExecSpace>(space, 0, sent),
      KOKKOS_LAMBDA(const std::int64_t s) { slot(row_of_slot(s)) = s; });
  space.fence();
  return slot;
}

template <class W>
void unpack_words(const ExecSpace& space, const Kokkos::View<std::int64_t*, MemSpace>& slot, const W* src, W* dst,
                  std::int64_t n, std::int64_t words, std::int64_t lo, std::int64_t hi) {
  kernels::for_each_row_streaming(
      space, "shardops::ExchangePlan::unpack", n, KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t s = slot(i);
        if (s < 0) {
          kernels::zero_row(dst + i * words, words);
        } else if (s < lo || s >= hi) {  // [lo, hi): left to the caller, not in src
          kernels::stream_row(dst + i * words, src + ExchangePlan::remote_position(s, lo, hi - lo) * words, words);
        }
      });
}

}  // namespace

namespace {

// Collective: \p allocate() makes the buffers of one exchange on this rank, \p bytes in all,
// checked against its memory budget (core/MemoryBudget.hpp) first; both agreed: the sizes come
// from what the other ranks send, so a rank that cannot hold them (over its budget, or an
// allocation failing under a limit the budget does not see, such as `ulimit -v`) fails the
// op on every rank (with its message) rather than being OOM-killed or failing alone and
// leaving the others waiting in the exchange.
template <class Allocate>
void allocate_exchange_buffers(const Comm& comm, std::size_t bytes, const Allocate& allocate) {
  run_agreed(comm, [&] {
    check_allocation(bytes, "the rows other ranks send this one in an exchange");
    allocate();
  });
}

}  // namespace

const Kokkos::View<std::int64_t*, MemSpace>& ExchangePlan::slots() const {
  if (!*slot_) *slot_ = slots_of_rows(num_rows_, row_of_slot_);
  return **slot_;
}

void ExchangePlan::finish(const Comm& comm, const std::int64_t* bucket_begin, bool changed) {
  comm_ = comm;
  const std::size_t n = static_cast<std::size_t>(nranks_);
  send_counts_.assign(n, 0);
  send_offsets_.assign(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) {
    send_counts_[r] = bucket_begin[r + 1] - bucket_begin[r];
    send_offsets_[r + 1] = send_offsets_[r] + send_counts_[r];
  }
  recv_counts_.assign(n, 0);
  if (nranks_ == 1) {
    recv_counts_ = send_counts_;
  } else {
    // A count of -1 to every rank: this rank's placement failed (no count is negative).
    std::vector<std::int64_t> sent = send_counts_;
    if (changed) sent.assign(n, -1);
    const MpiTime mpi_time;
    check_mpi(MPI_Alltoall(sent.data(), 1, MPI_INT64_T, recv_counts_.data(), 1, MPI_INT64_T, comm.get()),
              "MPI_Alltoall");
  }
  if (changed || std::any_of(recv_counts_.begin(), recv_counts_.end(), [](std::int64_t c) { return c < 0; }))
    throw IOError(input_changed_text());
  recv_offsets_.assign(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) recv_offsets_[r + 1] = recv_offsets_[r] + recv_counts_[r];
  remote_send_counts_ = send_counts_;
  remote_recv_counts_ = recv_counts_;
  remote_send_counts_[static_cast<std::size_t>(self_)] = 0;
  remote_recv_counts_[static_cast<std::size_t>(self_)] = 0;
  remote_send_offsets_.assign(n + 1, 0);
  remote_recv_offsets_.assign(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) {
    remote_send_offsets_[r + 1] = remote_send_offsets_[r] + remote_send_counts_[r];
    remote_recv_offsets_[r + 1] = remote_recv_offsets_[r] + remote_recv_counts_[r];
  }
}

ByteView ExchangePlan::route(const ByteView& send, const std::vector<std::int64_t>& scounts,
                             const std::vector<std::int64_t>& soffs, const std::vector<std::int64_t>& rcounts,
                             const std::vector<std::int64_t>& roffs, std::int64_t total_recv,
                             std::size_t row_bytes) const {
  const Comm& comm = *comm_;
  ExecSpace().fence();  // kernels that filled `send` must be done before MPI reads it
  // Where MPI does not read MemSpace, both buffers are copied through host memory too.
  const std::size_t staged = route_options_.mpi_takes_memspace_pointers()
                                 ? 0
                                 : send.extent(0) + static_cast<std::size_t>(total_recv) * row_bytes;
  ByteView recv;
  allocate_exchange_buffers(comm, static_cast<std::size_t>(total_recv) * row_bytes + staged, [&] {
    recv = allocate_uninitialized<ByteView>("shardops::ExchangePlan::recv",
                                            static_cast<std::size_t>(total_recv) * row_bytes);
  });
  const std::size_t me = static_cast<std::size_t>(self_);
  // Rows to self never touch MPI (remote-only routes have none: the caller's).
  copy_rows(recv, roffs[me], send, soffs[me], scounts[me], row_bytes);
  std::int64_t sent_bytes = 0;
  for (std::size_t r = 0; r < scounts.size(); ++r) {
    if (r != me) sent_bytes += scounts[r] * static_cast<std::int64_t>(row_bytes);
  }
  *bytes_sent_ += sent_bytes;
  if (row_bytes == 0) return recv;

  *bytes_staged_ += move_rows(comm, send, recv, scounts, soffs, rcounts, roffs, row_bytes, route_options_);
  return recv;
}

ByteView ExchangePlan::exchange(const ByteView& send, std::size_t row_bytes) const {
  return route(send, send_counts_, send_offsets_, recv_counts_, recv_offsets_, num_recv(), row_bytes);
}

ByteView ExchangePlan::exchange_reverse(const ByteView& reply, std::size_t row_bytes) const {
  return route(reply, recv_counts_, recv_offsets_, send_counts_, send_offsets_, num_send(), row_bytes);
}

std::int64_t ExchangePlan::self_lo(bool skip_self) const noexcept {
  return skip_self ? send_offsets_[static_cast<std::size_t>(self_)] : 0;
}
std::int64_t ExchangePlan::self_hi(bool skip_self) const noexcept {
  return skip_self ? send_offsets_[static_cast<std::size_t>(self_)] + num_self() : 0;
}

void ExchangePlan::pack(const ByteView& send, std::int64_t first, const unsigned char* rows, std::int64_t count,
                        std::size_t row_bytes) const {
  pack_rows(send, first, rows, count, row_bytes, false);
}

void ExchangePlan::pack_remote(const ByteView& send, std::int64_t first, const unsigned char* rows, std::int64_t count,
                               std::size_t row_bytes) const {
  pack_rows(send, first, rows, count, row_bytes, true);
}

void ExchangePlan::pack_rows(const ByteView& send, std::int64_t first, const unsigned char* rows, std::int64_t count,
                             std::size_t row_bytes, bool skip_self) const {
  if (count == 0 || row_bytes == 0) return;
  if (skip_self && num_self() == num_send()) return;  // every row stays here
  const std::int64_t lo = self_lo(skip_self), hi = self_hi(skip_self);
  const ExecSpace space;
  // The rows may be a row slice of a larger tensor: pick a word they align to.
  dispatch_word(word_selector(row_bytes, {rows}), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    const W* src = reinterpret_cast<const W*>(rows);
    W* dst = reinterpret_cast<W*>(send.data());
    if (first == 0 && count == num_rows_) {  // all rows: the slots before and after [lo, hi)
      pack_slot_range(space, row_of_slot_.data(), src, dst, words, 0, lo);
      pack_slot_range(space, row_of_slot_.data(), src, dst + lo * words, words, hi, num_send() - hi);
    } else {
      pack_words_by_row(space, slots(), first, src, dst, count, words, lo, hi);
    }
  });
}

void ExchangePlan::unpack(const ByteView& packed, unsigned char* out, std::size_t row_bytes) const {
  unpack_rows(packed, out, row_bytes, false);
}

void ExchangePlan::unpack_remote(const ByteView& packed, unsigned char* out, std::size_t row_bytes) const {
  unpack_rows(packed, out, row_bytes, true);
}

void ExchangePlan::unpack_rows(const ByteView& packed, unsigned char* out, std::size_t row_bytes,
                               bool skip_self) const {
  if (num_rows_ == 0 || row_bytes == 0) return;
  if (skip_self && num_self() == num_rows_) return;  // the caller wrote every row
  const std::int64_t lo = self_lo(skip_self), hi = self_hi(skip_self);
  const ExecSpace space;
  dispatch_word(word_selector(row_bytes, {out}), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    unpack_words(space, slots(), reinterpret_cast<const W*>(packed.data()), reinterpret_cast<W*>(out), num_rows_, words,
                 lo, hi);
  });
  space.fence();
}

ByteView ExchangePlan::forward(const unsigned char* local, std::size_t row_bytes) const {
  return forward_rows(local, row_bytes, false);
}

ByteView ExchangePlan::forward_rows(const unsigned char* local, std::size_t row_bytes, bool skip_self) const {
  const std::vector<std::int64_t>& roffs = skip_self ? remote_recv_offsets_ : recv_offsets_;
  std::optional<ByteView> recv = stream_rows(local, row_bytes, row_of_slot_.data(), send_counts_, send_offsets_,
                                             recv_counts_, roffs, skip_self ? num_recv_remote() : num_recv());
  if (!recv) {
    const std::size_t bytes = static_cast<std::size_t>(skip_self ? num_send_remote() : num_send()) * row_bytes;
    ByteView send;
    allocate_exchange_buffers(*comm_, bytes,
                              [&] { send = allocate_uninitialized<ByteView>("shardops::ExchangePlan::send", bytes); });
    pack_rows(send, 0, local, num_rows_, row_bytes, skip_self);
    return skip_self ? exchange_remote(send, row_bytes) : exchange(send, row_bytes);
  }
  if (!skip_self && row_bytes > 0) {
    // Rows to self never touch MPI: packed straight into their place.
    const std::size_t me = static_cast<std::size_t>(self_);
    dispatch_word(word_selector(row_bytes, {local}), [&](auto tag) {
      using W = typename decltype(tag)::type;
      const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
      pack_slot_range(ExecSpace(), row_of_slot_.data(), reinterpret_cast<const W*>(local),
                      reinterpret_cast<W*>(recv->data()) + roffs[me] * words, words, send_offsets_[me], num_self());
    });
    ExecSpace().fence();
  }
  return *recv;
}

ByteView ExchangePlan::reply_remote(const unsigned char* table, const ByteView& asked, std::size_t row_bytes) const {
  if (static_cast<std::int64_t>(asked.extent(0)) != num_recv_remote() * static_cast<std::int64_t>(sizeof(std::int64_t)))
    throw InternalError("ExchangePlan::reply_remote: the requests are not one int64 per received row");
  const std::int64_t* rows = reinterpret_cast<const std::int64_t*>(asked.data());
  std::optional<ByteView> back = stream_rows(table, row_bytes, rows, recv_counts_, remote_recv_offsets_, send_counts_,
                                             remote_send_offsets_, num_send_remote());
  if (back) return *back;
  const std::size_t bytes = static_cast<std::size_t>(num_recv_remote()) * row_bytes;
  ByteView reply;
  allocate_exchange_buffers(*comm_, bytes,
                            [&] { reply = allocate_uninitialized<ByteView>("shardops::ExchangePlan::reply", bytes); });
  if (row_bytes > 0) {
    dispatch_word(word_selector(row_bytes, {table}), [&](auto tag) {
      using W = typename decltype(tag)::type;
      pack_slot_range(ExecSpace(), rows, reinterpret_cast<const W*>(table), reinterpret_cast<W*>(reply.data()),
                      static_cast<std::int64_t>(row_bytes / sizeof(W)), 0, num_recv_remote());
    });
  }
  return exchange_reverse_remote(reply, row_bytes);
}

std::optional<ByteView> ExchangePlan::stream_rows(
    const unsigned char* src, std::size_t row_bytes, const std::int64_t* source_row,
    const std::vector<std::int64_t>& scounts, const std::vector<std::int64_t>& soffs,
    const std::vector<std::int64_t>& rcounts, const std::vector<std::int64_t>& roffs, std::int64_t total_recv) const {
  const Comm& comm = *comm_;
  const std::size_t me = static_cast<std::size_t>(self_), n = static_cast<std::size_t>(nranks_);
  // Rows per peer per round: the stage holds at most kStreamStageBytes (fewer rows
  // under a test's round limit).
  const std::int64_t peers = std::max<std::int64_t>(1, nranks_ - 1);
  const std::int64_t cap = std::max<std::int64_t>(
      1,
      std::min<std::int64_t>(kStreamStageBytes / static_cast<std::int64_t>(std::max<std::size_t>(row_bytes, 1)) / peers,
                             route_options_.rows_per_round() / nranks_));
  std::int64_t my_rounds = 0, to_send = 0;
  for (std::size_t r = 0; r < n; ++r) {
    if (r == me) continue;
    my_rounds = std::max({my_rounds, (scounts[r] + cap - 1) / cap, (rcounts[r] + cap - 1) / cap});
    to_send += scounts[r];
  }
  // Streamed when MPI reads MemSpace and receive positions fit an int, on every rank:
  // the collectives must match.
  const bool can_stream = row_bytes > 0 && route_options_.mpi_takes_memspace_pointers() && total_recv <= INT_MAX;
  constexpr std::int64_t kCannot = std::int64_t(1) << 62;
  const std::int64_t rounds = comm.max(can_stream ? my_rounds : kCannot);
  if (rounds >= kCannot) return std::nullopt;
  const std::size_t stage_rows = static_cast<std::size_t>(std::min(cap * peers, to_send));
  ByteView recv, stage;
  allocate_exchange_buffers(comm, (static_cast<std::size_t>(total_recv) + stage_rows) * row_bytes, [&] {
    recv = allocate_uninitialized<ByteView>("shardops::ExchangePlan::recv",
                                            static_cast<std::size_t>(total_recv) * row_bytes);
    stage = allocate_uninitialized<ByteView>("shardops::ExchangePlan::stage", stage_rows * row_bytes);
  });
  std::optional<RowType> type;  // no round on one rank: no MPI at all
  if (rounds > 0) type.emplace(row_bytes);
  const ExecSpace space;
  std::vector<int> sc(n, 0), sd(n, 0), rc(n, 0), rd(n, 0);
  dispatch_word(word_selector(row_bytes, {src}), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    for (std::int64_t round = 0; round < rounds; ++round) {
      const std::int64_t done = round * cap;
      std::int64_t spos = 0;
      for (std::size_t r = 0; r < n; ++r) {
        if (r == me) continue;
        const std::int64_t s = std::max<std::int64_t>(0, std::min(cap, scounts[r] - done));
        const std::int64_t q = std::max<std::int64_t>(0, std::min(cap, rcounts[r] - done));
        pack_slot_range(space, source_row, reinterpret_cast<const W*>(src),
                        reinterpret_cast<W*>(stage.data()) + spos * words, words, soffs[r] + done, s);
        sc[r] = static_cast<int>(s);
        sd[r] = static_cast<int>(spos);
        rc[r] = static_cast<int>(q);
        rd[r] = static_cast<int>(q > 0 ? roffs[r] + done : 0);
        spos += s;
      }
      space.fence();  // the stage is packed before MPI reads it
      const MpiTime mpi_time;
      check_mpi(MPI_Alltoallv(stage.data(), sc.data(), sd.data(), type->get(), recv.data(), rc.data(), rd.data(),
                              type->get(), comm.get()),
                "MPI_Alltoallv");
    }
  });
  *bytes_sent_ += to_send * static_cast<std::int64_t>(row_bytes);
  return recv;
}

ByteView ExchangePlan::exchange_remote(const ByteView& send, std::size_t row_bytes) const {
  return route(send, remote_send_counts_, remote_send_offsets_, remote_recv_counts_, remote_recv_offsets_,
               num_recv_remote(), row_bytes);
}

ByteView ExchangePlan::forward_remote(const unsigned char* local, std::size_t row_bytes) const {
  return forward_rows(local, row_bytes, true);
}

ByteView ExchangePlan::exchange_reverse_remote(const ByteView& reply, std::size_t row_bytes) const {
  return route(reply, remote_recv_counts_, remote_recv_offsets_, remote_send_counts_, remote_send_offsets_,
               num_send_remote(), row_bytes);
}

namespace {
std::vector<std::int64_t> exclusive_offsets(const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> offsets(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) offsets[r + 1] = offsets[r] + counts[r];
  return offsets;
}
}  // namespace

ByteView ExchangePlan::exchange_reverse_bytes(const ByteView& reply, const std::vector<std::int64_t>& reply_bytes,
                                              const std::vector<std::int64_t>& back_bytes) const {
  const std::vector<std::int64_t> reply_offs = exclusive_offsets(reply_bytes),
                                  back_offs = exclusive_offsets(back_bytes);
  if (static_cast<std::size_t>(reply_offs.back()) > reply.extent(0))
    throw InternalError("ExchangePlan::exchange_reverse_bytes: reply shorter than its counts");
  return route(reply, reply_bytes, reply_offs, back_bytes, back_offs, back_offs.back(), 1);
}

std::int64_t replicate_blocks(const Comm& comm, const RowLayout& layout, const ByteView& block, const ByteView& all,
                              std::size_t row_bytes, OwnBlock own, const RouteOptions& route) {
  const std::size_t n = static_cast<std::size_t>(comm.size());
  const int me = comm.rank();
  const std::int64_t left_out = own == OwnBlock::LeftOut ? layout.count(me) : 0;
  // Every peer gets this rank's whole block (send ranges may overlap); each peer's
  // block arrives at its offset. Nothing to or from self.
  Counts scounts(n, layout.count(me)), soffs(n + 1, 0), rcounts(n), roffs(n + 1);
  for (std::size_t r = 0; r < n; ++r) {
    rcounts[r] = layout.count(static_cast<int>(r));
    roffs[r] = layout.offset(static_cast<int>(r)) - (static_cast<int>(r) > me ? left_out : 0);
  }
  roffs[n] = layout.total() - left_out;
  scounts[static_cast<std::size_t>(me)] = 0;
  rcounts[static_cast<std::size_t>(me)] = 0;
  if (static_cast<std::size_t>(layout.count(me)) * row_bytes > block.extent(0) ||
      static_cast<std::size_t>(roffs[n]) * row_bytes > all.extent(0))
    throw InternalError("replicate_blocks: buffers smaller than the layout");
  ExecSpace().fence();  // kernels that filled `block` must be done before MPI reads it
  move_rows(comm, block, all, scounts, soffs, rcounts, roffs, row_bytes, route);
  return layout.count(me) * static_cast<std::int64_t>(row_bytes) * (comm.size() - 1);
}

}  // namespace shardops
