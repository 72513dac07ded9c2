#pragma once
/// \file
/// \brief Assign rows to target rows where the writer with the largest order key
/// wins: DynamicStitch, ParallelDynamicStitch and TensorScatterUpdate.
///
/// Sequential schedule (keys increase in call order): one in-order pass. Parallel
/// schedule (any key order): every target row records the largest key that writes
/// it — an atomic max of an integer, whose result does not depend on the order the
/// atomics run in — then the winning rows are copied. Both give the same bytes.
///
/// AssignBy::OutputRow turns the copy around: the claims (either schedule) only
/// record each target row's winning key, then write_rows() writes every output row
/// once, in order, from its winner or from a base. Random writes of whole rows (a
/// read for ownership and a write-back per row, repeated for every duplicate) become
/// random reads of the winners alone and a streamed output: worth it when the
/// updates are many for the output's rows (TensorScatterUpdate's dense case).

#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/core/Error.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Kokkos.hpp"
#include "shardops/kernels/BatchRows.hpp"
#include "shardops/kernels/RowCopy.hpp"
#include "shardops/kernels/Schedule.hpp"

namespace shardops {
namespace kernels {

/// Order key of row i of a batch: base + i.
struct ConsecutiveKeys {
  std::int64_t base;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const { return base + i; }
};

/// Order key of row i read from an array.
struct KeysFrom {
  const std::int64_t* keys;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const { return keys[i]; }
};

/// The sequential loops' look-ahead: the row of entry i + \p ahead's target (\p stride
/// elements of \p base per target row) prefetched for writing, so that random target rows
/// keep misses in flight.
template <class TargetOf, class T>
KOKKOS_INLINE_FUNCTION void prefetch_target_for_write(const TargetOf& target_of, std::int64_t i, std::int64_t n,
                                                      std::int64_t ahead, T* base, std::int64_t stride) {
  (void)base;  // device passes drop the prefetch
  (void)stride;
  if (i + ahead < n) {
    const std::int64_t tp = target_of(i + ahead);
    if (tp >= 0) SHARDOPS_PREFETCH_WRITE(base + tp * stride);
  }
}

/// What becomes of the output rows no batch names.
enum class UnnamedRows {
  Keep,  ///< they keep what the output held (TensorScatterUpdate: the input tensor)
  Zero,  ///< the output may start uninitialised: zero_unclaimed() zeros them (DynamicStitch)
};

/// How LastWriterAssign writes the output (see the file comment).
enum class AssignBy {
  Writer,     ///< each claim copies its rows (sequential) or copy_winners() does (parallel)
  OutputRow,  ///< claims record winners; write_rows() writes each output row once
};

/// \brief Where the row of an order key lies when the keys of up to K batches are
/// consecutive ranges: batch b holds keys [begin[b], begin[b + 1]) and its rows
/// start at rows[b] (\p words per row).
template <class W, int K>
struct KeyedRows {
  Kokkos::Array<std::int64_t, K> begin{};
  Kokkos::Array<const W*, K> rows{};
  int count = 0;
  std::int64_t words = 0;

  /// Appends the next batch: \p n keys after the previous batch's.
  void add(std::int64_t n, const W* first_row) {
    if (count == K) throw InternalError("KeyedRows: more batches than its capacity");
    begin[count] = count == 0 ? 0 : begin[count - 1] + last_n_;
    rows[count] = first_row;
    last_n_ = n;
    ++count;
  }
  /// Key of the next batch's first row.
  std::int64_t next_key() const { return count == 0 ? 0 : begin[count - 1] + last_n_; }

  KOKKOS_INLINE_FUNCTION const W* operator()(const std::int64_t key) const {
    int b = count - 1;
    while (b > 0 && key < begin[b]) --b;
    return rows[b] + (key - begin[b]) * words;
  }

 private:
  std::int64_t last_n_ = 0;
};

/// \brief Last-writer-wins assignment into \p out over one or more source batches.
/// A batch is n entries, target_of(i) (-1 = skip), key_of(i), the source matrix and
/// the row of it each entry reads (row_of(i), see BatchRows.hpp; all rows by default).
/// With the sequential schedule batches must be given in key order and keys must
/// increase within a batch.
template <class ExecSpace, class W>
class LastWriterAssign {
 public:
  using Mem = typename ExecSpace::memory_space;

