#include <optional>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/kernels/Partition.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/ops/detail/DistCommon.hpp"

namespace shardops {

namespace {

/// This rank's rows of \p data grouped by their partition in \p partitions (already
/// validated), each group in row order: one output tensor per partition, slices of
/// one buffer.
std::vector<Tensor> partition_here(const Tensor& data, const Tensor& partitions, const PartitionGeometry& g) {
  const ExecSpace space;
  const auto ids = partitions.flat<const std::int32_t>();
  const auto layout = kernels::partition_layout(space, ids, g.num_partitions);
  Tensor grouped(data.dtype(), g.slice_shape.prepend(layout.total), Init::Uninitialized,
                 "shardops::DynamicPartition::outputs");
  if (is_string(data.dtype())) grouped = grouped.with_strings(data.strings());  // handles move, bytes stay
  const std::size_t row_bytes = static_cast<std::size_t>(g.slice_size) * data.itemsize();
  const std::int64_t rows = partitions.num_elements();
  dispatch_word(word_selector(row_bytes, {data.data(), grouped.data()}), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    kernels::partition_rows<ExecSpace, W>(space, layout, ids, g.num_partitions, data.matrix<const W>(rows, words),
                                          grouped.matrix<W>(layout.total, words));
  });
  space.fence();
  auto begin = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), layout.bucket_begin);
  std::vector<Tensor> outputs;
  outputs.reserve(static_cast<std::size_t>(g.num_partitions));
  for (int p = 0; p < g.num_partitions; ++p) outputs.push_back(grouped.slice_rows(begin(p), begin(p + 1)));
  return outputs;
}

}  // namespace

std::vector<DistTensor> dynamic_partition(const Comm& comm, const DistTensor& data, const DistTensor& partitions,
                                          std::int64_t num_partitions, const OpOptions& options) {
  kx::ScopedRegion region("shardops::DynamicPartition");
  record_bytes_sent(options, 0);
  std::optional<ScopedPhase> phase(std::in_place, "validate");
  expect_dtype("DynamicPartition", 1, DType::Int32, partitions.dtype());
  const PartitionGeometry g = check_dynamic_partition(data.shape(), partitions.shape(), num_partitions);
  check_tensor_count(comm, num_partitions,
                     "num_partitions " + std::to_string(num_partitions) + " (one output tensor each)");
  const DistTensor aligned = align_to(comm, data, partitions, options.route);
  const Tensor& ids = partitions.local();
  const std::int64_t local_rows = ids.num_elements();  // a scalar: 1 on rank 0, 0 elsewhere

  if (options.bad_indices == BadIndices::Error) {
    const ExecSpace space;
    const std::int64_t bad =
        local_rows == 0 ? -1 : kernels::first_bad_partition(space, ids.flat<const std::int32_t>(), g.num_partitions);
    std::string message;
    std::int64_t global = 0;
    if (bad >= 0) {
      global = partitions.row_offset() * partitions.row_elements() + bad;
      const std::int32_t value =
          ids.reshaped(Shape{ids.num_elements()}).slice_rows(bad, bad + 1).to_vector<std::int32_t>()[0];
      message = partition_index_error(partitions.shape(), global, value, g.num_partitions);
    }
    agree_index_error(comm, bad >= 0, global, message, "partitions");
  }

  phase.emplace("apply");
  // The local rows are partitioned where they are: no data moves between ranks.
  std::vector<Tensor> local;
  run_agreed(comm, [&] {  // the outputs' memory may fit on one rank and not on another
    if (local_rows > 0) {
      local = partition_here(aligned.local(), ids, g);
    } else {
      for (int p = 0; p < g.num_partitions; ++p) {
        local.emplace_back(data.dtype(), g.slice_shape.prepend(0));
        // No rows here, but the string type (fixed or variable length) still travels.
        if (is_string(data.dtype())) local.back() = local.back().with_strings(aligned.local().strings());
      }
    }
  });
  std::vector<std::int64_t> counts(static_cast<std::size_t>(g.num_partitions));
  for (int p = 0; p < g.num_partitions; ++p)
    counts[static_cast<std::size_t>(p)] = local[static_cast<std::size_t>(p)].rows();
  const std::vector<std::int64_t> all = comm.allgather(counts);  // rank-major

  std::vector<DistTensor> outputs;
  for (int p = 0; p < g.num_partitions; ++p) {
    std::vector<std::int64_t> per_rank(static_cast<std::size_t>(comm.size()));
    for (int r = 0; r < comm.size(); ++r) {
      per_rank[static_cast<std::size_t>(r)] =
          all[static_cast<std::size_t>(r) * counts.size() + static_cast<std::size_t>(p)];
    }
    RowLayout layout(per_rank);
    outputs.emplace_back(local[static_cast<std::size_t>(p)], g.slice_shape.prepend(layout.total()), layout,
                         comm.rank());
  }
  return outputs;
}

}  // namespace shardops
