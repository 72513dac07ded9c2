#include "shardops/io/OutputTransaction.hpp"

#include <algorithm>
#include <set>

#include "shardops/core/Kokkos.hpp"
#include "shardops/io/FileAccess.hpp"
#include "shardops/io/FileSystem.hpp"
#include "shardops/io/Hdf5Handle.hpp"
#include "shardops/io/PathLookup.hpp"
#include "shardops/io/RowTransfer.hpp"
#include "shardops/io/TypeMap.hpp"
#include "shardops/kernels/StringKernels.hpp"

namespace shardops::io {

/// One target file of the transaction and its temporary copy.
struct OutputTransaction::PendingFile {
  std::string given;              ///< the file as the first DatasetRef named it (for messages)
  std::string target;             ///< resolved path the temporary file is renamed to
  std::string temp;               ///< the temporary file beside it
  FileHandle file;                ///< the temporary file, open on every rank
  std::set<std::string> written;  ///< dataset paths written so far
};

namespace {

// Rank 0 runs \p body; every rank gets its outcome (agreed).
template <class Body>
void on_root_agreed(const Comm& comm, Body&& body) {
  run_agreed(comm, [&] {
    if (comm.rank() == 0) body();
  });
}

DatasetHandle create_dataset(hid_t file, const std::string& path, const DistTensor& tensor, hid_t type,
                             const std::string& what) {
  const std::string failure = what + ": cannot create the dataset";
  DataspaceHandle space;
  if (tensor.is_scalar()) {
    space = DataspaceHandle(check_id(H5Screate(H5S_SCALAR), failure));
  } else {
    std::vector<hsize_t> dims;
    for (const std::int64_t d : tensor.shape().dims()) dims.push_back(static_cast<hsize_t>(d));
    space = DataspaceHandle(check_id(H5Screate_simple(tensor.shape().rank(), dims.data(), nullptr), failure));
  }
  const PropListHandle lcpl(check_id(H5Pcreate(H5P_LINK_CREATE), failure, ErrorKind::Internal));
  check_status(H5Pset_create_intermediate_group(lcpl.get(), 1), failure, ErrorKind::Internal);
  const PropListHandle dcpl(check_id(H5Pcreate(H5P_DATASET_CREATE), failure, ErrorKind::Internal));
  // Every element is written: no fill pass. (HDF5 refuses that for variable-length
  // data, whose fill is zeros: empty strings until written.)
  const htri_t variable = check_value(H5Tis_variable_str(type), failure, ErrorKind::Internal);
  if (variable == 0) check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), failure, ErrorKind::Internal);
  return DatasetHandle(
      check_id(H5Dcreate2(file, path.c_str(), type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT), failure));
}

// A string tensor about to be written: this rank's strings and the type they are
// written with (agreed on every rank).
struct StringOutput {
  std::vector<std::string> values;  ///< this rank's block, row-major
  StringFormat format;              ///< fixed-length width: wide enough for every string
};

