#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/kernels/FindWhere.hpp"
#include "shardops/kernels/Gather.hpp"
#include "shardops/kernels/StringKernels.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/ops/detail/DistCommon.hpp"
#include "shardops/ops/detail/OwnedIndexRows.hpp"
#include "shardops/ops/detail/PiecedBatches.hpp"
#include "shardops/ops/detail/ScatterApply.hpp"
#include "shardops/route/Route.hpp"
#include "shardops/route/StringExchange.hpp"

namespace shardops {

namespace {

// What the checks of the scatter family work out, shared by the held and the streamed op.
struct ScatterStart {
  DType dtype = DType::Float32;
  ScatterGeometry g;
  RowLayout out_layout;            ///< the tensor's, or balanced (ScatterNd)
  std::int64_t rows_per_dim0 = 1;  ///< output rows (of slice_size elements) per index of dim 0
  std::int64_t out_bytes = 0;      ///< ScatterNd: the output's bytes

  std::size_t slice_bytes() const { return static_cast<std::size_t>(g.slice_size) * dtype_size(dtype); }
  /// The targets of a piece of the output made as it is written (PiecedBatches).
  std::int64_t piece_targets() const { return shardops::piece_targets(rows_per_dim0, slice_bytes()); }
};

// TF's ScatterNd adds bools as numbers, so every true it writes is the byte 1, whatever
// byte an update held (NumPy and h5py hand over any non-zero byte as true; GatherNd and the
// other moves keep the byte, as TF's do). \p updates as such bytes, copied only where one
// is not.
DistTensor canonical_bools(const Comm& comm, const DistTensor& updates) {
  const Tensor& in = updates.local();
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(in.data());
  const std::int64_t n = in.num_elements();
  std::int64_t odd = 0;
  Kokkos::parallel_reduce(
      "shardops::ScatterNd::bools::check", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& m) { m += bytes[i] > 1 ? 1 : 0; }, odd);
  if (odd == 0) return updates;
  Tensor out = in.uninitialized_like("shardops::ScatterNd::bools");
  auto* canonical = reinterpret_cast<std::uint8_t*>(out.data());
  Kokkos::parallel_for(
      "shardops::ScatterNd::bools", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { canonical[i] = bytes[i] != 0 ? 1 : 0; });
  ExecSpace().fence();
  return DistTensor(out, updates.shape(), updates.layout(), comm.rank());
}

// Collective: the dtype and shape checks (timed as "validate" in \p phase) and the output's layout.
ScatterStart start_scatter(const Comm& comm, ScatterOp op, const DistTensor* tensor, const DistTensor& indices,
                           const DistTensor& updates, const std::vector<std::int64_t>& shape, const OpOptions& options,
                           std::optional<ScopedPhase>& phase) {
  ScatterStart s;
  s.dtype = tensor ? tensor->dtype() : updates.dtype();
  expect_scatter_dtypes(op, tensor != nullptr, s.dtype, indices.dtype(), updates.dtype(), options.bad_indices);
  phase.emplace("validate");
  s.g = check_scatter(op, shape, indices.shape(), updates.shape(), indices.dtype());
  s.out_layout = tensor ? tensor->layout() : RowLayout::balanced(s.g.output.dim(0), comm.size());
  s.rows_per_dim0 = kernels::IndexBounds::from(s.g.dims).strides[0];
  // Checked (the same text at any rank count) before the byte count is used.
  if (!tensor) s.out_bytes = tensor_bytes(s.g.output, s.dtype, "shardops::ScatterNd::output");
  record_bytes_sent(options, 0);
  return s;
}

// Whether the op takes each rank's updates from \p indices and \p updates read whole on every
// rank (scatter_reads_replicas). The same answer on every rank: replicas are set on all or none.
bool reads_replicas(const Comm& comm, const DistTensor& indices, const DistTensor& updates) {
  return comm.size() > 1 && indices.has_replica() && updates.has_replica() &&
         scatter_reads_replicas(indices.shape(), indices.dtype(), updates.shape(), updates.dtype(), comm.size());
}

// Collective: route_updates where reads_replicas(): every rank lists the index rows, of all,
// whose target it owns, and hands \p finish one batch of them, in global order, reading their
// update rows where every rank reads them (the input file's pages). Bad indices meet the
// error policy first, as every rank sees them all. Nothing moves between the ranks.
template <class Finish>
void route_from_replicas(const Comm& comm, const ScatterStart& s, const DistTensor& indices, const DistTensor& updates,
                         const OpOptions& options, std::optional<ScopedPhase>& phase, const Finish& finish) {
  const ScatterGeometry& g = s.g;
  const ExecSpace space;
  const Tensor& all_indices = indices.replica();
  const std::int64_t n = all_indices.num_elements() / g.index_depth;  // every index row
  const std::int64_t first = s.out_layout.offset(comm.rank()) * s.rows_per_dim0;
  const std::int64_t out_rows = s.out_layout.count(comm.rank()) * s.rows_per_dim0;
  const kernels::IndexBounds bounds = kernels::IndexBounds::from(g.dims);
  phase.emplace("route");
  dispatch_index(indices.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    const I* idx = reinterpret_cast<const I*>(all_indices.data());
    const kernels::IndexRowTarget<I, MemSpace> linear{idx, g.index_depth, bounds, 0};
    OwnedIndexRows owned;
    // The list may fit on one rank and not on another; the input may change under one.
    run_agreed(comm,
               [&] { owned = list_owned_index_rows(space, "shardops::scatter::owned", n, linear, first, out_rows); });
    bad_index_check(comm, space, options.bad_indices, n, linear, 0, all_indices, "shardops::scatter::validate",
                    [&g](std::int64_t row, const std::vector<std::int64_t>& values) {
                      return scatter_index_error(g, row, values);
                    })(owned.bad);
    phase.emplace("apply");
    // Targets counted from this rank's first output row; the rows listed are all this rank's.
    const kernels::IndexRowTarget<I, MemSpace> target{idx, g.index_depth, bounds, first};
    finish(RootBatch<kernels::IndexRowTarget<I, MemSpace>, kernels::ListedRows<std::uint32_t>>{
        owned.count, target, updates.replica().reshaped(Shape{n, g.slice_size}),
        kernels::ListedRows<std::uint32_t>{owned.rows.data(), 0}, n});
  });
}

