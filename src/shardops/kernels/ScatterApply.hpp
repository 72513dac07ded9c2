#pragma once
/// \file
/// \brief The apply step of the scatter family on type-erased tensors, shared by the
/// one-rank ops and the owner side of the distributed ops.

#include <cstdint>
#include <type_traits>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/kernels/Accumulate.hpp"
#include "shardops/kernels/Assign.hpp"
#include "shardops/kernels/Combine.hpp"
#include "shardops/kernels/Validation.hpp"

namespace shardops {

template <class T>
struct IsComplex : std::false_type {};
template <class R>
struct IsComplex<Kokkos::complex<R>> : std::true_type {};

/// \brief Applies \p n update rows to \p out ([out_rows, slice] elements) in row
/// order: row i goes to out row target(i) (-1: skipped).
template <class TargetOf>
void scatter_apply(const ExecSpace& space, ScatterOp op, Schedule schedule, std::int64_t n, const TargetOf& target,
                   const Tensor& updates, const Tensor& out, std::int64_t out_rows, std::int64_t slice) {
  if (n == 0 || slice == 0) return;
  if (op == ScatterOp::Update) {
    const std::size_t row_bytes = static_cast<std::size_t>(slice) * out.itemsize();
    dispatch_word(word_selector(row_bytes, {updates.data(), out.data()}), [&](auto wtag) {
      using W = typename decltype(wtag)::type;
      const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
      kernels::LastWriterAssign<ExecSpace, W> assign(space, out.matrix<W>(out_rows, words), schedule);
      const auto src = updates.matrix<const W>(n, words);
      assign.claim(n, target, kernels::ConsecutiveKeys{0}, src);
      assign.copy_winners(n, target, kernels::ConsecutiveKeys{0}, src);
    });
    return;
  }
  dispatch_dtype(out.dtype(), [&](auto ttag) {
    using T = typename decltype(ttag)::type;
    const auto upd = updates.matrix<const T>(n, slice);
    const auto o = out.matrix<T>(out_rows, slice);
    switch (op) {
      case ScatterOp::ScatterNd:
      case ScatterOp::Add: kernels::accumulate_rows<kernels::CombineAdd>(space, schedule, n, target, upd, o); break;
      case ScatterOp::Sub: kernels::accumulate_rows<kernels::CombineSub>(space, schedule, n, target, upd, o); break;
      case ScatterOp::Min:
      case ScatterOp::Max:
        if constexpr (IsComplex<T>::value) {
          throw InternalError("scatter_apply: Min/Max on a complex dtype");  // rejected by check_scatter
        } else if (op == ScatterOp::Min) {
          kernels::accumulate_rows<kernels::CombineMin>(space, schedule, n, target, upd, o);
        } else {
          kernels::accumulate_rows<kernels::CombineMax>(space, schedule, n, target, upd, o);
        }
        break;
      case ScatterOp::Update: break;
    }
  });
}

}  // namespace shardops
