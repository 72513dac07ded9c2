#include "DistTestUtil.hpp"

#include "shardops/kernels/StringKernels.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/route/detail/ExchangePlan.hpp"

namespace shardops {
namespace test {

const Comm& world() {
  static const Comm comm(MPI_COMM_WORLD);  // freed after MPI_Finalize is a no-op (Comm checks)
  return comm;
}

namespace {

template <class T>
struct Draw {
  static T get(Rng& rng) {
    if constexpr (std::is_same<T, bool>::value) {
      return std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    } else if constexpr (std::is_integral<T>::value && std::is_signed<T>::value) {
      return static_cast<T>(std::uniform_int_distribution<int>(-50, 50)(rng));
    } else if constexpr (std::is_integral<T>::value) {
      return static_cast<T>(std::uniform_int_distribution<int>(0, 100)(rng));
    } else if constexpr (std::is_same<T, half_t>::value) {
      return half_t(std::uniform_real_distribution<float>(-8.0f, 8.0f)(rng));
    } else if constexpr (std::is_floating_point<T>::value) {
      return static_cast<T>(std::uniform_real_distribution<double>(-100.0, 100.0)(rng));
    } else {  // complex
      using R = typename T::value_type;
      const R re = static_cast<R>(std::uniform_real_distribution<double>(-100.0, 100.0)(rng));
      const R im = static_cast<R>(std::uniform_real_distribution<double>(-100.0, 100.0)(rng));
      return T(re, im);
    }
  }
};

}  // namespace

Tensor random_tensor(Rng& rng, DType dtype, const Shape& shape) {
  const std::size_t n = static_cast<std::size_t>(shape.num_elements());
  std::vector<unsigned char> bytes(n * dtype_size(dtype));
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (std::size_t i = 0; i < n; ++i) {
      const T v = Draw<T>::get(rng);
      std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
    }
  });
  return Tensor::from_host_bytes(dtype, shape, bytes.data(), bytes.size());
}

Tensor index_tensor(DType index_dtype, const Shape& shape, const std::vector<std::int64_t>& values) {
  if (static_cast<std::int64_t>(values.size()) != shape.num_elements()) {
    throw InternalError("index_tensor: " + std::to_string(values.size()) + " values for " + shape.str());
  }
  return dispatch_index(index_dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    std::vector<I> v(values.begin(), values.end());
    return Tensor::from_vector(index_dtype, shape, v);
  });
}

Tensor random_indices(Rng& rng, DType index_dtype, const Shape& batch, const std::vector<std::int64_t>& dims,
                      std::int64_t hot) {
  const std::int64_t rows = batch.num_elements();
  const int k = static_cast<int>(dims.size());
  std::vector<std::int64_t> values;
  values.reserve(static_cast<std::size_t>(rows * k));
  for (std::int64_t i = 0; i < rows; ++i) {
    for (int d = 0; d < k; ++d) {
      std::int64_t hi = dims[static_cast<std::size_t>(d)] - 1;
      if (d == 0 && hot > 0) hi = std::min(hi, hot - 1);
      values.push_back(std::uniform_int_distribution<std::int64_t>(0, hi)(rng));
    }
  }
  return index_tensor(index_dtype, batch.concat(Shape{static_cast<std::int64_t>(k)}), values);
}

Tensor random_int32(Rng& rng, const Shape& shape, std::int32_t lo, std::int32_t hi) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(shape.num_elements()));
  for (auto& x : v) x = std::uniform_int_distribution<std::int32_t>(lo, hi)(rng);
  return Tensor::from_vector(DType::Int32, shape, v);
}

std::int64_t index_value(const Tensor& t, std::int64_t flat) {
  return dispatch_index(t.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    return static_cast<std::int64_t>(t.to_vector<I>().at(static_cast<std::size_t>(flat)));
  });
}

