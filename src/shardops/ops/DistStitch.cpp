#include <limits>
#include <optional>
#include <vector>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/kernels/Assign.hpp"
#include "shardops/kernels/FindWhere.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/ops/detail/DistCommon.hpp"
#include "shardops/route/StringExchange.hpp"
#include "shardops/route/detail/ExchangePlan.hpp"

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

/// Every index names a row of the rank that holds it (one rank; or, say, the inverse
/// of a partition of each rank's own rows): this rank's output rows, \p out_rows from
/// \p first_row on, assigned straight from its inputs in key order (m, position),
/// nothing routed. \p rows: data[m] in indices[m]'s layout.
Tensor stitch_in_place(const ExecSpace& space, const std::vector<DistTensor>& indices, const std::vector<Tensor>& rows,
                       const std::vector<std::int64_t>& key_base, const StitchGeometry& g, std::int64_t out_rows,
                       std::int64_t first_row, Schedule schedule) {
  // Every row is written once: by its last writer, or as zeros by zero_unclaimed().
  Tensor merged(rows[0].dtype(), g.output.with_dim0(out_rows), Init::Uninitialized, "shardops::DynamicStitch::merged");
  const std::size_t row_bytes = static_cast<std::size_t>(g.slice_size) * dtype_size(rows[0].dtype());
  if (row_bytes == 0 || out_rows == 0) return merged;
  std::size_t word = row_bytes;  // a word every source's rows align to (a source may be a row slice)
  for (const Tensor& d : rows) word = word_selector(word, {d.data()});
  dispatch_word(word, [&](auto tag) {
    using W = typename decltype(tag)::type;
    const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
    kernels::LastWriterAssign<ExecSpace, W> assign(space, merged.matrix<W>(out_rows, words), schedule,
                                                   kernels::UnnamedRows::Zero);
    for (int pass = 0; pass < 2; ++pass) {
      if (pass == 1) assign.zero_unclaimed();
      for (std::size_t m = 0; m < indices.size(); ++m) {
        const std::int64_t count = indices[m].local().num_elements();
        const IndexAsTarget to{reinterpret_cast<const std::int32_t*>(indices[m].local().data()), first_row};
        const auto src = rows[m].matrix<const W>(count, words);
        if (pass == 0) {
          assign.claim(count, to, kernels::ConsecutiveKeys{key_base[m]}, src);
        } else {
          assign.copy_winners(count, to, kernels::ConsecutiveKeys{key_base[m]}, src);
        }
      }
    }
  });
  space.fence();
  return merged;
}

