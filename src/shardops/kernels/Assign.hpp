#pragma once
/// \file
/// \brief Assign rows to target rows where the last writer in index order wins:
/// DynamicStitch, ParallelDynamicStitch and TensorScatterUpdate.
///
/// Sequential schedule: one in-order pass. Parallel schedule: every target row
/// records the largest order key that writes it (atomic max of an integer, whose
/// result does not depend on the order the atomics run in), then the winning rows
/// are copied. Both give the same bytes.

#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/core/Kokkos.hpp"
#include "shardops/kernels/RowCopy.hpp"
#include "shardops/kernels/Schedule.hpp"

namespace shardops {
namespace kernels {

/// \brief Last-writer-wins assignment into \p out over one or more source batches
/// given in order. A batch is n rows, a target_of(i) functor (-1 = skip) and the
/// source matrix. For the parallel schedule, keys must grow across batches: batch
/// b's row i has key key_base + i.
template <class ExecSpace, class W>
class LastWriterAssign {
 public:
  using Mem = typename ExecSpace::memory_space;

  LastWriterAssign(const ExecSpace& space, const MatrixView<W, Mem>& out, Schedule schedule)
      : space_(space), out_(out), schedule_(resolve(schedule, space)) {
    if (schedule_ == Schedule::Parallel) {
      winner_ = Kokkos::View<std::int64_t*, Mem>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "shardops::LastWriterAssign::winner"), out.extent(0));
      Kokkos::deep_copy(space_, winner_, std::int64_t(-1));
    }
  }

  Schedule schedule() const { return schedule_; }

  /// Sequential: copies the batch now. Parallel: records the batch's claims.
  template <class TargetOf>
  void claim(std::int64_t n, const TargetOf& target_of, const MatrixView<const W, Mem>& src, std::int64_t key_base) {
    const std::int64_t words = static_cast<std::int64_t>(out_.extent(1));
    if (n == 0) return;
    if (schedule_ == Schedule::Sequential) {
      W* dst = out_.data();
      const W* s = src.data();
      Kokkos::parallel_for(
          "shardops::LastWriterAssign::sequential", Kokkos::RangePolicy<ExecSpace>(space_, 0, 1),
          KOKKOS_LAMBDA(const int) {
            for (std::int64_t i = 0; i < n; ++i) {
              const std::int64_t t = target_of(i);
              if (t >= 0) copy_row(dst + t * words, s + i * words, words);
            }
          });
      return;
    }
    auto winner = winner_;
    Kokkos::parallel_for(
        "shardops::LastWriterAssign::claim", Kokkos::RangePolicy<ExecSpace>(space_, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i) {
          const std::int64_t t = target_of(i);
          if (t >= 0) Kokkos::atomic_fetch_max(&winner(t), key_base + i);
        });
  }

  /// Parallel schedule only: copies the winning rows of a batch (call for every
  /// batch after all claims).
  template <class TargetOf>
  void copy_winners(std::int64_t n, const TargetOf& target_of, const MatrixView<const W, Mem>& src,
                    std::int64_t key_base) {
    if (schedule_ != Schedule::Parallel || n == 0) return;
    const std::int64_t words = static_cast<std::int64_t>(out_.extent(1));
    auto winner = winner_;
    W* dst = out_.data();
    const W* s = src.data();
    Kokkos::parallel_for(
        "shardops::LastWriterAssign::copy", Kokkos::RangePolicy<ExecSpace>(space_, 0, n),
        KOKKOS_LAMBDA(const std::int64_t i) {
          const std::int64_t t = target_of(i);
          if (t >= 0 && winner(t) == key_base + i) copy_row(dst + t * words, s + i * words, words);
        });
  }

 private:
  ExecSpace space_;
  MatrixView<W, Mem> out_;
  Schedule schedule_;
  Kokkos::View<std::int64_t*, Mem> winner_;
};

}  // namespace kernels
}  // namespace shardops
