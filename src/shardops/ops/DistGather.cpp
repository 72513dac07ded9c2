#include <optional>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/kernels/FindWhere.hpp"
#include "shardops/kernels/Gather.hpp"
#include "shardops/kernels/StringKernels.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/ops/detail/DistCommon.hpp"
#include "shardops/ops/detail/TfKernels.hpp"
#include "shardops/route/Route.hpp"
#include "shardops/route/StringExchange.hpp"

namespace shardops {

namespace {

/// Whether every rank should receive all of params and gather locally, rather than
/// fetch each row from its owner (index depth K > 0; K = 0 always takes all of params).
/// The same answer on every rank: it looks only at global shapes. Auto replicates when
/// params are no larger than the average rank's output: then for indices spread over
/// params a rank receives fewer rows (the params rows it lacks, P (R-1)/R) than the
/// replies would bring (n (R-1)/R of its n output rows), with no requests, routing or
/// packing, and the copy of params costs no more memory than the rank's output. Indices
/// that mostly name a rank's own rows would move less by fetching; Auto does not look at
/// them (that would be another pass). A rank-1 index is one index row, fetched.
bool replicate_params(GatherParams choice, const GatherGeometry& g, int nranks, bool one_index_row) {
  if (nranks == 1 || one_index_row) return false;
  if (choice != GatherParams::Auto) return choice == GatherParams::Replicate;
  return g.slice_size > 0 && g.params_rows * nranks <= g.num_slices;
}

/// \p out holds \p copies copies of \p block, back to back (GatherNd with index depth
/// 0: every index row selects all of params).
void repeat_block(const Tensor& block, const Tensor& out, std::int64_t copies) {
  const std::int64_t bytes = static_cast<std::int64_t>(block.nbytes());
  const unsigned char* src = block.data();
  unsigned char* dst = out.data();
  Kokkos::parallel_for(
      "shardops::GatherNd::repeat", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, bytes * copies),
      KOKKOS_LAMBDA(const std::int64_t b) { dst[b] = src[b % bytes]; });
  ExecSpace().fence();
}

/// \brief The \p n index rows of \p linear gathered into \p out from params rows that are
/// all on this rank: its own block \p own (global rows [own_first, own_first + own_rows))
/// where it lies, and the rest in \p others (the rows before and after it, in order).
/// Returns the rows zeroed for a bad index (-1: not counted, rows of no bytes). \p stores:
/// Cached for a piece of a streamed output (kernels::RowStores).
template <class I>
std::int64_t gather_here(const ExecSpace& space, std::int64_t n, const kernels::IndexRowTarget<I, MemSpace>& linear,
                         const unsigned char* own, std::int64_t own_first, std::int64_t own_rows,
                         const unsigned char* others, std::size_t row_bytes, unsigned char* out,
                         kernels::RowStores stores) {
  if (row_bytes == 0) return -1;
  // params may be a row slice of a larger tensor: pick a word its rows align to.
  return dispatch_word(word_selector(row_bytes, {own, others}), [&](auto wtag) {
    using W = typename decltype(wtag)::type;
    const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    const kernels::SplitRows<W> rows{reinterpret_cast<const W*>(own), reinterpret_cast<const W*>(others), own_first,
                                     own_rows, words};
    return kernels::gather_rows_from<ExecSpace, W>(
        space, n, linear, rows,
        MatrixView<W>(reinterpret_cast<W*>(out), static_cast<std::size_t>(n), static_cast<std::size_t>(words)), stores);
  });
}

/// The op's start on every path: the dtype table, then (timed in \p phase, "validate" on
/// return) the shapes and the output's size, each with TF's message.
GatherGeometry start_gather(const DistTensor& params, const DistTensor& indices, const OpOptions& options,
                            std::optional<ScopedPhase>& phase) {
  record_bytes_sent(options, 0);
  check_tf_kernel("GatherNd", params.dtype(), indices.dtype(), options.bad_indices);
  phase.emplace("validate");
  const GatherGeometry g = check_gather_nd(params.shape(), indices.shape(), indices.dtype());
  tensor_bytes(g.output, params.dtype(), "shardops::GatherNd::output");  // the same text at any rank count
  return g;
}

/// The params rows a rank gathers from when all of them are on it: its own block where it
/// lies (global rows [own_first, own_first + own_rows) of \p rows_per_dim0 rows per dim-0
/// index) and the other ranks' blocks in \p others (strings: all of params, its handles in
/// one pool homed here).
struct ParamsHere {
  const unsigned char* own = nullptr;
  std::int64_t own_first = 0, own_rows = 0;
  Tensor others;
};

/// Collective where \p replicate: the rows of ParamsHere. One rank has them all; with
/// \p replicate every rank reads all of params where the file's pages are (\p use_replica),
/// or receives the others' blocks (the "route" phase of \p phase).
ParamsHere params_here(const Comm& comm, const DistTensor& params, bool replicate, bool use_replica,
                       std::int64_t rows_per_dim0, const OpOptions& options, std::optional<ScopedPhase>& phase) {
  const int me = comm.rank();
  ParamsHere p{params.local().data(), params.layout().offset(me) * rows_per_dim0,
               params.layout().count(me) * rows_per_dim0, Tensor()};
  if (replicate && use_replica) {
    // Every params row is readable here already (the file's pages, shared): none moves.
    p.own = params.replica().data();
    p.own_first = 0;
    p.own_rows = params.shape().dim(0) * rows_per_dim0;
  } else if (replicate) {
    phase.emplace("route");
    std::int64_t sent = static_cast<std::int64_t>(params.local().nbytes()) * (comm.size() - 1);
    if (is_string(params.dtype())) {
      p.others = params.allgather(comm, options.route);
      p.own_rows = 0;
    } else {
      p.others = replicate_others(comm, params.layout(), params.local(), options.route, &sent);
    }
    record_bytes_sent(options, sent);
  }
  return p;
}

}  // namespace

