#include "shardops/route/StringExchange.hpp"

#include <climits>
#include <cstring>

#include "shardops/core/HostMemory.hpp"
#include "shardops/kernels/StringKernels.hpp"
#include "shardops/route/detail/ExchangePlan.hpp"

namespace shardops {

namespace {

using Int64View = Kokkos::View<std::int64_t*, MemSpace>;

Int64View uninitialized(const char* label, std::int64_t n) {
  return allocate_uninitialized<Int64View>(label, static_cast<std::size_t>(n));
}

// Offsets of the entries whose lengths are len(0..n-1) (kernels::offsets_of).
Int64View offsets_of_lengths(const Int64View& len, std::int64_t n, std::int64_t& total, const char* label) {
  return kernels::offsets_of(
      ExecSpace(), n, KOKKOS_LAMBDA(const std::int64_t k) { return len(k); }, total, label);
}

// Bytes per rank: offsets at the rank boundaries of a row segmentation.
std::vector<std::int64_t> bytes_per_rank(const Int64View& byte_offsets, const std::vector<std::int64_t>& row_offsets) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), byte_offsets);
  std::vector<std::int64_t> out(row_offsets.size() - 1);
  for (std::size_t r = 0; r + 1 < row_offsets.size(); ++r) out[r] = host(row_offsets[r + 1]) - host(row_offsets[r]);
  return out;
}

// Every rank's bytes, in rank order.
std::string allgatherv_bytes(const Comm& comm, const std::string& mine) {
  if (comm.size() == 1) return mine;
  const std::vector<std::int64_t> sizes = comm.allgather(static_cast<std::int64_t>(mine.size()));
  std::vector<int> counts, displs;
  std::int64_t total = 0;
  for (const std::int64_t c : sizes) {
    if (total + c > INT_MAX) throw InvalidArgument("a string tensor of more than 2 GiB cannot be replicated");
    counts.push_back(static_cast<int>(c));
    displs.push_back(static_cast<int>(total));
    total += c;
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  check_mpi(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(), counts.data(),
                           displs.data(), MPI_BYTE, comm.get()),
            "MPI_Allgatherv");
  return all;
}

}  // namespace

Tensor fetch_strings(const Comm& comm, const Tensor& handles, const StringPool& own, const RouteOptions& route) {
  const ExecSpace space;
  const int me = comm.rank(), nranks = comm.size();
  const std::int64_t n = handles.num_elements();
  const auto h = handles.flat<const StringHandle>();
  const std::int64_t own_entries = own.entries();

  // A handle naming no rank or no entry would be a bug upstream: agree, then stop.
  std::int64_t broken = 0;
  Kokkos::parallel_reduce(
      "shardops::strings::fetch::check", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& bad) {
        const StringHandle x = h(i);
        if (x == 0) return;
        const int home = string_handle_home(x);
        if (home >= nranks || (home == me && string_handle_entry(x) >= own_entries)) ++bad;
      },
      broken);
  if (comm.max(broken) > 0) throw InternalError("fetch_strings: string handles that name no string");

  // Requests: the entry number of every string held elsewhere, to its home rank.
  auto dest_of = KOKKOS_LAMBDA(const std::int64_t i)->std::int64_t {
    const StringHandle x = h(i);
    return x == 0 || string_handle_home(x) == me ? -1 : string_handle_home(x);
  };
  const ExchangePlan plan = ExchangePlan::build(comm, n, dest_of, route);
  const Int64View entry = uninitialized("shardops::strings::fetch::entry", n);
  Kokkos::parallel_for(
      "shardops::strings::fetch::entry", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { entry(i) = h(i) == 0 ? 0 : string_handle_entry(h(i)); });
  const ByteView asked_bytes = plan.forward(reinterpret_cast<const unsigned char*>(entry.data()), sizeof(std::int64_t));
  const std::int64_t nrecv = plan.num_recv(), nsend = plan.num_send();
  const std::int64_t* asked = reinterpret_cast<const std::int64_t*>(asked_bytes.data());

  // Holder side: the asked strings' lengths, and their bytes back to back in request order.
  const Kokkos::View<const std::int64_t*, MemSpace> own_off = own.offsets;
  const Kokkos::View<const char*, MemSpace> own_bytes = own.bytes;
  const Int64View reply_len = uninitialized("shardops::strings::fetch::reply_len", nrecv);
  Kokkos::parallel_for(
      "shardops::strings::fetch::reply_len", Kokkos::RangePolicy<ExecSpace>(space, 0, nrecv),
      KOKKOS_LAMBDA(const std::int64_t k) { reply_len(k) = own_off(asked[k] + 1) - own_off(asked[k]); });
  std::int64_t reply_total = 0;
  const Int64View reply_off = offsets_of_lengths(reply_len, nrecv, reply_total, "shardops::strings::fetch::reply_off");
  // Agreed: the others would otherwise wait for this rank in the exchange that follows.
  run_agreed(comm,
             [&] { check_allocation(static_cast<std::size_t>(reply_total), "strings asked for by other ranks"); });
  const ByteView reply =
      allocate_uninitialized<ByteView>("shardops::strings::fetch::reply", static_cast<std::size_t>(reply_total));
  Kokkos::parallel_for(
      "shardops::strings::fetch::reply", Kokkos::RangePolicy<ExecSpace>(space, 0, nrecv),
      KOKKOS_LAMBDA(const std::int64_t k) {
        const std::int64_t from = own_off(asked[k]), to = reply_off(k), len = reply_len(k);
        for (std::int64_t b = 0; b < len; ++b) reply(to + b) = static_cast<unsigned char>(own_bytes(from + b));
      });

  // Asker side: lengths first (fixed-size rows), so each rank knows how many bytes come back.
  const ByteView back_len_bytes =
      plan.exchange_reverse(ByteView(reinterpret_cast<unsigned char*>(reply_len.data()),
                                     static_cast<std::size_t>(nrecv) * sizeof(std::int64_t)),
                            sizeof(std::int64_t));
  const Int64View back_len(reinterpret_cast<std::int64_t*>(back_len_bytes.data()), static_cast<std::size_t>(nsend));
  std::int64_t back_total = 0;
  const Int64View back_off = offsets_of_lengths(back_len, nsend, back_total, "shardops::strings::fetch::back_off");
  const ByteView fetched = plan.exchange_reverse_bytes(reply, bytes_per_rank(reply_off, plan.recv_offsets()),
                                                       bytes_per_rank(back_off, plan.send_offsets()));

  // The result: one entry per element, from this rank's pool or from what came back.
  const auto slot = plan.slots();
  StringPool pool;
  pool.home = me;
  pool.format = own.format;
  std::int64_t total = 0;
  pool.offsets = kernels::offsets_of(
      space, n,
      KOKKOS_LAMBDA(const std::int64_t i) {
        const StringHandle x = h(i);
        return x == 0                        ? std::int64_t(0)
               : string_handle_home(x) == me ? kernels::entry_length(own_off, x)
                                             : back_len(slot(i));
      },
      total, "shardops::strings::fetch::offsets");
  run_agreed(comm, [&] { check_allocation(static_cast<std::size_t>(total), "string pool"); });
  pool.bytes = allocate_uninitialized<Kokkos::View<char*, MemSpace>>("shardops::strings::fetch::bytes",
                                                                     static_cast<std::size_t>(total));
  const Int64View offsets = pool.offsets;
  const Kokkos::View<char*, MemSpace> bytes = pool.bytes;
  Kokkos::parallel_for(
      "shardops::strings::fetch::copy", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const StringHandle x = h(i);
        if (x == 0) return;
        const std::int64_t to = offsets(i), count = offsets(i + 1) - to;
        if (string_handle_home(x) == me) {
          const std::int64_t from = own_off(string_handle_entry(x));
          for (std::int64_t b = 0; b < count; ++b) bytes(to + b) = own_bytes(from + b);
        } else {
          const std::int64_t from = back_off(slot(i));
          for (std::int64_t b = 0; b < count; ++b) bytes(to + b) = static_cast<char>(fetched(from + b));
        }
      });
  Tensor out(DType::String, handles.shape(), Init::Uninitialized, "shardops::strings::fetch::handles");
  const auto oh = out.flat<StringHandle>();
  Kokkos::parallel_for(
      "shardops::strings::fetch::handles", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) { oh(i) = make_string_handle(me, i); });
  space.fence();
  return out.with_strings(pool);
}

