#include <memory>
#include <optional>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/kernels/BatchRows.hpp"
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

// dynamic_partition's inputs, checked: its geometry, and data in the partitions' layout.
struct PartitionInputs {
  PartitionGeometry g;
  DistTensor data;
};

// The checks of dynamic_partition (collective, agreed): dtypes, shapes, the output
// count, every id under BadIndices::Error.
PartitionGeometry check_partition(const Comm& comm, const DistTensor& data, const DistTensor& partitions,
                                  std::int64_t num_partitions, const OpOptions& options) {
  expect_dtype("DynamicPartition", 1, DType::Int32, partitions.dtype());
  const PartitionGeometry g = check_dynamic_partition(data.shape(), partitions.shape(), num_partitions);
  check_tensor_count(comm, num_partitions,
                     "num_partitions " + std::to_string(num_partitions) + " (one output tensor each)");
  if (options.bad_indices != BadIndices::Error) return g;
  const Tensor& ids = partitions.local();
  const ExecSpace space;
  const std::int64_t bad = ids.num_elements() == 0
                               ? -1
                               : kernels::first_bad_partition(space, ids.flat<const std::int32_t>(), g.num_partitions);
  std::string message;
  std::int64_t global = 0;
  bool changed = false;  // the id is in range when read again (agree_index_error)
  if (bad >= 0) {
    global = partitions.row_offset() * partitions.row_elements() + bad;
    const std::int32_t value =
        ids.reshaped(Shape{ids.num_elements()}).slice_rows(bad, bad + 1).to_vector<std::int32_t>()[0];
    message = partition_index_error(partitions.shape(), global, value, g.num_partitions);
    changed = kernels::within(value, g.num_partitions);
  }
  agree_index_error(comm, bad >= 0, global, message, "partitions", changed);
  return g;
}

// Collective: the op's start, timed in \p phase: check_partition and data moved to the
// partitions' layout ("validate"); \p phase is "apply" on return.
PartitionInputs start_partition(const Comm& comm, const DistTensor& data, const DistTensor& partitions,
                                std::int64_t num_partitions, const OpOptions& options,
                                std::optional<ScopedPhase>& phase) {
  agree_on_op(comm, "DynamicPartition",
              "data=" + call_text(comm, data) + " partitions=" + call_text(comm, partitions) +
                  " num_partitions=" + std::to_string(num_partitions),
              options);
  record_bytes_sent(options, 0);
  phase.emplace("validate");
  const PartitionGeometry g = check_partition(comm, data, partitions, num_partitions, options);
  PartitionInputs in{g, align_to(comm, data, partitions, options.route)};
  phase.emplace("apply");
  return in;
}

// Collective: the layout of each output, from this rank's count of rows per partition
// (each rank's block of output p is its own rows of partition p).
std::vector<RowLayout> output_layouts(const Comm& comm, const std::vector<std::int64_t>& counts) {
  const std::vector<std::int64_t> all = comm.allgather(counts);  // rank-major
  std::vector<RowLayout> layouts;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    std::vector<std::int64_t> per_rank(static_cast<std::size_t>(comm.size()));
    for (int r = 0; r < comm.size(); ++r) per_rank[static_cast<std::size_t>(r)] = all[r * counts.size() + p];
    layouts.emplace_back(per_rank);
  }
  return layouts;
}

// Calls f(TypeTag<I>{}) with I the integer the partition order is listed in: 32-bit where
// every local row number fits (half the fresh memory), else 64-bit.
template <class F>
void dispatch_order(bool narrow, F&& f) {
  if (narrow)
    f(TypeTag<std::uint32_t>{});
  else
    f(TypeTag<std::int64_t>{});
}

// Rows [first, first + n) of a grouped output: the rows of \p data that \p listed names.
template <class Index>
void gather_listed(const unsigned char* data, std::int64_t data_rows, std::size_t row_bytes, const Index* listed,
                   std::int64_t n, unsigned char* out) {
  const ExecSpace space;
  dispatch_word(word_selector(row_bytes, {data, out}), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const auto words = static_cast<std::size_t>(row_bytes / sizeof(W));
    kernels::gather_rows<ExecSpace, W>(
        space, n, kernels::ListedRows<Index>{listed, 0},
        MatrixView<const W>(reinterpret_cast<const W*>(data), static_cast<std::size_t>(data_rows), words),
        MatrixView<W>(reinterpret_cast<W*>(out), static_cast<std::size_t>(n), words), kernels::RowStores::Cached);
  });
  space.fence();
}

}  // namespace