bool gather_nd_replicates_params(const Shape& params, const Shape& indices, int nranks, GatherParams choice) {
  if (nranks <= 1) return false;
  GatherGeometry g;
  try {
    g = check_gather_nd(params, indices, DType::Int64);  // shapes only: the op reports dtype limits
  } catch (const InvalidArgument&) {
    return false;  // gather_nd refuses these shapes
  }
  return g.index_depth == 0 || replicate_params(choice, g, nranks, indices.rank() == 1);
}

namespace {

/// Index rows against params' bytes below which working out the rows an index names pays
/// (routing each index row to its owner costs about as much as reading this many bytes).
constexpr std::int64_t kBytesPerRoutedIndexRow = 256;

}  // namespace

std::optional<RowRuns> gather_nd_params_rows(const Comm& comm, const Shape& params, DType dtype,
                                             const DistTensor& indices, const RowLayout& layout,
                                             const OpOptions& options) {
  const DType index = indices.dtype();
  if (is_string(dtype) || (index != DType::Int16 && index != DType::Int32 && index != DType::Int64))
    return std::nullopt;
  GatherGeometry g;
  try {
    g = check_gather_nd(params, indices.shape(), index);
  } catch (const InvalidArgument&) {
    return std::nullopt;  // gather_nd reports these
  }
  if (g.index_depth == 0 || params.num_elements() == 0 || g.slice_size == 0) return std::nullopt;
  // In doubles: a shape the read refuses as too large may still come here.
  const double dim0_bytes = static_cast<double>(params.product_from(1)) * static_cast<double>(dtype_size(dtype));
  const double params_bytes = static_cast<double>(params.dim(0)) * dim0_bytes;
  if (g.num_slices >= (params.dim(0) + 3) / 4 ||
      static_cast<double>(g.num_slices) * 4 * kBytesPerRoutedIndexRow > params_bytes)
    return std::nullopt;
  // A rank-1 index is one index row: on rank 0, as gather_nd has it.
  const bool one_row = indices.shape().rank() == 1;
  const DistTensor idx =
      one_row ? indices.redistribute(comm, RowLayout::on_rank(indices.shape().dim(0), comm.size(), 0), options.route)
              : indices;
  const int me = comm.rank();
  const std::int64_t n = one_row ? (me == 0 ? 1 : 0) : idx.layout().count(me) * g.batch.product_from(1);
  const kernels::IndexBounds bounds = kernels::IndexBounds::from(g.dims);
  const std::int64_t rows_per_dim0 = bounds.strides[0];
  std::vector<std::int64_t> wanted;
  dispatch_index<IndexDTypes::WithInt16>(index, [&](auto itag) {
    using I = typename decltype(itag)::type;
    const kernels::IndexRowTarget<I, MemSpace> linear{reinterpret_cast<const I*>(idx.local().data()), g.index_depth,
                                                      bounds, 0};
    // Each index row goes to the rank whose block holds its row, as the op routes it; a bad
    // one goes nowhere.
    const Route route = route_by_first_coordinate(comm, ExecSpace(), "shardops::GatherNd::rows_read", n, linear, layout,
                                                  rows_per_dim0, options.route, [](std::int64_t) {});
    Tensor marks;
    run_agreed(comm, [&] { marks = Tensor(DType::Int8, Shape{n, 1}, Init::Zero, "shardops::GatherNd::rows_read"); });
    wanted = route.collect(marks, 1).targets.to_vector<std::int64_t>();
  });
  for (std::int64_t& row : wanted) row /= rows_per_dim0;
  // Only the rows named, not the rows between two near ones: a chunk that holds no named row
  // is never read (a damaged one fails no job, as it fails no h5py script reading the same).
  return runs_of_rows(std::move(wanted), 0);
}

