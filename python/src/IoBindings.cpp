#include <pybind11/stl.h>

#include <map>

#include "Bindings.hpp"
#include "Call.hpp"
#include "shardops/hdf5/Io.hpp"
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

void write_py(const py::dict& outputs, const py::object& comm, bool overwrite,
              const std::map<std::string, std::string>& attributes) {
  Call call(comm_or_self(comm));
  // Sorted by name, so that every rank writes the datasets in the same order.
  std::map<std::string, py::object> sorted;
  for (const auto& [name, array] : outputs)
    sorted.emplace(py::str(name).cast<std::string>(), py::reinterpret_borrow<py::object>(array));
  std::vector<io::DatasetRef> refs;
  call.convert([&](CallInputs& in) {
    for (const auto& [name, array] : sorted) {
      refs.push_back(io::parse_dataset_ref(name));
      in.add(array, name);
    }
    for (const auto& [key, value] : attributes) in.note("attribute " + key + "=" + value);
    in.note(overwrite ? "overwrite" : "no overwrite");
  });
  io::Attributes provenance{{"op", "write"}, {"writer", "shardops Python module"}};
  for (const auto& [key, value] : attributes) provenance.insert_or_assign(key, io::AttributeValue(value));
  ReleasedGil release;
  const Comm& c = *call.comm();
  const std::vector<DistTensor> blocks = call.dist_inputs();
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