// Collective: the strings of \p tensor and the type to write them with: the input's
// type, taken from the pools of the ranks holding rows (the lowest one decides
// variable vs fixed length and the charset); a fixed-length width as large as the
// widest pool's and the longest string. A variable-length string with a NUL byte is
// refused (HDF5's variable-length strings end at the first NUL).
StringOutput prepare_strings(const Comm& comm, const DistTensor& tensor, const std::string& what) {
  StringOutput out;
  std::int64_t longest = 0, first_nul = -1;
  run_agreed(comm, [&] {
    out.values = string_values(tensor.local());
    const std::int64_t base = tensor.is_scalar() ? 0 : tensor.row_offset() * tensor.row_elements();
    for (std::size_t i = 0; i < out.values.size(); ++i) {
      const std::string& v = out.values[i];
      longest = std::max(longest, static_cast<std::int64_t>(v.size()));
      if (first_nul < 0 && v.find('\0') != std::string::npos) first_nul = base + static_cast<std::int64_t>(i);
    }
  });
  const StringFormat& mine = tensor.local().strings().format;
  const bool has_rows = tensor.local().num_elements() > 0;
  const std::vector<std::int64_t> all =
      comm.allgather(std::vector<std::int64_t>{has_rows ? 1 : 0, mine.fixed_length ? 1 : 0, mine.utf8 ? 1 : 0,
                                               mine.fixed_length ? mine.width : 0, longest, first_nul});
  constexpr std::size_t kFields = 6;
  const int p = comm.size();
  int decider = 0;
  for (int r = p - 1; r >= 0; --r) {
    if (all[static_cast<std::size_t>(r) * kFields] != 0) decider = r;
  }
  const auto field = [&](int r, std::size_t k) { return all[static_cast<std::size_t>(r) * kFields + k]; };
  out.format.fixed_length = field(decider, 1) != 0;
  out.format.utf8 = field(decider, 2) != 0;
  std::int64_t width = 1, nul_at = -1;
  for (int r = 0; r < p; ++r) {
    width = std::max({width, field(r, 3), field(r, 4)});
    if (nul_at < 0) nul_at = field(r, 5);
  }
  out.format.width = out.format.fixed_length ? width : 0;
  if (!out.format.fixed_length && nul_at >= 0) {
    throw InvalidArgument(what + ": string element " + std::to_string(nul_at) +
                          " holds a NUL byte, which a variable-length HDF5 string cannot hold (it would end "
                          "there); nothing was written. Fixed-length strings keep NUL bytes");
  }
  return out;
}

// This rank's turn of a variable-length string write: it opens the closed temporary
// file alone (sec2 driver; no file lock: the file is private to this job and some
// parallel file systems refuse locks), writes its rows [first, first + rows) and
// closes it.
void write_vlen_block(const std::string& temp, const std::string& path, const StringOutput& strings, const Shape& shape,
                      std::int64_t first, std::int64_t rows, const std::string& what) {
  const std::string failure = what + ": writing its strings failed";
  const PropListHandle fapl(check_id(H5Pcreate(H5P_FILE_ACCESS), failure, ErrorKind::Internal));
  check_status(H5Pset_fapl_sec2(fapl.get()), failure, ErrorKind::Internal);
#if (H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10 && H5_VERS_RELEASE >= 7) || H5_VERSION_GE(1, 12, 1)
  check_status(H5Pset_file_locking(fapl.get(), false, true), failure, ErrorKind::Internal);
#endif
  FileHandle file(check_id(H5Fopen(temp.c_str(), H5F_ACC_RDWR, fapl.get()), failure));
  DatasetHandle dataset(check_id(H5Dopen2(file.get(), path.c_str(), H5P_DEFAULT), failure));
  const TypeHandle type = string_file_type(strings.format);
  const DataspaceHandle file_space(check_id(H5Dget_space(dataset.get()), failure));
  if (shape.rank() > 0) {
    std::vector<hsize_t> start(static_cast<std::size_t>(shape.rank()), 0), count(start.size());
    start[0] = static_cast<hsize_t>(first);
    count[0] = static_cast<hsize_t>(rows);
    for (int d = 1; d < shape.rank(); ++d) count[static_cast<std::size_t>(d)] = static_cast<hsize_t>(shape.dim(d));
    check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
                 failure);
  }
  const hsize_t n = static_cast<hsize_t>(strings.values.size());
  const DataspaceHandle mem_space(check_id(H5Screate_simple(1, &n, nullptr), failure));
  std::vector<const char*> pointers(strings.values.size());
  for (std::size_t i = 0; i < pointers.size(); ++i) pointers[i] = strings.values[i].c_str();
  check_status(H5Dwrite(dataset.get(), type.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, pointers.data()),
               failure);
  check_status(dataset.close(), failure);
  check_status(file.close(), failure);
}