// Collective: every update row at the owner of its output row, handed to
// \p finish(batches...) in global order (RootBatch, as scatter_apply takes them; their
// targets and row lists point into memory that lasts until it returns, their rows are
// Tensors). \p finish returns the entries it found
// without a target (-1: not counted). Bad indices meet the error policy before the route
// at several ranks, after \p finish at one (which counts them on the way). ScatterNd on
// strings concatenates instead, into \p out. Timed in \p phase.
template <class Finish>
void route_updates(const Comm& comm, ScatterOp op, const ScatterStart& s, const DistTensor& indices,
                   const DistTensor& updates, const OpOptions& options, std::optional<ScopedPhase>& phase, Tensor& out,
                   const Finish& finish) {
  const ScatterGeometry& g = s.g;
  // ScatterNd on strings concatenates duplicates in index order instead of adding.
  const bool concat = is_string(s.dtype) && op == ScatterOp::ScatterNd;
  const int me = comm.rank();
  const ExecSpace space;
  if (!concat && reads_replicas(comm, indices, updates)) {
    route_from_replicas(comm, s, indices, updates, options, phase, finish);
    return;
  }
  const DistTensor upd = align_to(comm, updates, indices, options.route);
  const std::int64_t n = indices.local().num_elements() / g.index_depth;                           // local index rows
  const std::int64_t first_row = indices.row_offset() * (indices.row_elements() / g.index_depth);  // global index row
  const kernels::IndexBounds bounds = kernels::IndexBounds::from(g.dims);
  const std::int64_t out_rows = s.out_layout.count(me) * s.rows_per_dim0;

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
                                       out_rows, g.slice_size, me);
        return;
      }
      phase.emplace("apply");
      const std::int64_t skipped = finish(all_rows(n, linear, upd.local()));
      phase.emplace("validate");
      validate(skipped);
      return;
    }
    phase.emplace("route");
    // Each update goes to the owner of its first coordinate, to its row there.
    const Route route = route_by_first_coordinate(comm, space, "shardops::scatter::route", n, linear, s.out_layout,
                                                  s.rows_per_dim0, options.route, validate);
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
    rows.apply([&](const auto&... batches) { finish(batches...); });
  });
}

