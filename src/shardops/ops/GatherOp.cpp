#include "shardops/core/Dispatch.hpp"
#include "shardops/kernels/FindWhere.hpp"
#include "shardops/kernels/Gather.hpp"
#include "shardops/ops/Ops.hpp"
#include "shardops/ops/TfKernels.hpp"

namespace shardops {

Tensor gather_nd(const Tensor& params, const Tensor& indices, const OpOptions& options) {
  kx::ScopedRegion region("shardops::GatherNd");
  check_tf_kernel("GatherNd", params.dtype(), indices.dtype(), options.bad_indices);
  const GatherGeometry g = check_gather_nd(params.shape(), indices.shape());
  Tensor out(params.dtype(), g.output, Init::Uninitialized, "shardops::GatherNd::output");
  if (is_string(params.dtype())) out = out.with_strings(params.strings());
  const std::size_t row_bytes = static_cast<std::size_t>(g.slice_size) * params.itemsize();
  if (g.num_slices == 0 || row_bytes == 0) return out;

  const ExecSpace space;
  dispatch_index<IndexDTypes::WithInt16>(indices.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    const kernels::IndexRowTarget<I, MemSpace> row_of{reinterpret_cast<const I*>(indices.data()), g.index_depth,
                                                      kernels::IndexBounds::from(g.dims), 0};
    // Gather first: a bad index gives a zero row and is counted; only then, and only
    // under the error policy, find the one to report (the output is dropped).
    std::int64_t zeroed = 0;
    dispatch_word(word_selector(row_bytes, {params.data(), out.data()}), [&](auto wtag) {
      using W = typename decltype(wtag)::type;
      const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
      zeroed =
          kernels::gather_rows<ExecSpace, W>(space, g.num_slices, row_of, params.matrix<const W>(g.params_rows, words),
                                             out.matrix<W>(g.num_slices, words));
    });
    if (options.bad_indices == BadIndices::Error) {
      const std::int64_t bad =
          kernels::last_bad_index_row(space, g.num_slices, row_of, "shardops::GatherNd::validate", zeroed);
      if (bad >= 0)
        throw InvalidArgument(gather_index_error(g, bad, index_row_values(indices, bad, g.index_depth)), "indices");
    }
  });
  space.fence();
  return out;
}

}  // namespace shardops
