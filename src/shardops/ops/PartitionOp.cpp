#include "shardops/core/Dispatch.hpp"
#include "shardops/kernels/Partition.hpp"
#include "shardops/ops/Ops.hpp"

namespace shardops {

std::vector<Tensor> dynamic_partition(const Tensor& data, const Tensor& partitions, std::int64_t num_partitions,
                                      const OpOptions& options) {
  kx::ScopedRegion region("shardops::DynamicPartition");
  expect_dtype("DynamicPartition", 1, DType::Int32, partitions.dtype());
  const PartitionGeometry g = check_dynamic_partition(data.shape(), partitions.shape(), num_partitions);
  const ExecSpace space;
  const auto ids = partitions.flat<const std::int32_t>();

  if (options.bad_indices == BadIndices::Error) {
    const std::int64_t bad = kernels::first_bad_partition(space, ids, g.num_partitions);
    if (bad >= 0) {
      const std::int32_t value =
          partitions.reshaped(Shape{g.num_rows}).slice_rows(bad, bad + 1).to_vector<std::int32_t>()[0];
      throw InvalidArgument(partition_index_error(partitions.shape(), bad, value, g.num_partitions), "partitions");
    }
  }

  const auto layout = kernels::partition_layout(space, ids, g.num_partitions);
  Tensor grouped(data.dtype(), g.slice_shape.prepend(layout.total), Init::Uninitialized,
                 "shardops::DynamicPartition::outputs");
  if (is_string(data.dtype())) grouped = grouped.with_strings(data.strings());  // handles move, bytes stay
  const std::size_t row_bytes = static_cast<std::size_t>(g.slice_size) * data.itemsize();
  dispatch_word(word_selector(row_bytes, {data.data(), grouped.data()}), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    kernels::partition_rows<ExecSpace, W>(space, layout, ids, g.num_partitions, data.matrix<const W>(g.num_rows, words),
                                          grouped.matrix<W>(layout.total, words));
  });
  space.fence();

  auto begin = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), layout.bucket_begin);
  std::vector<Tensor> outputs;
  outputs.reserve(static_cast<std::size_t>(g.num_partitions));
  for (int p = 0; p < g.num_partitions; ++p) outputs.push_back(grouped.slice_rows(begin(p), begin(p + 1)));
  return outputs;
}

}  // namespace shardops