/// Sequential schedule: where the rows of each input start in each source rank's
/// received rows (a remote-only buffer): [r * (inputs + 1) + m] is the first row of
/// input m from rank r, [r * (inputs + 1) + inputs] the end of rank r's rows (empty
/// for this rank: its rows are never received). A source packs its rows input by
/// input, each in order, so its keys increase, and the rows of input m are those with
/// keys in [key_base[m], key_base[m + 1]): a binary search per (source, input).
std::vector<std::int64_t> input_starts(const ExecSpace& space, const ExchangePlan& plan, const ByteView& recv_key,
                                       const std::vector<std::int64_t>& key_base) {
  const std::int64_t inputs = static_cast<std::int64_t>(key_base.size());
  const std::int64_t stride = inputs + 1, entries = plan.nranks() * stride;
  const Kokkos::View<std::int64_t*, Kokkos::HostSpace> host_base("shardops::DynamicStitch::key_base",
                                                                 static_cast<std::size_t>(inputs));
  const Kokkos::View<std::int64_t*, Kokkos::HostSpace> host_seg("shardops::DynamicStitch::segments",
                                                                static_cast<std::size_t>(2 * plan.nranks()));
  for (std::int64_t m = 0; m < inputs; ++m) host_base(m) = key_base[static_cast<std::size_t>(m)];
  const std::vector<std::int64_t>& offsets = plan.remote_recv_offsets();
  for (std::size_t r = 0; r < static_cast<std::size_t>(plan.nranks()); ++r) {
    host_seg(2 * r) = offsets[r];
    host_seg(2 * r + 1) = offsets[r + 1];
  }
  const auto base = Kokkos::create_mirror_view_and_copy(MemSpace(), host_base);
  const auto seg = Kokkos::create_mirror_view_and_copy(MemSpace(), host_seg);
  const Kokkos::View<std::int64_t*, MemSpace> starts("shardops::DynamicStitch::input_starts",
                                                     static_cast<std::size_t>(entries));
  const std::int64_t* keys = reinterpret_cast<const std::int64_t*>(recv_key.data());
  Kokkos::parallel_for(
      "shardops::DynamicStitch::input_starts", Kokkos::RangePolicy<ExecSpace>(space, 0, entries),
      KOKKOS_LAMBDA(const std::int64_t j) {
        const std::int64_t r = j / stride, m = j % stride;
        std::int64_t lo = seg(2 * r), hi = seg(2 * r + 1);
        if (m < inputs) {  // the first row with key >= key_base[m]
          while (lo < hi) {
            const std::int64_t mid = lo + (hi - lo) / 2;
            if (keys[mid] < base(m))
              lo = mid + 1;
            else
              hi = mid;
          }
        } else {
          lo = hi;
        }
        starts(j) = lo;
      });
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), starts);
  return std::vector<std::int64_t>(host.data(), host.data() + entries);
}