DistTensor resolve_strings(const Comm& comm, const DistTensor& t, const StringPool& own, const RouteOptions& route) {
  return DistTensor(fetch_strings(comm, t.local(), own, route), t.shape(), t.layout(), comm.rank());
}

std::vector<DistTensor> share_dist_string_pool(const Comm& comm, const std::vector<DistTensor>& inputs,
                                               const std::vector<const DistTensor*>& layout_of,
                                               const RouteOptions& route) {
  std::vector<DistTensor> aligned;
  std::vector<Tensor> locals;
  for (std::size_t m = 0; m < inputs.size(); ++m) {
    aligned.push_back(layout_of[m] ? align_to(comm, inputs[m], *layout_of[m], route) : inputs[m]);
    locals.push_back(aligned.back().local());
  }
  const std::vector<Tensor> shared = share_string_pool(locals);
  std::vector<DistTensor> out;
  for (std::size_t m = 0; m < inputs.size(); ++m)
    out.emplace_back(shared[m], aligned[m].shape(), aligned[m].layout(), comm.rank());
  return out;
}

Tensor allgather_strings(const Comm& comm, const DistTensor& t) {
  // Small tensors only (GatherNd with index depth 0 replicates params): every rank's
  // lengths, then every rank's bytes.
  const std::vector<std::string> mine = string_values(t.local());
  std::vector<std::int64_t> lengths;
  std::string bytes;
  for (const std::string& s : mine) {
    lengths.push_back(static_cast<std::int64_t>(s.size()));
    bytes += s;
  }
  const std::string all_lengths = allgatherv_bytes(
      comm, std::string(reinterpret_cast<const char*>(lengths.data()), lengths.size() * sizeof(std::int64_t)));
  const std::string all = allgatherv_bytes(comm, bytes);
  std::vector<std::string> values(all_lengths.size() / sizeof(std::int64_t));
  std::size_t pos = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::int64_t len = 0;
    std::memcpy(&len, all_lengths.data() + i * sizeof(std::int64_t), sizeof(len));
    values[i] = all.substr(pos, static_cast<std::size_t>(len));
    pos += static_cast<std::size_t>(len);
  }
  return make_string_tensor(t.shape(), values, comm.rank(), t.local().strings().format);
}

}  // namespace shardops