void set_index_value(Tensor& t, std::int64_t flat, std::int64_t value) {
  dispatch_index(t.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    std::vector<I> v = t.to_vector<I>();
    v.at(static_cast<std::size_t>(flat)) = static_cast<I>(value);
    t = Tensor::from_vector(t.dtype(), t.shape(), v);
  });
}

RowLayout random_layout(Rng& rng, std::int64_t rows, int nranks) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(nranks), 0);
  // Some ranks are empty; the others share the rows at random cut points.
  std::vector<int> live;
  for (int r = 0; r < nranks; ++r) {
    if (std::uniform_int_distribution<int>(0, 2)(rng) != 0) live.push_back(r);
  }
  if (live.empty()) live.push_back(std::uniform_int_distribution<int>(0, nranks - 1)(rng));
  std::vector<std::int64_t> cuts{0, rows};
  for (std::size_t i = 1; i < live.size(); ++i)
    cuts.push_back(std::uniform_int_distribution<std::int64_t>(0, rows)(rng));
  std::sort(cuts.begin(), cuts.end());
  for (std::size_t i = 0; i < live.size(); ++i) counts[static_cast<std::size_t>(live[i])] = cuts[i + 1] - cuts[i];
  return RowLayout(counts);
}

std::vector<RowLayout> test_layouts(Rng& rng, std::int64_t rows, int nranks) {
  std::vector<RowLayout> candidates{RowLayout::balanced(rows, nranks), RowLayout::on_rank(rows, nranks, nranks - 1),
                                    RowLayout::on_rank(rows, nranks, 0), random_layout(rng, rows, nranks),
                                    random_layout(rng, rows, nranks)};
  std::vector<RowLayout> out;
  for (const RowLayout& l : candidates) {
    if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  }
  return out;
}

std::string layout_str(const RowLayout& layout) {
  std::ostringstream s;
  s << "[";
  for (int r = 0; r < layout.nranks(); ++r) s << (r ? "," : "") << layout.count(r);
  s << "]";
  return s.str();
}

DistTensor shard(const Tensor& full, const RowLayout& layout) {
  if (full.rank() == 0) return DistTensor::from_replicated(world(), full);
  return DistTensor::from_replicated(world(), full, layout);
}

DistTensor shard(const Tensor& full) { return DistTensor::from_replicated(world(), full); }

void expect_same_tensor(const Tensor& actual, const Tensor& expected, const std::string& what) {
  EXPECT_EQ(dtype_name(actual.dtype()), std::string(dtype_name(expected.dtype()))) << what;
  EXPECT_EQ(actual.shape().str(), expected.shape().str()) << what;
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) return;
  if (is_string(actual.dtype())) {
    // Handles are private to each pool: compare the strings they name.
    const std::vector<std::string> a = string_values(actual), e = string_values(expected);
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] != e[i]) {
        ADD_FAILURE() << what << ": string " << i << " differs (" << a[i].size() << " vs " << e[i].size() << " bytes)";
        return;
      }
    }
    return;
  }
  const std::vector<unsigned char> a = actual.to_host_bytes(), e = expected.to_host_bytes();
  if (a == e) return;
  std::size_t first = 0, differing = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != e[i]) {
      if (differing == 0) first = i;
      ++differing;
    }
  }
  ADD_FAILURE() << what << ": " << differing << " of " << a.size() << " bytes differ; first at byte " << first
                << " (element " << first / actual.itemsize() << ")";
}

void expect_same_tensor(const DistTensor& actual, const Tensor& expected, const std::string& what) {
  expect_same_tensor(actual.allgather(world()), expected, what);
}

