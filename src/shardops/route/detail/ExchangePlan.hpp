#pragma once
/// \file
/// \brief Who sends which rows where, built once, used for several payloads: the engine
/// inside Route (route/Route.hpp), which the ops use instead of this.
///
/// Build: each local row gets a destination rank (or -1: not sent). Rows are packed
/// by destination with the stable bucket sort (kernels/BucketSort.hpp), so each
/// destination receives a source's rows in that source's local order; one
/// MPI_Alltoall exchanges the counts. A payload then moves with MPI_Alltoallv over a
/// row-sized datatype (counts are rows, never bytes), split into rounds if a count
/// or displacement would overflow int. Rows a rank sends to itself are copied, not
/// passed through MPI. Receive order: source rank 0's rows first, each source's rows
/// in its local order — for block-sharded tensors, global order. MPI gets MemSpace
/// buffers or host copies of them as GpuAwareMpi.hpp decides. forward() and
/// reply_remote() pack the rows for other ranks into a stage of at most 8 MB and send
/// it, round after round, straight into the receive buffer: a route holds its
/// receive buffer and the stage, not a whole packed copy of what it sends as well.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include "shardops/core/Error.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Kokkos.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/kernels/BucketSort.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/GpuAwareMpi.hpp"
#include "shardops/route/RowLayout.hpp"

namespace shardops {

/// Raw bytes in MemSpace.
using ByteView = Kokkos::View<unsigned char*, MemSpace>;

class ExchangePlan {
 public:
  ExchangePlan() = default;