// scatter_apply of the batches of \p cut (as many as \p I counts, in order) into \p out
// (rows of \p slice elements), \p base's rows first (null: \p out holds ScatterNd's zeros).
template <std::size_t... I>
void apply_to_piece(std::index_sequence<I...>, const std::vector<PieceBatch>& cut, ScatterOp op, Schedule schedule,
                    Denormals denormals, const Tensor* base, Tensor& out, std::int64_t slice) {
  scatter_apply(ExecSpace(), op, schedule, denormals, base, out, out.rows(), slice, cut.at(I)...);
  ExecSpace().fence();
}

// Whether the output of a scatter started as \p s can be made as it is written: fixed-size
// rows in host memory, an index depth above 0, an output with rows, updates and pieces that
// piece lists number (kernels::fits_piece_list), and either at most twice as many updates as
// output rows (stream_scatter_output) or TensorScatterUpdate, whose winners are found before any row is
// made. The same answer on every rank.
bool streams(ScatterOp op, const ScatterStart& s) {
  const ScatterGeometry& g = s.g;
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible && !is_string(s.dtype) &&
         !g.empty_output && g.index_depth > 0 && g.output.rank() > 0 && g.slice_size > 0 &&
         kernels::fits_piece_list(g.num_updates, s.piece_targets()) &&
         (op == ScatterOp::Update || stream_scatter_output(g.num_updates, g.output_rows));
}

// TensorScatterUpdate's rows made as they are written, where a rank's updates are at least
// as many as its output rows (update_by_output_row): the winner of every output row is
// claimed first, as the held op does, then each piece is written row by row from its
// winners' rows or the tensor's. Returns the rows' maker; \p skipped gets the entries
// without a target.
template <class... Batch>
LazyTensor::MakeRows make_by_winners(const Tensor& tensor, std::int64_t out_rows, std::int64_t rows_per_lazy_row,
                                     std::size_t row_bytes, Schedule schedule, std::int64_t& skipped,
                                     const Batch&... batches) {
  LazyTensor::MakeRows make;
  // out is aligned for any word (LazyTensor::kOutAlignment): the sources choose it.
  dispatch_word(word_selector(row_bytes, {tensor.data(), batches.rows.data()...}), [&](auto wtag) {
    using W = typename decltype(wtag)::type;
    const auto words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    // The claims need the output's extents only: its rows are the pieces.
    const auto claims = detail::claim_updates(ExecSpace(), schedule, MatrixView<W, MemSpace>(nullptr, out_rows, words),
                                              true, batches...);
    skipped = claims.skipped;
    // The captures keep the tensor and the batches' rows (which the claims point into) alive.
    make = [claims, tensor, kept = std::array<Tensor, sizeof...(Batch)>{batches.rows...}, rows_per_lazy_row](
               std::int64_t first, std::int64_t count, unsigned char* out) {
      claims.assign.write_rows(claims.keyed, reinterpret_cast<const W*>(tensor.data()), first * rows_per_lazy_row,
                               count * rows_per_lazy_row, reinterpret_cast<W*>(out), kernels::RowStores::Cached);
      ExecSpace().fence();
    };
  });
  return make;
}

