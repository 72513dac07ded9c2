#include <Kokkos_Core.hpp>
#include <algorithm>

#include "shardops/core/Dispatch.hpp"
#include "shardops/kernels/Assign.hpp"
#include "shardops/kernels/FindWhere.hpp"
#include "shardops/kernels/StringKernels.hpp"
#include "shardops/ops/Ops.hpp"

namespace shardops {

namespace {

// Stitch target of element i: the index itself; negative ones are skipped.
struct StitchTarget {
  const std::int32_t* ids;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const { return ids[i] < 0 ? -1 : ids[i]; }
};

std::int64_t max_index(const std::vector<Tensor>& indices) {
  std::int64_t result = -1;
  for (const Tensor& t : indices) result = std::max(result, max_int32(t));
  return result;
}

}  // namespace

Tensor dynamic_stitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data_in,
                      const OpOptions& options) {
  kx::ScopedRegion region("shardops::DynamicStitch");
  const int n = static_cast<int>(indices.size());
  for (int m = 0; m < n; ++m)
    expect_dtype("DynamicStitch", m, DType::Int32, indices[static_cast<std::size_t>(m)].dtype());
  for (std::size_t m = 1; m < data_in.size(); ++m)
    expect_dtype("DynamicStitch", n + static_cast<int>(m), data_in[0].dtype(), data_in[m].dtype());
  // String inputs: handles of every data[m] into one pool, so rows of any input can be merged.
  const bool strings = !data_in.empty() && is_string(data_in[0].dtype());
  const std::vector<Tensor> data = strings ? share_string_pool(data_in) : data_in;

  const ExecSpace space;
  std::vector<Shape> index_shapes, data_shapes;
  for (const Tensor& t : indices) index_shapes.push_back(t.shape());
  for (const Tensor& t : data) data_shapes.push_back(t.shape());
  const std::int64_t max_idx = max_index(indices);

  // TF checks the index values before the data shapes (CheckArgsAndAllocateResult).
  for (std::size_t m = 0; m < indices.size(); ++m) {
    const Tensor& t = indices[m];
    const std::int32_t* ids = reinterpret_cast<const std::int32_t*>(t.data());
    auto negative = KOKKOS_LAMBDA(const std::int64_t i) { return ids[i] < 0; };
    const std::int64_t bad =
        kernels::first_where(space, t.num_elements(), negative, "shardops::DynamicStitch::validate");
    if (bad >= 0 && options.bad_indices == BadIndices::Error)
      throw InvalidArgument(stitch_index_error(bad), "indices[" + std::to_string(m) + "]");
  }
  const StitchGeometry g = check_dynamic_stitch(index_shapes, data_shapes, max_idx);

  // Every row is written once: by its last writer, or as zeros by zero_unclaimed().
  Tensor merged(data[0].dtype(), g.output, Init::Uninitialized, "shardops::DynamicStitch::merged");
  if (strings) merged = merged.with_strings(data[0].strings());
  const std::size_t row_bytes = static_cast<std::size_t>(g.slice_size) * merged.itemsize();
  if (row_bytes == 0 || g.first_dim == 0) return merged;
  std::size_t selector = word_selector(row_bytes, {merged.data()});
  for (const Tensor& t : data) selector = word_selector(selector, {t.data()});
  dispatch_word(selector, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    kernels::LastWriterAssign<ExecSpace, W> assign(space, merged.matrix<W>(g.first_dim, words), options.schedule,
                                                   kernels::UnnamedRows::Zero);
    std::int64_t key = 0;
    for (std::size_t m = 0; m < indices.size(); ++m) {
      const StitchTarget target{reinterpret_cast<const std::int32_t*>(indices[m].data())};
      assign.claim(g.rows[m], target, kernels::ConsecutiveKeys{key}, data[m].matrix<const W>(g.rows[m], words));
      key += g.rows[m];
    }
    assign.zero_unclaimed();
    key = 0;
    for (std::size_t m = 0; m < indices.size(); ++m) {
      const StitchTarget target{reinterpret_cast<const std::int32_t*>(indices[m].data())};
      assign.copy_winners(g.rows[m], target, kernels::ConsecutiveKeys{key}, data[m].matrix<const W>(g.rows[m], words));
      key += g.rows[m];
    }
  });
  space.fence();
  return merged;
}

}  // namespace shardops
