#pragma once
/// \file
/// \brief A local (one-rank) tensor: a dtype, a shape and a Kokkos allocation.

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "shardops/core/DType.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/Kokkos.hpp"
#include "shardops/core/MemoryBudget.hpp"
#include "shardops/core/Shape.hpp"
#include "shardops/core/StringPool.hpp"

namespace shardops {

/// How a new Tensor's memory starts out. A large host tensor may get fresh pages from
/// the OS (core/HostMemory.hpp), which read as zero and are backed on first touch; the
/// kinds differ in whether those pages are faulted in at once (fault_in_for_writing: where
/// the host runs kernels on one thread).
enum class Init {
  /// Zeros. Fresh pages are left to fault as they are touched, so pages an op never
  /// writes (a sparse scatter into a large output) cost nothing.
  Zero,
  /// Zeros, for an output the op reads and writes nearly all over (an accumulation into
  /// most of its rows). Fresh pages are faulted in writable at once: a fresh page read
  /// first maps the shared zero page and faults again, with a TLB flush, when written,
  /// twice the cost of faulting it in.
  ZeroDense,
  /// Not initialised: the caller writes every byte before reading it. Fresh pages are
  /// faulted in writable at once (one call costs less than a fault per page, and
  /// streaming stores into lines the OS has just zeroed run at a fraction of their speed).
  Uninitialized,
};

/// \brief A dense row-major tensor in MemSpace. Copies share storage (like a
/// Kokkos::View); deep_copy() makes an independent one. Row slices share storage too.
///
/// A string tensor (DType::String) holds StringHandles; its strings() pool holds
/// their bytes and travels with every copy, slice and reshape (pools are
/// immutable, so sharing one is safe). A new string tensor is all empty strings.
class Tensor {
 public:
  /// An empty float32 tensor of shape [0].
  Tensor();
  /// Allocates dtype x shape. \throws InvalidArgument if the bytes needed exceed
  /// the memory available (checked before allocating).
  Tensor(DType dtype, Shape shape, Init init = Init::Zero, const std::string& label = "shardops::Tensor");

  DType dtype() const noexcept { return dtype_; }
  const Shape& shape() const noexcept { return shape_; }
  int rank() const noexcept { return shape_.rank(); }
  std::int64_t num_elements() const noexcept { return shape_.num_elements(); }
  std::size_t itemsize() const noexcept { return dtype_size(dtype_); }
  std::size_t nbytes() const noexcept { return static_cast<std::size_t>(num_elements()) * itemsize(); }
  /// Leading dimension (1 for a scalar).
  std::int64_t rows() const noexcept { return rank() == 0 ? 1 : shape_.dim(0); }

  unsigned char* data() const noexcept { return storage_.data() + offset_; }

  /// The elements as T (sizeof(T) must equal the itemsize; T need not be the dtype's
  /// own type: movement kernels view rows as words).
  template <class T>
  FlatView<T> flat() const {
    check_view_type(sizeof(T), num_elements() * static_cast<std::int64_t>(itemsize()));
    return FlatView<T>(reinterpret_cast<T*>(data()), static_cast<std::size_t>(nbytes() / sizeof(T)));
  }

  /// The bytes as a [rows, cols] matrix of T, with rows x cols x sizeof(T) == nbytes().
  template <class T>
  MatrixView<T> matrix(std::int64_t rows, std::int64_t cols) const {
    check_matrix(rows, cols, sizeof(T));
    return MatrixView<T>(reinterpret_cast<T*>(data()), static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
  }

  /// Rows [begin, end) of dim 0, sharing storage.
  Tensor slice_rows(std::int64_t begin, std::int64_t end) const;
  /// Same storage, another shape with the same element count.
  Tensor reshaped(Shape shape) const;
  /// An independent copy.
  Tensor deep_copy(const std::string& label = "shardops::Tensor::copy") const;
  /// A new tensor of this one's dtype, shape and string pool, its elements not yet
  /// written (for a kernel that writes every element).
  Tensor uninitialized_like(const std::string& label = "shardops::Tensor", Init init = Init::Uninitialized) const;
  /// Copy all elements from \p src (same dtype and element count).
  void copy_from(const Tensor& src);

  /// The pool a string tensor's handles name (empty for other dtypes).
  const StringPool& strings() const noexcept { return strings_; }
  /// The same elements with \p pool as their strings (string tensors only).
  Tensor with_strings(StringPool pool) const;

  /// Wrap an existing allocation of exactly nbytes (e.g. a receive buffer).
  static Tensor adopt(DType dtype, Shape shape, Kokkos::View<unsigned char*, MemSpace> storage);
  /// \brief Wraps host memory that \p owner keeps alive (dropped with the last copy),
  /// its elements at \p data: a file's pages mapped into the process, say. Only where
  /// MemSpace is host-accessible. Not counted against the memory budget (the memory is
  /// not the job's to allocate).
  static Tensor adopt_host(DType dtype, Shape shape, std::shared_ptr<unsigned char> owner, unsigned char* data);

  /// Build from host bytes (tests, I/O).
  static Tensor from_host_bytes(DType dtype, Shape shape, const void* bytes, std::size_t nbytes);
  /// The elements as host bytes.
  std::vector<unsigned char> to_host_bytes() const;

  /// Build from a host vector of the dtype's C++ type (bool tensors: use uint8_t 0/1).
  /// \throws InvalidArgument where T's size is not the dtype's (double values for a float32
  /// tensor would be read as pairs of floats); complex numbers may also come as their parts.
  template <class T>
  static Tensor from_vector(DType dtype, Shape shape, const std::vector<T>& values) {
    check_element_type(dtype, sizeof(T), "Tensor::from_vector");
    return from_host_bytes(dtype, std::move(shape), values.data(), values.size() * sizeof(T));
  }
  /// The elements as a host vector of the dtype's C++ type; \throws InvalidArgument where
  /// T's size is not the dtype's.
  template <class T>
  std::vector<T> to_vector() const {
    check_element_type(dtype(), sizeof(T), "Tensor::to_vector");
    const std::vector<unsigned char> bytes = to_host_bytes();
    if (bytes.size() % sizeof(T) != 0) throw InternalError("Tensor::to_vector: element size mismatch");
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }

 private:
  static void check_element_type(DType dtype, std::size_t size, const char* what);
  void check_view_type(std::size_t elem, std::int64_t bytes) const;
  void check_matrix(std::int64_t rows, std::int64_t cols, std::size_t elem) const;

  DType dtype_ = DType::Float32;
  Shape shape_{0};
  Kokkos::View<unsigned char*, MemSpace> storage_;
  std::size_t offset_ = 0;
  std::shared_ptr<unsigned char> owner_;  ///< owns storage_ when it came from reusable_pages() or adopt_host()
  std::shared_ptr<void> held_;            ///< counts storage_ against the memory budget
  StringPool strings_;
};

/// \brief The bytes of a tensor of \p shape and \p dtype. \throws InvalidArgument
/// ("LABEL of shape S and dtype D has more bytes than fit in int64") when they do not
/// fit; check a distributed tensor's global shape with it first, so the message is the
/// same at every rank count.
std::int64_t tensor_bytes(const Shape& shape, DType dtype, const std::string& label);

}  // namespace shardops
