#include "shardops/core/Shape.hpp"

#include <limits>

#include "shardops/core/Error.hpp"

namespace shardops {

bool checked_multiply(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept {
  if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / a) return false;
  out = a * b;
  return true;
}

Shape::Shape(std::initializer_list<std::int64_t> dims) : Shape(std::vector<std::int64_t>(dims)) {}

Shape::Shape(std::vector<std::int64_t> dims) : dims_(std::move(dims)) {
  // Same texts as TensorShapeUtils::MakeShape / TensorShape::AddDim.
  for (std::int64_t d : dims_) {
    if (d < 0) throw InvalidArgument("Dimension " + std::to_string(d) + " must be >= 0");
  }
  std::int64_t n = 1;
  for (std::int64_t d : dims_) {
    if (!checked_multiply(n, d, n)) {
      throw InvalidArgument("Shape " + str() + " would have more than 2**63 - 1 elements");
    }
  }
  num_elements_ = n;
}

std::int64_t Shape::product(int begin, int end) const {
  std::int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= dims_.at(static_cast<std::size_t>(i));  // sub-product of a checked product
  return n;
}

Shape Shape::slice(int begin, int end) const {
  if (begin < 0 || end > rank() || begin > end) {
    throw InternalError("Shape::slice(" + std::to_string(begin) + ", " + std::to_string(end) + ") of " + str());
  }
  return Shape(std::vector<std::int64_t>(dims_.begin() + begin, dims_.begin() + end));
}

Shape Shape::concat(const Shape& tail) const {
  std::vector<std::int64_t> d = dims_;
  d.insert(d.end(), tail.dims_.begin(), tail.dims_.end());
  return Shape(std::move(d));
}

Shape Shape::with_dim0(std::int64_t d0) const {
  if (rank() == 0) throw InternalError("Shape::with_dim0 on a scalar");
  std::vector<std::int64_t> d = dims_;
  d[0] = d0;
  return Shape(std::move(d));
}

Shape Shape::prepend(std::int64_t d0) const {
  std::vector<std::int64_t> d{d0};
  d.insert(d.end(), dims_.begin(), dims_.end());
  return Shape(std::move(d));
}

bool Shape::starts_with(const Shape& prefix) const {
  if (prefix.rank() > rank()) return false;
  for (int i = 0; i < prefix.rank(); ++i) {
    if (dims_[static_cast<std::size_t>(i)] != prefix.dims_[static_cast<std::size_t>(i)]) return false;
  }
  return true;
}

std::string Shape::str() const { return dims_text(dims_); }

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

std::string slice_debug_string(const Shape& shape, std::int64_t flat) {
  const int dims = shape.rank();
  if (dims == 0) return "";
  if (dims == 1) return "[" + std::to_string(flat) + "]";
  std::vector<std::int64_t> strides(static_cast<std::size_t>(dims));
  strides.back() = 1;
  for (int i = dims - 2; i >= 0; --i) {
    strides[static_cast<std::size_t>(i)] = strides[static_cast<std::size_t>(i) + 1] * shape.dim(i + 1);
  }
  std::string out;
  std::int64_t left = flat;
  for (int i = 0; i < dims; ++i) {
    const std::int64_t s = strides[static_cast<std::size_t>(i)];
    out += (i ? "," : "[") + std::to_string(s ? left / s : 0);
    if (s) left %= s;
  }
  return out + "]";
}

}  // namespace shardops
