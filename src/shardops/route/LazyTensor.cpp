#include "shardops/route/LazyTensor.hpp"

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
  check_made();
}

LazyTensor::LazyTensor(Shape shape, DType dtype, RowLayout layout, int rank, BlockStart start, MakeBlock make)
    : shape_(std::move(shape)),
      dtype_(dtype),
      layout_(std::move(layout)),
      rank_(rank),
      make_block_(std::move(make)),
      block_start_(std::move(start)) {
  check_made();
  if (block_start_.kind == BlockStart::Kind::Rows &&
      block_start_.rows.nbytes() != static_cast<std::size_t>(local_rows()) * row_bytes())
    throw InternalError("LazyTensor: a block of " + std::to_string(local_rows()) + " rows starts from " +
                        std::to_string(block_start_.rows.nbytes()) + " bytes");
}

void LazyTensor::check_made() const {
  if (shape_.rank() == 0 || is_string(dtype_) || held())
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
  if (make_) {
    make_(first, count, out);
    return;
  }
  const Tensor block = whole().local();
  std::memcpy(out, block.data() + static_cast<std::size_t>(first) * row_bytes(),
              static_cast<std::size_t>(count) * row_bytes());
}

const LazyTensor::BlockStart& LazyTensor::block_start() const {
  if (!make_block_)
    throw InternalError("LazyTensor::block_start: the rows of " + shape_.str() + " are not made as a block");
  return block_start_;
}

void LazyTensor::make_block(unsigned char* out, bool started) const {
  if (!make_block_)
    throw InternalError("LazyTensor::make_block: the rows of " + shape_.str() + " are not made as a block");
  if (local_rows() > 0) make_block_(out, started);
}

DistTensor LazyTensor::whole() const {
  if (held()) return held_;
  if (make_block_) {
    // Zeros come with the new memory (fresh pages are zero); the maker copies the rows itself.
    const bool zeros = block_start_.kind == BlockStart::Kind::Zeros;
    Tensor local(dtype_, shape_.with_dim0(local_rows()), zeros ? block_start_.zeros : Init::Uninitialized,
                 "shardops::LazyTensor::whole");
    make_block(local.data(), zeros);
    return DistTensor(local, shape_, layout_, rank_);
  }
  Tensor local(dtype_, shape_.with_dim0(local_rows()), Init::Uninitialized, "shardops::LazyTensor::whole");
  make_rows(0, local_rows(), local.data());
  return DistTensor(local, shape_, layout_, rank_);
}

}  // namespace shardops
