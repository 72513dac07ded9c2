#include "shardops/core/Tensor.hpp"

#include "shardops/core/HostMemory.hpp"

#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

namespace shardops {

std::int64_t tensor_bytes(const Shape& shape, DType dtype, const std::string& label) {
  std::int64_t bytes = 0;
  if (!checked_multiply(shape.num_elements(), static_cast<std::int64_t>(dtype_size(dtype)), bytes)) {
    throw InvalidArgument(readable_label(label) + " of shape " + shape.str() + " and dtype " + dtype_name(dtype) +
                          " has more bytes than fit in int64");
  }
  return bytes;
}

Tensor::Tensor() = default;

Tensor::Tensor(DType dtype, Shape shape, Init init, const std::string& label)
    : dtype_(dtype), shape_(std::move(shape)) {
  const std::int64_t bytes = tensor_bytes(shape_, dtype, label);
  check_allocation(static_cast<std::size_t>(bytes), label + " " + shape_.str() + " " + dtype_name(dtype));
  held_ = hold_memory(static_cast<std::size_t>(bytes));
  try {
    // A large host tensor: a block kept from an earlier tensor of this size, or fresh
    // pages from the OS, which read as zero (HostMemory.hpp says why).
    bool zeroed = false;
    if (std::is_same<MemSpace, Kokkos::HostSpace>::value && static_cast<std::size_t>(bytes) >= kKeepFrom) {
      HostBlock block = reusable_pages(static_cast<std::size_t>(bytes));
      if (block.memory) {
        owner_ = std::move(block.memory);
        zeroed = block.zeroed;
        if (zeroed && init != Init::Zero) fault_in_for_writing(owner_.get(), static_cast<std::size_t>(bytes));
        storage_ = Kokkos::View<unsigned char*, MemSpace>(owner_.get(), static_cast<std::size_t>(bytes));
      }
    }
    if (!owner_) {
      storage_ = allocate_uninitialized<Kokkos::View<unsigned char*, MemSpace>>(label, static_cast<std::size_t>(bytes));
    }
    if ((init == Init::Zero || init == Init::ZeroDense) && bytes > 0 && !zeroed) {
      // Kokkos 3.4 initialises a View of bytes one byte at a time; memset (or a word
      // fill on a device) is several times faster and gives the same zeros.
      if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) {
        std::memset(storage_.data(), 0, static_cast<std::size_t>(bytes));
      } else {
        Kokkos::deep_copy(storage_, static_cast<unsigned char>(0));
      }
    }
  } catch (const std::exception& e) {
    throw InvalidArgument(readable_label(label) + " " + shape_.str() + " " + dtype_name(dtype) + ": cannot allocate " +
                          std::to_string(bytes) + " bytes (" + foreign_error(e).second + ")");
  }
}

void Tensor::check_element_type(DType dtype, std::size_t size, const char* what) {
  // Complex numbers may come as their real and imaginary parts, one after the other.
  const bool parts = (dtype == DType::Complex64 || dtype == DType::Complex128) && 2 * size == dtype_size(dtype);
  if (is_string(dtype) || size == dtype_size(dtype) || parts) return;
  throw InvalidArgument(std::string(what) + ": elements of " + std::to_string(size) + " bytes for a " +
                        dtype_name(dtype) + " tensor, whose elements have " + std::to_string(dtype_size(dtype)) +
                        " (use the dtype's C++ type)");
}

void Tensor::check_view_type(std::size_t elem, std::int64_t bytes) const {
  if (elem == 0 || static_cast<std::size_t>(bytes) % elem != 0) {
    throw InternalError("Tensor view of " + std::to_string(elem) + "-byte elements over " + std::to_string(bytes) +
                        " bytes of " + dtype_name(dtype_));
  }
}

void Tensor::check_matrix(std::int64_t rows, std::int64_t cols, std::size_t elem) const {
  if (rows < 0 || cols < 0 || static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * elem != nbytes()) {
    throw InternalError("Tensor::matrix(" + std::to_string(rows) + ", " + std::to_string(cols) + ") of " +
                        std::to_string(elem) + "-byte words over " + shape_.str() + " " + dtype_name(dtype_));
  }
}

