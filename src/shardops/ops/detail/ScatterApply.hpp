#pragma once
/// \file
/// \brief The apply step of the scatter family on type-erased tensors (an op-level
/// dispatch over ScatterOp and the dtype onto the kernels), shared by the
/// one-rank ops and the owner side of the distributed ops.

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/kernels/Accumulate.hpp"
#include "shardops/kernels/Assign.hpp"
#include "shardops/kernels/Combine.hpp"
#include "shardops/ops/Validation.hpp"
#include "shardops/route/Route.hpp"

namespace shardops {

/// \brief Whether TensorScatterUpdate writes by output row (kernels::AssignBy): when
/// the updates are at least as many as the output's rows, each output row is
/// then written once, in order, instead of the updates writing random rows (and the
/// tensor's copy written first, then mostly overwritten).
inline bool update_by_output_row(std::int64_t updates, std::int64_t out_rows) { return updates >= out_rows; }

/// \brief Whether ScatterNd's updates are expected to touch nearly all of its zeroed
/// output, which is then faulted in at once (Init::ZeroDense) instead of page by page.
/// Updates land on rows; the smallest part one touches is a row, or a 4 KiB page where
/// a page holds several rows. With at least twice as many updates as such parts, spread
/// at random, about 86% of them or more are touched.
inline bool updates_cover_output(std::int64_t updates, std::int64_t out_rows, std::int64_t out_bytes) {
  constexpr std::int64_t kPage = 4096;
  const std::int64_t parts = std::min(out_rows, (out_bytes + kPage - 1) / kPage);
  return parts > 0 && updates / 2 >= parts;
}

/// \brief Whether a one-op job makes the scatter's output a piece at a time as it is
/// written (scatter_nd_lazy, tensor_scatter_lazy) rather than holding it: where the
/// updates are at most twice the output's rows. A piece is made from the updates that land
/// in it, read out of order (a random read per update, and a list entry of 8 bytes), where
/// the held op reads them in order and writes the output's rows at random into memory the
/// job touches for the first time. At two updates per row, streaming was as fast or faster
/// with a quarter of the memory; at four, the random reads cost more than the held output
/// (docs/performance-job.md, "Streamed outputs").
inline bool stream_scatter_output(std::int64_t updates, std::int64_t out_rows) { return (updates + 1) / 2 <= out_rows; }

namespace detail {

/// accumulate_rows with the combine of \p op, for element type T under rule \p D.
template <Denormals D, class T, class Target, class RowOf, class Upd, class Out>
std::int64_t accumulate_typed(const ExecSpace& space, ScatterOp op, Schedule schedule, std::int64_t n,
                              const Target& target, const Upd& upd, const Out& o, const RowOf& row_of) {
  switch (op) {
    case ScatterOp::ScatterNd:
    case ScatterOp::Add:
      return kernels::accumulate_rows<kernels::CombineAdd<D>>(space, schedule, n, target, upd, o, row_of);
    case ScatterOp::Sub:
      return kernels::accumulate_rows<kernels::CombineSub<D>>(space, schedule, n, target, upd, o, row_of);
    case ScatterOp::Min:
    case ScatterOp::Max:
      if constexpr (kernels::IsComplex<T>::value) {
        throw InternalError("scatter_apply: Min/Max on a complex dtype");  // TF has no kernel (TfKernels.hpp)
      } else if (op == ScatterOp::Min) {
        return kernels::accumulate_rows<kernels::CombineMin<D>>(space, schedule, n, target, upd, o, row_of);
      } else {
        return kernels::accumulate_rows<kernels::CombineMax<D>>(space, schedule, n, target, upd, o, row_of);
      }
    case ScatterOp::Update: break;
  }
  throw InternalError("accumulate_batch: TensorScatterUpdate assigns");
}

/// One batch of a scatter other than TensorScatterUpdate, in row order. Returns the
/// entries it skipped (-1: not counted).
template <class Batch>
std::int64_t accumulate_batch(const ExecSpace& space, ScatterOp op, Schedule schedule, Denormals denormals,
                              const Batch& batch, const Tensor& out, std::int64_t out_rows, std::int64_t slice) {
  const std::int64_t n = batch.n;
  const auto target = batch.target_of_entry();
  const auto& row_of = batch.row_of;
  if (n == 0) return 0;
  std::int64_t skipped = -1;
  dispatch_dtype(out.dtype(), [&](auto ttag) {
    using T = typename decltype(ttag)::type;
    const auto upd = batch.rows.template matrix<const T>(batch.source_rows, slice);
    const auto o = out.matrix<T>(out_rows, slice);
    // Types without subnormals to flush get one instantiation.
    if constexpr (kernels::HasFlushedSubnormals<T>::value) {
      if (denormals == Denormals::Flush) {
        skipped = accumulate_typed<Denormals::Flush, T>(space, op, schedule, n, target, upd, o, row_of);
        return;
      }
    }
    skipped = accumulate_typed<Denormals::Keep, T>(space, op, schedule, n, target, upd, o, row_of);
  });
  return skipped;
}

/// The skipped entries of several batches: their sum, or -1 if one was not counted.
inline std::int64_t add_skipped(std::int64_t a, std::int64_t b) { return a < 0 || b < 0 ? -1 : a + b; }

/// TensorScatterUpdate's claims of the batches on the rows of an output (\p out), in
/// batch order, the last writer of each row winning: by output row (\p by_row,
/// kernels::AssignBy::OutputRow) only recorded, for assign.write_rows(keyed, ...), where
/// keyed finds each winner's row among the batches' rows; else the winners' rows copied
/// into \p out. skipped: the entries without a target (-1: not counted).
template <class W, int K>
struct UpdateClaims {
  kernels::LastWriterAssign<ExecSpace, W> assign;
  kernels::KeyedRows<W, K> keyed;
  std::int64_t skipped = 0;
};

template <class W, class... Batch>
UpdateClaims<W, static_cast<int>(sizeof...(Batch))> claim_updates(const ExecSpace& space, Schedule schedule,
                                                                  const MatrixView<W, MemSpace>& out, bool by_row,
                                                                  const Batch&... batches) {
  const auto words = static_cast<std::int64_t>(out.extent(1));
  UpdateClaims<W, static_cast<int>(sizeof...(Batch))> c{
      kernels::LastWriterAssign<ExecSpace, W>(space, out, schedule, kernels::UnnamedRows::Keep,
                                              by_row ? kernels::AssignBy::OutputRow : kernels::AssignBy::Writer),
      {},
      0};
  c.keyed.words = words;
  const auto claim = [&](const auto& b) {
    const auto src = b.rows.template matrix<const W>(b.source_rows, words);
    const kernels::KeyOfEntry<std::decay_t<decltype(b.row_of)>> key{c.keyed.next_key(), b.row_of};
    c.skipped = add_skipped(c.skipped, c.assign.claim(b.n, b.target_of_entry(), key, src, b.row_of));
    if (!by_row) c.assign.copy_winners(b.n, b.target_of_entry(), key, src, b.row_of);
    c.keyed.add(b.source_rows, src.data());
  };
  (claim(batches), ...);
  return c;
}

/// TensorScatterUpdate: the last writer of each output row wins, in batch order.
/// Returns the entries skipped (-1: not counted).
template <class... Batch>
std::int64_t assign_batches(const ExecSpace& space, Schedule schedule, const Tensor* base, Tensor& out,
                            std::int64_t out_rows, std::int64_t slice, const Batch&... batches) {
  const std::int64_t total = (std::int64_t{0} + ... + batches.n);
  const std::size_t row_bytes = static_cast<std::size_t>(slice) * out.itemsize();
  const bool by_row = update_by_output_row(total, out_rows);
  if (!by_row && base) out.copy_from(*base);
  if (total == 0) return 0;  // (by_row needs updates: out_rows > 0 here)
  std::int64_t skipped = 0;
  dispatch_word(word_selector(row_bytes, {out.data(), base ? base->data() : nullptr, batches.rows.data()...}),
                [&](auto wtag) {
                  using W = typename decltype(wtag)::type;
                  const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
                  const auto c = claim_updates(space, schedule, out.matrix<W>(out_rows, words), by_row, batches...);
                  skipped = c.skipped;
                  if (by_row)
                    c.assign.write_rows(c.keyed, base ? base->matrix<const W>(out_rows, words).data() : nullptr);
                });
  return skipped;
}

}  // namespace detail

/// \brief The scatter family's apply step: \p out ([out_rows, slice] elements)
/// becomes \p base (null: \p out already holds ScatterNd's zeros) with the batches
/// (RootBatch, route/Route.hpp: a route's reduce hands them over in global order; or a
/// PieceBatch, ops/detail/PiecedBatches.hpp)
/// applied one after the other, each in row order. \p out may start uninitialised
/// when \p base is given. Returns how many entries had no target row (bad indices,
/// where the batches' targets give -1 only for those), counted on the way; -1 where
/// they were not counted (rows of no elements, an empty output). \p denormals: the
/// arithmetic ops' subnormal rule (core/TfFloat.hpp); TensorScatterUpdate only moves.
template <class... Batch>
std::int64_t scatter_apply(const ExecSpace& space, ScatterOp op, Schedule schedule, Denormals denormals,
                           const Tensor* base, Tensor& out, std::int64_t out_rows, std::int64_t slice,
                           const Batch&... batches) {
  if (slice == 0 || out_rows == 0) return -1;
  if (op == ScatterOp::Update) return detail::assign_batches(space, schedule, base, out, out_rows, slice, batches...);
  if (base) out.copy_from(*base);
  std::int64_t skipped = 0;
  ((skipped = detail::add_skipped(
        skipped, detail::accumulate_batch(space, op, schedule, denormals, batches, out, out_rows, slice))),
   ...);
  return skipped;
}

}  // namespace shardops
