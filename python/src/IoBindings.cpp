#include <pybind11/stl.h>

#include <map>

#include "Bindings.hpp"
#include "Call.hpp"
#include "shardops/hdf5/Io.hpp"
#include "shardops/hdf5/StopSignals.hpp"
#include "shardops/route/RowLayout.hpp"

namespace shardops::python {
namespace {

py::object read_py(const std::string& dataset, const py::object& comm) {
  Call call(comm_or_self(comm));
  io::DatasetRef ref;
  call.convert([&](CallInputs& in) {
    in.note("read=" + dataset);
    ref = io::parse_dataset_ref(dataset);
  });
  Tensor block;
  {
    ReleasedGil release;
    block = io::read_dataset(*call.comm(), ref).local();
  }
  return tensor_to_numpy(block);
}

// The provenance every dataset write() makes gets (and shardops_version): a user's attribute
// of one of these names is refused rather than written over it, or over by it.
const io::Attributes& python_provenance() {
  static const io::Attributes provenance{{"op", "write"}, {"writer", "shardops Python module"}};
  return provenance;
}

// \p text (a str) as UTF-8 for an HDF5 string attribute: one that cannot be encoded (a lone
// surrogate) or holds a NUL (HDF5 would keep only what comes before it) is refused, as a
// string dataset's element is.
std::string attribute_text(const py::handle& text, const std::string& what) {
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (utf8 == nullptr) {
    PyErr_Clear();
    throw InvalidArgument("attributes: " + what + " cannot be UTF-8 encoded");
  }
  std::string out(utf8, static_cast<std::size_t>(size));
  if (out.find('\0') != std::string::npos)
    throw InvalidArgument("attributes: " + what + " holds a NUL byte, which an HDF5 string attribute cannot keep");
  return out;
}

// Its arguments are taken apart inside the agreed conversion: a rank whose \p outputs or
// \p attributes are not what write() takes raises there, and so does every other rank.
void write_py(const py::object& outputs, const py::object& comm, bool overwrite, const py::object& attributes) {
  Call call(comm_or_self(comm));
  std::vector<io::DatasetRef> refs;
  io::Attributes provenance = python_provenance();
  call.convert([&](CallInputs& in) {
    // Sorted by name, so that every rank writes the datasets in the same order.
    std::map<std::string, py::object> sorted;
    for (const auto& [name, array] : py::dict(outputs))
      sorted.emplace(py::str(name).cast<std::string>(), py::reinterpret_borrow<py::object>(array));
    for (const auto& [name, array] : sorted) {
      refs.push_back(io::parse_dataset_ref(name));
      const Tensor& t = in.add(array, name);
      // The file type of strings follows the array's kind (S fixed-length, U and object
      // variable-length): every rank's must be the same, as its dtype must.
      if (t.dtype() == DType::String)
        in.note(name + (t.strings().format.fixed_length ? ": fixed-length strings" : ": variable-length strings"));
    }
    for (const auto& [key, value] : attributes.is_none() ? py::dict() : py::dict(attributes)) {
      if (!py::isinstance<py::str>(key) || !py::isinstance<py::str>(value)) {
        throw InvalidArgument("attributes: names and values must be str, got " + py::repr(key).cast<std::string>() +
                              ": " + py::repr(value).cast<std::string>());
      }
      const std::string name = attribute_text(key, "a name");
      const std::string text = attribute_text(value, "the value of '" + name + "'");
      if (python_provenance().count(name) > 0 || name == io::kVersionAttribute) {
        throw InvalidArgument("attributes: '" + name + "' is set by shardops itself (op, writer, " +
                              io::kVersionAttribute + ")");
      }
      provenance.emplace(name, io::AttributeValue(text));
      in.note("attribute " + name + "=" + text);
    }
    in.note(overwrite ? "overwrite" : "no overwrite");
  });
  ReleasedGil release;
  const Comm& c = *call.comm();
  const std::vector<DistTensor> blocks = call.dist_inputs();
  // SIGTERM (Slurm's scancel) ends the process as it would have, without the write's
  // temporary files and with the target cut back, as for the command line.
  const io::StopHandlersWhileWriting stop_handlers(c.rank() == 0);
  io::OutputTransaction transaction(c, io::OutputOptions{overwrite, true});
  for (std::size_t i = 0; i < refs.size(); ++i) transaction.write(refs[i], blocks[i], provenance);
  transaction.commit();
}

// Not collective (the Python side passes the communicator's size and rank): a rank may ask
// for its block alone.
std::pair<std::int64_t, std::int64_t> row_block_py(std::int64_t num_rows, int size, int rank) {
  if (num_rows < 0) throw InvalidArgument("row_block: num_rows must be >= 0, got " + std::to_string(num_rows));
  const RowLayout layout = RowLayout::balanced(num_rows, size);
  return {layout.offset(rank), layout.offset(rank) + layout.count(rank)};
}

}  // namespace

void bind_io(py::module_& m) {
  m.def("read", &read_py, py::arg("dataset"), py::arg("comm"));
  m.def("write", &write_py, py::arg("outputs"), py::arg("comm"), py::arg("overwrite"), py::arg("attributes"));
  m.def("row_block", &row_block_py, py::arg("num_rows"), py::arg("size"), py::arg("rank"));
}

}  // namespace shardops::python
