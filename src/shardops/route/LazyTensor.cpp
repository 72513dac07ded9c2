#include "shardops/route/LazyTensor.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "shardops/core/Error.hpp"

namespace shardops {

LazyTensor::LazyTensor(DistTensor held)
    : held_(std::move(held)),
      shape_(held_.shape()),
      dtype_(held_.dtype()),
      layout_(held_.layout()),
      rank_(held_.rank()) {}

LazyTensor::LazyTensor(Shape shape, DType dtype, RowLayout layout, int rank, MakeRows make)
    : shape_(std::move(shape)), dtype_(dtype), layout_(std::move(layout)), rank_(rank), make_(std::move(make)) {
  if (shape_.rank() == 0 || is_string(dtype_) || !make_)
    throw InternalError("LazyTensor: rows made on demand need a tensor of fixed-size rows and a function to make them");
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible)
    throw InternalError("LazyTensor: rows made on demand are made in host memory");
  if (layout_.total() != shape_.dim(0))
    throw InternalError("LazyTensor: a layout of " + std::to_string(layout_.total()) + " rows for shape " +
                        shape_.str());
}

const DistTensor& LazyTensor::tensor() const {
  if (!held()) throw InternalError("LazyTensor::tensor: the rows of " + shape_.str() + " are made on demand");
  return held_;
}

void LazyTensor::make_rows(std::int64_t first, std::int64_t count, unsigned char* out) const {
  if (first < 0 || count < 0 || first + count > local_rows())
    throw InternalError("LazyTensor::make_rows: rows [" + std::to_string(first) + ", " + std::to_string(first + count) +
                        ") of " + std::to_string(local_rows()));
  if (held()) throw InternalError("LazyTensor::make_rows: the rows of " + shape_.str() + " are held, not made");
  if (count <= 0) return;
  if (reinterpret_cast<std::uintptr_t>(out) % kOutAlignment == 0) {
    make_(first, count, out);
    return;
  }
  Tensor aligned(dtype_, shape_.with_dim0(count), Init::Uninitialized, "shardops::LazyTensor::aligned rows");
  make_(first, count, aligned.data());
  std::memcpy(out, aligned.data(), static_cast<std::size_t>(count) * row_bytes());
}

double LazyTensor::for_each_run(std::int64_t at_once,
                                const std::function<bool(std::int64_t, std::int64_t, const unsigned char*)>& f) const {
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible)
    throw InternalError("LazyTensor::for_each_run: the rows are not in host memory");
  const std::int64_t rows = local_rows();
  const auto bytes = static_cast<std::int64_t>(row_bytes());
  at_once = std::max<std::int64_t>(at_once, 1);
  double making = 0;
  if (rows <= 0) return making;
  const auto* data = held() ? static_cast<const unsigned char*>(held_.local().data()) : nullptr;
  Tensor buffer;
  if (!held())
    buffer = Tensor(DType::UInt8, Shape{std::min(at_once, rows) * bytes}, Init::Uninitialized,
                    "shardops::LazyTensor::rows made a run at a time");
  for (std::int64_t done = 0; done < rows;) {
    const std::int64_t now = std::min(at_once, rows - done);
    if (!held()) {
      Kokkos::Timer timer;
      make_(done, now, buffer.data());  // a Tensor's memory is aligned for any word
      making += timer.seconds();
    }
    if (!f(done, now, held() ? data + done * bytes : buffer.data())) break;
    done += now;
  }
  return making;
}

DistTensor LazyTensor::whole() const {
  if (held()) return held_;
  Tensor local(dtype_, shape_.with_dim0(local_rows()), Init::Uninitialized, "shardops::LazyTensor::whole");
  make_rows(0, local_rows(), local.data());
  return DistTensor(local, shape_, layout_, rank_);
}

}  // namespace shardops
