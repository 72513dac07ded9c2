#include "shardops/dist/ExchangePlan.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/dist/GpuAwareMpi.hpp"
#include "shardops/kernels/RowCopy.hpp"

namespace shardops {

namespace {

std::int64_t g_max_rows_per_round = INT_MAX;

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
               const Counts& rcounts, const Counts& roffs, std::size_t row_bytes) {
  const RowType type(row_bytes);
  const int n = comm.size(), self = comm.rank();
  const std::int64_t cap = std::max<std::int64_t>(1, g_max_rows_per_round / n);
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
                       const Counts& soffs, const Counts& rcounts, const Counts& roffs, std::size_t row_bytes) {
  if (row_bytes == 0) return 0;
  if (mpi_takes_memspace_pointers()) {
    const MpiTime mpi_time;
    alltoallv(comm, send, recv, scounts, soffs, rcounts, roffs, row_bytes);
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
    alltoallv(comm, send_host, recv_host, scounts, soffs, rcounts, roffs, row_bytes);
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
        if (s >= 0 && (s < lo || s >= hi))
          kernels::stream_row(dst + s * words, src + i * words, words);  // [lo, hi): skipped
      });
}

template <class W>
void pack_words_by_slot(const ExecSpace& space, const Kokkos::View<std::int64_t*, MemSpace>& row_of_slot, const W* src,
                        W* dst, std::int64_t words, std::int64_t lo, std::int64_t hi) {
  // All the rows: walk the send slots in order, skipping [lo, hi), each from its row.
  // The send buffer is written once, in order, with streaming stores, and the rows of
  // one destination are read in increasing order. (Walking the rows instead would
  // branch on each row's destination, at random.)
  const std::int64_t num_slots = static_cast<std::int64_t>(row_of_slot.extent(0));
  const std::int64_t skipped = hi - lo;
  kernels::for_each_row_streaming(
      space, "shardops::ExchangePlan::pack", num_slots - skipped, KOKKOS_LAMBDA(const std::int64_t k) {
        constexpr std::int64_t ahead = 16;  // rows with gaps between them: keep misses in flight
        const std::int64_t j = k < lo ? k : k + skipped;
        const std::int64_t ja = k + ahead < lo ? k + ahead : k + ahead + skipped;
        if (ja < num_slots) SHARDOPS_PREFETCH(src + row_of_slot(ja) * words);
        kernels::stream_row(dst + j * words, src + row_of_slot(j) * words, words);
      });
}

template <class W>
void unpack_words(const ExecSpace& space, const Kokkos::View<std::int64_t*, MemSpace>& slot, const W* src, W* dst,
                  std::int64_t n, std::int64_t words, std::int64_t lo, std::int64_t hi) {
  kernels::for_each_row_streaming(
      space, "shardops::ExchangePlan::unpack", n, KOKKOS_LAMBDA(const std::int64_t i) {
        const std::int64_t s = slot(i);
        if (s < 0) {
          kernels::zero_row(dst + i * words, words);
        } else if (s < lo || s >= hi) {  // [lo, hi): left to the caller
          kernels::stream_row(dst + i * words, src + s * words, words);
        }
      });
}

}  // namespace

void ExchangePlan::set_max_rows_per_round(std::int64_t rows) {
  g_max_rows_per_round = std::max<std::int64_t>(1, std::min<std::int64_t>(rows, INT_MAX));
}
std::int64_t ExchangePlan::max_rows_per_round() { return g_max_rows_per_round; }

void ExchangePlan::finish(const Comm& comm, const std::int64_t* bucket_begin) {
  comm_ = comm;
  const std::size_t n = static_cast<std::size_t>(nranks_);
  send_counts_.assign(n, 0);
  send_offsets_.assign(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) {
    send_counts_[r] = bucket_begin[r + 1] - bucket_begin[r];
    send_offsets_[r + 1] = send_offsets_[r] + send_counts_[r];
  }
  recv_counts_.assign(n, 0);
  const MpiTime mpi_time;
  check_mpi(MPI_Alltoall(send_counts_.data(), 1, MPI_INT64_T, recv_counts_.data(), 1, MPI_INT64_T, comm.get()),
            "MPI_Alltoall");
  recv_offsets_.assign(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) recv_offsets_[r + 1] = recv_offsets_[r] + recv_counts_[r];
}