  /// \brief Collective. \p dest_of(i) is the destination rank of local row i in
  /// [0, n), or -1 for a row that is not sent. Every exchange of the plan moves its
  /// buffers as \p route says.
  template <class DestOf>
  static ExchangePlan build(const Comm& comm, std::int64_t n, const DestOf& dest_of,
                            const RouteOptions& route = RouteOptions()) {
    const ExecSpace space;
    ExchangePlan plan;
    plan.route_options_ = route;
    plan.nranks_ = comm.size();
    plan.self_ = comm.rank();
    plan.num_rows_ = n;
    // Placing a row writes its index, and the ranks are few: chunks interleaved
    // (kernels/BucketSort.hpp) where so few that each stays a handful of output streams.
    const std::int64_t interleave = comm.size() <= 64 ? 4 : 1;
    auto layout = kernels::bucket_layout(space, n, comm.size(), dest_of, "shardops::ExchangePlan", interleave);
    // The local row in each send-buffer position: pack walks the send buffer in order and
    // reads each position's row. Its inverse (slots()) is made when a verb first needs it:
    // routes that only send rows one way never do, and for those that do, the placement
    // plus a pass of its own ran faster than the placement storing both (two stores per
    // row, one of them scattered).
    Kokkos::View<std::int64_t*, MemSpace> row_of_slot;
    run_agreed(comm, [&] {  // else a rank that cannot make it leaves the others waiting in finish()'s exchange
      row_of_slot = allocate_uninitialized<Kokkos::View<std::int64_t*, MemSpace>>(
          "shardops::ExchangePlan::row_of_slot", static_cast<std::size_t>(layout.total));
    });
    auto place = KOKKOS_LAMBDA(const std::int64_t i, const std::int64_t s) { row_of_slot(s) = i; };
    // Destinations worked out from an input file's pages can change between the passes
    // (another program writing the file), which fails on that rank alone: finish() tells
    // every rank in the exchange of counts it makes anyway.
    bool changed = false;
    try {
      kernels::bucket_place(space, layout, dest_of, place, "shardops::ExchangePlan");
    } catch (const IOError&) {
      changed = true;
    }
    space.fence();
    plan.row_of_slot_ = row_of_slot;
    auto begin = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), layout.bucket_begin);
    plan.finish(comm, begin.data(), changed);
    return plan;
  }

  int nranks() const noexcept { return nranks_; }
  /// Local rows the plan was built over.
  std::int64_t num_rows() const noexcept { return num_rows_; }
  /// Rows this rank sends (including to itself) / receives (including from itself).
  std::int64_t num_send() const noexcept { return send_offsets_.back(); }
  std::int64_t num_recv() const noexcept { return recv_offsets_.back(); }
  const std::vector<std::int64_t>& send_counts() const noexcept { return send_counts_; }
  const std::vector<std::int64_t>& send_offsets() const noexcept { return send_offsets_; }
  const std::vector<std::int64_t>& recv_counts() const noexcept { return recv_counts_; }
  const std::vector<std::int64_t>& recv_offsets() const noexcept { return recv_offsets_; }
  /// Send-buffer position of each local row (-1: not sent), made on the first call (and
  /// shared by the plan's copies).
  const Kokkos::View<std::int64_t*, MemSpace>& slots() const;
  /// The local row in each send-buffer position (num_send() of them, MemSpace): each
  /// destination's rows in increasing order.
  const std::int64_t* slot_rows() const noexcept { return row_of_slot_.data(); }

  /// Rows [first, first + count) of the plan's row space (given as \p rows), packed into \p send
  /// (num_send() x row_bytes). Several sources can fill one send buffer.
  void pack(const ByteView& send, std::int64_t first, const unsigned char* rows, std::int64_t count,
            std::size_t row_bytes) const;
  /// Collective: sends the packed rows, returns num_recv() x row_bytes in receive order.
  ByteView exchange(const ByteView& send, std::size_t row_bytes) const;
  /// Collective: the reverse route. \p reply has num_recv() rows in receive order;
  /// returns num_send() rows in send-buffer order (use unpack to put them back).
  ByteView exchange_reverse(const ByteView& reply, std::size_t row_bytes) const;
  /// out[i] = packed[slot(i)] for every local row; rows that were not sent are zeroed.
  void unpack(const ByteView& packed, unsigned char* out, std::size_t row_bytes) const;

  /// Convenience: pack all rows of \p local (n x row_bytes) and exchange.
  ByteView forward(const unsigned char* local, std::size_t row_bytes) const;

  /// \name Remote-only routes
  /// Rows a rank sends to itself need not move at all: the caller can read them in
  /// its own input (the local rows whose slot is in [send_offsets()[rank],
  /// send_offsets()[rank] + num_self())) and write their results itself. These calls
  /// neither pack nor copy them, and their buffers leave them out: a remote-only
  /// buffer holds the rows of the ranks below this one, then those of the ranks above
  /// it, so position x of the plain layout (outside the self segment) is at
  /// remote_position(x, send_offsets()[rank], num_self()) on the send side, with
  /// recv_offsets()[rank] on the receive side. Same collectives as the plain calls.
  /// @{
  /// Rows this rank sends to itself.
  std::int64_t num_self() const noexcept { return send_counts_[static_cast<std::size_t>(self_)]; }
  /// The local rows this rank sends to itself, num_self() of them in increasing
  /// order (MemSpace): a caller can visit just those rather than test every row.
  const std::int64_t* self_rows() const noexcept {
    return row_of_slot_.data() + send_offsets_[static_cast<std::size_t>(self_)];
  }
  /// Rows this rank sends to / receives from other ranks.
  std::int64_t num_send_remote() const noexcept { return num_send() - num_self(); }
  std::int64_t num_recv_remote() const noexcept { return num_recv() - num_self(); }
  /// Where each source rank's rows start in a remote-only receive buffer (nranks() + 1
  /// entries; this rank's segment is empty).
  const std::vector<std::int64_t>& remote_recv_offsets() const noexcept { return remote_recv_offsets_; }
  /// Position in a remote-only buffer of position \p s of the plain layout (not in the
  /// self segment [self_first, self_first + self_count)).
  KOKKOS_INLINE_FUNCTION static std::int64_t remote_position(std::int64_t s, std::int64_t self_first,
                                                             std::int64_t self_count) {
    return s < self_first ? s : s - self_count;
  }
  /// pack() into a remote-only send buffer (num_send_remote() x row_bytes).
  void pack_remote(const ByteView& send, std::int64_t first, const unsigned char* rows, std::int64_t count,
                   std::size_t row_bytes) const;
  /// exchange() of a remote-only send buffer: returns num_recv_remote() rows, those
  /// from ranks below this one first (recv_offsets()[rank] of them), then the rest.
  ByteView exchange_remote(const ByteView& send, std::size_t row_bytes) const;
  /// pack_remote() of all rows of \p local (n x row_bytes), then exchange_remote().
  ByteView forward_remote(const unsigned char* local, std::size_t row_bytes) const;
  /// exchange_reverse() from and to remote-only buffers: \p reply holds
  /// num_recv_remote() rows, the result num_send_remote().
  ByteView exchange_reverse_remote(const ByteView& reply, std::size_t row_bytes) const;
  /// unpack() of a remote-only buffer: leaves the rows sent to self untouched (the
  /// caller writes them).
  void unpack_remote(const ByteView& packed, unsigned char* out, std::size_t row_bytes) const;
  /// The owner's answer to requests, fused with exchange_reverse_remote(): \p asked is
  /// what forward_remote() brought of one int64 row number per request; each is
  /// answered with that row of \p table (rows of row_bytes) and sent back, a stage
  /// at a time. Returns num_send_remote() rows in remote-only send order.
  ByteView reply_remote(const unsigned char* table, const ByteView& asked, std::size_t row_bytes) const;
  /// @}

  /// \brief Collective: the reverse route for replies of varying size (strings).
  /// \p reply holds, in receive order, reply_bytes[r] bytes answering the rows
  /// received from rank r; \p back_bytes[r] is what this rank gets back from r
  /// (known from an earlier exchange_reverse of the sizes). Returns the bytes in
  /// send-buffer order. Counts are bytes here; rounds split as for rows.
  ByteView exchange_reverse_bytes(const ByteView& reply, const std::vector<std::int64_t>& reply_bytes,
                                  const std::vector<std::int64_t>& back_bytes) const;

  /// Bytes this rank sent to other ranks over all exchanges of this plan (for reports).
  std::int64_t bytes_sent() const noexcept { return *bytes_sent_; }
  /// Bytes this rank copied between MemSpace and host buffers for MPI (sent plus
  /// received rows, self rows excluded) over all exchanges of this plan: 0 unless
  /// the exchanges staged (see GpuAwareMpi.hpp).
  std::int64_t bytes_staged() const noexcept { return *bytes_staged_; }

  /// The settings the plan was built with.
  const RouteOptions& options() const noexcept { return route_options_; }

 private:
  // Collective: the counts to and from every rank. \p changed: this rank's placement found its
  // destinations changed between passes; then every rank throws IOError(input_changed_text()).
  void finish(const Comm& comm, const std::int64_t* bucket_begin, bool changed);
  ByteView route(const ByteView& send, const std::vector<std::int64_t>& scounts, const std::vector<std::int64_t>& soffs,
                 const std::vector<std::int64_t>& rcounts, const std::vector<std::int64_t>& roffs,
                 std::int64_t total_recv, std::size_t row_bytes) const;
  // [lo, hi): the slots a remote-only call skips (empty for the plain calls).
  std::int64_t self_lo(bool skip_self) const noexcept;
  std::int64_t self_hi(bool skip_self) const noexcept;
  void pack_rows(const ByteView& send, std::int64_t first, const unsigned char* rows, std::int64_t count,
                 std::size_t row_bytes, bool skip_self) const;
  // forward() / forward_remote(): the rows for other ranks streamed (stream_rows), or
  // packed whole and routed where they cannot be.
  ByteView forward_rows(const unsigned char* local, std::size_t row_bytes, bool skip_self) const;
  // Collective. Where every rank can (MPI reads MemSpace, receive positions fit an
  // int): sends each other rank r the rows src[source_row[k]] for k in [soffs[r],
  // soffs[r] + scounts[r]), packed a stage at a time, into a new buffer of total_recv
  // rows at roffs[r] (its self segment unwritten). Else nothing on every rank: the
  // caller packs whole and routes.
  std::optional<ByteView> stream_rows(const unsigned char* src, std::size_t row_bytes, const std::int64_t* source_row,
                                      const std::vector<std::int64_t>& scounts, const std::vector<std::int64_t>& soffs,
                                      const std::vector<std::int64_t>& rcounts, const std::vector<std::int64_t>& roffs,
                                      std::int64_t total_recv) const;
  void unpack_rows(const ByteView& packed, unsigned char* out, std::size_t row_bytes, bool skip_self) const;

  std::optional<Comm> comm_;
  RouteOptions route_options_;
  int nranks_ = 1, self_ = 0;
  std::int64_t num_rows_ = 0;
  /// slots(), once made.
  std::shared_ptr<std::optional<Kokkos::View<std::int64_t*, MemSpace>>> slot_ =
      std::make_shared<std::optional<Kokkos::View<std::int64_t*, MemSpace>>>();
  Kokkos::View<std::int64_t*, MemSpace> row_of_slot_;  ///< [num_send()]: the local row in each slot
  std::vector<std::int64_t> send_counts_{0}, send_offsets_{0}, recv_counts_{0}, recv_offsets_{0};
  // The same for remote-only buffers: no self rows (count 0, later ranks shifted down).
  std::vector<std::int64_t> remote_send_counts_{0}, remote_send_offsets_{0}, remote_recv_counts_{0},
      remote_recv_offsets_{0};
  std::shared_ptr<std::int64_t> bytes_sent_ = std::make_shared<std::int64_t>(0);
  std::shared_ptr<std::int64_t> bytes_staged_ = std::make_shared<std::int64_t>(0);
};

/// Where replicate_blocks() puts this rank's own block's place in the result.
enum class OwnBlock {
  InPlace,  ///< kept at its offset, unwritten (the caller copies the block there)
  LeftOut,  ///< left out: the rows of the ranks after this one follow those before it
};

/// \brief Collective: every other rank's block of rows lands in \p all at that rank's
/// offset in \p layout (less this rank's count after it, with OwnBlock::LeftOut); \p
/// block holds this rank's layout.count(rank) rows. Moved like a plan's payload: one
/// MPI_Alltoallv (every peer is sent the same rows), split in rounds when counts would
/// overflow, staged through host buffers when MPI cannot read MemSpace (as \p route
/// says). Returns the bytes this rank sent.
std::int64_t replicate_blocks(const Comm& comm, const RowLayout& layout, const ByteView& block, const ByteView& all,
                              std::size_t row_bytes, OwnBlock own, const RouteOptions& route = RouteOptions());

}  // namespace shardops
