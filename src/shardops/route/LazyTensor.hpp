#pragma once
/// \file
/// \brief An op's output whose rows can be made when they are written, a piece at a
/// time, instead of being held whole.
///
/// A one-op job holds its output only to write it. Held whole, the output is fresh
/// memory that the OS zeroes page by page before the op writes it, then copied into the
/// file and freed. An op whose output rows each depend only on what the rank already
/// holds (GatherNd on one rank, DynamicPartition, the scatter family and DynamicStitch
/// once their rows reached their owners) can hand the output layer a LazyTensor instead: the layer makes
/// a few MiB of rows into one reused
/// buffer and writes them, over and over (docs/design.md, "Streamed outputs").

#include <cstddef>
#include <cstdint>
#include <functional>

#include "shardops/route/DistTensor.hpp"

namespace shardops {

/// \brief A DistTensor, held whole, or its global shape, dtype and row layout and a
/// function that makes any run of this rank's rows on demand.
class LazyTensor {
 public:
  /// Makes this rank's rows [first, first + count) (local row numbers) into \p out:
  /// host memory of count * row_bytes() bytes, row-major, at an address aligned to
  /// kOutAlignment (make_rows() sees to it), so that a maker may move rows in the widest
  /// words its sources allow. Local, not collective; every check the op makes is done
  /// before the LazyTensor is returned, so it fails only as memory or a kernel can.
  using MakeRows = std::function<void(std::int64_t first, std::int64_t count, unsigned char* out)>;
  /// The alignment a maker's \p out has: that of the widest word rows move in (Word16).
  static constexpr std::size_t kOutAlignment = 16;

  /// The output layer asks for rows about this many bytes at a time, a run after the
  /// other from row 0 (a whole number of rows, at least one): large enough that each write
  /// costs little more than its copy into the page cache, small enough to stay in the
  /// caches. A maker may prepare its work in pieces of this size; any other run must work.
  static constexpr std::size_t kPieceBytes = std::size_t(8) << 20;

  /// A tensor held whole (what every op can return).
  LazyTensor(DistTensor held);  // NOLINT(google-explicit-constructor): a held tensor is a LazyTensor
  /// \brief Rows made on demand: the tensor of global \p shape and \p dtype that \p layout
  /// spreads over the ranks, this being \p rank.
  /// \throws InternalError for a scalar or a string dtype (their rows are not bytes to
  /// make), or where the memory space is not readable from the host.
  LazyTensor(Shape shape, DType dtype, RowLayout layout, int rank, MakeRows make);

  /// Whether the rows are held (else they are made on demand).
  bool held() const noexcept { return !make_; }
  /// The held tensor. \throws InternalError if the rows are made on demand.
  const DistTensor& tensor() const;

  const Shape& shape() const noexcept { return shape_; }
  DType dtype() const noexcept { return dtype_; }
  const RowLayout& layout() const noexcept { return layout_; }
  bool is_scalar() const noexcept { return shape_.rank() == 0; }
  /// This rank's rows and the global row of the first.
  std::int64_t local_rows() const { return layout_.count(rank_); }
  std::int64_t row_offset() const { return layout_.offset(rank_); }
  std::int64_t row_elements() const { return is_scalar() ? 1 : shape_.product_from(1); }
  std::size_t row_bytes() const { return static_cast<std::size_t>(row_elements()) * dtype_size(dtype_); }

  /// Local: this rank's rows [first, first + count) into \p out (see MakeRows), at any
  /// address (one not aligned to kOutAlignment gets the rows made elsewhere first, and copied).
  /// \throws InternalError if the rows are held (read them from tensor()).
  void make_rows(std::int64_t first, std::int64_t count, unsigned char* out) const;
  /// \brief Local: calls \p f(first, count, rows) for this rank's rows from row 0, \p at_once
  /// at a time (the last run shorter): held rows where they lie, rows made on demand made into
  /// one reused buffer, host memory either way (\throws InternalError where it is not). Stops
  /// early where \p f returns false. Returns the seconds spent making rows (the op's work).
  double for_each_run(std::int64_t at_once,
                      const std::function<bool(std::int64_t, std::int64_t, const unsigned char*)>& f) const;
  /// Local, not collective: the tensor held whole (made now, into a new tensor, if its
  /// rows are made on demand).
  DistTensor whole() const;

 private:
  DistTensor held_;
  Shape shape_;
  DType dtype_ = DType::Float32;
  RowLayout layout_;
  int rank_ = 0;
  MakeRows make_;
};

}  // namespace shardops