namespace {

// Collective: every rank called GatherNd with the same arguments.
void agree_on_gather(const Comm& comm, const DistTensor& params, const DistTensor& indices, const OpOptions& options) {
  agree_on_op(comm, "GatherNd", "params=" + call_text(comm, params) + " indices=" + call_text(comm, indices), options);
}

// gather_nd after the ranks agreed on the call; its output held whole.
DistTensor gather_held(const Comm& comm, const DistTensor& params, const DistTensor& indices_in,
                       const OpOptions& options) {
  kx::ScopedRegion region("shardops::GatherNd");
  std::optional<ScopedPhase> phase;
  const GatherGeometry g = start_gather(params, indices_in, options, phase);
  const int me = comm.rank();
  // A rank-1 index is one index row: bring it whole to rank 0, which owns the output.
  const DistTensor indices =
      indices_in.shape().rank() == 1
          ? indices_in.redistribute(comm, RowLayout::on_rank(indices_in.shape().dim(0), comm.size(), 0), options.route)
          : indices_in;
  const bool one_row = indices_in.shape().rank() == 1;
  const RowLayout out_layout = one_row ? (g.output.rank() == 0 ? RowLayout::on_rank(1, comm.size(), 0)
                                                               : RowLayout::on_rank(g.output.dim(0), comm.size(), 0))
                                       : indices.layout();
  // Index rows per row of dim 0 of the indices: prod(indices.shape[1:-1]). Counted from
  // the shape, not as elements / K: with K = 0 the indices have no elements at all.
  const std::int64_t rows_per_index_row = one_row ? 1 : g.batch.product_from(1);
  const std::int64_t n = one_row ? (me == 0 ? 1 : 0) : indices.layout().count(me) * rows_per_index_row;
  const std::int64_t first_row = one_row ? 0 : indices.row_offset() * rows_per_index_row;
  const Shape local_shape = one_row ? (me == 0 ? g.output : (g.output.rank() == 0 ? Shape{0} : g.output.with_dim0(0)))
                                    : g.output.with_dim0(out_layout.count(me));
  // Index depth 0 copies params into it; otherwise every row is written, streamed (a
  // gathered row, or zeros for an ignored bad index), so it need not be zeroed first.
  Tensor out;
  run_agreed(comm, [&] {  // the output's block may fit on one rank and not on another
    out = Tensor(params.dtype(), local_shape, g.index_depth == 0 ? Init::Zero : Init::Uninitialized,
                 "shardops::GatherNd::output");
  });
  const std::size_t row_bytes = static_cast<std::size_t>(g.slice_size) * dtype_size(params.dtype());
  // Rows every rank can read already (string handles name a rank's own pool: not those).
  const bool use_replica = params.has_replica() && !is_string(params.dtype());

  if (g.index_depth == 0) {
    // Every index row selects all of params: replicate params (unless every rank has
    // them already), gather locally.
    const Tensor full = use_replica ? params.replica() : params.allgather(comm, options.route);
    if (!use_replica)
      record_bytes_sent(options, static_cast<std::int64_t>(params.local().nbytes()) * (comm.size() - 1));
    if (n > 0 && row_bytes > 0) repeat_block(full, out, n);
    // Strings: the handles name the replicated pool (homed here); keep just their strings.
    if (is_string(params.dtype())) out = compact_strings(out.with_strings(full.strings()), me);
    return DistTensor(out, g.output, out_layout, me);
  }

  // No index rows anywhere: nothing to gather or check (the index depth may even be
  // more than the bounds kernels take).
  if (g.num_slices == 0) {
    const DistTensor empty(out, g.output, out_layout, me);
    // Strings: an empty pool of params' string type.
    return is_string(params.dtype()) ? resolve_strings(comm, empty, params.local().strings(), options.route) : empty;
  }

  const ExecSpace space;
  const kernels::IndexBounds bounds = kernels::IndexBounds::from(g.dims);
  const std::int64_t rows_per_dim0 = bounds.strides[0];
  const bool replicate = replicate_params(options.gather_params, g, comm.size(), one_row);
  dispatch_index<IndexDTypes::WithInt16>(indices.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    const I* idx = reinterpret_cast<const I*>(indices.local().data());
    const kernels::IndexRowTarget<I, MemSpace> linear{idx, g.index_depth, bounds, 0};
    // The error policy, once a kernel has counted the bad rows (-1: none did).
    const auto validate = bad_index_check(
        comm, space, options.bad_indices, n, linear, first_row, indices.local(), "shardops::GatherNd::validate",
        [&g](std::int64_t row, const std::vector<std::int64_t>& values) { return gather_index_error(g, row, values); });
    if (comm.size() == 1 || replicate) {
      // Every params row is here (one rank) or is brought here (replicate): gather
      // straight into the output (nothing to route; a bad
      // index gives a zero row, counted by the gather). The other ranks' rows arrive in
      // a buffer of their own; this rank's block is read where it lies.
      const ParamsHere here = params_here(comm, params, replicate, use_replica, rows_per_dim0, options, phase);
      phase.emplace("apply");
      const std::int64_t zeroed = gather_here(space, n, linear, here.own, here.own_first, here.own_rows,
                                              here.others.data(), row_bytes, out.data(), kernels::RowStores::Streaming);
      validate(zeroed);
      // Strings: handles into the replicated pool (homed here) become this rank's own.
      if (replicate && !use_replica && is_string(params.dtype()))
        out = compact_strings(out.with_strings(here.others.strings()), me);
      return;
    }
    phase.emplace("route");
    // Each index row fetches its row from the owner of its first coordinate.
    const Route route = route_by_first_coordinate(comm, space, "shardops::GatherNd::route", n, linear, params.layout(),
                                                  rows_per_dim0, options.route, validate);
    const FetchedRows fetched = route.fetch(params.local(), g.slice_size);
    record_bytes_sent(options, route.bytes_sent());
    phase.emplace("apply");
    fetched.write(out);
  });
  space.fence();
  const DistTensor result(out, g.output, out_layout, me);
  // Strings: the fetched handles name strings held by the params' ranks (replicated
  // params brought their strings along: nothing to fetch).
  return is_string(params.dtype()) && !replicate
             ? resolve_strings(comm, result, params.local().strings(), options.route)
             : result;
}

}  // namespace

