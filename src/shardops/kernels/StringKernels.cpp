#include "shardops/kernels/StringKernels.hpp"

#include <algorithm>

#include "shardops/core/Error.hpp"

namespace shardops {

namespace {

using Offsets = Kokkos::View<std::int64_t*, MemSpace>;
using Bytes = Kokkos::View<char*, MemSpace>;

FlatView<const StringHandle> handles_of(const Tensor& t) { return t.flat<const StringHandle>(); }

}  // namespace

Tensor compact_strings(const Tensor& t, int home) {
  check_own_string_handles(t, "compact_strings");
  const std::int64_t n = t.num_elements();
  const auto h = handles_of(t);
  const Kokkos::View<const std::int64_t*, MemSpace> src_off = t.strings().offsets;
  const Kokkos::View<const char*, MemSpace> src_bytes = t.strings().bytes;
  std::int64_t total = 0;
  const Offsets offsets = kernels::offsets_of(
      ExecSpace(), n, KOKKOS_LAMBDA(const std::int64_t i) { return kernels::entry_length(src_off, h(i)); }, total,
      "shardops::strings::compact::offsets");
  check_allocation(static_cast<std::size_t>(total), "string pool");
  const Bytes bytes =
      allocate_uninitialized<Bytes>("shardops::strings::compact::bytes", static_cast<std::size_t>(total));
  Kokkos::parallel_for(
      "shardops::strings::compact::copy", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, n),
      KOKKOS_LAMBDA(const std::int64_t i) {
        const StringHandle x = h(i);
        if (x == 0) return;
        const std::int64_t e = string_handle_entry(x);
        const std::int64_t from = src_off(e), len = src_off(e + 1) - from, to = offsets(i);
        for (std::int64_t k = 0; k < len; ++k) bytes(to + k) = src_bytes(from + k);
      });
  StringPool pool{offsets, bytes, home, t.strings().format};
  return sequential_string_handles(t.shape(), home, "shardops::strings::compact").with_strings(pool);
}

std::vector<Tensor> share_string_pool(const std::vector<Tensor>& inputs) {
  if (inputs.empty()) return inputs;
  // Distinct pools, in first-use order, and where each one's entries start.
  std::vector<const StringPool*> pools;
  std::vector<std::int64_t> entry_base, byte_base;
  std::vector<std::size_t> pool_of(inputs.size());
  std::int64_t entries = 0, nbytes = 0;
  int home = inputs[0].strings().home;
  bool home_set = false;
  for (std::size_t m = 0; m < inputs.size(); ++m) {
    const StringPool& p = inputs[m].strings();
    if (p.entries() > 0 && !home_set) {
      home = p.home;
      home_set = true;
    }
    std::size_t k = 0;
    while (k < pools.size() &&
           !(pools[k]->offsets.data() == p.offsets.data() && pools[k]->bytes.data() == p.bytes.data()))
      ++k;
    if (k == pools.size()) {
      pools.push_back(&p);
      entry_base.push_back(entries);
      byte_base.push_back(nbytes);
      entries += p.entries();
      nbytes += p.nbytes();
    }
    pool_of[m] = k;
  }
  if (pools.size() == 1) return inputs;

  StringPool merged;
  merged.home = home;
  merged.format = inputs[0].strings().format;
  // One UTF-8 input makes the shared strings UTF-8: ASCII is UTF-8's subset, not the reverse.
  for (const StringPool* p : pools) merged.format.utf8 = merged.format.utf8 || p->format.utf8;
  merged.offsets =
      allocate_uninitialized<Offsets>("shardops::strings::merged::offsets", static_cast<std::size_t>(entries + 1));
  check_allocation(static_cast<std::size_t>(nbytes), "string pool");
  merged.bytes = allocate_uninitialized<Bytes>("shardops::strings::merged::bytes", static_cast<std::size_t>(nbytes));
  for (std::size_t k = 0; k < pools.size(); ++k) {
    const StringPool& p = *pools[k];
    const std::int64_t eb = entry_base[k], bb = byte_base[k], count = p.entries();
    const Kokkos::View<const std::int64_t*, MemSpace> src = p.offsets;
    const Offsets dst = merged.offsets;
    Kokkos::parallel_for(
        "shardops::strings::merged::offsets", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, count),
        KOKKOS_LAMBDA(const std::int64_t e) { dst(eb + e) = bb + src(e); });
    if (p.nbytes() > 0) {
      Kokkos::deep_copy(ExecSpace(),
                        Kokkos::subview(merged.bytes, std::make_pair(static_cast<std::size_t>(bb),
                                                                     static_cast<std::size_t>(bb + p.nbytes()))),
                        p.bytes);
    }
  }
  Kokkos::deep_copy(ExecSpace(), Kokkos::subview(merged.offsets, static_cast<std::size_t>(entries)), nbytes);

  std::vector<Tensor> out;
  out.reserve(inputs.size());
  for (std::size_t m = 0; m < inputs.size(); ++m) {
    const Tensor& in = inputs[m];
    check_own_string_handles(in, "share_string_pool");
    Tensor t(DType::String, in.shape(), Init::Uninitialized, "shardops::strings::rebased");
    const auto src = handles_of(in);
    const auto dst = t.flat<StringHandle>();
    const std::int64_t eb = entry_base[pool_of[m]];
    Kokkos::parallel_for(
        "shardops::strings::rebase", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, in.num_elements()),
        KOKKOS_LAMBDA(const std::int64_t i) {
          const StringHandle x = src(i);
          dst(i) = x == 0 ? StringHandle(0) : make_string_handle(home, string_handle_entry(x) + eb);
        });
    out.push_back(t.with_strings(merged));
  }
  ExecSpace().fence();
  return out;
}