// The rest of the op after \p s where streams(s): the updates that reach each rank are listed
// by the piece of the output they land in, and each piece is made when it is written, from
// the tensor's rows (ScatterNd: zeros) and its updates, in global order, with scatter_apply
// — the same bytes as the held output's rows.
LazyTensor scatter_streamed(const Comm& comm, ScatterOp op, const DistTensor* tensor, const DistTensor& indices,
                            const DistTensor& updates, const OpOptions& options, const ScatterStart& s,
                            std::optional<ScopedPhase>& phase) {
  const int me = comm.rank();
  const std::int64_t rpd = s.rows_per_dim0;
  const std::int64_t slice = s.g.slice_size;
  const std::int64_t out_rows = s.out_layout.count(me) * rpd;
  const std::size_t slice_bytes = s.slice_bytes();
  const std::int64_t piece = s.piece_targets();
  LazyTensor::MakeRows make;
  Tensor no_strings;  // strings are held (streams)
  route_updates(comm, op, s, indices, updates, options, phase, no_strings, [&](const auto&... batches) {
    using Batches = std::index_sequence_for<decltype(batches)...>;
    if (op == ScatterOp::Update && update_by_output_row((std::int64_t{0} + ... + batches.n), out_rows)) {
      std::int64_t skipped = -1;
      run_agreed(comm, [&] {  // the claims' winners may fit on one rank and not on another
        make = make_by_winners(tensor->local(), out_rows, rpd, slice_bytes, options.schedule, skipped, batches...);
      });
      return skipped;
    }
    std::shared_ptr<PiecedBatches> pieced;
    run_agreed(comm, [&] {  // the lists may fit on one rank and not on another
      pieced = std::make_shared<PiecedBatches>(out_rows, piece);
      (pieced->add(batches), ...);
    });
    // The captures keep the tensor and the lists (with the update rows they
    // read) alive as long as the rows can be made.
    make = [pieced, base = tensor ? tensor->local() : Tensor(), has_base = tensor != nullptr, op,
            schedule = options.schedule, denormals = options.denormals, dtype = s.dtype, rpd, slice,
            slice_bytes](std::int64_t first, std::int64_t count, unsigned char* out) {
      const std::int64_t targets = count * rpd;
      const Tensor rows = Tensor::adopt_host(dtype, Shape{targets, slice}, nullptr, out);
      // The tensor's rows of this part, its targets as rows of slice elements.
      const Tensor base_rows =
          has_base ? base.slice_rows(first, first + count).reshaped(Shape{targets, slice}) : Tensor();
      if (!has_base) std::memset(out, 0, static_cast<std::size_t>(targets) * slice_bytes);
      pieced->for_each_piece(
          first * rpd, targets, [&](std::int64_t at, std::int64_t n, const std::vector<PieceBatch>& cut) {
            const std::int64_t from = at - first * rpd;
            Tensor part = rows.slice_rows(from, from + n);
            const Tensor part_base = has_base ? base_rows.slice_rows(from, from + n) : Tensor();
            apply_to_piece(Batches(), cut, op, schedule, denormals, has_base ? &part_base : nullptr, part, slice);
          });
    };
    return pieced->skipped();
  });
  return LazyTensor(s.g.output, s.dtype, s.out_layout, me, std::move(make));
}

// The op, its output held whole or, where \p may_stream and streams() allow, made a piece
// at a time as it is written (scatter_streamed).
LazyTensor scatter_impl(const Comm& comm, ScatterOp op, const DistTensor* tensor, const DistTensor& indices,
                        const DistTensor& given_updates, const std::vector<std::int64_t>& shape,
                        const OpOptions& options, bool may_stream) {
  kx::ScopedRegion region(std::string("shardops::") + scatter_op_name(op));
  const DistTensor updates = op == ScatterOp::ScatterNd && given_updates.dtype() == DType::Bool
                                 ? canonical_bools(comm, given_updates)
                                 : given_updates;
  std::optional<ScopedPhase> phase;
  const ScatterStart s = start_scatter(comm, op, tensor, indices, updates, shape, options, phase);
  if (may_stream && streams(op, s)) return scatter_streamed(comm, op, tensor, indices, updates, options, s, phase);
  const ScatterGeometry& g = s.g;
  const int me = comm.rank();
  // TensorScatter*: scatter_apply writes the tensor's rows into the output itself, all of
  // them (by output row, or a copy of the tensor first). ScatterNd's zeroed output is
  // faulted in at once when the updates will touch nearly all of it.
  const Tensor* base = tensor ? &tensor->local() : nullptr;
  const Init zeros =
      !tensor && updates_cover_output(g.num_updates, g.output_rows, s.out_bytes) ? Init::ZeroDense : Init::Zero;
  Tensor out;
  run_agreed(comm, [&] {  // the output's block may fit on one rank and not on another
    out = tensor ? base->uninitialized_like("shardops::TensorScatter::output")
                 : Tensor(s.dtype, g.output.with_dim0(s.out_layout.count(me)), zeros, "shardops::ScatterNd::output");
  });
  // ScatterNd's string output keeps the updates' string type, even when empty.
  if (is_string(s.dtype) && !tensor) out = out.with_strings(updates.local().strings());
  if (g.empty_output) return DistTensor(out, g.output, s.out_layout, me);
  const ExecSpace space;
  const std::int64_t out_rows = s.out_layout.count(me) * s.rows_per_dim0;
  route_updates(comm, op, s, indices, updates, options, phase, out, [&](const auto&... batches) {
    return scatter_apply(space, op, options.schedule, options.denormals, base, out, out_rows, g.slice_size, batches...);
  });
  space.fence();
  return DistTensor(out, g.output, s.out_layout, me);
}