  LastWriterAssign(const ExecSpace& space, const MatrixView<W, Mem>& out, Schedule schedule,
                   UnnamedRows unnamed = UnnamedRows::Keep, AssignBy by = AssignBy::Writer)
      : space_(space), out_(out), schedule_(resolve(schedule, space)), by_(by) {
    if (schedule_ == Schedule::Parallel || by_ == AssignBy::OutputRow) {
      winner_ =
          allocate_uninitialized<Kokkos::View<std::int64_t*, Mem>>("shardops::LastWriterAssign::winner", out.extent(0));
      Kokkos::deep_copy(space_, winner_, std::int64_t(-1));
    } else if (unnamed == UnnamedRows::Zero) {
      // One byte per target row, marked as rows are copied: far less to clear than
      // the rows themselves, which are then written once (by a writer or as zeros).
      named_ = Kokkos::View<unsigned char*, Mem>("shardops::LastWriterAssign::named", out.extent(0));
    }
  }

  Schedule schedule() const { return schedule_; }

  /// Sequential: copies the batch now. Parallel: records the batch's claims. Entry i
  /// reads row row_of(i) of \p src (see BatchRows.hpp). Returns how many entries had
  /// no target (-1: not counted, for rows of no elements), so a caller can check for
  /// bad indices without a pass of its own.
  template <class TargetOf, class KeyOf, class RowOf = SameRow>
  std::int64_t claim(std::int64_t n, const TargetOf& target_of, const KeyOf& key_of,
                     const MatrixView<const W, Mem>& src, const RowOf& row_of = RowOf()) {
    const std::int64_t words = static_cast<std::int64_t>(out_.extent(1));
    // Targets are checked at use too: one read from an input file's pages may differ from
    // the one validated (a program writing the file meanwhile).
    const std::int64_t rows = static_cast<std::int64_t>(out_.extent(0));
    if (n == 0) return 0;
    if (words == 0) return -1;
    W* dst = out_.data();
    const W* s = src.data();
    std::int64_t skipped = 0;
    if (schedule_ == Schedule::Sequential && by_ == AssignBy::OutputRow) {
      // Keys increase in call order: the last store to a row is its winner.
      auto winner = winner_;
      Kokkos::parallel_reduce(
          "shardops::LastWriterAssign::record", Kokkos::RangePolicy<ExecSpace>(space_, 0, 1),
          KOKKOS_LAMBDA(const std::int64_t, std::int64_t& none) {
            constexpr std::int64_t ahead = 32;  // random target rows: keep misses in flight
            for (std::int64_t i = 0; i < n; ++i) {
              prefetch_target_for_write(target_of, i, n, ahead, winner.data(), 1);
              const std::int64_t t = target_of(i);
              if (within(t, rows)) {
                winner(t) = key_of(i);
              } else {
                ++none;
              }
            }
          },
          skipped);
      return skipped;
    }
    if (schedule_ == Schedule::Sequential) {
      auto named = named_;
      const bool mark = named_.extent(0) > 0;
      Kokkos::parallel_reduce(
          "shardops::LastWriterAssign::sequential", Kokkos::RangePolicy<ExecSpace>(space_, 0, 1),
          KOKKOS_LAMBDA(const std::int64_t, std::int64_t& none) {
            constexpr std::int64_t ahead = 16;  // random target rows: keep misses in flight
            for (std::int64_t i = 0; i < n; ++i) {
              prefetch_target_for_write(target_of, i, n, ahead, dst, words);
              prefetch_source_row(row_of, i, n, ahead, s, words);
              const std::int64_t t = target_of(i);
              if (within(t, rows)) {
                copy_row(dst + t * words, s + row_of(i) * words, words);
                if (mark) named(t) = 1;
              } else {
                ++none;
              }
            }
          },
          skipped);
      return skipped;
    }
    auto winner = winner_;
    Kokkos::parallel_reduce(
        "shardops::LastWriterAssign::claim", Kokkos::RangePolicy<ExecSpace>(space_, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& none) {
          const std::int64_t t = target_of(i);
          if (within(t, rows)) {
            Kokkos::atomic_fetch_max(&winner(t), key_of(i));
          } else {
            ++none;
          }
        },
        skipped);
    return skipped;
  }

  /// After every claim: zeros each target row no batch claimed, so that the output
  /// may start uninitialised (each row is then written once: by its writer or here)
  /// instead of being zeroed whole and mostly overwritten. The sequential schedule
  /// needs UnnamedRows::Zero at construction (it marks the rows it writes).
  void zero_unclaimed() const {
    const std::int64_t words = static_cast<std::int64_t>(out_.extent(1));
    if (words == 0) return;
    if (by_ == AssignBy::OutputRow) throw InternalError("LastWriterAssign::zero_unclaimed: write_rows writes them");
    const bool parallel = schedule_ == Schedule::Parallel;
    if (!parallel && named_.extent(0) != out_.extent(0))
      throw InternalError("LastWriterAssign::zero_unclaimed: a sequential assign built without UnnamedRows::Zero");
    auto winner = winner_;
    auto named = named_;
    W* dst = out_.data();
    Kokkos::parallel_for(
        "shardops::LastWriterAssign::zero_unclaimed",
        Kokkos::RangePolicy<ExecSpace>(space_, 0, static_cast<std::int64_t>(out_.extent(0))),
        KOKKOS_LAMBDA(const std::int64_t t) {
          if (parallel ? winner(t) < 0 : named(t) == 0) zero_row(dst + t * words, words);
        });
  }

