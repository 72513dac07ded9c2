#include "shardops/io/OutputTransaction.hpp"

#include <set>

#include "shardops/core/Kokkos.hpp"
#include "shardops/io/FileAccess.hpp"
#include "shardops/io/FileSystem.hpp"
#include "shardops/io/Hdf5Handle.hpp"
#include "shardops/io/PathLookup.hpp"
#include "shardops/io/RowTransfer.hpp"
#include "shardops/io/TypeMap.hpp"

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

DatasetHandle create_dataset(hid_t file, const std::string& path, const DistTensor& tensor, const std::string& what) {
  const std::string failure = what + ": cannot create the dataset";
  const TypeHandle type = file_type(tensor.dtype());
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
  // Every element is written: no fill pass.
  check_status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), failure, ErrorKind::Internal);
  return DatasetHandle(
      check_id(H5Dcreate2(file, path.c_str(), type.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT), failure));
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

    DatasetHandle dataset;
    TypeHandle mem_type;
    std::vector<unsigned char> staging;  // only when MemSpace is not host-accessible
    const void* data = nullptr;
    run_agreed(comm_, [&] {
      dataset = create_dataset(f.file.get(), target.path, tensor, what);
      write_provenance(dataset.get(), provenance, what);
      mem_type = memory_type(tensor.dtype());
      if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) {
        data = tensor.local().data();
      } else {
        staging = tensor.local().to_host_bytes();
        data = staging.data();
      }
    });
    const int rank = comm_.rank();
    const std::int64_t first = tensor.is_scalar() ? 0 : tensor.layout().offset(rank);
    transfer_rows(comm_, dataset.get(), mem_type.get(), tensor.shape(), first, tensor.layout().count(rank),
                  const_cast<void*>(data), Transfer::Write, what);
    run_agreed(comm_, [&] { check_status(dataset.close(), what + ": cannot close the dataset"); });
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
