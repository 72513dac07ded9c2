#include "shardops/hdf5/DatasetRead.hpp"

#include <algorithm>
#include <iterator>

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include "shardops/core/Kokkos.hpp"
#include "shardops/core/StringTensor.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/hdf5/FileAccess.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Filters.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/hdf5/LinkTarget.hpp"
#include "shardops/hdf5/PathLookup.hpp"
#include "shardops/hdf5/RowTransfer.hpp"
#include "shardops/hdf5/StorageLayout.hpp"
#include "shardops/hdf5/TypeMap.hpp"
#include "shardops/hdf5/detail/MappedRows.hpp"

namespace shardops::io {

namespace {

// A dataset whose rows are kept in external raw files (h5py's external=): HDF5 says only
// "unable to open external raw data file". The file missing is named, and where a relative
// name is looked for: the working directory, unless HDF5_EXTFILE_PREFIX says otherwise
// (then HDF5 is left to find it). Returns the raw files, as the job reads them.
std::vector<std::string> check_external_files(hid_t dataset, const std::string& what) {
  const PropListHandle dcpl(check_id(H5Dget_create_plist(dataset), what + ": cannot read the dataset's properties"));
  const int n = H5Pget_external_count(dcpl.get());
  hdf5_error_detail();  // clear the stack
  std::vector<std::string> files;
  if (n <= 0 || std::getenv("HDF5_EXTFILE_PREFIX") != nullptr) return files;
  for (int i = 0; i < n; ++i) {
    std::vector<char> name(PATH_MAX + 1, '\0');
    off_t offset = 0;
    hsize_t size = 0;
    if (H5Pget_external(dcpl.get(), static_cast<unsigned>(i), name.size() - 1, name.data(), &offset, &size) < 0) {
      hdf5_error_detail();
      return files;  // HDF5 says what is wrong when it reads
    }
    const std::string file(name.data());
    files.push_back(file);
    if (::access(file.c_str(), F_OK) == 0) continue;
    std::error_code ec;
    const std::string cwd = std::filesystem::current_path(ec).string();
    throw InvalidArgument(what + ": its rows are kept in the external raw file '" + file +
                          "' (h5py's external=), which does not exist" +
                          (file.empty() || file[0] == '/'
                               ? std::string()
                               : " in the working directory '" + cwd + "', where HDF5 looks for a relative name"));
  }
  return files;
}

// An open input dataset (its file stays open in the InputFiles that opened it).
struct OpenDataset {
  DatasetHandle dataset;
  DatasetInfo info;                     ///< shape: the rows selected
  Shape file_shape;                     ///< the dataset's own shape
  std::int64_t first = 0;               ///< the first row selected
  bool is_virtual = false;              ///< h5py's VirtualLayout: rows taken from other datasets
  bool fill_first = false;              ///< fill the read buffer with the fill value first (fill_before_reading)
  std::vector<std::string> link_files;  ///< the files external links on its path lead through or to
};

// Where HDF5 may leave parts of a read buffer as they were: elements no one ever wrote when
// the dataset's fill time is NEVER (h5py's set_fill_time(FILL_TIME_NEVER), netCDF's
// fill_value=False), and the rows a virtual dataset maps from no source when mappings
// overlap in the selection. Read into fresh memory, those elements would be what that
// memory held, different from rank count to rank count.
bool fills_before_reading(hid_t dcpl, bool is_virtual) {
  H5D_fill_time_t raw = H5D_FILL_TIME_IFSET;
  if (H5Pget_fill_time(dcpl, &raw) < 0) hdf5_error_detail();
  // A damaged file can hold any number there, which no enumerator names: compared as one.
  static_assert(sizeof raw == sizeof(int), "H5D_fill_time_t is an int-sized enum");
  int when = 0;
  std::memcpy(&when, &raw, sizeof when);
  return is_virtual || when == static_cast<int>(H5D_FILL_TIME_NEVER);
}

// \p dataset's fill value as a \p mem_type element holds it, as HDF5 reads the places
// nothing was written to (zeros where it has none).
std::vector<unsigned char> fill_value_as(hid_t dataset, hid_t mem_type, const std::string& what) {
  std::vector<unsigned char> value(H5Tget_size(mem_type), 0);
  const PropListHandle dcpl(check_id(H5Dget_create_plist(dataset), what + ": cannot read the fill value"));
  H5D_fill_value_t defined = H5D_FILL_VALUE_UNDEFINED;
  check_status(H5Pfill_value_defined(dcpl.get(), &defined), what + ": cannot read the fill value");
  if (defined != H5D_FILL_VALUE_UNDEFINED)
    check_status(H5Pget_fill_value(dcpl.get(), mem_type, value.data()), what + ": cannot read the fill value");
  return value;
}

// Fills the \p elements of \p buffer with \p value (fill_value_as) before a read, so that the
// places HDF5 leaves (fills_before_reading) read the same at any rank count.
void fill_before_reading(void* buffer, std::int64_t elements, const std::vector<unsigned char>& value) {
  if (elements <= 0) return;
  auto* out = static_cast<unsigned char*>(buffer);
  const std::size_t size = value.size();
  if (std::all_of(value.begin(), value.end(), [](unsigned char b) { return b == 0; })) {
    std::memset(out, 0, static_cast<std::size_t>(elements) * size);
    return;
  }
  for (std::int64_t i = 0; i < elements; ++i) std::memcpy(out + static_cast<std::size_t>(i) * size, value.data(), size);
}

Shape shape_of(hid_t space, const std::string& what) {
  const H5S_class_t cls = H5Sget_simple_extent_type(space);
  if (cls == H5S_SCALAR) return Shape();
  if (cls == H5S_NULL) throw InvalidArgument(what + ": the dataset has a null dataspace (no data at all)");
  if (cls != H5S_SIMPLE) throw IOError(with_hdf5_detail(what + ": cannot read the dataspace"));
  const int rank = check_value(H5Sget_simple_extent_ndims(space), what + ": cannot read the dataspace rank");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check_value(H5Sget_simple_extent_dims(space, dims.data(), nullptr), what + ": cannot read the dataspace dims");
  std::vector<std::int64_t> out;
  for (const hsize_t d : dims) {
    if (d > static_cast<hsize_t>(std::numeric_limits<std::int64_t>::max())) {
      throw InvalidArgument(what + ": dimension " + std::to_string(d) + " does not fit in int64");
    }
    out.push_back(static_cast<std::int64_t>(d));
  }
  try {
    return Shape(std::move(out));
  } catch (const Error& e) {
    throw InvalidArgument(what + ": " + e.what());
  }
}

OpenDataset open_dataset(const Comm& comm, hid_t file, const DatasetRef& ref) {
  const std::string what = ref.str();
  OpenDataset d;
  run_agreed(comm, [&] {
    LinkEnd end;
    check_external_links(file, ref.file, ref.path, what, &d.link_files, &end);
    // A job of one rank without MPI has the file open with the serial driver, without HDF5's
    // lock: links out of it are followed with the same access (HDF5 refuses to open a file
    // again, through an external link into itself, with its lock on where it is off).
    const bool serial = comm.get() == MPI_COMM_NULL;
    const PropListHandle access = serial ? serial_link_access() : PropListHandle();
    const PathLookup found = lookup_path(file, ref.path, what, access.valid() ? access.get() : H5P_DEFAULT);
    if (found.blocked) {
      throw InvalidArgument(what + ": no such dataset: '" + found.stop + "' is " + object_kind_name(found.blocked_by) +
                            ", not a group");
    }
    if (found.kind == ObjectKind::Missing) {
      // A link there that leads nowhere (a dangling soft link, an external link to a file
      // or object that is not there) is named as such.
      const std::string link = link_in_the_way(file, ref.file, found.stop);
      if (link.rfind("'" + found.stop + "'", 0) == 0)
        throw InvalidArgument(what + ": no such dataset: " + link + ", which leads to nothing");
      throw InvalidArgument(what + ": no such dataset in '" + ref.file + "'" +
                            (found.stop != ref.path ? " (its group '" + found.stop + "' does not exist)" : "") +
                            (ref.rows.empty()
                                 ? ""
                                 : " ('" + ref.rows + "' at the end of the name is read as a row selection of '" +
                                       ref.path + "'; a dataset whose own name ends in brackets cannot be named)"));
    }
    if (found.kind != ObjectKind::Dataset) {
      throw InvalidArgument(what + ": '" + ref.path + "' is " + object_kind_name(found.kind) + ", not a dataset");
    }
    if (serial && !d.link_files.empty()) {
      // Opened where the links end, in the file opened as open_serial opens it: HDF5 1.10.8
      // crashes at its close after a failed H5Dopen2 given an access list with a file access
      // list for external links (serial_link_access), as for a dataset of a newer format.
      const FileHandle target = open_serial(end.file, H5F_ACC_RDONLY, what + ": cannot open '" + end.file + "'");
      d.dataset = DatasetHandle(
          check_id(H5Dopen2(target.get(), end.path.c_str(), H5P_DEFAULT), what + ": cannot open the dataset"));
    } else {
      d.dataset =
          DatasetHandle(check_id(H5Dopen2(file, ref.path.c_str(), H5P_DEFAULT), what + ": cannot open the dataset"));
    }
    const TypeHandle type(check_id(H5Dget_type(d.dataset.get()), what + ": cannot read the datatype"));
    d.info.dtype = dtype_from_hdf5(type.get(), what);
    if (d.info.dtype == DType::String) d.info.strings = string_format_of(type.get(), what);
    const DataspaceHandle space(check_id(H5Dget_space(d.dataset.get()), what + ": cannot read the dataspace"));
    d.file_shape = shape_of(space.get(), what);
    const PropListHandle dcpl(check_id(H5Dget_create_plist(d.dataset.get()), what + ": cannot read the layout"));
    d.is_virtual = H5Pget_layout(dcpl.get()) == H5D_VIRTUAL;
    d.fill_first = fills_before_reading(dcpl.get(), d.is_virtual);
    d.info.shape = d.file_shape;
    if (!ref.rows.empty()) {
      if (d.file_shape.rank() == 0) throw InvalidArgument(what + ": a scalar dataset has no rows to select");
      const RowRange range = resolve_rows(ref, d.file_shape.dim(0));
      d.first = range.first;
      d.info.shape = d.file_shape.with_dim0(range.count);
    }
  });
  return d;
}

// The file and path that hold \p dataset (open under \p ref's name) when an external link,
// or several in a row, took that name out of \p ref's file: nullopt where it lies in that
// file. The file is named as HDF5 opened it (the link's target, found as HDF5 looks for it).
std::optional<DatasetRef> held_elsewhere(hid_t dataset, const DatasetRef& ref) {
  const std::string file = hdf5_name(dataset, H5Fget_name);
  const std::string path = hdf5_name(dataset, H5Iget_name);
  if (file.empty() || path.empty() || same_file(file, ref.file)) return std::nullopt;
  return DatasetRef{file, path};
}

// The layout to read \p shape with: the caller's (checked) or the default.
RowLayout choose_layout(const Comm& comm, const Shape& shape, const RowLayout* layout, const std::string& what) {
  if (shape.rank() == 0) {
    const RowLayout scalar = RowLayout::on_rank(1, comm.size(), 0);
    if (layout != nullptr && *layout != scalar) {
      throw InvalidArgument(what + ": a scalar dataset is read by rank 0; the layout given puts rows elsewhere");
    }
    return scalar;
  }
  if (layout == nullptr) return RowLayout::balanced(shape.dim(0), comm.size());
  if (layout->nranks() != comm.size()) {
    throw InvalidArgument(what + ": the layout given has " + std::to_string(layout->nranks()) + " blocks for " +
                          std::to_string(comm.size()) + " ranks");
  }
  if (layout->total() != shape.dim(0)) {
    throw InvalidArgument(what + ": the layout given has " + std::to_string(layout->total()) +
                          " rows, the dataset of shape " + shape.str() + " has " + std::to_string(shape.dim(0)));
  }
  return *layout;
}

// This rank's block of a string dataset: HDF5's representation of one round of rows
// at a time (a char* per element for variable length, `width` bytes per element for
// fixed length) is appended to the block's pool (8 bytes of offset per string plus its
// bytes) and freed before the next round; the pool is homed at this rank.
Tensor read_string_block(const Comm& comm, const OpenDataset& d, const Shape& local_shape, std::int64_t first,
                         std::int64_t count, const std::string& what) {
  const StringFormat& format = d.info.strings;
  TypeHandle mem_type;
  StringTensorBuilder values;
  std::vector<unsigned char> fill;  // fixed-length values where HDF5 may leave the buffer (fill_first)
  run_agreed(comm, [&] {
    const TypeHandle type(check_id(H5Dget_type(d.dataset.get()), what + ": cannot read the datatype"));
    mem_type = string_memory_type(type.get(), what);
    if (d.fill_first && format.fixed_length) fill = fill_value_as(d.dataset.get(), mem_type.get(), what);
    const auto elements = static_cast<std::size_t>(local_shape.num_elements());
    // A handle and an offset per string (the bytes are checked as the pool is built).
    check_allocation(elements * (dtype_size(DType::String) + sizeof(std::int64_t)),
                     "reading " + what + ": block " + local_shape.str() + " of strings");
    values = StringTensorBuilder(elements);
  });
  RowStaging staging;
  if (format.fixed_length) {
    // Fixed-length values are plain bytes: the fill value goes where HDF5 may leave them
    // (fills_before_reading). A variable-length fill value is a string HDF5 allocates, which
    // the buffer cannot hold many times over: such places read as empty strings.
    if (d.fill_first)
      staging.clear = [&fill](unsigned char* buffer, std::int64_t n) { fill_before_reading(buffer, n, fill); };
    const auto width = static_cast<std::size_t>(format.width);
    staging.drain = [&values, width](const unsigned char* buffer, std::int64_t, std::int64_t n) {
      const char* chars = reinterpret_cast<const char*>(buffer);
      for (std::int64_t i = 0; i < n; ++i) {
        const char* s = chars + static_cast<std::size_t>(i) * width;
        std::size_t len = width;
        while (len > 0 && s[len - 1] == '\0') --len;  // NumPy's S<n>: trailing NULs are padding
        values.append(s, len);
      }
    };
  } else {
    staging.drain = [&](const unsigned char* buffer, std::int64_t, std::int64_t n) {
      const auto* strings = reinterpret_cast<char* const*>(buffer);
      for (std::int64_t i = 0; i < n; ++i) {
        if (strings[i] != nullptr) {
          values.append(strings[i], std::strlen(strings[i]));
        } else {
          values.append("", 0);
        }
      }
    };
    staging.release = [&](unsigned char* buffer, std::int64_t n) {
      const hsize_t dim = static_cast<hsize_t>(n);
      const DataspaceHandle space(H5Screate_simple(1, &dim, nullptr));
      if (space.valid()) static_cast<void>(H5Dvlen_reclaim(mem_type.get(), space.get(), H5P_DEFAULT, buffer));
      hdf5_error_detail();  // a failed reclaim leaks; nothing else to do about it
    };
  }
  transfer_rows_staged(comm, d.dataset.get(), mem_type.get(), d.file_shape, d.first + first, count, staging,
                       Transfer::Read, what);
  Tensor local;
  run_agreed(comm, [&] { local = values.finish(local_shape, comm.rank(), format); });
  return local;
}

}  // namespace

InputFiles::InputFiles(const Comm& comm, InputWatch* watch)
    : comm_(comm), own_watch_(comm), watch_(watch != nullptr ? watch : &own_watch_) {}

InputFiles::~InputFiles() = default;

InputFiles::Open::iterator InputFiles::find(const std::string& file) {
  return std::find_if(open_.begin(), open_.end(), [&](const auto& f) { return f.first == file; });
}

hid_t InputFiles::file(const DatasetRef& ref) {
  const auto it = find(ref.file);
  if (it != open_.end()) {
    open_.splice(open_.begin(), open_, it);
    return open_.front().second.get();
  }
  if (!open_.empty()) {
    // Room for this open: the least recently used files without an open object are closed
    // first, down to kMaxOpen - 1, or all of them when few descriptors are left on some
    // rank (every rank decides alike: the same calls in the same order). Closing is
    // collective.
    const bool short_of_descriptors = comm_.min(descriptors_left()) < 2 * kDescriptorsPerOpen;
    const std::size_t keep = short_of_descriptors ? 0 : kMaxOpen - 1;
    const unsigned objects = H5F_OBJ_DATASET | H5F_OBJ_GROUP | H5F_OBJ_DATATYPE | H5F_OBJ_ATTR;
    for (auto victim = open_.rbegin(); victim != open_.rend() && open_.size() > keep;) {
      if (H5Fget_obj_count(victim->second.get(), objects) != 0)
        ++victim;
      else
        victim = std::make_reverse_iterator(open_.erase(std::next(victim).base()));
    }
  }
  run_agreed(comm_, [&] { watch_->opening(ref.file, ref.str()); });
  open_.emplace_front(ref.file, open_input_file(comm_, ref.file, ref.str()));
  return open_.front().second.get();
}

DatasetInfo InputFiles::inspect(const DatasetRef& ref) { return open_dataset(comm_, file(ref), ref).info; }

DatasetInfo inspect(const Comm& comm, const DatasetRef& ref) { return InputFiles(comm).inspect(ref); }

DistTensor read_dataset(const Comm& comm, const DatasetRef& ref, const RowLayout* layout, const ReadOptions& options) {
  return InputFiles(comm).read(ref, layout, options);
}

DistTensor InputFiles::read(const DatasetRef& ref, const RowLayout* layout, const ReadOptions& options) {
  const Comm& comm = comm_;
  const std::string what = ref.str();
  OpenDataset d = open_dataset(comm, file(ref), ref);
  // Every file a chain of external links passes through is an input too.
  for (const std::string& passed : d.link_files) run_agreed(comm, [&] { watch_->opening(passed, what); });
  // Where the rows are: a dataset that an external link leads to lies in another file,
  // which is then an input as much as ref.file: checked and watched like one (another
  // program writing it is an error), and its own pages are the ones mapped.
  DatasetRef source = ref;
  std::optional<DatasetRef> elsewhere;
  run_agreed(comm, [&] { elsewhere = held_elsewhere(d.dataset.get(), ref); });
  if (elsewhere) {
    // Closing the dataset closes the linked file (HDF5 keeps no external file open
    // without an object of it): opened again after the checks, its metadata is current.
    d.dataset.reset();
    run_agreed(comm, [&] {
      watch_->opening(elsewhere->file, what);
      check_input_file(elsewhere->file, what + " (the file its link leads to)");
    });
    d = open_dataset(comm, file(ref), ref);
    source.file = elsewhere->file;
    source.path = elsewhere->path;
  }
  // HDF5 1.10 reads a virtual dataset (h5py's VirtualLayout) only from a file opened without
  // MPI-IO ("parallel reads not supported on virtual datasets"): each rank then opens the
  // file for itself, and HDF5 reads its rows from the source files. The file is closed here
  // first: HDF5 would share the MPI-IO one with a second open of it.
  FileHandle own_file;  // the virtual dataset's file, opened by this rank alone
  if (d.is_virtual) {
    d.dataset.reset();
    const auto open = find(ref.file);
    if (open != open_.end()) open_.erase(open);  // collective, as every rank found it virtual
    run_agreed(comm, [&] {
      own_file = open_serial(ref.file, H5F_ACC_RDONLY, what + ": cannot open '" + ref.file + "' to read its rows");
      d.dataset = DatasetHandle(check_id(H5Dopen2(own_file.get(), ref.path.c_str(), serial_link_access().get()),
                                         what + ": cannot open the virtual dataset"));
    });
    // HDF5 reads the fill value where it cannot open a source file: one that is there must
    // be readable, and is an input like any other (another program writing it is an error).
    // Sources of sources, and files their links lead to, are read as well.
    std::vector<std::string> sources;
    run_agreed(comm, [&] { sources = virtual_source_files(d.dataset.get(), source.file, source.path, what); });
    for (const std::string& s : sources) run_agreed(comm, [&] { watch_->opening(s, what); });
  }
  const Shape& shape = d.info.shape;
  const int rank = comm.rank();
  constexpr bool host_memory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;

  // The whole dataset's size first, so that the message does not depend on the rank count.
  run_agreed(comm, [&] {
    watch_->reading(source.file, source.path, d.dataset.get());
    tensor_bytes(shape, d.info.dtype, "reading " + what);
    check_filters_available(d.dataset.get(), what);
    for (const std::string& raw : check_external_files(d.dataset.get(), what)) watch_->read_from(raw);
  });
  RowLayout chosen;
  if (d.info.dtype == DType::String) {
    run_agreed(comm, [&] { chosen = choose_layout(comm, shape, layout, what); });
    const std::int64_t rows = chosen.count(rank);
    const Shape local_shape = shape.rank() == 0 ? (rows > 0 ? Shape() : Shape{0}) : shape.with_dim0(rows);
    const std::int64_t first = shape.rank() == 0 ? 0 : chosen.offset(rank);
    if (options.rows_read != nullptr) *options.rows_read = rows;
    DistTensor t(read_string_block(comm, d, local_shape, first, rows, what), shape, chosen, rank);
    watch_->read_done(source.file, source.path);
    return t;
  }
  Tensor local;
  std::vector<unsigned char> staging;  // only when MemSpace is not host-accessible
  TypeHandle mem_type;
  void* buffer = nullptr;
  // Whether to try mapping depends on the dataset's shape and dtype alone (the same on every
  // rank); whether it can be done is agreed below.
  // Bools are read through HDF5, which gives a byte that is neither FALSE nor TRUE of the
  // file's enum as one that is not 0 either; made TRUE below (1, as NumPy and TensorFlow take
  // any other byte), where the file's bytes, mapped, would be passed on as they are.
  const bool try_mapping =
      options.map_file && host_memory && shape.rank() > 0 && d.info.dtype != DType::Bool &&
      shape.num_elements() * static_cast<std::int64_t>(dtype_size(d.info.dtype)) >= options.map_from_bytes;
  long long mappable_at = -1;
  run_agreed(comm, [&] {
    chosen = choose_layout(comm, shape, layout, what);
    mem_type = memory_type(d.info.dtype);
    if (try_mapping) mappable_at = raw_extent(d.dataset.get(), mem_type.get()).offset;
  });
  if (try_mapping) {
    const std::int64_t rows = chosen.count(rank);
    const std::size_t row_bytes = static_cast<std::size_t>(shape.product_from(1)) * dtype_size(d.info.dtype);
    const long long first_byte = mappable_at + d.first * static_cast<long long>(row_bytes);
    // Replicated: all rows on every rank (agreed), the rank's block a part of them.
    std::optional<Tensor> all;
    if (options.replicate && mappable_at >= 0)
      all = detail::map_file_rows(source.file, first_byte, d.info.dtype, shape);
    const bool replicated = options.replicate && comm.min(all ? 1 : 0) == 1;
    std::optional<Tensor> mapped;
    if (replicated) {
      mapped = all->slice_rows(chosen.offset(rank), chosen.offset(rank) + rows);
    } else if (mappable_at >= 0 && rows > 0) {
      mapped = detail::map_file_rows(source.file, first_byte + chosen.offset(rank) * static_cast<long long>(row_bytes),
                                     d.info.dtype, shape.with_dim0(rows));
    }
    // Every rank maps or none does: the read below is collective.
    if (replicated || comm.min(mappable_at >= 0 && (rows == 0 || mapped) ? 1 : 0) == 1) {
      note_transfer_progress(rows, rows, row_bytes, rows, Transfer::Read, what);
      if (options.rows_read != nullptr) *options.rows_read = rows;
      watch_->mapped(source.file, source.path);
      const DistTensor t(mapped ? *mapped : Tensor(d.info.dtype, shape.with_dim0(0)), shape, chosen, rank);
      return replicated ? t.with_replica(*all) : t;
    }
  }
  run_agreed(comm, [&] {
    const std::int64_t rows = chosen.count(rank);
    const Shape local_shape = shape.rank() == 0 ? (rows > 0 ? Shape() : Shape{0}) : shape.with_dim0(rows);
    if (host_memory) {
      // Rows left unread are zeros: fresh pages, never touched.
      local = Tensor(d.info.dtype, local_shape, options.only_rows ? Init::Zero : Init::Uninitialized,
                     "reading " + what + ": block");
      buffer = local.data();
    } else {
      check_allocation(static_cast<std::size_t>(local_shape.num_elements()) * dtype_size(d.info.dtype),
                       "reading " + what + ": host staging of block " + local_shape.str());
      staging.resize(static_cast<std::size_t>(local_shape.num_elements()) * dtype_size(d.info.dtype));
      buffer = staging.data();
    }
    if (d.fill_first)
      fill_before_reading(buffer, local_shape.num_elements(), fill_value_as(d.dataset.get(), mem_type.get(), what));
  });
  const std::int64_t first = shape.rank() == 0 ? 0 : chosen.offset(rank);
  if (options.rows_read != nullptr) *options.rows_read = chosen.count(rank);
  if (options.only_rows != nullptr && shape.rank() > 0) {
    if (options.rows_read != nullptr) *options.rows_read = rows_in(*options.only_rows);
    transfer_row_runs(comm, d.dataset.get(), mem_type.get(), d.file_shape, d.first + first, *options.only_rows, buffer,
                      Transfer::Read, what);
  } else {
    transfer_rows(comm, d.dataset.get(), mem_type.get(), d.file_shape, d.first + first, chosen.count(rank), buffer,
                  Transfer::Read, what);
  }
  if (d.info.dtype == DType::Bool) {
    auto* bytes = static_cast<unsigned char*>(buffer);
    const auto n = static_cast<std::size_t>(chosen.count(rank) * (shape.rank() == 0 ? 1 : shape.product_from(1)));
    for (std::size_t i = 0; i < n; ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
  }
  if (!host_memory) {
    const Shape local_shape =
        shape.rank() == 0 ? (chosen.count(rank) > 0 ? Shape() : Shape{0}) : shape.with_dim0(chosen.count(rank));
    run_agreed(comm,
               [&] { local = Tensor::from_host_bytes(d.info.dtype, local_shape, staging.data(), staging.size()); });
  }
  watch_->read_done(source.file, source.path);
  return DistTensor(local, shape, chosen, rank);
}

}  // namespace shardops::io
