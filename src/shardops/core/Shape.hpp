#pragma once
/// \file
/// \brief Tensor shapes with int64 dims, overflow-checked element counts and
/// TensorFlow-style printing ("[5,3]", scalars "[]").

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace shardops {

/// \brief A tensor shape. Every dim is >= 0 and the element count fits in int64
/// (both checked on construction, so a Shape that exists is always valid).
class Shape {
 public:
  /// A scalar (rank 0, one element).
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims);
  /// \throws InvalidArgument ("Dimension -1 must be >= 0", or an element-count overflow).
  explicit Shape(std::vector<std::int64_t> dims);

  int rank() const noexcept { return static_cast<int>(dims_.size()); }
  std::int64_t dim(int i) const { return dims_.at(static_cast<std::size_t>(i)); }
  const std::vector<std::int64_t>& dims() const noexcept { return dims_; }

  /// Product of all dims (1 for a scalar). Never overflows: checked on construction.
  std::int64_t num_elements() const noexcept { return num_elements_; }
  /// Product of dims[begin:end) (1 when empty).
  std::int64_t product(int begin, int end) const;
  /// Product of dims[begin:].
  std::int64_t product_from(int begin) const { return product(begin, rank()); }

  /// dims[begin:end) as a shape.
  Shape slice(int begin, int end) const;
  /// dims[begin:] as a shape.
  Shape suffix(int begin) const { return slice(begin, rank()); }
  /// dims[:n] as a shape.
  Shape prefix(int n) const { return slice(0, n); }
  /// This shape followed by \p tail.
  Shape concat(const Shape& tail) const;
  /// This shape with dim 0 replaced (rank >= 1).
  Shape with_dim0(std::int64_t d0) const;
  /// [d0] + this shape.
  Shape prepend(std::int64_t d0) const;

  /// TensorShapeUtils::StartsWith: rank >= prefix.rank and the leading dims agree.
  bool starts_with(const Shape& prefix) const;

  /// TensorFlow's DebugString: "[5,3]", "[]".
  std::string str() const;

  friend bool operator==(const Shape& a, const Shape& b) { return a.dims_ == b.dims_; }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  std::vector<std::int64_t> dims_;
  std::int64_t num_elements_ = 1;
};

/// "[5,3]" for any list of dims, checked or not (Shape::str() of a valid shape).
std::string dims_text(const std::vector<std::int64_t>& dims);

/// \brief TensorFlow's SliceDebugString: the multi-index of flat position \p flat in
/// \p shape, "[1,2]"; "[7]" for rank 1; "" for a scalar.
std::string slice_debug_string(const Shape& shape, std::int64_t flat);

/// Checked a*b for non-negative int64; false on overflow.
bool checked_multiply(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept;

}  // namespace shardops
