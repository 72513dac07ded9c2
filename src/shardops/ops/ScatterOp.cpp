#include <type_traits>

#include "shardops/core/Dispatch.hpp"
#include "shardops/kernels/Accumulate.hpp"
#include "shardops/kernels/Assign.hpp"
#include "shardops/kernels/Combine.hpp"
#include "shardops/kernels/FindWhere.hpp"
#include "shardops/kernels/Gather.hpp"
#include "shardops/kernels/ScatterApply.hpp"
#include "shardops/kernels/StringKernels.hpp"
#include "shardops/ops/Ops.hpp"

namespace shardops {

namespace {

Tensor scatter_impl(ScatterOp op, const Tensor* tensor_in, const Tensor& indices, const Tensor& updates_in,
                    const std::vector<std::int64_t>& shape, const OpOptions& options) {
  const char* name = scatter_op_name(op);
  kx::ScopedRegion region(std::string("shardops::") + name);
  const DType dtype = tensor_in ? tensor_in->dtype() : updates_in.dtype();
  expect_scatter_dtypes(op, tensor_in != nullptr, dtype, indices.dtype(), updates_in.dtype(), options.bad_indices);
  const ScatterGeometry g = check_scatter(op, shape, indices.shape(), updates_in.shape());
  // TensorScatterUpdate on strings: the tensor's and the updates' handles into one pool.
  const bool strings = is_string(dtype);
  const std::vector<Tensor> shared =
      strings && tensor_in ? share_string_pool({*tensor_in, updates_in}) : std::vector<Tensor>{};
  const Tensor* tensor = shared.empty() ? tensor_in : &shared[0];
  const Tensor& updates = shared.empty() ? updates_in : shared[1];
  // TensorScatter*: scatter_apply writes the tensor's rows into the output itself.
  Tensor out = tensor ? tensor->uninitialized_like("shardops::TensorScatter::output")
                      : Tensor(dtype, g.output, Init::Zero, "shardops::ScatterNd::output");
  // ScatterNd's string output keeps the updates' string type, even when empty.
  if (strings && !tensor) out = out.with_strings(updates.strings());
  if (g.empty_output) return out;

  const ExecSpace space;
  dispatch_index(indices.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    const kernels::IndexRowTarget<I, MemSpace> target{reinterpret_cast<const I*>(indices.data()), g.index_depth,
                                                      kernels::IndexBounds::from(g.dims), 0};
    // The error policy, given the bad rows a kernel counted (-1: none did).
    const auto validate = [&](std::int64_t counted) {
      if (options.bad_indices != BadIndices::Error) return;
      const std::int64_t bad =
          kernels::last_bad_index_row(space, g.num_updates, target, "shardops::scatter::validate", counted);
      if (bad >= 0)
        throw InvalidArgument(scatter_index_error(g, bad, index_row_values(indices, bad, g.index_depth)), "indices");
    };
    if (strings && op == ScatterOp::ScatterNd) {
      validate(-1);
      // Duplicates concatenate in index order; the result gets a pool of its own.
      out = concat_strings_by_target(space, g.num_updates, target, updates.reshaped(Shape{g.num_updates, g.slice_size}),
                                     g.output, g.output_rows, g.slice_size, updates.strings().home);
      return;
    }
    // The apply counts the rows it skips (the bad ones) on the way; the output is this
    // call's own until it returns, so the error policy can act after it.
    validate(scatter_apply(space, op, options.schedule, options.denormals, tensor, out, g.output_rows, g.slice_size,
                           update_rows(g.num_updates, target, updates)));
  });
  space.fence();
  return out;
}

}  // namespace

Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const std::vector<std::int64_t>& shape,
                  const OpOptions& options) {
  return scatter_impl(ScatterOp::ScatterNd, nullptr, indices, updates, shape, options);
}

Tensor tensor_scatter(ScatterOp op, const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                      const OpOptions& options) {
  if (op == ScatterOp::ScatterNd) throw InternalError("tensor_scatter called with ScatterNd");
  return scatter_impl(op, &tensor, indices, updates, tensor.shape().dims(), options);
}

}  // namespace shardops