Tensor concat_grouped_strings(const ExecSpace& space, const Kokkos::View<std::int64_t*, MemSpace>& order,
                              const Kokkos::View<std::int64_t*, MemSpace>& begin, const Tensor& updates,
                              const Shape& out_shape, std::int64_t out_rows, std::int64_t slice, int home) {
  check_own_string_handles(updates, "concat_strings");
  const std::int64_t elems = out_rows * slice;
  const auto upd = handles_of(updates);
  const Kokkos::View<const std::int64_t*, MemSpace> src_off = updates.strings().offsets;
  const Kokkos::View<const char*, MemSpace> src_bytes = updates.strings().bytes;
  // Output element e = (t, j): the j-th strings of target t's update rows, in order.
  std::int64_t total = 0;
  const Offsets offsets = kernels::offsets_of(
      space, elems,
      KOKKOS_LAMBDA(const std::int64_t e) {
        const std::int64_t t = e / slice, j = e % slice;
        std::int64_t length = 0;
        for (std::int64_t k = begin(t); k < begin(t + 1); ++k)
          length += kernels::entry_length(src_off, upd(order(k) * slice + j));
        return length;
      },
      total, "shardops::strings::concat::offsets");
  check_allocation(static_cast<std::size_t>(total), "string pool");
  const Bytes bytes =
      allocate_uninitialized<Bytes>("shardops::strings::concat::bytes", static_cast<std::size_t>(total));
  Kokkos::parallel_for(
      "shardops::strings::concat::copy", Kokkos::RangePolicy<ExecSpace>(space, 0, elems),
      KOKKOS_LAMBDA(const std::int64_t e) {
        const std::int64_t t = e / slice, j = e % slice;
        std::int64_t to = offsets(e);
        for (std::int64_t k = begin(t); k < begin(t + 1); ++k) {
          const StringHandle x = upd(order(k) * slice + j);
          if (x == 0) continue;
          const std::int64_t piece = string_handle_entry(x);
          for (std::int64_t b = src_off(piece); b < src_off(piece + 1); ++b) bytes(to++) = src_bytes(b);
        }
      });
  space.fence();
  StringPool pool{offsets, bytes, home, updates.strings().format};
  return sequential_string_handles(out_shape, home, "shardops::strings::concat").with_strings(pool);
}

}  // namespace shardops
