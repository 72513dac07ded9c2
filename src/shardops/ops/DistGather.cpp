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
#include "shardops/route/StringExchange.hpp"
#include "shardops/route/detail/ExchangePlan.hpp"

namespace shardops {

namespace {

/// Every output row in one pass, once the replies are in: out[i] = src[request(i)]
/// for index rows this rank owns (dest(i) == self), the reply to slot(i) for the
/// others (in \p answered, a remote-only buffer: the self slots [self_first,
/// self_first + self_count) are left out), zeros for an ignored bad index (slot -1).
/// One streaming write of the output instead of two scattered ones. A named template:
/// nvcc rejects a KOKKOS_LAMBDA defined inside the dtype dispatch's generic lambda.
template <class W>
void assemble_output(const ExecSpace& space, std::int64_t n, const Kokkos::View<int*, MemSpace>& dest,
                     const Kokkos::View<std::int64_t*, MemSpace>& request,
                     const Kokkos::View<std::int64_t*, MemSpace>& slot, std::int64_t self_first,
                     std::int64_t self_count, int self, const W* src, const W* answered, W* out, std::int64_t words) {
  kernels::for_each_row_streaming(
      space, "shardops::GatherNd::assemble", n, KOKKOS_LAMBDA(const std::int64_t i) {
        // Own and answered rows interleave at random: pick the source row by a select,
        // not a branch the CPU would mispredict half the time.
        // Random rows of src: keep cache misses in flight. One expression, no named
        // temporaries: device passes drop the prefetch whole.
        constexpr std::int64_t ahead = 16;
        if (i + ahead < n)
          SHARDOPS_PREFETCH(dest(i + ahead) == self
                                ? src + request(i + ahead) * words
                                : answered + ExchangePlan::remote_position(kx::max<std::int64_t>(slot(i + ahead), 0),
                                                                           self_first, self_count) *
                                                 words);
        const bool own = dest(i) == self;
        const std::int64_t s = slot(i);
        if (!own && s < 0) {
          kernels::zero_row(out + i * words, words);  // an ignored bad index: rare
        } else {
          kernels::stream_row(out + i * words,
                              own ? src + request(i) * words
                                  : answered + ExchangePlan::remote_position(s, self_first, self_count) * words,
                              words);
        }
      });
}

/// Whether every rank should receive all of params and gather locally, rather than
/// fetch each row from its owner. The same answer on every rank: it looks only at
/// global shapes. Auto replicates when params are no larger than the average rank's
/// output: then for indices spread over params a rank receives fewer rows (the params
/// rows it lacks, P (R-1)/R) than the replies would bring (n (R-1)/R of its n output
/// rows), with no requests, routing or packing, and the copy of params costs no more
/// memory than the rank's output. Indices that mostly name a rank's own rows would
/// move less by fetching; Auto does not look at them (that would be another pass).
bool replicate_params(GatherParams choice, const GatherGeometry& g, int nranks) {
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

}  // namespace

DistTensor gather_nd(const Comm& comm, const DistTensor& params, const DistTensor& indices_in,
                     const OpOptions& options) {
  kx::ScopedRegion region("shardops::GatherNd");
  record_bytes_sent(options, 0);
  check_tf_kernel("GatherNd", params.dtype(), indices_in.dtype(), options.bad_indices);
  std::optional<ScopedPhase> phase(std::in_place, "validate");
  const GatherGeometry g = check_gather_nd(params.shape(), indices_in.shape());
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
  tensor_bytes(g.output, params.dtype(), "shardops::GatherNd::output");  // the same text at any rank count
  Tensor out;
  run_agreed(comm, [&] {  // the output's block may fit on one rank and not on another
    out = Tensor(params.dtype(), local_shape, g.index_depth == 0 ? Init::Zero : Init::Streamed,
                 "shardops::GatherNd::output");
  });
  const std::size_t row_bytes = static_cast<std::size_t>(g.slice_size) * dtype_size(params.dtype());

  if (g.index_depth == 0) {
    // Every index row selects all of params: replicate params, gather locally.
    const Tensor full = params.allgather(comm, options.route);
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
  const bool replicate = comm.size() > 1 && !one_row && replicate_params(options.gather_params, g, comm.size());
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
      std::int64_t own_first = params.layout().offset(me) * rows_per_dim0;
      std::int64_t own_rows = params.layout().count(me) * rows_per_dim0;
      const unsigned char* own = params.local().data();
      ByteView others;
      Tensor with_strings;  // strings: all of params, its handles in one pool homed here
      if (replicate) {
        phase.emplace("route");
        if (is_string(params.dtype())) {
          with_strings = params.allgather(comm, options.route);
          others = ByteView(with_strings.data(), with_strings.nbytes());
          own_rows = 0;
          record_bytes_sent(options, static_cast<std::int64_t>(params.local().nbytes()) * (comm.size() - 1));
        } else {
          others = allocate_uninitialized<ByteView>(
              "shardops::GatherNd::replicated",
              static_cast<std::size_t>(params.layout().total() - params.layout().count(me)) * params.row_bytes());
          record_bytes_sent(
              options, replicate_blocks(comm, params.layout(), ByteView(params.local().data(), params.local().nbytes()),
                                        others, params.row_bytes(), OwnBlock::LeftOut, options.route));
        }
      }
      phase.emplace("apply");
      std::int64_t zeroed = 0;
      if (row_bytes > 0) {
        // params may be a row slice of a larger tensor: pick a word its rows align to.
        dispatch_word(word_selector(row_bytes, {own, others.data()}), [&](auto wtag) {
          using W = typename decltype(wtag)::type;
          const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
          const kernels::SplitRows<W> rows{reinterpret_cast<const W*>(own), reinterpret_cast<const W*>(others.data()),
                                           own_first, own_rows, words};
          zeroed = kernels::gather_rows_from<ExecSpace, W>(
              space, n, linear, rows,
              MatrixView<W>(reinterpret_cast<W*>(out.data()), static_cast<std::size_t>(n),
                            static_cast<std::size_t>(words)));
        });
      }
      validate(row_bytes > 0 ? zeroed : -1);
      // Strings: handles into the replicated pool (homed here) become this rank's own.
      if (replicate && is_string(params.dtype())) out = compact_strings(out.with_strings(with_strings.strings()), me);
      return;
    }
    phase.emplace("route");
    // Ask the owner of each index's first coordinate for the row, by its local number.
    const OwnerOf owner = params.layout().device_owner();
    // Every entry is written by the route kernel: no need to zero them first.
    const auto request = allocate_uninitialized<Kokkos::View<std::int64_t*, MemSpace>>("shardops::GatherNd::request",
                                                                                       static_cast<std::size_t>(n));
    const auto dest =
        allocate_uninitialized<Kokkos::View<int*, MemSpace>>("shardops::GatherNd::dest", static_cast<std::size_t>(n));
    const std::int64_t bad = route_to_first_coordinate_owner(space, "shardops::GatherNd::route", n, linear, owner,
                                                             rows_per_dim0, dest, request);
    validate(bad);
    const ExchangePlan plan = ExchangePlan::build(comm, n, EntryOf<decltype(dest)>{dest}, options.route);
    // Requests to this rank itself are not sent: it answers them below, from params
    // straight into the output.
    const ByteView asked =
        plan.forward_remote(reinterpret_cast<const unsigned char*>(request.data()), sizeof(std::int64_t));
    // Owner side: the rows other ranks asked for go back, gathered from params a stage
    // at a time as they are sent (own rows are copied straight from params when the
    // output is assembled).
    const ByteView answered = plan.reply_remote(params.local().data(), asked, row_bytes);
    record_bytes_sent(options, plan.bytes_sent());
    // params may be a row slice of a larger tensor: pick a word its rows align to.
    const std::size_t word = row_bytes > 0 ? word_selector(row_bytes, {params.local().data()}) : 1;
    phase.emplace("apply");
    if (row_bytes > 0 && n > 0) {
      dispatch_word(word, [&](auto wtag) {
        using W = typename decltype(wtag)::type;
        const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
        assemble_output(space, n, dest, request, plan.slots(), plan.send_offsets()[static_cast<std::size_t>(me)],
                        plan.num_self(), me, reinterpret_cast<const W*>(params.local().data()),
                        reinterpret_cast<const W*>(answered.data()), reinterpret_cast<W*>(out.data()), words);
      });
    }
  });
  space.fence();
  const DistTensor result(out, g.output, out_layout, me);
  // Strings: the fetched handles name strings held by the params' ranks (replicated
  // params brought their strings along: nothing to fetch).
  return is_string(params.dtype()) && !replicate
             ? resolve_strings(comm, result, params.local().strings(), options.route)
             : result;
}

}  // namespace shardops
