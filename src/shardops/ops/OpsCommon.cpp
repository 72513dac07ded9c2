#include <string>

#include "shardops/core/Dispatch.hpp"
#include "shardops/ops/Ops.hpp"
#include "shardops/ops/detail/TfKernels.hpp"

namespace shardops {

void expect_dtype(const char* op, int input, DType expected, DType actual) {
  if (expected == actual) return;
  throw InvalidArgument(std::string("cannot compute ") + op + " as input #" + std::to_string(input) +
                        "(zero-based) was expected to be a " + tf_dtype_name(expected) + " tensor but is a " +
                        tf_dtype_name(actual) + " tensor");
}

void expect_scatter_dtypes(ScatterOp op, bool has_tensor, DType dtype, DType indices, DType updates,
                           BadIndices bad_indices) {
  const char* name = scatter_op_name(op);
  // TF's order: the Tindices attr, the kernel for (T, Tindices), then the inputs' dtypes.
  check_tf_kernel(name, dtype, indices, bad_indices);
  if (has_tensor) expect_dtype(name, 2, dtype, updates);
}

std::int64_t max_int32(const Tensor& ids) {
  const std::int32_t* p = reinterpret_cast<const std::int32_t*>(ids.data());
  std::int64_t m = -1;
  Kokkos::parallel_reduce(
      "shardops::max_int32", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, ids.num_elements()),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& v) {
        if (p[i] > v) v = p[i];
      },
      Kokkos::Max<std::int64_t>(m));
  return ids.num_elements() > 0 ? m : -1;
}

std::vector<std::int64_t> index_row_values(const Tensor& indices, std::int64_t row, int depth) {
  std::vector<std::int64_t> values(static_cast<std::size_t>(depth));
  if (depth == 0) return values;
  const Tensor one = indices.reshaped(Shape{indices.num_elements() / depth, depth}).slice_rows(row, row + 1);
  dispatch_index<IndexDTypes::WithInt16>(indices.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    const std::vector<I> host = one.to_vector<I>();
    for (int k = 0; k < depth; ++k)
      values[static_cast<std::size_t>(k)] = static_cast<std::int64_t>(host[static_cast<std::size_t>(k)]);
  });
  return values;
}

}  // namespace shardops