// Refuses targets that cannot be (re)placed; deletes an existing dataset when overwriting.
void clear_target(hid_t file, const DatasetRef& target, bool overwrite, const std::string& what) {
  const PathLookup found = lookup_path(file, target.path, what);
  if (found.blocked) {
    throw InvalidArgument(what + ": cannot create the dataset: '" + found.stop + "' exists in '" + target.file +
                          "' and is " + object_kind_name(found.blocked_by) + ", not a group");
  }
  if (found.kind == ObjectKind::Missing) return;
  if (found.kind != ObjectKind::Dataset) {
    throw InvalidArgument(what + ": '" + target.path + "' exists in '" + target.file + "' and is " +
                          object_kind_name(found.kind) + "; it is never replaced, even with --overwrite");
  }
  if (!overwrite) {
    throw InvalidArgument(what + ": the dataset already exists; pass --overwrite to replace it");
  }
  check_status(H5Ldelete(file, target.path.c_str(), H5P_DEFAULT), what + ": cannot delete the existing dataset");
}

}  // namespace

OutputTransaction::OutputTransaction(const Comm& comm, OutputOptions options) : comm_(comm), options_(options) {
  quiet_hdf5();
}

OutputTransaction::~OutputTransaction() {
  if (!committed_) abort();
}

std::vector<std::string> OutputTransaction::temp_paths() const {
  std::vector<std::string> paths;
  for (const auto& f : files_) paths.push_back(f->temp);
  return paths;
}

OutputTransaction::PendingFile& OutputTransaction::pending_for(const DatasetRef& ref) {
  const std::string what = ref.str();
  std::string target;
  on_root_agreed(comm_, [&] { target = resolve_output_path(ref.file, what); });
  target = comm_.broadcast(target, 0);
  for (const auto& f : files_) {
    if (f->target == target) return *f;
  }

  auto f = std::make_unique<PendingFile>();
  f->given = ref.file;
  f->target = target;
  bool existed = false;
  on_root_agreed(comm_, [&] {
    f->temp = temp_path_beside(target);
    existed = path_exists(target);
    if (!existed) return;
    copy_file_to(target, f->temp, what);
    const htri_t is_hdf5 = H5Fis_hdf5(f->temp.c_str());
    hdf5_error_detail();  // clear the stack
    if (is_hdf5 <= 0) {
      remove_quietly(f->temp);
      throw IOError(what + ": the existing output file '" + ref.file + "' is not an HDF5 file; refusing to replace it");
    }
  });
  f->temp = comm_.broadcast(f->temp, 0);
  existed = comm_.max(existed ? 1 : 0) != 0;
  try {
    f->file = existed ? open_output_file(comm_, f->temp, ref.file, what) : create_output_file(comm_, f->temp, what);
  } catch (...) {
    if (comm_.rank() == 0) remove_quietly(f->temp);
    throw;
  }
  files_.push_back(std::move(f));
  return *files_.back();
}

