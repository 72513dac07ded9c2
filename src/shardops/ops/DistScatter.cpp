#include <optional>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/kernels/FindWhere.hpp"
#include "shardops/kernels/Gather.hpp"
#include "shardops/kernels/StringKernels.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/ops/detail/DistCommon.hpp"
#include "shardops/ops/detail/ScatterApply.hpp"
#include "shardops/route/Route.hpp"
#include "shardops/route/StringExchange.hpp"

namespace shardops {

namespace {

DistTensor scatter_impl(const Comm& comm, ScatterOp op, const DistTensor* tensor, const DistTensor& indices,
                        const DistTensor& updates, const std::vector<std::int64_t>& shape, const OpOptions& options) {
  const char* name = scatter_op_name(op);
  kx::ScopedRegion region(std::string("shardops::") + name);
  const DType dtype = tensor ? tensor->dtype() : updates.dtype();
  expect_scatter_dtypes(op, tensor != nullptr, dtype, indices.dtype(), updates.dtype(), options.bad_indices);
  std::optional<ScopedPhase> phase(std::in_place, "validate");
  const ScatterGeometry g = check_scatter(op, shape, indices.shape(), updates.shape());
  const int me = comm.rank();
  const RowLayout out_layout = tensor ? tensor->layout() : RowLayout::balanced(g.output.dim(0), comm.size());
  // TensorScatter*: scatter_apply writes the tensor's rows into the output itself, all of
  // them (by output row, or a copy of the tensor first). ScatterNd's zeroed output is
  // faulted in at once when the updates will touch nearly all of it.
  const Tensor* base = tensor ? &tensor->local() : nullptr;
  Init zeros = Init::Zero;
  if (!tensor) {
    // Checked (the same text at any rank count) before the byte count is used.
    const std::int64_t out_bytes = tensor_bytes(g.output, dtype, "shardops::ScatterNd::output");
    if (updates_cover_output(g.num_updates, g.output_rows, out_bytes)) zeros = Init::ZeroDense;
  }
  Tensor out;
  run_agreed(comm, [&] {  // the output's block may fit on one rank and not on another
    out = tensor ? base->uninitialized_like("shardops::TensorScatter::output")
                 : Tensor(dtype, g.output.with_dim0(out_layout.count(me)), zeros, "shardops::ScatterNd::output");
  });
  record_bytes_sent(options, 0);
  // ScatterNd's string output keeps the updates' string type, even when empty.
  if (is_string(dtype) && !tensor) out = out.with_strings(updates.local().strings());
  if (g.empty_output) return DistTensor(out, g.output, out_layout, me);
  // ScatterNd on strings concatenates duplicates in index order instead of adding.
  const bool concat = is_string(dtype) && op == ScatterOp::ScatterNd;

  const ExecSpace space;
  const DistTensor upd = align_to(comm, updates, indices, options.route);
  const std::int64_t n = indices.local().num_elements() / g.index_depth;                           // local index rows
  const std::int64_t first_row = indices.row_offset() * (indices.row_elements() / g.index_depth);  // global index row
  const kernels::IndexBounds bounds = kernels::IndexBounds::from(g.dims);
  const std::int64_t rows_per_dim0 = bounds.strides[0];  // output rows per index of dim 0

  dispatch_index(indices.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    const I* idx = reinterpret_cast<const I*>(indices.local().data());
    const kernels::IndexRowTarget<I, MemSpace> linear{idx, g.index_depth, bounds, 0};
    // The error policy, given the bad rows the route counted (-1: not routed).
    const auto validate =
        bad_index_check(comm, space, options.bad_indices, n, linear, first_row, indices.local(),
                        "shardops::scatter::validate", [&g](std::int64_t row, const std::vector<std::int64_t>& values) {
                          return scatter_index_error(g, row, values);
                        });
    if (comm.size() == 1) {
      // One rank owns every row: apply in index order straight from the inputs
      // (nothing to route). The apply counts the rows it skips,
      // the bad ones, on the way, and the error policy acts after it (the output is
      // this call's own until it returns); strings validate first.
      if (concat) {
        validate(-1);
        phase.emplace("apply");
        out = concat_strings_by_target(space, n, linear, upd.local().reshaped(Shape{n, g.slice_size}), out.shape(),
                                       out_layout.count(me) * rows_per_dim0, g.slice_size, me);
        return;
      }
      phase.emplace("apply");
      const std::int64_t skipped =
          scatter_apply(space, op, options.schedule, options.denormals, base, out, out_layout.count(me) * rows_per_dim0,
                        g.slice_size, all_rows(n, linear, upd.local()));
      phase.emplace("validate");
      validate(skipped);
      return;
    }
    phase.emplace("route");
    // Each update goes to the owner of its first coordinate, to its row there.
    const Route route = route_by_first_coordinate(comm, space, "shardops::scatter::route", n, linear, out_layout,
                                                  rows_per_dim0, options.route, validate);
    const std::int64_t out_rows = out_layout.count(me) * rows_per_dim0;
    if (concat) {
      // Strings: every update row (own ones included) at its owner in global order, its
      // strings fetched from where they are held, then concatenated per target.
      const CollectedRows all = route.collect(upd.local(), g.slice_size);
      const Tensor received = fetch_strings(comm, all.rows, upd.local().strings(), options.route);
      record_bytes_sent(options, route.bytes_sent());
      phase.emplace("apply");
      out = concat_strings_by_target(space, all.rows.rows(),
                                     ReceivedRow{reinterpret_cast<const std::int64_t*>(all.targets.data())}, received,
                                     out.shape(), out_rows, g.slice_size, me);
      return;
    }
    const RootRows rows = route.reduce({upd.local()}, g.slice_size);
    record_bytes_sent(options, route.bytes_sent());
    phase.emplace("apply");
    // Each output row sees its updates in global order: the batches one after the other.
    rows.apply([&](const auto&... batches) {
      scatter_apply(space, op, options.schedule, options.denormals, base, out, out_rows, g.slice_size, batches...);
    });
  });
  space.fence();
  return DistTensor(out, g.output, out_layout, me);
}

}  // namespace

DistTensor scatter_nd(const Comm& comm, const DistTensor& indices, const DistTensor& updates,
                      const std::vector<std::int64_t>& shape, const OpOptions& options) {
  return scatter_impl(comm, ScatterOp::ScatterNd, nullptr, indices, updates, shape, options);
}

DistTensor tensor_scatter(const Comm& comm, ScatterOp op, const DistTensor& tensor, const DistTensor& indices,
                          const DistTensor& updates, const OpOptions& options) {
  if (op == ScatterOp::ScatterNd) throw InternalError("tensor_scatter called with ScatterNd");
  if (op == ScatterOp::Update && is_string(tensor.dtype()) && is_string(updates.dtype())) {
    // The updates' handles and the tensor's into one pool per rank; handles move,
    // then each rank fetches the strings it ends with.
    const std::vector<DistTensor> shared =
        share_dist_string_pool(comm, {tensor, updates}, {nullptr, &indices}, options.route);
    const DistTensor out = scatter_impl(comm, op, &shared[0], indices, shared[1], tensor.shape().dims(), options);
    return resolve_strings(comm, out, shared[0].local().strings(), options.route);
  }
  return scatter_impl(comm, op, &tensor, indices, updates, tensor.shape().dims(), options);
}

}  // namespace shardops