void expect_same_rows(const LazyTensor& lazy, const DistTensor& held, const std::string& what) {
  EXPECT_EQ(lazy.shape(), held.shape()) << what;
  EXPECT_EQ(lazy.layout(), held.layout()) << what;
  expect_same_tensor(lazy.whole(), held.allgather(world()), what + ", made whole");
  if (lazy.held() || is_string(held.dtype())) return;
  const std::size_t row = lazy.row_bytes();
  const std::int64_t rows = lazy.local_rows();
  for (const std::int64_t piece : {std::int64_t(1), std::int64_t(3)}) {
    std::vector<unsigned char> made(static_cast<std::size_t>(rows) * row);
    for (std::int64_t first = 0; first < rows; first += piece)
      lazy.make_rows(first, std::min(piece, rows - first), made.data() + static_cast<std::size_t>(first) * row);
    EXPECT_TRUE(std::equal(made.begin(), made.end(), held.local().data()))
        << what << ": rows made " << piece << " at a time";
  }
  // MakeRows promises no alignment: rows made at an odd address are the same bytes.
  std::vector<unsigned char> odd(static_cast<std::size_t>(rows) * row + 1);
  if (rows > 0) lazy.make_rows(0, rows, odd.data() + 1);
  EXPECT_TRUE(std::equal(odd.begin() + 1, odd.end(), held.local().data())) << what << ": rows made at an odd address";
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const InvalidArgument& e) {
    return e.subject().empty() ? std::string(e.what()) : std::string(e.what()) + " [about " + e.subject() + "]";
  } catch (const Error& e) {
    return "kind " + std::to_string(e.exit_code()) + " error: " + e.what();
  } catch (const std::exception& e) {
    return std::string("std::exception: ") + e.what();
  }
  return "";
}

std::vector<std::int64_t> counts_of(const Tensor& partitions, const RowLayout& layout, std::int32_t p) {
  const std::vector<std::int32_t> ids = partitions.to_vector<std::int32_t>();
  const std::int64_t per_row = partitions.rank() == 0 ? 1 : partitions.shape().product_from(1);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(layout.nranks()), 0);
  for (int r = 0; r < layout.nranks(); ++r) {
    const std::int64_t lo = layout.offset(r) * per_row, hi = (layout.offset(r) + layout.count(r)) * per_row;
    for (std::int64_t i = lo; i < hi; ++i) counts[static_cast<std::size_t>(r)] += ids[static_cast<std::size_t>(i)] == p;
  }
  return counts;
}

RouteOptions round_limit(std::int64_t rows) {
  RouteOptions route;
  if (rows > 0) route.max_rows_per_round = rows;
  return route;
}

OpOptions with_round_limit(std::int64_t rows, OpOptions base) {
  base.route = round_limit(rows);
  return base;
}

std::vector<DType> movement_dtypes() {
  return {DType::Bool,  DType::Int8,    DType::Float16,   DType::Int32,     DType::Float32,
          DType::Int64, DType::Float64, DType::Complex64, DType::Complex128};
}

std::vector<DType> arithmetic_dtypes() {
  return {DType::Float16, DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::UInt8, DType::Complex64};
}

ExchangePlan plan_to(const std::vector<std::int64_t>& dests, const RouteOptions& route) {
  Kokkos::View<std::int64_t*, MemSpace> d("test::dest", dests.size());
  Kokkos::View<const std::int64_t*, Kokkos::HostSpace, UnmanagedTraits> h(dests.data(), dests.size());
  Kokkos::deep_copy(d, h);
  auto dest_of = KOKKOS_LAMBDA(const std::int64_t i)->std::int64_t { return d(i); };
  return ExchangePlan::build(world(), static_cast<std::int64_t>(dests.size()), dest_of, route);
}

ByteView to_byte_view(const std::vector<unsigned char>& bytes) {
  ByteView v("test::bytes", bytes.size());
  Kokkos::View<const unsigned char*, Kokkos::HostSpace, UnmanagedTraits> h(bytes.data(), bytes.size());
  Kokkos::deep_copy(v, h);
  return v;
}

std::vector<unsigned char> byte_view_to_host(const ByteView& v) {
  std::vector<unsigned char> out(v.extent(0));
  Kokkos::View<unsigned char*, Kokkos::HostSpace, UnmanagedTraits> h(out.data(), out.size());
  Kokkos::deep_copy(h, v);
  return out;
}

}  // namespace test
}  // namespace shardops