DistTensor gather_nd(const Comm& comm, const DistTensor& params, const DistTensor& indices, const OpOptions& options) {
  agree_on_gather(comm, params, indices, options);
  return gather_held(comm, params, indices, options);
}

namespace {

/// Whether gather_nd_lazy can leave the output's rows to be made later: each rank
/// makes its rows alone (one rank, or params replicated), from fixed-size rows in host
/// memory. The same answer on every rank (global shapes and settings only); false for
/// shapes gather_nd refuses, so that it reports them.
bool lazy_gather_possible(const Comm& comm, const DistTensor& params, const DistTensor& indices,
                          const OpOptions& options) {
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible || is_string(params.dtype()) ||
      indices.shape().rank() < 2)
    return false;
  GatherGeometry g;
  try {
    g = check_gather_nd(params.shape(), indices.shape(), indices.dtype());
  } catch (const InvalidArgument&) {
    return false;
  }
  if (g.index_depth == 0 || g.num_slices == 0 || g.slice_size == 0 || g.output.rank() == 0 || g.output.dim(0) == 0)
    return false;
  return comm.size() == 1 || replicate_params(options.gather_params, g, comm.size(), false);
}

}  // namespace

LazyTensor gather_nd_lazy(const Comm& comm, const DistTensor& params, const DistTensor& indices,
                          const OpOptions& options) {
  agree_on_gather(comm, params, indices, options);
  if (!lazy_gather_possible(comm, params, indices, options)) return gather_held(comm, params, indices, options);
  kx::ScopedRegion region("shardops::GatherNd");
  std::optional<ScopedPhase> phase;
  const GatherGeometry g = start_gather(params, indices, options, phase);
  const int me = comm.rank();
  const std::int64_t rows_per_index_row = g.batch.product_from(1);
  const std::int64_t n = indices.layout().count(me) * rows_per_index_row;
  const std::int64_t first_row = indices.row_offset() * rows_per_index_row;
  const std::size_t row_bytes = static_cast<std::size_t>(g.slice_size) * dtype_size(params.dtype());
  const kernels::IndexBounds bounds = kernels::IndexBounds::from(g.dims);
  const int depth = g.index_depth;
  LazyTensor::MakeRows make;
  dispatch_index<IndexDTypes::WithInt16>(indices.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    // Every index is checked before any row is made: the rows are made while the output
    // is written, too late to fail the job before it writes.
    const kernels::IndexRowTarget<I, MemSpace> linear{reinterpret_cast<const I*>(indices.local().data()), depth, bounds,
                                                      0};
    if (options.bad_indices == BadIndices::Error) {
      agree_last_bad_index_row(comm, ExecSpace(), n, linear, first_row, indices.local(), "shardops::GatherNd::validate",
                               [&g](std::int64_t row, const std::vector<std::int64_t>& values) {
                                 return gather_index_error(g, row, values);
                               });
    }
    const ParamsHere here =
        params_here(comm, params, comm.size() > 1, params.has_replica(), bounds.strides[0], options, phase);
    // The captures keep params' and the indices' memory alive as long as the rows can be made.
    make = [params, indices, here, row_bytes, bounds, depth, rows_per_index_row](std::int64_t first, std::int64_t count,
                                                                                 unsigned char* out) {
      const I* idx = reinterpret_cast<const I*>(indices.local().data()) + first * rows_per_index_row * depth;
      const kernels::IndexRowTarget<I, MemSpace> rows{idx, depth, bounds, 0};
      gather_here(ExecSpace(), count * rows_per_index_row, rows, here.own, here.own_first, here.own_rows,
                  here.others.data(), row_bytes, out, kernels::RowStores::Cached);
      ExecSpace().fence();
    };
  });
  return LazyTensor(g.output, params.dtype(), indices.layout(), me, std::move(make));
}

}  // namespace shardops
