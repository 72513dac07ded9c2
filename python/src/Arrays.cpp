#include "Arrays.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>

#include "shardops/core/Error.hpp"
#include "shardops/kernels/StringKernels.hpp"

namespace shardops::python {
namespace {

bool is_native_order(const py::dtype& dt) {
  const char order = dt.attr("byteorder").cast<std::string>().at(0);
  return order == '=' || order == '|';
}

/// The DType of a numeric NumPy dtype; String for S, U and object arrays.
DType dtype_of(const py::dtype& dt, const std::string& what) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  auto sized = [&](std::initializer_list<std::pair<py::ssize_t, DType>> table) {
    for (const auto& [bytes, dtype] : table)
      if (bytes == size) return dtype;
    throw InvalidArgument(what + ": unsupported dtype " + py::str(py::handle(dt)).cast<std::string>());
  };
  switch (kind) {
    case 'b': return DType::Bool;
    case 'i': return sized({{1, DType::Int8}, {2, DType::Int16}, {4, DType::Int32}, {8, DType::Int64}});
    case 'u': return sized({{1, DType::UInt8}, {2, DType::UInt16}, {4, DType::UInt32}, {8, DType::UInt64}});
    case 'f': return sized({{2, DType::Float16}, {4, DType::Float32}, {8, DType::Float64}});
    case 'c': return sized({{8, DType::Complex64}, {16, DType::Complex128}});
    case 'S':
    case 'U':
    case 'O': return DType::String;
    default: throw InvalidArgument(what + ": unsupported dtype " + py::str(py::handle(dt)).cast<std::string>());
  }
}

Shape shape_of(const py::array& a) { return Shape(std::vector<std::int64_t>(a.shape(), a.shape() + a.ndim())); }

void append_utf8(std::string& out, std::uint32_t cp, const std::string& what) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    if (cp >= 0xD800 && cp < 0xE000) throw InvalidArgument(what + ": a surrogate code point cannot be UTF-8 encoded");
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x110000) {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    throw InvalidArgument(what + ": code point " + std::to_string(cp) + " is not Unicode");
  }
}

/// A string tensor from a C-contiguous S, U or object array.
Tensor string_tensor(const py::array& a, const std::string& what, int home) {
  const char kind = a.dtype().kind();
  const auto n = static_cast<std::size_t>(a.size());
  const auto width = static_cast<std::size_t>(a.itemsize());
  StringTensorBuilder builder(n);
  StringFormat format;  // variable-length UTF-8 unless fixed-width bytes
  if (kind == 'S') {
    // NumPy's rule: trailing NULs are padding, embedded ones stay.
    const auto* p = static_cast<const char*>(a.data());
    for (std::size_t i = 0; i < n; ++i, p += width) {
      std::size_t len = width;
      while (len > 0 && p[len - 1] == '\0') --len;
      builder.append(p, len);
    }
    format = StringFormat{true, static_cast<std::int64_t>(width), false};
  } else if (kind == 'U') {
    const auto* p = static_cast<const std::uint32_t*>(a.data());
    const std::size_t chars = width / 4;
    std::string utf8;
    for (std::size_t i = 0; i < n; ++i, p += chars) {
      std::size_t len = chars;
      while (len > 0 && p[len - 1] == 0) --len;
      utf8.clear();
      for (std::size_t c = 0; c < len; ++c) append_utf8(utf8, p[c], what);
      builder.append(utf8.data(), utf8.size());
    }
  } else {
    auto* const* items = static_cast<PyObject* const*>(a.data());
    for (std::size_t i = 0; i < n; ++i) {
      PyObject* item = items[i];
      if (PyBytes_Check(item)) {
        builder.append(PyBytes_AS_STRING(item), static_cast<std::size_t>(PyBytes_GET_SIZE(item)));
      } else if (PyUnicode_Check(item)) {
        Py_ssize_t len = 0;
        const char* text = PyUnicode_AsUTF8AndSize(item, &len);
        if (text == nullptr) {
          PyErr_Clear();
          throw InvalidArgument(what + ": element " + std::to_string(i) + " cannot be UTF-8 encoded");
        }
        builder.append(text, static_cast<std::size_t>(len));
      } else {
        throw InvalidArgument(what + ": element " + std::to_string(i) + " is a " + Py_TYPE(item)->tp_name +
                              "; object arrays must hold bytes or str");
      }
    }
  }
  return builder.finish(shape_of(a), home, format);
}

