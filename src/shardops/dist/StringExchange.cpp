#include "shardops/dist/StringExchange.hpp"

#include <climits>
#include <cstring>

#include "shardops/dist/DistOps.hpp"
#include "shardops/dist/ExchangePlan.hpp"
#include "shardops/kernels/StringKernels.hpp"

namespace shardops {

namespace {

using Int64View = Kokkos::View<std::int64_t*, MemSpace>;

Int64View uninitialized(const char* label, std::int64_t n) {
  return Int64View(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), static_cast<std::size_t>(n));
}

// offsets(k) = sum of len(0..k-1) for k in [0, n]; returns the total.
std::int64_t exclusive_scan(const Int64View& len, const Int64View& offsets, std::int64_t n) {
  std::int64_t total = 0;
  Kokkos::parallel_scan(
      "shardops::strings::fetch::scan", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, n + 1),
      KOKKOS_LAMBDA(const std::int64_t k, std::int64_t& partial, const bool final) {
        if (final) offsets(k) = partial;
        if (k < n) partial += len(k);
      },
      total);
  return total;
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

Tensor fetch_strings(const Comm& comm, const Tensor& handles, const StringPool& own) {
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
  const ExchangePlan plan = ExchangePlan::build(comm, n, dest_of);
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
  const Int64View reply_off = uninitialized("shardops::strings::fetch::reply_off", nrecv + 1);
  const std::int64_t reply_total = exclusive_scan(reply_len, reply_off, nrecv);
  check_allocation(static_cast<std::size_t>(reply_total), "strings asked for by other ranks");
  ByteView reply(Kokkos::view_alloc(Kokkos::WithoutInitializing, "shardops::strings::fetch::reply"),
                 static_cast<std::size_t>(reply_total));
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
  const Int64View back_off = uninitialized("shardops::strings::fetch::back_off", nsend + 1);
  exclusive_scan(back_len, back_off, nsend);
  const ByteView fetched = plan.exchange_reverse_bytes(reply, bytes_per_rank(reply_off, plan.recv_offsets()),
                                                       bytes_per_rank(back_off, plan.send_offsets()));

  // The result: one entry per element, from this rank's pool or from what came back.
  const auto slot = plan.slots();
  const Int64View len = uninitialized("shardops::strings::fetch::len", n);
  Kokkos::parallel_for(
      "shardops::strings::fetch::len", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const StringHandle x = h(i);
        len(i) = x == 0 ? 0 : string_handle_home(x) == me ? kernels::entry_length(own_off, x) : back_len(slot(i));
      });
  StringPool pool;
  pool.home = me;
  pool.format = own.format;
  pool.offsets = uninitialized("shardops::strings::fetch::offsets", n + 1);
  const std::int64_t total = exclusive_scan(len, pool.offsets, n);
  check_allocation(static_cast<std::size_t>(total), "string pool");
  pool.bytes =
      Kokkos::View<char*, MemSpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "shardops::strings::fetch::bytes"),
                                    static_cast<std::size_t>(total));
  const Int64View offsets = pool.offsets;
  const Kokkos::View<char*, MemSpace> bytes = pool.bytes;
  Kokkos::parallel_for(
      "shardops::strings::fetch::copy", Kokkos::RangePolicy<ExecSpace>(space, 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const StringHandle x = h(i);
        if (x == 0) return;
        const std::int64_t to = offsets(i), count = len(i);
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

DistTensor resolve_strings(const Comm& comm, const DistTensor& t, const StringPool& own) {
  return DistTensor(fetch_strings(comm, t.local(), own), t.shape(), t.layout(), comm.rank());
}

std::vector<DistTensor> share_dist_string_pool(const Comm& comm, const std::vector<DistTensor>& inputs,
                                               const std::vector<const DistTensor*>& layout_of) {
  std::vector<DistTensor> aligned;
  std::vector<Tensor> locals;
  for (std::size_t m = 0; m < inputs.size(); ++m) {
    aligned.push_back(layout_of[m] ? align_to(comm, inputs[m], *layout_of[m]) : inputs[m]);
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
