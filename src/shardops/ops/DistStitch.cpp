#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/kernels/Assign.hpp"
#include "shardops/kernels/FindWhere.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/ops/detail/DistCommon.hpp"
#include "shardops/ops/detail/PiecedBatches.hpp"
#include "shardops/ops/detail/ScatterApply.hpp"
#include "shardops/route/Route.hpp"
#include "shardops/route/StringExchange.hpp"

namespace shardops {

namespace {

/// Stitch target of element i: the index less the first output row this rank owns
/// (a negative index, an ignored bad one, is skipped).
struct IndexAsTarget {
  const std::int32_t* ids;
  std::int64_t first_row;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const {
    return ids[i] < 0 ? -1 : ids[i] - first_row;
  }
};

/// The largest index of \p ids (-1 when there is none) and the smallest non-negative
/// one (INT64_MAX when there is none), in one pass.
struct IndexRange {
  std::int64_t max = -1, min_nonnegative = std::numeric_limits<std::int64_t>::max();
};
IndexRange index_range(const Tensor& ids) {
  const std::int32_t* p = reinterpret_cast<const std::int32_t*>(ids.data());
  Kokkos::MinMaxScalar<std::int64_t> range;
  Kokkos::parallel_reduce(
      "shardops::DynamicStitch::index_range", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, ids.num_elements()),
      KOKKOS_LAMBDA(const std::int64_t i, Kokkos::MinMaxScalar<std::int64_t>& v) {
        const std::int64_t x = p[i];
        if (x > v.max_val) v.max_val = x;
        if (x >= 0 && x < v.min_val) v.min_val = x;
      },
      Kokkos::MinMax<std::int64_t>(range));
  IndexRange r;
  if (ids.num_elements() > 0) {
    r.max = range.max_val;
    r.min_nonnegative = range.min_val;
  }
  return r;
}

/// Every writer of this rank's output rows, last writer wins in global order:
/// \p for_each_writer(f) calls f(batch, first_key) for each batch of writers in that order,
/// with keys that increase along it (RootRows::for_each). Sequential: each batch written
/// over the last. Parallel: the keyed (atomic max) schedule, then the winners copied.
/// Either way the rows nobody names are zeroed apart, so the output is written once. A
/// named template: nvcc rejects a KOKKOS_LAMBDA inside the word dispatch's lambda.
template <class W, class ForEachWriter>
void assign_in_order(const ExecSpace& space, Schedule schedule, const ForEachWriter& for_each_writer,
                     const Tensor& merged, std::int64_t out_rows, std::int64_t words) {
  kernels::LastWriterAssign<ExecSpace, W> assign(space, merged.matrix<W>(out_rows, words), schedule,
                                                 kernels::UnnamedRows::Zero);
  for_each_writer([&](const auto& b, std::int64_t key) {
    assign.claim(b.n, b.target_of_entry(), kernels::ConsecutiveKeys{key},
                 b.rows.template matrix<const W>(b.source_rows, words), b.row_of);
  });
  assign.zero_unclaimed();
  if (assign.schedule() != Schedule::Parallel) return;
  for_each_writer([&](const auto& b, std::int64_t key) {
    assign.copy_winners(b.n, b.target_of_entry(), kernels::ConsecutiveKeys{key},
                        b.rows.template matrix<const W>(b.source_rows, words), b.row_of);
  });
}

/// The writers of \p merged (\p out_rows rows of \p row_bytes bytes), last writer wins,
/// as assign_in_order, for rows that align to words of \p word bytes.
template <class ForEachWriter>
void stitch_rows(Schedule schedule, const ForEachWriter& for_each_writer, const Tensor& merged, std::int64_t out_rows,
                 std::size_t row_bytes, std::size_t word) {
  const ExecSpace space;
  dispatch_word(word, [&](auto tag) {
    using W = typename decltype(tag)::type;
    assign_in_order<W>(space, kernels::resolve(schedule, space), for_each_writer, merged, out_rows,
                       static_cast<std::int64_t>(row_bytes / sizeof(W)));
  });
  space.fence();
}

/// \brief Collective: raises on every rank TF's error for the first negative index in
/// global order (input m, then flat position), if any rank holds one. \p key_base[m]: the
/// global order of input m's first element; \p first_flat[m]: this rank's first flat
/// position in it.
void agree_no_negative_index(const Comm& comm, const ExecSpace& space, const std::vector<DistTensor>& indices,
                             const std::vector<std::int64_t>& key_base, const std::vector<std::int64_t>& first_flat) {
  bool found = false;
  std::int64_t order = 0, flat = 0, input = 0;
  for (std::size_t m = 0; m < indices.size() && !found; ++m) {
    const std::int32_t* ids = reinterpret_cast<const std::int32_t*>(indices[m].local().data());
    auto negative = KOKKOS_LAMBDA(const std::int64_t i) { return ids[i] < 0; };
    const std::int64_t bad =
        kernels::first_where(space, indices[m].local().num_elements(), negative, "shardops::DynamicStitch::validate");
    if (bad >= 0) {
      found = true;
      input = static_cast<std::int64_t>(m);
      flat = first_flat[m] + bad;
      order = key_base[m] + flat;
    }
  }
  agree_index_error(comm, found, order, stitch_index_error(flat), "indices[" + std::to_string(input) + "]");
}

/// \brief Collective: the route of every index element (the leaves, input by input) to the
/// owner of its target row in \p out_layout. The inputs are the route's segments: each
/// output row sees its writers in TF's order (m, source rank, position).
Route route_to_index_owner(const Comm& comm, const ExecSpace& space, const std::vector<DistTensor>& indices,
                           const RowLayout& out_layout, const RouteOptions& options) {
  const OwnerOf owner = out_layout.device_owner();
  std::vector<std::int64_t> counts;
  for (const DistTensor& t : indices) counts.push_back(t.local().num_elements());
  const std::int64_t total = std::accumulate(counts.begin(), counts.end(), std::int64_t(0));
  // Every entry is written by the route kernels: no need to zero them first.
  const auto dest = allocate_uninitialized<Kokkos::View<int*, MemSpace>>("shardops::DynamicStitch::dest",
                                                                         static_cast<std::size_t>(total));
  const auto target = allocate_uninitialized<Kokkos::View<std::int64_t*, MemSpace>>("shardops::DynamicStitch::target",
                                                                                    static_cast<std::size_t>(total));
  // An index beyond the output (one that changed in an input file's pages since it was
  // checked) goes nowhere, as a negative one does.
  const std::int64_t out_total = out_layout.total();
  std::int64_t first = 0;
  for (std::size_t m = 0; m < indices.size(); first += counts[m], ++m) {
    const std::int32_t* ids = reinterpret_cast<const std::int32_t*>(indices[m].local().data());
    Kokkos::parallel_for(
        "shardops::DynamicStitch::route", Kokkos::RangePolicy<ExecSpace>(space, first, first + counts[m]),
        KOKKOS_LAMBDA(const std::int64_t j) {
          const std::int32_t idx = ids[j - first];
          const int r = kernels::within(idx, out_total) ? owner(idx) : -1;
          dest(j) = r;
          target(j) = r < 0 ? -1 : idx - owner.offset(r);
        });
  }
  return Route::build(comm, dest, target, options, counts);
}

// Whether a stitch of \p entries index elements in all into \p g's output leaves its rows
// to be made as they are written: fixed-size rows in host memory, no more writers than
// twice the output's rows (stream_scatter_output: the same trade as the scatter ops'), and as many as
// piece lists number (kernels::fits_piece_list).
bool stream_stitch_output(const StitchGeometry& g, DType dtype, std::int64_t entries) {
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible && !is_string(dtype) && g.slice_size > 0 &&
         g.first_dim > 0 && stream_scatter_output(entries, g.first_dim) &&
         kernels::fits_piece_list(entries,
                                  piece_targets(1, static_cast<std::size_t>(g.slice_size) * dtype_size(dtype)));
}

// The op, its output held whole or, where \p may_stream and stream_stitch_output allow,
// made a piece at a time as it is written (the writers of each rank's rows listed by the
// piece of the output they land in, each piece assigned as the held output is).
LazyTensor stitch_impl(const Comm& comm, const std::vector<DistTensor>& indices, const std::vector<DistTensor>& data,
                       const OpOptions& options, bool may_stream) {
  kx::ScopedRegion region("shardops::DynamicStitch");
  const ExecSpace space;
  const int n = static_cast<int>(indices.size());
  const std::string tf_name = options.tf_name.empty() ? "DynamicStitch" : options.tf_name;
  for (int m = 0; m < n; ++m)
    expect_dtype(tf_name.c_str(), m, DType::Int32, indices[static_cast<std::size_t>(m)].dtype());
  for (std::size_t m = 1; m < data.size(); ++m)
    expect_dtype(tf_name.c_str(), n + static_cast<int>(m), data[0].dtype(), data[m].dtype());
  std::optional<ScopedPhase> phase(std::in_place, "validate");
  std::vector<Shape> index_shapes, data_shapes;
  for (const DistTensor& t : indices) index_shapes.push_back(t.shape());
  for (const DistTensor& t : data) data_shapes.push_back(t.shape());
  // The largest index sets the output's size; with the smallest (several ranks) it
  // also tells whether this rank's indices all name rows it will own.
  std::int64_t mine_max = -1, mine_min = std::numeric_limits<std::int64_t>::max();
  for (const DistTensor& t : indices) {
    const IndexRange range = index_range(t.local());
    mine_max = std::max(mine_max, range.max);
    mine_min = std::min(mine_min, range.min_nonnegative);
  }
  const std::int64_t mx = comm.max(mine_max);

  // Global order of element i of input m: (m, global flat position).
  std::vector<std::int64_t> key_base(indices.size()), first_flat(indices.size());
  std::int64_t base = 0;
  for (std::size_t m = 0; m < indices.size(); ++m) {
    key_base[m] = base;
    first_flat[m] = indices[m].row_offset() * indices[m].row_elements();
    base += indices[m].shape().num_elements();
  }
  if (options.bad_indices == BadIndices::Error) agree_no_negative_index(comm, space, indices, key_base, first_flat);
  // TF checks the index values before the data shapes.
  const StitchGeometry g = check_dynamic_stitch(index_shapes, data_shapes, mx);

  const RowLayout out_layout = RowLayout::balanced(g.first_dim, comm.size());
  tensor_bytes(g.output, data[0].dtype(), "shardops::DynamicStitch::merged");  // the same text at any rank count
  const int me = comm.rank();
  const std::int64_t out_rows = out_layout.count(me);
  const std::size_t row_bytes = static_cast<std::size_t>(g.slice_size) * dtype_size(data[0].dtype());
  const bool stream = may_stream && stream_stitch_output(g, data[0].dtype(), base);
  phase.emplace("route");
  std::vector<Tensor> rows;      // data[m] in indices[m]'s layout
  std::size_t word = row_bytes;  // a word every source's rows align to (a source may be a row slice)
  for (std::size_t m = 0; m < indices.size(); ++m) {
    rows.push_back(align_to(comm, data[m], indices[m], options.route).local());
    word = word_selector(word, {rows.back().data()});
  }
  // Nothing to route when every rank's indices name only rows it owns (always so on
  // one rank): then each rank's rows in key order are its inputs' rows in (m, position)
  // order, and no other rank writes its rows.
  const std::int64_t own_first = out_layout.offset(me), own_end = own_first + out_rows;
  const bool in_place = comm.size() == 1 || comm.min(mine_min >= own_first && mine_max < own_end ? 1 : 0) == 1;
  std::optional<RootRows> arrived;
  std::int64_t writers = 0;  // entries that reach this rank's rows (an upper bound in place)
  if (in_place) {
    record_bytes_sent(options, 0);
    for (const DistTensor& t : indices) writers += t.local().num_elements();
  } else {
    const Route route = route_to_index_owner(comm, space, indices, out_layout, options.route);
    arrived.emplace(route.reduce(rows, g.slice_size));
    record_bytes_sent(options, route.bytes_sent());
    writers = route.num_leaves() + arrived->num_arrived();
  }
  // The writers of this rank's rows in global order: data[m] where it lies, or as routed.
  const auto for_each_writer = [&](const auto& f) {
    if (arrived) return arrived->for_each(f);
    for (std::size_t m = 0; m < indices.size(); ++m) {
      const std::int64_t count = indices[m].local().num_elements();
      const IndexAsTarget to{reinterpret_cast<const std::int32_t*>(indices[m].local().data()), own_first};
      f(all_rows(count, to, rows[m]), key_base[m] + first_flat[m]);
    }
  };
  phase.emplace("apply");
  if (stream) {
    // The writers listed by piece; each piece is then assigned from them as the held output
    // is, its rows nobody names zeroed. The lists keep the rows they read alive.
    std::shared_ptr<PiecedBatches> pieced;
    run_agreed(comm, [&] {  // the lists may fit on one rank and not on another
      pieced = std::make_shared<PiecedBatches>(out_rows, piece_targets(1, row_bytes));
      for_each_writer([&](const auto& b, std::int64_t) { pieced->add(b); });
    });
    LazyTensor::MakeRows make = [pieced, dtype = data[0].dtype(), slice_shape = g.output.with_dim0(0),
                                 schedule = options.schedule, row_bytes,
                                 word](std::int64_t first, std::int64_t count, unsigned char* out) {
      const Tensor rows = Tensor::adopt_host(dtype, slice_shape.with_dim0(count), nullptr, out);
      pieced->for_each_piece(first, count, [&](std::int64_t at, std::int64_t n, const std::vector<PieceBatch>& cut) {
        const auto each_cut = [&cut](const auto& f) {
          std::int64_t key = 0;  // increasing in global order: batch after batch, in entry order
          for (const PieceBatch& b : cut) {
            f(b, key);
            key += b.n;
          }
        };
        stitch_rows(schedule, each_cut, rows.slice_rows(at - first, at - first + n), n, row_bytes, word);
      });
    };
    return LazyTensor(g.output, data[0].dtype(), out_layout, me, std::move(make));
  }
  const bool assigns = row_bytes > 0 && writers > 0;
  Tensor merged;
  run_agreed(comm, [&] {  // the output's block may fit on one rank and not on another
    merged = Tensor(data[0].dtype(), g.output.with_dim0(out_rows), assigns ? Init::Uninitialized : Init::Zero,
                    "shardops::DynamicStitch::merged");
  });
  if (assigns) stitch_rows(options.schedule, for_each_writer, merged, out_rows, row_bytes, word);
  return DistTensor(merged, g.output, out_layout, me);
}

// The string handles of every data[m] in one pool per rank (its indices' layout): they are
// stitched like any 8-byte rows, then each rank fetches the strings it ends with.
DistTensor stitch_strings(const Comm& comm, const std::vector<DistTensor>& indices, const std::vector<DistTensor>& data,
                          const OpOptions& options) {
  std::vector<const DistTensor*> layout_of;
  for (const DistTensor& t : indices) layout_of.push_back(&t);
  const std::vector<DistTensor> shared = share_dist_string_pool(comm, data, layout_of, options.route);
  return resolve_strings(comm, stitch_impl(comm, indices, shared, options, false).tensor(), shared[0].local().strings(),
                         options.route);
}

// Collective: every rank called the op with as many indices and data tensors, alike.
void agree_on_stitch(const Comm& comm, const std::vector<DistTensor>& indices, const std::vector<DistTensor>& data,
                     const OpOptions& options) {
  std::string call;
  for (const DistTensor& t : indices) call += " indices=" + call_text(comm, t);
  for (const DistTensor& t : data) call += " data=" + call_text(comm, t);
  agree_on_op(comm, "DynamicStitch", call, options);
}

bool all_strings(const std::vector<DistTensor>& indices, const std::vector<DistTensor>& data) {
  bool strings = !data.empty() && data.size() == indices.size();
  for (const DistTensor& d : data) strings = strings && is_string(d.dtype());
  return strings;
}

}  // namespace

DistTensor dynamic_stitch(const Comm& comm, const std::vector<DistTensor>& indices, const std::vector<DistTensor>& data,
                          const OpOptions& options) {
  agree_on_stitch(comm, indices, data, options);
  if (all_strings(indices, data)) return stitch_strings(comm, indices, data, options);
  return stitch_impl(comm, indices, data, options, false).tensor();
}

LazyTensor dynamic_stitch_lazy(const Comm& comm, const std::vector<DistTensor>& indices,
                               const std::vector<DistTensor>& data, const OpOptions& options) {
  agree_on_stitch(comm, indices, data, options);
  if (all_strings(indices, data)) return stitch_strings(comm, indices, data, options);
  return stitch_impl(comm, indices, data, options, true);
}

}  // namespace shardops