/// A Tensor viewing \p a's buffer (host-accessible memory spaces), else a copy of it.
Tensor view_of(DType dtype, const py::array& a) {
  auto* bytes = static_cast<unsigned char*>(const_cast<void*>(a.data()));
  const auto nbytes = static_cast<std::size_t>(a.nbytes());
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) {
    return Tensor::adopt(dtype, shape_of(a), Kokkos::View<unsigned char*, MemSpace>(bytes, nbytes));
  } else {
    return Tensor::from_host_bytes(dtype, shape_of(a), bytes, nbytes);
  }
}

py::array owning_array(const Tensor& t) {
  const py::dtype dt = py::dtype::from_args(py::str(dtype_name(t.dtype())));
  const std::vector<std::int64_t>& dims = t.shape().dims();
  std::vector<py::ssize_t> shape(dims.begin(), dims.end());
  auto* holder = new Tensor(t);
  // At interpreter exit Kokkos may be finalized before the last arrays die: their
  // memory is then left to the OS instead of being freed through Kokkos.
  py::capsule owner(holder, [](void* p) {
    if (Kokkos::is_initialized()) delete static_cast<Tensor*>(p);
  });
  return py::array(dt, shape, {}, t.data(), owner);
}

py::object strings_to_numpy(const Tensor& t) {
  const std::vector<std::string> values = string_values(t);
  const std::vector<std::int64_t>& dims = t.shape().dims();
  py::array out(py::dtype("O"), std::vector<py::ssize_t>(dims.begin(), dims.end()));
  auto** items = static_cast<PyObject**>(out.mutable_data());
  for (std::size_t i = 0; i < values.size(); ++i) {
    PyObject* b = PyBytes_FromStringAndSize(values[i].data(), static_cast<Py_ssize_t>(values[i].size()));
    if (b == nullptr) throw py::error_already_set();
    Py_XDECREF(items[i]);
    items[i] = b;
  }
  return std::move(out);
}

}  // namespace

const Tensor& CallInputs::add(const py::handle& obj, const std::string& what, Values values) {
  py::array a;
  try {
    a = py::module_::import("numpy").attr("asarray")(obj);
  } catch (const py::error_already_set& e) {
    // The error's type and text, without the traceback that e.what() appends.
    std::string reason = e.what();
    try {
      reason = py::str(e.type().attr("__name__")).cast<std::string>() + ": " + py::str(e.value()).cast<std::string>();
    } catch (const py::error_already_set&) {
    }
    throw InvalidArgument(what + ": not an array (" + reason + ")");
  }
  const DType dtype = dtype_of(a.dtype(), what);
  const bool contiguous = (a.flags() & py::array::c_style) != 0 && a.attr("flags").attr("aligned").cast<bool>() &&
                          is_native_order(a.dtype());
  if (!contiguous) {
    // One copy, by NumPy: C order, aligned, native byte order.
    a = py::module_::import("numpy").attr("ascontiguousarray")(a, a.dtype().attr("newbyteorder")("="));
  }
  signature_ +=
      what + ":" + (dtype == DType::String ? "string" : dtype_name(dtype)) + ":" + std::to_string(a.ndim()) + ";";
  names_.push_back(what);
  if (dtype == DType::String) {
    tensors_.push_back(string_tensor(a, what, home_));
  } else if (values == Values::Copied) {
    tensors_.push_back(view_of(dtype, a).deep_copy("shardops::python::input"));
  } else {
    tensors_.push_back(view_of(dtype, a));
    const auto* begin = static_cast<const unsigned char*>(a.data());
    borrowed_.emplace_back(begin, begin + a.nbytes());
    wrapped_.push_back(a);
  }
  return tensors_.back();
}

py::object CallInputs::to_numpy(const Tensor& t) const {
  if (is_string(t.dtype())) return strings_to_numpy(t);
  const unsigned char* begin = t.data();
  const unsigned char* end = begin + t.nbytes();
  for (const auto& [b, e] : borrowed_) {
    if (begin < e && b < end) return owning_array(t.deep_copy("shardops::python::output"));
  }
  return owning_array(t);
}

py::object tensor_to_numpy(const Tensor& t) { return CallInputs().to_numpy(t); }

py::object empty_array(const std::vector<std::int64_t>& dims, const py::dtype& dtype) {
  const DType d = dtype_of(dtype, "shardops.empty");
  if (is_string(d)) throw InvalidArgument("shardops.empty: strings have no fixed-size buffer; use numpy");
  return owning_array(Tensor(d, Shape(dims), Init::Uninitialized, "shardops::python::empty"));
}

}  // namespace shardops::python