// Collective: every rank called the scatter op \p op with the same arguments.
void agree_on_scatter(const Comm& comm, ScatterOp op, const DistTensor* tensor, const DistTensor& indices,
                      const DistTensor& updates, const std::vector<std::int64_t>& shape, const OpOptions& options) {
  agree_on_op(comm, scatter_op_name(op),
              (tensor ? "tensor=" + call_text(comm, *tensor) + " " : std::string()) +
                  "indices=" + call_text(comm, indices) + " updates=" + call_text(comm, updates) +
                  (tensor ? std::string() : " shape=" + dims_text(shape)),
              options);
}

// TensorScatter*: strings share one pool per rank first (their handles move, then each rank
// fetches the strings it ends with), and are held.
LazyTensor tensor_scatter_impl(const Comm& comm, ScatterOp op, const DistTensor& tensor, const DistTensor& indices,
                               const DistTensor& updates, const OpOptions& options, bool may_stream) {
  if (op == ScatterOp::ScatterNd) throw InternalError("tensor_scatter called with ScatterNd");
  agree_on_scatter(comm, op, &tensor, indices, updates, {}, options);
  if (op == ScatterOp::Update && is_string(tensor.dtype()) && is_string(updates.dtype())) {
    const std::vector<DistTensor> shared =
        share_dist_string_pool(comm, {tensor, updates}, {nullptr, &indices}, options.route);
    const LazyTensor out =
        scatter_impl(comm, op, &shared[0], indices, shared[1], tensor.shape().dims(), options, false);
    return resolve_strings(comm, out.tensor(), shared[0].local().strings(), options.route);
  }
  return scatter_impl(comm, op, &tensor, indices, updates, tensor.shape().dims(), options, may_stream);
}

}  // namespace

bool scatter_reads_replicas(const Shape& indices, DType index_dtype, const Shape& updates, DType dtype, int nranks) {
  if (nranks <= 1 || indices.rank() == 0 || is_string(dtype) || dtype == DType::Bool) return false;
  const std::int64_t depth = indices.dim(indices.rank() - 1);
  const std::int64_t rows = indices.product(0, indices.rank() - 1);  // index rows
  if (depth <= 0 || rows <= 0 || rows > kernels::kMaxListed32 || updates.num_elements() % rows != 0) return false;
  const auto index_row_bytes = static_cast<std::uint64_t>(depth) * dtype_size(index_dtype);
  const auto update_row_bytes = static_cast<std::uint64_t>(updates.num_elements() / rows) * dtype_size(dtype);
  return static_cast<std::uint64_t>(nranks - 1) * index_row_bytes <= kRouteBytesPerRow + update_row_bytes;
}

DistTensor scatter_nd(const Comm& comm, const DistTensor& indices, const DistTensor& updates,
                      const std::vector<std::int64_t>& shape, const OpOptions& options) {
  agree_on_scatter(comm, ScatterOp::ScatterNd, nullptr, indices, updates, shape, options);
  return scatter_impl(comm, ScatterOp::ScatterNd, nullptr, indices, updates, shape, options, false).tensor();
}

LazyTensor scatter_nd_lazy(const Comm& comm, const DistTensor& indices, const DistTensor& updates,
                           const std::vector<std::int64_t>& shape, const OpOptions& options) {
  agree_on_scatter(comm, ScatterOp::ScatterNd, nullptr, indices, updates, shape, options);
  return scatter_impl(comm, ScatterOp::ScatterNd, nullptr, indices, updates, shape, options, true);
}

DistTensor tensor_scatter(const Comm& comm, ScatterOp op, const DistTensor& tensor, const DistTensor& indices,
                          const DistTensor& updates, const OpOptions& options) {
  return tensor_scatter_impl(comm, op, tensor, indices, updates, options, false).tensor();
}

LazyTensor tensor_scatter_lazy(const Comm& comm, ScatterOp op, const DistTensor& tensor, const DistTensor& indices,
                               const DistTensor& updates, const OpOptions& options) {
  return tensor_scatter_impl(comm, op, tensor, indices, updates, options, true);
}

}  // namespace shardops
