#pragma once
/// \file
/// \brief NumPy arrays <-> shardops Tensors.
///
/// Inputs: a C-contiguous, aligned, native-byte-order array of a dtype shardops has is
/// wrapped without a copy (the Tensor views the array's buffer; the ops never write
/// their inputs). Anything else (a list, a strided view, a big-endian array) is first
/// made contiguous by NumPy (one copy). Strings are always copied into a string
/// tensor's pool: NumPy `S` (trailing NULs are padding, as NumPy reads them), `U`
/// (encoded as UTF-8) and object arrays of bytes or str.
///
/// Outputs: numeric tensors become arrays that own the Tensor's memory (no copy);
/// string tensors become object arrays of bytes.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <utility>
#include <vector>

#include "shardops/core/Tensor.hpp"

namespace shardops::python {

namespace py = pybind11;

/// \brief The inputs of one call: their Tensors and the arrays whose buffers they view
/// (kept alive for the call; an output that shares one of those buffers is copied, so
/// no output ever aliases an input).
class CallInputs {
 public:
  /// \p home: the rank string tensors' pools belong to (DistTensor's rule).
  explicit CallInputs(int home = 0) : home_(home) {}
  /// How an input's buffer is used while the op runs (without the GIL).
  enum class Values {
    InPlace,  ///< read where it lies: the op reads only what is there, whatever it is
    Copied,   ///< copied first: values that decide the outputs' sizes (DynamicPartition's ids,
              ///< DynamicStitch's indices), which another thread changing them during the
              ///< call must not make the op write outside its outputs
  };
  /// Converts \p obj (anything np.asarray takes). \p what names the input in messages.
  /// \throws InvalidArgument for a dtype shardops does not have or a bad string element.
  const Tensor& add(const py::handle& obj, const std::string& what, Values values = Values::InPlace);
  /// Records a non-array argument (the op's attributes) in the signature.
  void note(const std::string& argument) { signature_ += argument + ";"; }
  const std::vector<Tensor>& tensors() const noexcept { return tensors_; }
  const std::vector<std::string>& names() const noexcept { return names_; }
  /// "name:dtype:ndim;" per input and the noted arguments: what every rank must agree on.
  const std::string& signature() const noexcept { return signature_; }

  /// \p t as a NumPy array (numeric: owning \p t's memory unless it lies in an input's buffer).
  py::object to_numpy(const Tensor& t) const;

 private:
  int home_ = 0;
  std::vector<Tensor> tensors_;
  std::vector<std::string> names_;
  std::vector<py::array> wrapped_;
  std::vector<std::pair<const unsigned char*, const unsigned char*>> borrowed_;
  std::string signature_;
};

/// An output Tensor as a NumPy array (no input buffers to check against).
py::object tensor_to_numpy(const Tensor& t);

/// \brief An uninitialized array of \p dims and \p dtype whose buffer is a Tensor's, as
/// the ops' outputs are: 64-byte aligned and, when large, on the huge pages the ops' own
/// buffers get (core/HostMemory.hpp). \throws InvalidArgument for strings.
py::object empty_array(const std::vector<std::int64_t>& dims, const py::dtype& dtype);

}  // namespace shardops::python