Tensor Tensor::slice_rows(std::int64_t begin, std::int64_t end) const {
  if (rank() == 0 || begin < 0 || end < begin || end > shape_.dim(0)) {
    throw InternalError("Tensor::slice_rows(" + std::to_string(begin) + ", " + std::to_string(end) + ") of " +
                        shape_.str());
  }
  Tensor t = *this;
  t.shape_ = shape_.with_dim0(end - begin);
  t.offset_ = offset_ + static_cast<std::size_t>(begin) * static_cast<std::size_t>(shape_.product_from(1)) * itemsize();
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (shape.num_elements() != num_elements()) {
    throw InternalError("Tensor::reshaped " + shape_.str() + " -> " + shape.str());
  }
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

void Tensor::copy_from(const Tensor& src) {
  if (src.dtype_ != dtype_ || src.nbytes() != nbytes()) {
    throw InternalError("Tensor::copy_from " + src.shape_.str() + " " + dtype_name(src.dtype_) + " -> " + shape_.str() +
                        " " + dtype_name(dtype_));
  }
  if (nbytes() == 0) return;
  using Bytes = FlatView<unsigned char>;
  Kokkos::deep_copy(ExecSpace(), Bytes(data(), nbytes()), Bytes(src.data(), src.nbytes()));
  ExecSpace().fence();
}

Tensor Tensor::deep_copy(const std::string& label) const {
  Tensor out = uninitialized_like(label);
  out.copy_from(*this);
  return out;
}

Tensor Tensor::uninitialized_like(const std::string& label, Init init) const {
  Tensor out(dtype_, shape_, init, label);
  out.strings_ = strings_;  // immutable: the new tensor's handles may name the same bytes
  return out;
}

Tensor Tensor::with_strings(StringPool pool) const {
  if (dtype_ != DType::String)
    throw InternalError(std::string("Tensor::with_strings on a ") + dtype_name(dtype_) + " tensor");
  Tensor t = *this;
  t.strings_ = std::move(pool);
  return t;
}

Tensor Tensor::adopt(DType dtype, Shape shape, Kokkos::View<unsigned char*, MemSpace> storage) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  if (storage.extent(0) != t.nbytes()) {
    throw InternalError("Tensor::adopt: " + std::to_string(storage.extent(0)) + " bytes for " + t.shape_.str() + " " +
                        dtype_name(dtype));
  }
  t.storage_ = std::move(storage);
  return t;
}

Tensor Tensor::adopt_host(DType dtype, Shape shape, std::shared_ptr<unsigned char> owner, unsigned char* data) {
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) {
    throw InternalError("Tensor::adopt_host: the memory space is not host-accessible");
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.owner_ = std::move(owner);
  t.storage_ = Kokkos::View<unsigned char*, MemSpace>(data, t.nbytes());
  return t;
}

Tensor Tensor::from_host_bytes(DType dtype, Shape shape, const void* bytes, std::size_t nbytes) {
  Tensor t(dtype, std::move(shape), Init::Uninitialized, "shardops::Tensor::from_host");
  if (nbytes != t.nbytes()) {
    throw InvalidArgument("Tensor::from_host_bytes: " + std::to_string(nbytes) + " bytes for shape " + t.shape_.str() +
                          " of " + dtype_name(dtype) + " (" + std::to_string(t.nbytes()) + " expected)");
  }
  if (nbytes == 0) return t;
  using HostBytes = Kokkos::View<const unsigned char*, Kokkos::HostSpace, UnmanagedTraits>;
  Kokkos::deep_copy(FlatView<unsigned char>(t.data(), nbytes),
                    HostBytes(static_cast<const unsigned char*>(bytes), nbytes));
  return t;
}

std::vector<unsigned char> Tensor::to_host_bytes() const {
  std::vector<unsigned char> out(nbytes());
  if (out.empty()) return out;
  using HostBytes = Kokkos::View<unsigned char*, Kokkos::HostSpace, UnmanagedTraits>;
  Kokkos::deep_copy(HostBytes(out.data(), out.size()), FlatView<const unsigned char>(data(), nbytes()));
  return out;
}

}  // namespace shardops