void OutputTransaction::write(const DatasetRef& target, const DistTensor& tensor, const Attributes& provenance) {
  if (committed_) throw InternalError("OutputTransaction::write after commit (" + target.str() + ")");
  if (failed_) throw InternalError("OutputTransaction::write after a failed step (" + target.str() + ")");
  const std::string what = target.str();
  try {
    PendingFile& f = pending_for(target);
    run_agreed(comm_, [&] {
      if (tensor.layout().nranks() != comm_.size()) {
        throw InternalError(what + ": the tensor is laid out over " + std::to_string(tensor.layout().nranks()) +
                            " ranks, the communicator has " + std::to_string(comm_.size()));
      }
      if (tensor.is_scalar() && tensor.layout() != RowLayout::on_rank(1, comm_.size(), 0)) {
        throw InternalError(what + ": a scalar DistTensor must live on rank 0 alone");
      }
      if (f.written.count(target.path) > 0) throw InvalidArgument(what + ": the dataset is written twice by this job");
      clear_target(f.file.get(), target, options_.overwrite, what);
    });

    const bool strings = tensor.dtype() == DType::String;
    StringOutput string_output;
    if (strings) string_output = prepare_strings(comm_, tensor, what);

    DatasetHandle dataset;
    TypeHandle mem_type;
    std::vector<unsigned char> staging;  // only when MemSpace is not host-accessible
    const void* data = nullptr;
    run_agreed(comm_, [&] {
      // String types have no byte order: the file type is the memory type.
      mem_type = strings ? string_file_type(string_output.format) : memory_type(tensor.dtype());
      const TypeHandle type = strings ? string_file_type(string_output.format) : file_type(tensor.dtype());
      dataset = create_dataset(f.file.get(), target.path, tensor, type.get(), what);
      write_provenance(dataset.get(), provenance, what);
      if (strings) return;
      if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) {
        data = tensor.local().data();
      } else {
        staging = tensor.local().to_host_bytes();
        data = staging.data();
      }
    });
    const int rank = comm_.rank();
    const std::int64_t first = tensor.is_scalar() ? 0 : tensor.layout().offset(rank);
    const std::int64_t rows = tensor.layout().count(rank);
    if (!strings) {
      transfer_rows(comm_, dataset.get(), mem_type.get(), tensor.shape(), first, rows, const_cast<void*>(data),
                    Transfer::Write, what);
    } else if (string_output.format.fixed_length) {
      // Fixed length: each round's strings NUL-padded to the width, collective as any row.
      const auto width = static_cast<std::size_t>(string_output.format.width);
      RowStaging fill;
      fill.fill = [&](unsigned char* buffer, std::int64_t from, std::int64_t n) {
        for (std::int64_t i = 0; i < n; ++i) {
          const std::string& v = string_output.values[static_cast<std::size_t>(from + i)];
          unsigned char* slot = buffer + static_cast<std::size_t>(i) * width;
          std::copy(v.begin(), v.end(), slot);
          std::fill(slot + v.size(), slot + width, static_cast<unsigned char>(0));
        }
      };
      transfer_rows_staged(comm_, dataset.get(), mem_type.get(), tensor.shape(), first, rows, fill, Transfer::Write,
                           what);
    }
    run_agreed(comm_, [&] { check_status(dataset.close(), what + ": cannot close the dataset"); });
    if (strings && !string_output.format.fixed_length && comm_.max(string_output.values.empty() ? 0 : 1) != 0) {
      // Parallel HDF5 1.10 cannot write variable-length data through MPI-IO ("Parallel
      // IO does not support writing VL ... datatypes yet"). So the dataset is made
      // above, collectively, and the file closed; then the ranks take turns, in rank
      // order, each opening the file alone to write its own rows; then all reopen it.
      run_agreed(comm_, [&] {
        check_status(f.file.close(), "output file '" + f.given + "': cannot close the temporary file '" + f.temp + "'");
      });
      for (int turn = 0; turn < comm_.size(); ++turn) {
        run_agreed(comm_, [&] {
          if (turn == rank && !string_output.values.empty()) {
            write_vlen_block(f.temp, target.path, string_output, tensor.shape(), first, rows, what);
          }
        });
      }
      f.file = open_output_file(comm_, f.temp, f.given, what);
    }
    f.written.insert(target.path);
  } catch (...) {
    failed_ = true;
    throw;
  }
}

void OutputTransaction::commit() {
  if (committed_) return;
  if (failed_) throw InternalError("OutputTransaction::commit after a failed step");
  try {
    for (const auto& f : files_) {
      run_agreed(comm_, [&] {
        check_status(f->file.close(),
                     "output file '" + f->given + "': cannot close the temporary file '" + f->temp + "'");
      });
    }
    on_root_agreed(comm_, [&] {
      std::string replaced;
      for (const auto& f : files_) {
        try {
          rename_into_place(f->temp, f->target, "output file '" + f->given + "'");
        } catch (const IOError& e) {
          if (replaced.empty()) throw;
          throw IOError(std::string(e.what()) + "; already replaced: " + replaced);
        }
        replaced += (replaced.empty() ? "" : ", ") + f->given;
      }
    });
  } catch (...) {
    failed_ = true;
    abort();
    throw;
  }
  committed_ = true;
  files_.clear();
}

void OutputTransaction::abort() noexcept {
  if (files_.empty()) return;
  for (const auto& f : files_) {
    f->file.reset();
    if (comm_.rank() == 0) remove_quietly(f->temp);
  }
  files_.clear();
  // Every rank returns once the temporary files are gone. (Closing was collective
  // already, so this adds no new way to wait.)
  try {
    comm_.barrier();
  } catch (...) {
  }
}

}  // namespace shardops::io
