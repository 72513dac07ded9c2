#include "shardops/core/StringTensor.hpp"

#include <Kokkos_Core.hpp>

#include "shardops/core/Error.hpp"
#include "shardops/core/HostMemory.hpp"

namespace shardops {

namespace {
using Offsets = Kokkos::View<std::int64_t*, MemSpace>;
using Bytes = Kokkos::View<char*, MemSpace>;
}  // namespace

Tensor sequential_string_handles(const Shape& shape, int home, const char* label) {
  Tensor out(DType::String, shape, Init::Uninitialized, label);
  const auto h = out.flat<StringHandle>();
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, out.num_elements()),
      KOKKOS_LAMBDA(const std::int64_t e) { h(e) = make_string_handle(home, e); });
  return out;
}

void check_own_string_handles(const Tensor& t, const char* what) {
  const auto h = t.flat<const StringHandle>();
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
  return sequential_string_handles(shape, home, "shardops::strings::make").with_strings(pool);
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
  check_own_string_handles(t, "string_values");
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
  const auto h = t.flat<const StringHandle>();
  const Kokkos::View<const std::int64_t*, MemSpace> offsets = t.strings().offsets;
  std::int64_t total = 0;
  Kokkos::parallel_reduce(
      "shardops::strings::payload", Kokkos::RangePolicy<ExecSpace>(ExecSpace(), 0, t.num_elements()),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& sum) {
        const StringHandle x = h(i);
        if (x != 0) sum += offsets(string_handle_entry(x) + 1) - offsets(string_handle_entry(x));
      },
      total);
  return total;
}

}  // namespace shardops