ByteView ExchangePlan::route(const ByteView& send, const std::vector<std::int64_t>& scounts,
                             const std::vector<std::int64_t>& soffs, const std::vector<std::int64_t>& rcounts,
                             const std::vector<std::int64_t>& roffs, std::int64_t total_recv, std::size_t row_bytes,
                             bool copy_self) const {
  const Comm& comm = *comm_;
  ExecSpace().fence();  // kernels that filled `send` must be done before MPI reads it
  const ByteView recv = allocate_uninitialized<ByteView>("shardops::ExchangePlan::recv",
                                                         static_cast<std::size_t>(total_recv) * row_bytes);
  const std::size_t me = static_cast<std::size_t>(self_);
  // Rows to self never touch MPI.
  if (copy_self) copy_rows(recv, roffs[me], send, soffs[me], scounts[me], row_bytes);  // remote-only: the caller's
  std::int64_t sent_bytes = 0;
  for (std::size_t r = 0; r < scounts.size(); ++r) {
    if (r != me) sent_bytes += scounts[r] * static_cast<std::int64_t>(row_bytes);
  }
  *bytes_sent_ += sent_bytes;
  if (row_bytes == 0) return recv;

  *bytes_staged_ += move_rows(comm, send, recv, scounts, soffs, rcounts, roffs, row_bytes);
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
  dispatch_word(row_bytes, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    const W* src = reinterpret_cast<const W*>(rows);
    W* dst = reinterpret_cast<W*>(send.data());
    if (first == 0 && count == num_rows_) {
      pack_words_by_slot(space, row_of_slot_, src, dst, words, lo, hi);
    } else {
      pack_words_by_row(space, slot_, first, src, dst, count, words, lo, hi);
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
  dispatch_word(row_bytes, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    unpack_words(space, slot_, reinterpret_cast<const W*>(packed.data()), reinterpret_cast<W*>(out), num_rows_, words,
                 lo, hi);
  });
  space.fence();
}

ByteView ExchangePlan::forward(const unsigned char* local, std::size_t row_bytes) const {
  const ByteView send = allocate_uninitialized<ByteView>("shardops::ExchangePlan::send",
                                                         static_cast<std::size_t>(num_send()) * row_bytes);
  pack(send, 0, local, num_rows_, row_bytes);
  return exchange(send, row_bytes);
}

ByteView ExchangePlan::exchange_remote(const ByteView& send, std::size_t row_bytes) const {
  return route(send, send_counts_, send_offsets_, recv_counts_, recv_offsets_, num_recv(), row_bytes, false);
}

ByteView ExchangePlan::forward_remote(const unsigned char* local, std::size_t row_bytes) const {
  const ByteView send = allocate_uninitialized<ByteView>("shardops::ExchangePlan::send",
                                                         static_cast<std::size_t>(num_send()) * row_bytes);
  pack_remote(send, 0, local, num_rows_, row_bytes);
  return exchange_remote(send, row_bytes);
}

ByteView ExchangePlan::exchange_reverse_remote(const ByteView& reply, std::size_t row_bytes) const {
  return route(reply, recv_counts_, recv_offsets_, send_counts_, send_offsets_, num_send(), row_bytes, false);
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
                              std::size_t row_bytes) {
  const std::size_t n = static_cast<std::size_t>(comm.size());
  const int me = comm.rank();
  // Every peer gets this rank's whole block (send ranges may overlap); each peer's
  // block arrives at its offset. Nothing to or from self.
  Counts scounts(n, layout.count(me)), soffs(n + 1, 0), rcounts(n), roffs(n + 1);
  for (std::size_t r = 0; r < n; ++r) {
    rcounts[r] = layout.count(static_cast<int>(r));
    roffs[r] = layout.offset(static_cast<int>(r));
  }
  roffs[n] = layout.total();
  scounts[static_cast<std::size_t>(me)] = 0;
  rcounts[static_cast<std::size_t>(me)] = 0;
  if (static_cast<std::size_t>(layout.count(me)) * row_bytes > block.extent(0) ||
      static_cast<std::size_t>(layout.total()) * row_bytes > all.extent(0))
    throw InternalError("replicate_blocks: buffers smaller than the layout");
  ExecSpace().fence();  // kernels that filled `block` must be done before MPI reads it
  move_rows(comm, block, all, scounts, soffs, rcounts, roffs, row_bytes);
  return layout.count(me) * static_cast<std::int64_t>(row_bytes) * (comm.size() - 1);
}

}  // namespace shardops
