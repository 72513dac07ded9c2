#include "shardops/kernels/StringKernels.hpp"

#include <algorithm>

#include "shardops/core/Error.hpp"

namespace shardops {

namespace {

using Offsets = Kokkos::View<std::int64_t*, MemSpace>;
using Bytes = Kokkos::View<char*, MemSpace>;

FlatView<const StringHandle> handles_of(const Tensor& t) { return t.flat<const StringHandle>(); }

// Handles e -> entry e of a pool homed at `home`, for a tensor of `shape`.
Tensor sequential_handles(const Shape& shape, int home, const char* label) {
  Tensor out(DType::String, shape, Init::Uninitialized, label);
  const auto h = out.flat<StringHandle>();
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, out.num_elements()),
      KOKKOS_LAMBDA(const std::int64_t e) { h(e) = make_string_handle(home, e); });
  return out;
}

// Every handle of t names an entry of t's own pool (or is 0).
void check_own_handles(const Tensor& t, const char* what) {
  const auto h = handles_of(t);
  const int home = t.strings().home;
  const std::int64_t entries = t.strings().entries();
  std::int64_t foreign = 0;
  Kokkos::parallel_reduce(
      "shardops::strings::check_handles", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, t.num_elements()),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& bad) {
        const StringHandle x = h(i);
        if (x != 0 && (string_handle_home(x) != home || string_handle_entry(x) >= entries)) ++bad;
      },
      foreign);
  if (foreign > 0) {
    throw InternalError(std::string(what) + ": " + std::to_string(foreign) +
                        " string handles name strings held by another rank");
  }
}

}  // namespace

StringTensorBuilder::StringTensorBuilder(std::size_t expected_strings) { offsets_.reserve(expected_strings + 1); }

void StringTensorBuilder::append(const char* data, std::size_t length) {
  bytes_.append(data, length);
  offsets_.push_back(static_cast<std::int64_t>(bytes_.size()));
}

Tensor StringTensorBuilder::finish(const Shape& shape, int home, StringFormat format) {
  if (static_cast<std::int64_t>(size()) != shape.num_elements()) {
    throw InvalidArgument("string tensor of shape " + shape.str() + " from " + std::to_string(size()) + " strings");
  }
  StringPool pool;
  pool.home = home;
  pool.format = format;
  pool.offsets = allocate_uninitialized<Offsets>("shardops::strings::offsets", offsets_.size());
  Kokkos::deep_copy(pool.offsets, Kokkos::View<const std::int64_t*, Kokkos::HostSpace, UnmanagedTraits>(
                                      offsets_.data(), offsets_.size()));
  check_allocation(bytes_.size(), "string pool");
  pool.bytes = allocate_uninitialized<Bytes>("shardops::strings::bytes", bytes_.size());
  Kokkos::deep_copy(pool.bytes,
                    Kokkos::View<const char*, Kokkos::HostSpace, UnmanagedTraits>(bytes_.data(), bytes_.size()));
  std::vector<std::int64_t>{0}.swap(offsets_);
  std::string().swap(bytes_);
  return sequential_handles(shape, home, "shardops::strings::make").with_strings(pool);
}

Tensor make_string_tensor(Shape shape, const std::vector<std::string>& values, int home, StringFormat format) {
  if (static_cast<std::int64_t>(values.size()) != shape.num_elements()) {
    throw InvalidArgument("make_string_tensor: " + std::to_string(values.size()) + " strings for shape " + shape.str());
  }
  StringTensorBuilder builder(values.size());
  for (const std::string& v : values) builder.append(v.data(), v.size());
  return builder.finish(shape, home, format);
}

std::vector<std::string> string_values(const Tensor& t) {
  if (t.dtype() != DType::String) throw InternalError("string_values on a " + std::string(dtype_name(t.dtype())));
  check_own_handles(t, "string_values");
  const std::vector<StringHandle> h = t.to_vector<StringHandle>();
  auto offsets = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.strings().offsets);
  auto bytes = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.strings().bytes);
  std::vector<std::string> out(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (h[i] == 0) continue;
    const std::int64_t e = string_handle_entry(h[i]);
    out[i].assign(bytes.data() + offsets(e), static_cast<std::size_t>(offsets(e + 1) - offsets(e)));
  }
  return out;
}

std::int64_t string_payload_bytes(const Tensor& t) {
  const auto h = handles_of(t);
  const Kokkos::View<const std::int64_t*, MemSpace> offsets = t.strings().offsets;
  std::int64_t total = 0;
  Kokkos::parallel_reduce(
      "shardops::strings::payload", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, t.num_elements()),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum) { sum += kernels::entry_length(offsets, h(i)); }, total);
  return total;
}

Tensor compact_strings(const Tensor& t, int home) {
  check_own_handles(t, "compact_strings");
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
  return sequential_handles(t.shape(), home, "shardops::strings::compact").with_strings(pool);
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
    check_own_handles(in, "share_string_pool");
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
  check_own_handles(updates, "concat_strings");
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
  return sequential_handles(out_shape, home, "shardops::strings::concat").with_strings(pool);
}

}  // namespace shardops