  /// Parallel schedule: copies the winning rows of a batch (call for every batch
  /// after all claims). Sequential: nothing left to do.
  template <class TargetOf, class KeyOf, class RowOf = SameRow>
  void copy_winners(std::int64_t n, const TargetOf& target_of, const KeyOf& key_of, const MatrixView<const W, Mem>& src,
                    const RowOf& row_of = RowOf()) {
    const std::int64_t words = static_cast<std::int64_t>(out_.extent(1));
    if (schedule_ != Schedule::Parallel || by_ != AssignBy::Writer || n == 0 || words == 0) return;
    const std::int64_t rows = static_cast<std::int64_t>(out_.extent(0));  // checked at use: see claim()
    auto winner = winner_;
    W* dst = out_.data();
    const W* s = src.data();
    Kokkos::parallel_for(
        "shardops::LastWriterAssign::copy", Kokkos::RangePolicy<ExecSpace>(space_, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i) {
          const std::int64_t t = target_of(i);
          if (within(t, rows) && winner(t) == key_of(i)) copy_row(dst + t * words, s + row_of(i) * words, words);
        });
  }

  /// AssignBy::OutputRow, after every claim: writes each output row once — its
  /// winner's row (found by \p source, see KeyedRows), else row t of \p base
  /// ([rows, words] like the output; null: zeros).
  template <class SourceOfKey>
  void write_rows(const SourceOfKey& source, const W* base) const {
    write_rows(source, base, 0, static_cast<std::int64_t>(out_.extent(0)), out_.data(), RowStores::Streaming);
  }

  /// write_rows() of the output rows [\p first, \p first + \p count) only, into \p dst
  /// (row \p first at \p dst): an output made a piece at a time, into a buffer that is
  /// written to a file next, takes RowStores::Cached, which leaves the piece in the caches
  /// for that write. The claims may then have been made on an output of no memory
  /// (data null): only its extents are read.
  template <class SourceOfKey>
  void write_rows(const SourceOfKey& source, const W* base, std::int64_t first, std::int64_t count, W* dst,
                  RowStores stores) const {
    const std::int64_t words = static_cast<std::int64_t>(out_.extent(1));
    if (by_ != AssignBy::OutputRow) throw InternalError("LastWriterAssign::write_rows: built with AssignBy::Writer");
    if (first < 0 || count < 0 || first + count > static_cast<std::int64_t>(out_.extent(0)))
      throw InternalError("LastWriterAssign::write_rows: rows beyond the output");
    if (words == 0 || count == 0) return;
    auto winner = winner_;
    const std::int64_t end = first + count;
    const bool streaming = stores == RowStores::Streaming;
    for_each_row_streaming(
        space_, "shardops::LastWriterAssign::write_rows", count, KOKKOS_LAMBDA(const std::int64_t i) {
          constexpr std::int64_t ahead = 32;  // the winners' rows are random: keep misses in flight
          const std::int64_t t = first + i;
          if (t + ahead < end) {
            const std::int64_t wa = winner(t + ahead);
            if (wa >= 0) {
              SHARDOPS_PREFETCH_ROW(source(wa), words);
            } else if (base != nullptr) {
              SHARDOPS_PREFETCH(base + (t + ahead) * words);  // sparse rows: the hardware's prefetch misses them
            }
          }
          const std::int64_t w = winner(t);
          const W* from = w >= 0 ? source(w) : base != nullptr ? base + t * words : nullptr;
          if (from == nullptr) {
            zero_row(dst + i * words, words);
          } else {
            store_row(dst + i * words, from, words, streaming);
          }
        });
  }

 private:
  ExecSpace space_;
  MatrixView<W, Mem> out_;
  Schedule schedule_;
  AssignBy by_;
  Kokkos::View<std::int64_t*, Mem> winner_;
  Kokkos::View<unsigned char*, Mem> named_;  ///< sequential, UnnamedRows::Zero: rows written
};

}  // namespace kernels
}  // namespace shardops