std::vector<DistTensor> dynamic_partition(const Comm& comm, const DistTensor& data, const DistTensor& partitions,
                                          std::int64_t num_partitions, const OpOptions& options) {
  kx::ScopedRegion region("shardops::DynamicPartition");
  std::optional<ScopedPhase> phase;
  const PartitionInputs in = start_partition(comm, data, partitions, num_partitions, options, phase);
  const PartitionGeometry& g = in.g;
  const Tensor& ids = partitions.local();  // a scalar: 1 id on rank 0, none elsewhere
  // The local rows are partitioned where they are: no data moves between ranks.
  std::vector<Tensor> local;
  run_agreed(comm, [&] {  // the outputs' memory may fit on one rank and not on another
    if (ids.num_elements() > 0) {
      local = partition_here(in.data.local(), ids, g);
    } else {
      for (int p = 0; p < g.num_partitions; ++p) {
        local.emplace_back(data.dtype(), g.slice_shape.prepend(0));
        // No rows here, but the string type (fixed or variable length) still travels.
        if (is_string(data.dtype())) local.back() = local.back().with_strings(in.data.local().strings());
      }
    }
  });
  std::vector<std::int64_t> counts;
  for (const Tensor& t : local) counts.push_back(t.rows());
  const std::vector<RowLayout> layouts = output_layouts(comm, counts);
  std::vector<DistTensor> outputs;
  for (int p = 0; p < g.num_partitions; ++p) {
    const RowLayout& layout = layouts[static_cast<std::size_t>(p)];
    outputs.emplace_back(local[static_cast<std::size_t>(p)], g.slice_shape.prepend(layout.total()), layout,
                         comm.rank());
  }
  return outputs;
}

std::vector<LazyTensor> dynamic_partition_lazy(const Comm& comm, const DistTensor& data, const DistTensor& partitions,
                                               std::int64_t num_partitions, const OpOptions& options) {
  // Rows made later are fixed-size rows in host memory, of a rank >= 1 partitions tensor
  // (a scalar one sends all of data to one output whole). The same answer on every rank.
  const bool lazy = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible && !is_string(data.dtype()) &&
                    partitions.shape().rank() > 0 && data.shape().rank() > 0 &&
                    data.shape().product_from(partitions.shape().rank()) > 0;
  if (!lazy) {
    std::vector<LazyTensor> held;
    for (DistTensor& t : dynamic_partition(comm, data, partitions, num_partitions, options))
      held.emplace_back(std::move(t));
    return held;
  }
  kx::ScopedRegion region("shardops::DynamicPartition");
  std::optional<ScopedPhase> phase;
  const PartitionInputs in = start_partition(comm, data, partitions, num_partitions, options, phase);
  const PartitionGeometry& g = in.g;
  const Tensor& ids = partitions.local();  // a scalar: 1 id on rank 0, none elsewhere
  // Only the order is worked out now: which local row goes to each slot of the outputs,
  // one after the other. The rows themselves are copied when each output is written. The
  // order is listed in 32-bit row numbers where they fit: half the fresh memory.
  const bool narrow = ids.num_elements() <= kernels::kMaxListed32;
  Tensor listed;
  std::vector<std::int64_t> begin(static_cast<std::size_t>(g.num_partitions) + 1, 0);
  run_agreed(comm, [&] {
    if (ids.num_elements() == 0) return;
    const ExecSpace space;
    const auto flat = ids.flat<const std::int32_t>();
    const auto layout = kernels::partition_layout(space, flat, g.num_partitions);
    listed = Tensor(narrow ? DType::UInt32 : DType::Int64, Shape{layout.total}, Init::Uninitialized,
                    "shardops::DynamicPartition::order");
    dispatch_order(narrow, [&](auto itag) {
      using I = typename decltype(itag)::type;
      kernels::list_partition_rows(space, layout, flat, g.num_partitions, reinterpret_cast<I*>(listed.data()));
    });
    space.fence();
    auto starts = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), layout.bucket_begin);
    for (int p = 0; p <= g.num_partitions; ++p) begin[static_cast<std::size_t>(p)] = starts(p);
  });
  std::vector<std::int64_t> counts;
  for (int p = 0; p < g.num_partitions; ++p)
    counts.push_back(begin[static_cast<std::size_t>(p) + 1] - begin[static_cast<std::size_t>(p)]);
  const std::vector<RowLayout> layouts = output_layouts(comm, counts);
  const std::size_t row_bytes = static_cast<std::size_t>(g.slice_size) * dtype_size(data.dtype());
  // One state for all the outputs, which keeps data and the order alive as long as rows can
  // be made: each output's maker holds a pointer to it and where its rows start, so that
  // many partitions cost a few bytes each here.
  struct Order {
    DistTensor source;
    Tensor listed;
    bool narrow;
    std::int64_t rows;
    std::size_t row_bytes;
  };
  const auto order = std::make_shared<const Order>(Order{in.data, listed, narrow, ids.num_elements(), row_bytes});
  std::vector<LazyTensor> outputs;
  outputs.reserve(static_cast<std::size_t>(g.num_partitions));
  for (int p = 0; p < g.num_partitions; ++p) {
    const RowLayout& layout = layouts[static_cast<std::size_t>(p)];
    const std::int64_t at = begin[static_cast<std::size_t>(p)];
    LazyTensor::MakeRows make = [order, at](std::int64_t first, std::int64_t count, unsigned char* out) {
      dispatch_order(order->narrow, [&](auto itag) {
        using I = typename decltype(itag)::type;
        gather_listed(order->source.local().data(), order->rows, order->row_bytes,
                      reinterpret_cast<const I*>(order->listed.data()) + at + first, count, out);
      });
    };
    outputs.emplace_back(g.slice_shape.prepend(layout.total()), data.dtype(), layout, comm.rank(), std::move(make));
  }
  return outputs;
}

}  // namespace shardops
