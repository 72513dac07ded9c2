#include <pybind11/stl.h>

#include <sys/stat.h>

#include <deque>
#include <map>

#include "Bindings.hpp"
#include "Call.hpp"
#include "shardops/hdf5/DatasetRead.hpp"
#include "shardops/hdf5/InputWatch.hpp"
#include "shardops/hdf5/Io.hpp"
#include "shardops/hdf5/StopSignals.hpp"
#include "shardops/route/RowLayout.hpp"

namespace shardops::python {
namespace {

// The datasets this process read (on the reading communicator's rank 0), as found then, for
// a later write over one of them: another job or program that wrote it in between would
// have its change lost under the write (read, change, write back). At most kMaxReadNotes,
// the oldest dropped first (a program reading millions of datasets); touched with the GIL held.
constexpr std::size_t kMaxReadNotes = 4096;
std::deque<io::InputWatch::ReadNote>& read_notes() {
  static std::deque<io::InputWatch::ReadNote> notes;
  return notes;
}

bool same_dataset(const io::InputWatch::ReadNote& note, unsigned long long device, unsigned long long inode,
                  const std::string& path) {
  return note.identity.device == device && note.identity.inode == inode && note.mark.path == path;
}

// Removes the notes of \p path in the file of \p device and \p inode, and returns them.
std::vector<io::InputWatch::ReadNote> take_notes(unsigned long long device, unsigned long long inode,
                                                 const std::string& path) {
  std::deque<io::InputWatch::ReadNote>& notes = read_notes();
  std::vector<io::InputWatch::ReadNote> taken;
  for (auto it = notes.begin(); it != notes.end();) {
    if (same_dataset(*it, device, inode, path)) {
      taken.push_back(std::move(*it));
      it = notes.erase(it);
    } else {
      ++it;
    }
  }
  return taken;
}

void keep_notes(std::vector<io::InputWatch::ReadNote> found) {
  std::deque<io::InputWatch::ReadNote>& notes = read_notes();
  for (io::InputWatch::ReadNote& note : found) {
    take_notes(note.identity.device, note.identity.inode, note.mark.path);  // a read again replaces it
    notes.push_back(std::move(note));
    if (notes.size() > kMaxReadNotes) notes.pop_front();
  }
}

py::object read_py(const std::string& dataset, const py::object& comm) {
  Call call(comm_or_self(comm));
  io::DatasetRef ref;
  call.convert([&](CallInputs& in) {
    in.note("read=" + dataset);
    ref = io::parse_dataset_ref(dataset);
  });
  Tensor block;
  io::InputWatch watch(*call.comm());
  {
    ReleasedGil release;
    io::InputFiles files(*call.comm(), &watch);
    block = files.read(ref).local();
  }
  keep_notes(watch.read_notes());
  return tensor_to_numpy(block);
}

// Rank 0: the notes of what this process read of the datasets \p refs, in files that are
// there (the write checks them under each file's lock).
std::vector<io::InputWatch::ReadNote> notes_of(const std::vector<io::DatasetRef>& refs, bool take) {
  std::vector<io::InputWatch::ReadNote> found;
  for (const io::DatasetRef& ref : refs) {
    struct stat st {};
    if (::stat(ref.file.c_str(), &st) != 0) continue;
    const auto device = static_cast<unsigned long long>(st.st_dev);
    const auto inode = static_cast<unsigned long long>(st.st_ino);
    if (take) {
      for (io::InputWatch::ReadNote& note : take_notes(device, inode, ref.path)) found.push_back(std::move(note));
    } else {
      for (const io::InputWatch::ReadNote& note : read_notes())
        if (same_dataset(note, device, inode, ref.path)) found.push_back(note);
    }
  }
  return found;
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
  const Comm& c = *call.comm();
  // A dataset this process read and now writes over must not have been written since.
  std::vector<io::InputWatch::ReadNote> read_before;
  if (overwrite && c.rank() == 0) read_before = notes_of(refs, false);
  {
    ReleasedGil release;
    const std::vector<DistTensor> blocks = call.dist_inputs();
    // SIGTERM (Slurm's scancel) ends the process as it would have, without the write's
    // temporary files and with the target cut back, as for the command line.
    const io::StopHandlersWhileWriting stop_handlers(c.rank() == 0);
    io::InputWatch watch(c);
    for (const io::InputWatch::ReadNote& note : read_before) watch.written_over_since(note);
    io::OutputOptions options{overwrite, true};
    options.inputs = &watch;
    io::OutputTransaction transaction(c, options);
    for (std::size_t i = 0; i < refs.size(); ++i) transaction.write(refs[i], blocks[i], provenance);
    transaction.commit();
  }
  // What is there now is this write's: a later write over it has nothing to compare.
  if (c.rank() == 0) notes_of(refs, true);
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