DistTensor stitch_impl(const Comm& comm, const std::vector<DistTensor>& indices, const std::vector<DistTensor>& data,
                       const OpOptions& options) {
  kx::ScopedRegion region("shardops::DynamicStitch");
  const ExecSpace space;
  const int n = static_cast<int>(indices.size());
  for (int m = 0; m < n; ++m)
    expect_dtype("DynamicStitch", m, DType::Int32, indices[static_cast<std::size_t>(m)].dtype());
  for (std::size_t m = 1; m < data.size(); ++m)
    expect_dtype("DynamicStitch", n + static_cast<int>(m), data[0].dtype(), data[m].dtype());
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
  if (options.bad_indices == BadIndices::Error) {
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
  // TF checks the index values before the data shapes.
  const StitchGeometry g = check_dynamic_stitch(index_shapes, data_shapes, mx);

  const RowLayout out_layout = RowLayout::balanced(g.first_dim, comm.size());
  tensor_bytes(g.output, data[0].dtype(), "shardops::DynamicStitch::merged");  // the same text at any rank count
  const int me = comm.rank();
  phase.emplace("route");
  // Nothing to route when every rank's indices name only rows it owns (always so on
  // one rank): then each rank's rows in key order are its inputs' rows in (m, position)
  // order, and no other rank writes its rows.
  const std::int64_t own_first = out_layout.offset(me), own_end = own_first + out_layout.count(me);
  const bool in_place = comm.size() == 1 || comm.min(mine_min >= own_first && mine_max < own_end ? 1 : 0) == 1;
  if (in_place) {
    std::vector<Tensor> rows;  // data[m] in indices[m]'s layout
    for (std::size_t m = 0; m < indices.size(); ++m)
      rows.push_back(align_to(comm, data[m], indices[m], options.route).local());
    record_bytes_sent(options, 0);
    phase.emplace("apply");
    std::vector<std::int64_t> keys(indices.size());
    for (std::size_t m = 0; m < indices.size(); ++m) keys[m] = key_base[m] + first_flat[m];
    const Tensor merged =
        stitch_in_place(space, indices, rows, keys, g, out_layout.count(me), own_first, options.schedule);
    return DistTensor(merged, g.output, out_layout, me);
  }

  // Route every (target, key, row) to the owner of its target row.
  const OwnerOf owner = out_layout.device_owner();
  std::int64_t total = 0;
  std::vector<std::int64_t> local_first(indices.size());
  for (std::size_t m = 0; m < indices.size(); ++m) {
    local_first[m] = total;
    total += indices[m].local().num_elements();
  }
  // Every entry is written by the route kernels: no need to zero them first.
  const auto dest = allocate_uninitialized<Kokkos::View<int*, MemSpace>>("shardops::DynamicStitch::dest",
                                                                         static_cast<std::size_t>(total));
  const auto target = allocate_uninitialized<Kokkos::View<std::int64_t*, MemSpace>>("shardops::DynamicStitch::target",
                                                                                    static_cast<std::size_t>(total));
  const auto key = allocate_uninitialized<Kokkos::View<std::int64_t*, MemSpace>>("shardops::DynamicStitch::key",
                                                                                 static_cast<std::size_t>(total));
  for (std::size_t m = 0; m < indices.size(); ++m) {
    const std::int32_t* ids = reinterpret_cast<const std::int32_t*>(indices[m].local().data());
    const std::int64_t first = local_first[m], kb = key_base[m] + first_flat[m];
    Kokkos::parallel_for(
        "shardops::DynamicStitch::route", Kokkos::RangePolicy<ExecSpace>(space, 0, indices[m].local().num_elements()),
        KOKKOS_LAMBDA(const std::int64_t i) {
          const std::int32_t idx = ids[i];
          const int r = idx < 0 ? -1 : owner(idx);
          dest(first + i) = r;
          target(first + i) = idx < 0 ? -1 : idx - owner.offset(r);
          key(first + i) = kb + i;
        });
  }
  auto dest_of = KOKKOS_LAMBDA(const std::int64_t j)->std::int64_t { return dest(j); };
  const ExchangePlan plan = ExchangePlan::build(comm, total, dest_of, options.route);
  // Rows that stay on this rank are neither packed nor received: they are assigned
  // straight from `rows` below.
  const ByteView recv_target =
      plan.forward_remote(reinterpret_cast<const unsigned char*>(target.data()), sizeof(std::int64_t));
  const ByteView recv_key =
      plan.forward_remote(reinterpret_cast<const unsigned char*>(key.data()), sizeof(std::int64_t));
  const std::size_t row_bytes = static_cast<std::size_t>(g.slice_size) * dtype_size(data[0].dtype());
  const ByteView send = allocate_uninitialized<ByteView>("shardops::DynamicStitch::send",
                                                         static_cast<std::size_t>(plan.num_send_remote()) * row_bytes);
  std::vector<Tensor> rows;      // data[m] in indices[m]'s layout
  std::size_t word = row_bytes;  // a word every source's rows align to (a source may be a row slice)
  for (std::size_t m = 0; m < indices.size(); ++m) {
    rows.push_back(align_to(comm, data[m], indices[m], options.route).local());
    plan.pack_remote(send, local_first[m], rows.back().data(), indices[m].local().num_elements(), row_bytes);
    word = word_selector(word, {rows.back().data()});
  }
  const ByteView recv_rows = plan.exchange_remote(send, row_bytes);
  record_bytes_sent(options, plan.bytes_sent());

  phase.emplace("apply");
  // Sequential: the rows in key order — input by input, each input's rows by source
  // rank — each written over the last. Parallel: the batches by source rank, the keyed
  // (atomic max) schedule. Either way the rows nobody names are zeroed apart, so the
  // output is written once.
  const Schedule schedule = kernels::resolve(options.schedule, space);
  const bool assigns = row_bytes > 0 && total + plan.num_recv() > 0;
  Tensor merged;
  run_agreed(comm, [&] {  // the output's block may fit on one rank and not on another
    merged = Tensor(data[0].dtype(), g.output.with_dim0(out_layout.count(me)),
                    assigns ? Init::Uninitialized : Init::Zero, "shardops::DynamicStitch::merged");
  });
  if (assigns) {
    const std::vector<std::int64_t> starts =
        schedule == Schedule::Sequential ? input_starts(space, plan, recv_key, key_base) : std::vector<std::int64_t>();
    dispatch_word(word, [&](auto tag) {
      using W = typename decltype(tag)::type;
      const std::int64_t words = static_cast<std::int64_t>(row_bytes / sizeof(W));
      const auto wz = static_cast<std::size_t>(words);
      kernels::LastWriterAssign<ExecSpace, W> assign(space, merged.matrix<W>(out_layout.count(me), words), schedule,
                                                     kernels::UnnamedRows::Zero);
      const std::int64_t nrecv = plan.num_recv_remote();
      const std::int64_t* to = reinterpret_cast<const std::int64_t*>(recv_target.data());
      const std::int64_t* keys = reinterpret_cast<const std::int64_t*>(recv_key.data());
      const W* received = reinterpret_cast<const W*>(recv_rows.data());
      // Received rows [first, last), and this rank's own rows of input m.
      auto received_batch = [&](auto&& step, std::int64_t first, std::int64_t last) {
        step(last - first, ReceivedRow{to + first}, kernels::KeysFrom{keys + first},
             MatrixView<const W>(received + first * words, static_cast<std::size_t>(last - first), wz));
      };
      auto own_batch = [&](auto&& step, std::size_t m) {
        const std::int64_t count = indices[m].local().num_elements();
        step(count, LocalTarget{dest, target, me, local_first[m]}, kernels::KeysFrom{key.data() + local_first[m]},
             MatrixView<const W>(reinterpret_cast<const W*>(rows[m].data()), static_cast<std::size_t>(count), wz));
      };
      auto claim = [&](std::int64_t count, const auto& to_of, const auto& key_of, const MatrixView<const W>& src) {
        assign.claim(count, to_of, key_of, src);
      };
      if (schedule == Schedule::Sequential) {
        const std::size_t inputs = indices.size();
        for (std::size_t m = 0; m < inputs; ++m) {
          for (int r = 0; r < comm.size(); ++r) {
            const std::size_t at = static_cast<std::size_t>(r) * (inputs + 1) + m;
            if (r == me) {
              own_batch(claim, m);
            } else {
              received_batch(claim, starts[at], starts[at + 1]);
            }
          }
        }
        assign.zero_unclaimed();
        return;
      }
      // The keys decide, not the order: all received rows are one batch.
      auto each_batch = [&](auto&& step) {
        received_batch(step, 0, nrecv);
        for (std::size_t m = 0; m < indices.size(); ++m) own_batch(step, m);
      };
      each_batch(claim);
      assign.zero_unclaimed();
      each_batch([&](std::int64_t count, const auto& to_of, const auto& key_of, const MatrixView<const W>& src) {
        assign.copy_winners(count, to_of, key_of, src);
      });
    });
  }
  space.fence();
  return DistTensor(merged, g.output, out_layout, me);
}

}  // namespace

DistTensor dynamic_stitch(const Comm& comm, const std::vector<DistTensor>& indices, const std::vector<DistTensor>& data,
                          const OpOptions& options) {
  bool strings = !data.empty() && data.size() == indices.size();
  for (const DistTensor& d : data) strings = strings && is_string(d.dtype());
  if (!strings) return stitch_impl(comm, indices, data, options);
  // Every data[m] in its indices' layout, with one pool per rank: the handles are
  // stitched like any 8-byte rows, then each rank fetches the strings it ends with.
  std::vector<const DistTensor*> layout_of;
  for (const DistTensor& t : indices) layout_of.push_back(&t);
  const std::vector<DistTensor> shared = share_dist_string_pool(comm, data, layout_of, options.route);
  return resolve_strings(comm, stitch_impl(comm, indices, shared, options), shared[0].local().strings(), options.route);
}

}  // namespace shardops
