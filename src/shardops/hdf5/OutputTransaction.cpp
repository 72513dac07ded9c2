#include "shardops/hdf5/OutputTransaction.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <numeric>
#include <set>
#include <unordered_set>

#include "shardops/core/Kokkos.hpp"
#include "shardops/core/MemoryBudget.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/core/Progress.hpp"
#include "shardops/core/StringTensor.hpp"
#include "shardops/hdf5/CollectiveAgreement.hpp"
#include "shardops/hdf5/FileAccess.hpp"
#include "shardops/hdf5/FileLock.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/hdf5/JobCommit.hpp"
#include "shardops/hdf5/JournaledCommit.hpp"
#include "shardops/hdf5/PathLookup.hpp"
#include "shardops/hdf5/RowChanges.hpp"
#include "shardops/hdf5/RowTransfer.hpp"
#include "shardops/hdf5/StopSignals.hpp"
#include "shardops/hdf5/StorageLayout.hpp"
#include "shardops/hdf5/TypeMap.hpp"

namespace shardops::io {

/// One target file of the transaction and the new file its datasets are written to.
struct OutputTransaction::PendingFile {
  std::string given;                         ///< the file as the first DatasetRef named it (for messages)
  std::string target;                        ///< resolved path of the target
  std::string temp;                          ///< the new file beside it: renamed into place, or merged at commit
  bool existed = false;                      ///< the target existed (agreed): its datasets are kept
  FileHandle file;                           ///< the new file, open on every rank
  FileHandle existing;                       ///< rank 0: the existing target, opened through `journal`
  std::vector<std::string> written;          ///< dataset paths written to the new file so far, in order
  std::vector<std::string> in_place;         ///< dataset paths written straight into the existing target
  std::unordered_set<std::string> taken;     ///< written and in_place together: a job writes thousands (partitions)
  std::unique_ptr<JournaledCommit> journal;  ///< rank 0, an existing target: from the first write to the commit
  long long original_length = 0;             ///< an existing target's length before the job (agreed)
  std::size_t address_bytes = 8;             ///< rank 0: an existing target's size of addresses (H5Pset_sizes)
  int target_fd = -1;                        ///< every rank, an existing target: for the rows written in place
  long long in_place_unflushed = 0;          ///< this rank's bytes written there since it last flushed target_fd
  CleanupTruncate target_on_stop;            ///< cuts the target back to original_length on a stop signal
  long long target_data_end = 0;             ///< where the data written in place ends
  std::set<std::string> replaced;            ///< datasets of the existing target replaced at commit
  /// Groups of the existing target with a dataset replaced at commit: their later datasets are
  /// added at commit too, after it, so that the group lists them in the job's order.
  std::set<std::string> groups_replaced_in;
  std::set<std::string> dropped;  ///< datasets of the existing target deleted at commit
  /// Variable-length string datasets of the new file, made there, whose rows are written once
  /// it is closed (write_deferred_strings): parallel HDF5 1.10 cannot write them through
  /// MPI-IO, so each rank writes its own with the serial driver, in turn, all of them in one
  /// opening of the file instead of a close and a reopen of it for each (thousands of
  /// string partitions).
  struct DeferredStrings {
    std::string path, what;
    DistTensor tensor;  ///< its rows (held: string outputs always are)
    StringFormat format;
  };
  std::vector<DeferredStrings> deferred_strings;
  FileLock lock;  ///< rank 0: held from the first write to the end of the commit
  CleanupPath temp_on_stop, lock_on_stop;
  std::vector<CleanupPath> side_files_on_stop;  ///< this rank's mpi_io_side_files() of the new file
  int reserve_fd = -1;                          ///< the new file, for reserving space and writing rows directly
  long long data_end = 0;                       ///< where the last dataset's data ends in the new file
  long long planned_bytes = 0;  ///< the bytes of the datasets written to the file so far, where known before
  bool reserving = true;        ///< false once the file system said it cannot

  ~PendingFile() {
    undo();
    if (reserve_fd >= 0) ::close(reserve_fd);
    target_on_stop.reset();  // before its descriptor goes
    if (target_fd >= 0) ::close(target_fd);
  }

  /// Rank 0: an existing target's change not committed is undone: the handle through
  /// the journal closed with nothing more reaching the file, then the journal rolled
  /// back (the file cut back to its length, any applied bytes restored). Never throws.
  void undo() noexcept {
    if (!journal) return;
    journal->cancel();
    existing.reset();
    journal.reset();
  }
};

namespace {

// Rank 0 runs \p body; every rank gets its outcome (agreed).
template <class Body>
void on_root_agreed(const Comm& comm, Body&& body) {
  run_agreed(comm, [&] {
    if (comm.rank() == 0) body();
  });
}

}  // namespace

void create_parent_groups(hid_t file, const std::string& path, const std::string& what) {
  const PropListHandle gcpl(check_id(H5Pcreate(H5P_GROUP_CREATE), what, ErrorKind::Internal));
  // Numbered outputs (dynamic-partition's 0, 1, ..., 10, 11) then list in the order made.
  check_status(H5Pset_link_creation_order(gcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED), what,
               ErrorKind::Internal);
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    const std::string parent = path.substr(0, slash);
    const htri_t exists =
        check_value(H5Lexists(file, parent.c_str(), H5P_DEFAULT), what + ": cannot look up " + parent);
    if (exists > 0) continue;
    GroupHandle(check_id(H5Gcreate2(file, parent.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT),
                         what + ": cannot create the group " + parent));
  }
}

namespace {

// The group holding the dataset at \p path ("/" for a top-level one).
std::string parent_group(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

DatasetHandle create_dataset(hid_t file, const std::string& path, const Shape& shape, hid_t type,
                             const StorageOptions& storage, const std::string& what, bool allocate_now = false) {
  create_parent_groups(file, path, what);
  const std::string failure = what + ": cannot create the dataset";
  DataspaceHandle space;
  if (shape.rank() == 0) {
    space = DataspaceHandle(check_id(H5Screate(H5S_SCALAR), failure));
  } else {
    std::vector<hsize_t> dims;
    for (const std::int64_t d : shape.dims()) dims.push_back(static_cast<hsize_t>(d));
    space = DataspaceHandle(check_id(H5Screate_simple(shape.rank(), dims.data(), nullptr), failure));
  }
  const PropListHandle lcpl(check_id(H5Pcreate(H5P_LINK_CREATE), failure, ErrorKind::Internal));
  check_status(H5Pset_create_intermediate_group(lcpl.get(), 1), failure, ErrorKind::Internal);
  const PropListHandle dcpl = dataset_creation(storage, shape, type, what);
  // Contiguous data gets its place in the file now, so its rows can go there by pwrite: as
  // the MPI-IO driver always places them, and HDF5's serial driver (a job of one rank without
  // MPI, a dataset written into an existing file) only when asked.
  if (allocate_now || !storage.chunked())
    check_status(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), failure, ErrorKind::Internal);
  // Creating it writes to the file (early allocation, metadata): past the file size limit too.
  return DatasetHandle(check_id(H5Dcreate2(file, path.c_str(), type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
                                failure + file_size_limit_text()));
}

// A string tensor about to be written: this rank's strings and the type they are
// written with (agreed on every rank).
struct StringOutput {
  std::vector<std::string> values;  ///< this rank's block, row-major
  StringFormat format;              ///< fixed-length width: wide enough for every string
  /// The dataset's bytes in the file (all ranks): its elements, and for variable-length
  /// strings also HDF5's global heap that holds their bytes (never compressed).
  long long element_bytes = 0, heap_bytes = 0;
};

// A variable-length string in HDF5's global heap: a 16-byte object header and its bytes,
// padded to 8; the dataset holds a 16-byte reference to it.
constexpr long long kHeapObjectHeader = 16, kVlenReference = 16;
// Padding of a widened fixed-length string output that never makes it variable-length.
constexpr long long kPaddingAllowed = 64LL << 20;

// Fixed-length strings [from, from + n) of \p strings, NUL-padded to the width, into \p buffer.
void pad_strings(const StringOutput& strings, std::int64_t from, std::int64_t n, unsigned char* buffer) {
  const auto width = static_cast<std::size_t>(strings.format.width);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::string& v = strings.values[static_cast<std::size_t>(from + i)];
    unsigned char* slot = buffer + static_cast<std::size_t>(i) * width;
    std::copy(v.begin(), v.end(), slot);
    std::fill(slot + v.size(), slot + width, static_cast<unsigned char>(0));
  }
}

// Collective: the strings of \p tensor and the type to write them with: the input's
// type, taken from the pools of the ranks holding rows (the lowest one decides
// variable vs fixed length and the charset); a fixed-length width as large as the
// widest pool's and the longest string. A variable-length string with a NUL byte is
// refused (HDF5's variable-length strings end at the first NUL).
StringOutput prepare_strings(const Comm& comm, const DistTensor& tensor, const std::string& what) {
  StringOutput out;
  std::int64_t longest = 0, first_nul = -1, heap = 0;
  run_agreed(comm, [&] {
    out.values = string_values(tensor.local());
    const std::int64_t base = tensor.is_scalar() ? 0 : tensor.row_offset() * tensor.row_elements();
    for (std::size_t i = 0; i < out.values.size(); ++i) {
      const std::string& v = out.values[i];
      longest = std::max(longest, static_cast<std::int64_t>(v.size()));
      heap += kHeapObjectHeader + (static_cast<std::int64_t>(v.size()) + 7) / 8 * 8;
      if (first_nul < 0 && v.find('\0') != std::string::npos) first_nul = base + static_cast<std::int64_t>(i);
    }
  });
  const StringFormat& mine = tensor.local().strings().format;
  const bool has_rows = tensor.local().num_elements() > 0;
  const std::vector<std::int64_t> all =
      comm.allgather(std::vector<std::int64_t>{has_rows ? 1 : 0, mine.fixed_length ? 1 : 0, mine.utf8 ? 1 : 0,
                                               mine.fixed_length ? mine.width : 0, longest, first_nul, heap});
  constexpr std::size_t kFields = 7;
  const int p = comm.size();
  int decider = 0;
  for (int r = p - 1; r >= 0; --r) {
    if (all[static_cast<std::size_t>(r) * kFields] != 0) decider = r;
  }
  const auto field = [&](int r, std::size_t k) { return all[static_cast<std::size_t>(r) * kFields + k]; };
  out.format.fixed_length = field(decider, 1) != 0;
  // UTF-8 where any rank's strings are (they may come from inputs of either charset): ASCII
  // is UTF-8's subset, so the label holds for every string.
  out.format.utf8 = field(decider, 2) != 0;
  for (int r = 0; r < p; ++r) out.format.utf8 = out.format.utf8 || (field(r, 0) != 0 && field(r, 2) != 0);
  std::int64_t width = 1, input_width = 1, nul_at = -1, heap_all = 0;
  for (int r = 0; r < p; ++r) {
    width = std::max({width, field(r, 3), field(r, 4)});
    input_width = std::max(input_width, field(r, 3));
    if (nul_at < 0) nul_at = field(r, 5);
    heap_all += field(r, 6);
  }
  const long long elements = tensor.shape().num_elements();
  // Widened to an op's longest string, a fixed-length output pads every other string to it:
  // ScatterNd's concatenations can make one string of megabytes among thousands of short
  // ones (20 MB of updates made a 50 GB file). Where the padding would take far more than
  // variable-length strings do, and no string holds a NUL byte, they are written so instead.
  const long long padded = elements * width, as_variable = elements * kVlenReference + heap_all;
  if (out.format.fixed_length && width > input_width && nul_at < 0 &&
      padded > std::max(kPaddingAllowed, 8 * as_variable))
    out.format.fixed_length = false;
  out.format.width = out.format.fixed_length ? width : 0;
  out.element_bytes = elements * (out.format.fixed_length ? width : kVlenReference);
  if (!out.format.fixed_length) out.heap_bytes = heap_all;
  if (!out.format.fixed_length && nul_at >= 0) {
    throw InvalidArgument(what + ": string element " + std::to_string(nul_at) +
                          " holds a NUL byte, which a variable-length HDF5 string cannot hold (it would end "
                          "there); nothing was written. Fixed-length strings keep NUL bytes");
  }
  return out;
}

// This rank's turn of a serial write: it opens the closed new file alone (sec2 driver;
// no file lock: the file is private to this job and some parallel file systems refuse
// locks), writes its rows [first, first + rows) (\p elements of \p mem_type at \p buffer)
// and closes it.
void write_block_serially(hid_t file, const std::string& path, hid_t mem_type, const void* buffer, std::size_t elements,
                          const Shape& shape, std::int64_t first, std::int64_t rows, const std::string& what) {
  const std::string failure = what + ": writing its rows failed";
  DatasetHandle dataset(check_id(H5Dopen2(file, path.c_str(), H5P_DEFAULT), failure));
  const DataspaceHandle file_space(check_id(H5Dget_space(dataset.get()), failure));
  const hsize_t n = static_cast<hsize_t>(elements);
  const DataspaceHandle mem_space = shape.rank() > 0
                                        ? select_rows(file_space.get(), shape, first, rows, failure)
                                        : DataspaceHandle(check_id(H5Screate_simple(1, &n, nullptr), failure));
  check_status(H5Dwrite(dataset.get(), mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, buffer), failure);
  check_status(dataset.close(), failure);
}

// This rank's rows of the variable-length string tensor \p tensor, written into \p path of
// \p file (open with the serial driver).
void write_strings_serially(hid_t file, const std::string& path, const DistTensor& tensor, const StringFormat& format,
                            const std::string& what) {
  const std::int64_t first = tensor.is_scalar() ? 0 : tensor.row_offset();
  const std::int64_t rows = tensor.layout().count(tensor.rank());
  const std::int64_t elements = rows * tensor.row_elements();
  if (elements == 0) return;
  const std::vector<std::string> values = string_values(tensor.local());
  std::vector<const char*> pointers;
  pointers.reserve(values.size());
  for (const std::string& v : values) pointers.push_back(v.c_str());
  const TypeHandle mem_type = string_file_type(format);
  write_block_serially(file, path, mem_type.get(), pointers.data(), static_cast<std::size_t>(elements), tensor.shape(),
                       first, rows, what);
}

constexpr const char* kOpenElsewhere =
    "the existing output file is open in another program (HDF5's file lock is held by a reader or writer); close "
    "it there and run again (HDF5_USE_FILE_LOCKING=FALSE turns HDF5's locks off)";

// Room reserved past the datasets for the metadata HDF5 writes when it closes a file.
constexpr long long kMetadataRoom = 1 << 20;

// Refuses a target that cannot be (re)placed in \p file (\p own_outputs: the job's new file,
// holding its outputs so far). Returns true if a dataset is there and is to be replaced
// (overwrite).
// Dimension scales (netCDF-4's coordinate variables, h5py's dims) are object references
// between datasets: the scale lists the datasets it is attached to (REFERENCE_LIST), each of
// those lists its scales (DIMENSION_LIST). A replaced dataset is deleted and a new one made
// in its place, so the other side's references would point at the deleted object header
// (read from reused space): refused, before any work. So is deleting one (\p dropped: a
// partition beyond the new number of partitions).
void refuse_replacing_dimension_scales(hid_t file, const std::string& path, const std::string& what,
                                       bool dropped = false) {
  const DatasetHandle dataset(H5Dopen2(file, path.c_str(), H5P_DEFAULT));
  if (!dataset.valid()) {
    hdf5_error_detail();
    return;  // opened again, and its failure reported, where it is replaced
  }
  const char* why =
      H5Aexists(dataset.get(), "REFERENCE_LIST") > 0
          ? "is a dimension scale (a netCDF-4 coordinate variable, h5py's dims) attached to other datasets"
      : H5Aexists(dataset.get(), "DIMENSION_LIST") > 0
          ? "has dimension scales attached (netCDF-4 coordinate variables, h5py's dims)"
          : nullptr;
  hdf5_error_detail();
  if (why == nullptr) return;
  if (dropped) {
    throw InvalidArgument(what + ": its partition '" + path + "', beyond the partitions this job writes, " + why +
                          ", which refer to each other: deleted, it would leave those references pointing at a "
                          "deleted dataset; it is never deleted, even with --overwrite (write to another group)");
  }
  throw InvalidArgument(what + ": the dataset " + why +
                        ", which refer to each other: replaced, it would leave those references pointing at a "
                        "deleted dataset; it is never replaced, even with --overwrite (write to another name)");
}

bool check_target(hid_t file, const DatasetRef& target, bool overwrite, const std::string& what, bool own_outputs) {
  // In the job's new file, what is in the way is another of this job's outputs.
  const std::string where =
      own_outputs ? "among this job's outputs to '" + target.file + "'" : "in '" + target.file + "'";
  const std::string link = link_in_the_way(file, target.file, target.path);
  if (!link.empty()) {
    throw InvalidArgument(what + ": " + link +
                          "; an output is never written through a soft or external link, nor in its place, even "
                          "with --overwrite");
  }
  const PathLookup found = lookup_path(file, target.path, what);
  if (found.blocked) {
    throw InvalidArgument(what + ": cannot create the dataset: '" + found.stop + "' exists " + where + " and is " +
                          object_kind_name(found.blocked_by) + ", not a group");
  }
  if (found.kind == ObjectKind::Missing) return false;
  if (found.kind != ObjectKind::Dataset) {
    throw InvalidArgument(what + ": '" + target.path + "' exists " + where + " and is " + object_kind_name(found.kind) +
                          "; it is never replaced, even with --overwrite");
  }
  if (!overwrite) {
    throw InvalidArgument(what +
                          ": the dataset already exists; replace it with --overwrite (overwrite=True in Python)");
  }
  if (!own_outputs) refuse_replacing_dimension_scales(file, target.path, what);
  return true;
}

// HDF5 locks a file while a program has it open (shared for readers, exclusive for
// writers). The commit changes the file in place, so it would fail at the end: say so
// before any work instead. HDF5_USE_FILE_LOCKING=FALSE turns HDF5's locks off.
void refuse_if_open_elsewhere(const std::string& target, const std::string& what) {
  if (hdf5_file_locking() && lock_held_elsewhere(target, true)) throw IOError(what + ": " + kOpenElsewhere);
}

// Rank 0, the existing target changed and closed: HDF5 opens it again and each dataset the
// job added. HDF5 changes a file where its structures say, so a file damaged before the
// job (a group's heap overwritten) takes the change and can no longer show it. Up to
// kChecked datasets: a job of many partitions checks the first and the last ones.
void check_reads_back(const OutputTransaction::PendingFile& f, const std::string& what) {
  constexpr std::size_t kChecked = 4096;
  std::vector<std::string> added(f.in_place);
  added.insert(added.end(), f.written.begin(), f.written.end());
  if (added.size() > kChecked) added.erase(added.begin() + kChecked / 2, added.end() - kChecked / 2);
  const std::string damaged = what + ": HDF5 cannot read the file back after the change";
  std::string why =
      "; the file was damaged before this job (shardops ls shows what can still be read): "
      "nothing was committed, the file is as it was";
  // A file made with short addresses (h5py's H5Pset_sizes of 2 or 4 bytes) ends where they
  // end: HDF5 makes the change past that and cannot find it again.
  const long long size = file_size(f.target);
  if (f.address_bytes < 8 && size >= (1LL << (8 * f.address_bytes))) {
    why = "; the file stores its addresses in " + std::to_string(f.address_bytes) + " bytes, room for " +
          std::to_string(1LL << (8 * f.address_bytes)) + " bytes of file, and the change would make it " +
          std::to_string(size) + ": nothing was committed, the file is as it was; write the outputs to a new file";
  }
  FileHandle file;
  try {
    file = open_serial(f.target, H5F_ACC_RDONLY, damaged);
  } catch (const Error& e) {
    throw IOError(e.what() + why);
  }
  for (const std::string& path : added) {
    const DatasetHandle dataset(H5Dopen2(file.get(), path.c_str(), H5P_DEFAULT));
    if (!dataset.valid()) throw IOError(with_hdf5_detail(damaged + " (the dataset '" + path + "')") + why);
  }
}

// Rank 0: completes the change of the existing target, which is open through its undo
// journal (f.journal, f.existing) and may hold datasets written in place already: copies
// the datasets written to \p f.temp into it, deleting the ones they replace first, and
// closes it. Returns the journal, prepared (JournaledCommit::prepare): the change is
// complete and can still be rolled back. Nothing of the target changes if this throws.
std::unique_ptr<JournaledCommit> merge_into_existing(OutputTransaction::PendingFile& f) {
  const std::string what = "output file '" + f.given + "'";
  if (!still_named(f.target_fd, f.target)) {
    throw IOError(what +
                  ": another program replaced or removed it while this job wrote into it (the name no longer "
                  "leads to the file the job opened); nothing was committed: run the job again");
  }
  f.journal->set_early_apply(true);  // signals are held now: the close need not be the only step
  if (!f.written.empty()) {
    // Room for what is added, before HDF5 writes any of it: HDF5 does not always survive a
    // write that fails half way through H5Ocopy (it crashed past `ulimit -f`, which a
    // reservation that keeps the file's size does not meet).
    const std::string dir = std::filesystem::path(f.target).parent_path().string();
    const long long added = file_size(f.temp) + kMetadataRoom;
    expect_room(dir, 0, file_size(f.target) + added, what);
    reserve_space(f.target_fd, file_size(f.target), added, dir, what, true);
    FileHandle source = open_serial(f.temp, H5F_ACC_RDONLY, what + ": cannot reopen the new datasets");
    for (const std::string& path : f.written) {
      if (f.replaced.count(path) > 0) {
        check_status(H5Ldelete(f.existing.get(), path.c_str(), H5P_DEFAULT),
                     what + ": cannot delete the dataset '" + path + "' it replaces");
      }
      create_parent_groups(f.existing.get(), path, what);
      check_status(H5Ocopy(source.get(), path.c_str(), f.existing.get(), path.c_str(), H5P_DEFAULT, H5P_DEFAULT),
                   what + ": cannot add the dataset '" + path + "'");
    }
    check_status(source.close(), what + ": cannot close the new datasets");
  }
  for (const std::string& path : f.dropped)
    check_status(H5Ldelete(f.existing.get(), path.c_str(), H5P_DEFAULT),
                 what + ": cannot delete the dataset '" + path + "' the job's output replaces");
  check_status(f.existing.close(), what + ": cannot write its changes");
  const long long size = file_size(f.target);
  if (size < f.target_data_end) {
    throw IOError(what + ": it has " + std::to_string(size) + " bytes where " + std::to_string(f.target_data_end) +
                  " were written (a write failed: disk full?); nothing was committed");
  }
  check_reads_back(f, what);
  f.journal->prepare();
  return std::move(f.journal);
}

// Rank 0: puts every file's datasets in place, all or none (JobCommit.hpp): an undo
// record first, each file changed with a note of how to undo it, then the record
// removed, the commit point. If a file fails, the ones changed before it are undone.
void commit_together(const std::vector<std::unique_ptr<OutputTransaction::PendingFile>>& files, bool durable) {
  std::vector<std::string> targets;
  for (const auto& f : files) targets.push_back(f->target);
  JobCommit job(targets, durable, "the job's outputs (" + std::to_string(files.size()) + " files)");
  std::vector<std::unique_ptr<JournaledCommit>> journals;
  try {
    for (std::size_t i = 0; i < files.size(); ++i) {
      OutputTransaction::PendingFile& f = *files[i];
      if (f.existed) {
        job.note_journal(i, f.journal->journal_path());
        journals.push_back(merge_into_existing(f));
      } else {
        job.note_new_file(i, f.temp);
        rename_new_file(f.temp, f.target, durable, "output file '" + f.given + "'");
      }
      test_pause("applied");
    }
  } catch (const Error& e) {
    for (auto& j : journals) j->roll_back();
    job.remove_new_files();
    throw_error(e.kind(), std::string(e.what()) + "; none of the job's " + std::to_string(files.size()) +
                              " output files was changed");
  } catch (...) {
    for (auto& j : journals) j->roll_back();
    job.remove_new_files();
    throw;
  }
  job.commit();
  test_pause("committed");
  for (auto& j : journals) j->discard();
  job.remove_notes();
  for (const auto& f : files) {
    if (f->existed) remove_quietly(f->temp);
  }
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

namespace {
// Counts \p planned more bytes into \p f's file and checks (expect_room) that a dataset of
// \p bytes fits on its disk and, with the file's other datasets, within the file size limit.
void plan_bytes(OutputTransaction::PendingFile& f, const DatasetRef& target, long long planned, long long bytes,
                const std::string& what) {
  f.planned_bytes += planned;
  const long long file_end = (f.existed ? f.original_length : 0) + f.planned_bytes + kMetadataRoom;
  expect_room(std::filesystem::absolute(target.file).parent_path().string(), bytes, file_end, what);
}

// plan_bytes() for a fixed-size \p output written as \p storage says: an existing target grows
// by every dataset the job adds (written in place, or copied in at the commit); a new file
// holds them and HDF5's metadata. A compressed dataset's size is known once written: it counts
// for nothing here. Strings are counted once their bytes are known.
void plan_output_bytes(OutputTransaction::PendingFile& f, const DatasetRef& target, const LazyTensor& output,
                       const StorageOptions& storage, const std::string& what) {
  if (output.dtype() == DType::String) return;
  const long long bytes = output.shape().num_elements() * static_cast<long long>(dtype_size(output.dtype()));
  plan_bytes(f, target, storage.compression == Compression::None ? bytes : 0, bytes, what);
}
}  // namespace

namespace {
// The lock, the journal and the notes of a target are named after it: under another name
// (a hard link) a second job would take its own lock and write the same file at the same
// time, or undo a killed job's change over a later one. A file written in place has one name.
void refuse_if_hard_linked(const std::string& target, const std::string& given, const std::string& what) {
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0 || st.st_nlink <= 1) return;
  throw IOError(what + ": the existing output file '" + given + "' has " + std::to_string(st.st_nlink) +
                " names (hard links); jobs writing it under different names would not wait for each other, so "
                "shardops writes into a file with one name only: write the output to a new file, or remove the "
                "other names first");
}
}  // namespace

void OutputTransaction::open_in_lock_order(const std::vector<DatasetRef>& targets) {
  // One target per file named (the first), in the order of the resolved paths (rank 0's).
  std::vector<DatasetRef> files;
  for (const DatasetRef& t : targets) {
    if (std::none_of(files.begin(), files.end(), [&](const DatasetRef& f) { return f.file == t.file; }))
      files.push_back(t);
  }
  if (files.size() < 2) return;
  // Rank 0 resolves the paths (one broadcast of them all, NUL-separated: no path holds a
  // NUL); every rank sorts them alike and opens the files in that order.
  std::string joined;
  on_root_agreed(comm_, [&] {
    for (const DatasetRef& f : files) joined += resolve_output_path(f.file, f.str()) + '\0';
  });
  joined = comm_.broadcast(joined, 0);
  std::vector<std::string> resolved;
  for (std::size_t at = 0, end; (end = joined.find('\0', at)) != std::string::npos; at = end + 1)
    resolved.push_back(joined.substr(at, end - at));
  std::vector<std::size_t> order(files.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return resolved[a] < resolved[b]; });
  for (std::size_t i : order) pending_for(files[i], resolved[i]);
}

OutputTransaction::PendingFile& OutputTransaction::pending_for(const DatasetRef& ref, const std::string& resolved) {
  // The file as the job named it before: resolved then (a job may write millions of datasets
  // into one file, one per partition, each resolving the same name again otherwise).
  for (const auto& f : files_) {
    if (f->given == ref.file) return *f;
  }
  const std::string what = ref.str();
  std::string target = resolved;
  if (target.empty()) {
    on_root_agreed(comm_, [&] { target = resolve_output_path(ref.file, what); });
    target = comm_.broadcast(target, 0);
  }
  // The same file under another name (a bind mount, a link to its folder) is the same
  // pending file: a second one would wait for its own lock.
  // (Rank 0 looks, the others follow: the ranks' views of the file system may differ.)
  std::int64_t same = -1;
  for (std::size_t i = 0; comm_.rank() == 0 && same < 0 && i < files_.size(); ++i) {
    if (files_[i]->target == target || same_file(files_[i]->target, target)) same = static_cast<std::int64_t>(i);
  }
  same = comm_.max(same);
  if (same >= 0) return *files_[static_cast<std::size_t>(same)];

  auto f = std::make_unique<PendingFile>();
  f->given = ref.file;
  f->target = target;
  on_root_agreed(comm_, [&] {
    f->lock = FileLock(target, lock_timeout_seconds(), what);
    f->lock_on_stop = CleanupPath(f->lock.path());
    if (options_.inputs != nullptr) options_.inputs->writing(target);
    clean_up_after_dead_jobs(target);
    // A change the clean-up could not undo (another user's journal this user may not read)
    // would be made permanent by writing over it.
    const std::string left = uncommitted_change_left(target);
    if (!left.empty()) {
      f->lock.keep_file();
      throw IOError(what + ": " + uncommitted_change_text(ref.file, left));
    }
    f->temp = temp_path_beside(target);
    f->existed = path_exists(target);
    // The new file and the undo journal of an existing target, and the two files Open MPI
    // makes beside the new one for every rank (expect_inodes), counted before any is made.
    expect_inodes(std::filesystem::path(target).parent_path().string(), f->existed ? 2 : 1, comm_.size(), what);
    if (!f->existed) return;
    refuse_if_hard_linked(target, ref.file, what);
    const htri_t is_hdf5 = H5Fis_hdf5(target.c_str());
    hdf5_error_detail();  // clear the stack
    if (is_hdf5 < 0) {
      const std::string shortage = descriptor_shortage_text();
      if (!shortage.empty())
        throw IOError(what + ": cannot open the existing output file '" + ref.file + "'" + shortage);
    }
    if (is_hdf5 <= 0) {
      throw IOError(what + ": the existing output file '" + ref.file + "' is not an HDF5 file; refusing to replace it");
    }
    refuse_if_open_elsewhere(target, what);
    // An SWMR writer holds no lock HDF5 sees; its file is marked in its superblock instead.
    refuse_if_marked_open_for_writing(target, "the existing output file", what);
    // From here to the commit the target is open for writing through an undo journal:
    // nothing of it below its original length changes before the close at the commit,
    // and write() puts datasets that it can straight into it, past that length.
    f->journal = std::make_unique<JournaledCommit>(target, options_.durable, what);
    f->journal->set_early_apply(false);
    f->original_length = f->journal->original_length();
    try {
      f->existing = FileHandle(check_id(H5Fopen(target.c_str(), H5F_ACC_RDWR, f->journal->file_access()),
                                        what + ": the existing output file '" + ref.file +
                                            "' cannot be opened as HDF5 (truncated or corrupt file, or open in "
                                            "another program?); it is left as it is"));
    } catch (...) {
      f->undo();  // the journal goes before the other ranks hear of the error
      // A program that opened it since refuse_if_open_elsewhere looked (an h5py reader polling it).
      refuse_if_open_elsewhere(target, what);
      throw;
    }
    const PropListHandle fcpl(H5Fget_create_plist(f->existing.get()));
    std::size_t address_bytes = 8, length_bytes = 8;
    if (fcpl.valid() && H5Pget_sizes(fcpl.get(), &address_bytes, &length_bytes) >= 0) f->address_bytes = address_bytes;
    hdf5_error_detail();  // clear the stack
  });
  f->temp = comm_.broadcast(f->temp, 0);
  const std::string lock_text = comm_.broadcast(f->lock.text(), 0);
  f->existed = comm_.max(f->existed ? 1 : 0) != 0;
  f->original_length = comm_.max(static_cast<std::int64_t>(f->original_length));
  if (f->existed) {
    run_agreed(comm_, [&] {
      f->target_fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
      if (f->target_fd < 0)
        throw IOError(what + ": cannot open '" + ref.file + "' for writing: " + std::strerror(errno));
      f->target_on_stop = CleanupTruncate(f->target_fd, f->original_length, lock_path_of(target), lock_text);
    });
  }
  f->temp_on_stop = CleanupPath(f->temp);
  for (const std::string& side : mpi_io_side_files(f->temp, comm_.rank())) f->side_files_on_stop.emplace_back(side);
  PendingFile& added = *f;
  files_.push_back(std::move(f));  // from here on abort() removes the new file and drops the lock
  added.file = create_output_file(comm_, added.temp, what);
  run_agreed(comm_, [&] {
    // The side file of an existing target holds datasets bound for it, which the target's
    // mode may keep from other users: only this job reads it. (A new file becomes the target
    // and keeps the mode the umask gives it, as h5py's would.)
    if (added.existed && comm_.rank() == 0) static_cast<void>(::chmod(added.temp.c_str(), S_IRUSR | S_IWUSR));
    added.reserve_fd = ::open(added.temp.c_str(), O_WRONLY | O_CLOEXEC);
    if (added.reserve_fd < 0) added.reserving = false;
  });
  return added;
}

const std::string& OutputTransaction::comment() {
  if (comment_.empty()) comment_ = comm_.broadcast(comm_.rank() == 0 ? written_comment() : std::string(), 0);
  return comment_;
}

void OutputTransaction::reserve(PendingFile& f, hid_t dataset, const LazyTensor& tensor, const std::string& what) {
  const bool reserving = comm_.min(f.reserving ? 1 : 0) != 0;
  if (!reserving) return;
  run_agreed(comm_, [&] {
    const Extent extent = contiguous_extent(dataset);
    if (extent.offset < 0) {
      // Chunks are placed as they are written, past the end of the file: room for all of
      // them uncompressed (past the end, so the file does not grow by it).
      if (comm_.rank() != 0 || tensor.is_scalar()) return;
      const TypeHandle type(check_id(H5Dget_type(dataset), what + ": cannot read the datatype"));
      const long long raw = tensor.shape().num_elements() * static_cast<long long>(H5Tget_size(type.get()));
      const long long end = std::max(file_size(f.temp), f.data_end);
      f.reserving = reserve_space(f.reserve_fd, end, raw + raw / 64 + kMetadataRoom,
                                  std::filesystem::path(f.temp).parent_path().string(), what, true);
      return;
    }
    if (extent.bytes == 0) return;
    f.data_end = std::max(f.data_end, extent.offset + extent.bytes);
    const std::int64_t total_rows = tensor.is_scalar() ? 1 : tensor.shape().dim(0);
    const std::int64_t first = tensor.is_scalar() ? 0 : tensor.row_offset();
    const std::int64_t rows = tensor.local_rows();
    if (total_rows <= 0 || rows <= 0) return;
    const long long row_bytes = extent.bytes / total_rows;
    const std::string dir = std::filesystem::path(f.temp).parent_path().string();
    f.reserving = reserve_space(f.reserve_fd, extent.offset + first * row_bytes, rows * row_bytes, dir, what);
  });
}

void OutputTransaction::write_deferred_strings(PendingFile& f) {
  if (f.deferred_strings.empty()) return;  // the same on every rank: each write() added them
  for (int turn = 0; turn < comm_.size(); ++turn) {
    run_agreed(comm_, [&] {
      if (turn != comm_.rank()) return;
      FileHandle file;
      for (const PendingFile::DeferredStrings& d : f.deferred_strings) {
        if (d.tensor.layout().count(d.tensor.rank()) == 0) continue;
        if (!file.valid()) file = open_serial(f.temp, H5F_ACC_RDWR, d.what + ": writing its rows failed");
        write_strings_serially(file.get(), d.path, d.tensor, d.format, d.what);
      }
      if (file.valid()) check_status(file.close(), "output file '" + f.given + "': writing its string datasets failed");
    });
  }
  f.deferred_strings.clear();
}

void OutputTransaction::close_and_verify(PendingFile& f) {
  const std::string what = "output file '" + f.given + "'";
  const std::string dir = std::filesystem::path(f.temp).parent_path().string();
  run_agreed(comm_, [&] {
    // The metadata HDF5 writes when the file closes: room for it too, before it is needed.
    if (comm_.rank() == 0 && f.reserving) reserve_space(f.reserve_fd, f.data_end, kMetadataRoom, dir, what, true);
  });
  run_agreed_collective_io(comm_, [&] {
    if (f.file.close() < 0)
      throw IOError(with_hdf5_detail(what + ": cannot close the temporary file '" + f.temp + "'") +
                    file_size_limit_text());
  });
  write_deferred_strings(f);
  run_agreed(comm_, [&] {
    // Every rank's rows written with pwrite reach the file system before rank 0 looks at
    // the file: a network file system sends them at the latest on close, and says there
    // if it could not.
    const int fd = f.reserve_fd;
    f.reserve_fd = -1;
    // The rows this rank wrote into an existing target and has not flushed yet (write_in_place).
    if (f.target_fd >= 0 && options_.durable && f.in_place_unflushed > 0 && ::fsync(f.target_fd) != 0) {
      const int err = errno;
      if (fd >= 0) ::close(fd);
      throw IOError(what + ": cannot flush the rows written into it: " + std::strerror(err) +
                    "; nothing was committed");
    }
    f.in_place_unflushed = 0;
    // The rows this rank wrote directly (write_directly), flushed once for all datasets.
    if (fd >= 0 && options_.durable && ::fsync(fd) != 0) {
      const int err = errno;
      ::close(fd);
      throw IOError(what + ": cannot flush the rows written into the new file '" + f.temp + "': " + std::strerror(err) +
                    "; nothing was committed");
    }
    if (fd >= 0 && ::close(fd) != 0)
      throw IOError(what + ": writing the new file '" + f.temp + "' failed: " + std::strerror(errno) +
                    "; nothing was committed");
  });
  on_root_agreed(comm_, [&] {
    const long long size = file_size(f.temp);
    if (size < f.data_end) {
      const std::string free = free_space_text(dir);
      throw IOError(what + ": the new file '" + f.temp + "' has " + std::to_string(size) + " bytes where " +
                    std::to_string(f.data_end) + " were written (a write failed: disk full?" +
                    (free.empty() ? "" : " " + free) + "); nothing was committed");
    }
    // The room reserved past the end for HDF5's metadata is given back: a truncate to the
    // file's own size frees the blocks allocated past it. Failing, it costs only that room.
    if (f.reserving) static_cast<void>(::truncate(f.temp.c_str(), static_cast<off_t>(size)));
  });
}

void OutputTransaction::write_rows_at(int fd, const LazyTensor& tensor, long long offset, std::int64_t bytes,
                                      const std::string& file, const std::string& reserve_dir, bool flush_now,
                                      const std::string& what) {
  const std::int64_t total_rows = tensor.is_scalar() ? 1 : tensor.shape().dim(0);
  const std::int64_t first = tensor.is_scalar() ? 0 : tensor.row_offset();
  const std::int64_t rows = tensor.local_rows();
  const std::int64_t row_bytes = bytes / total_rows;
  double making = 0;  // seconds spent making rows made on demand: the op's, not the write's
  run_agreed(comm_, [&] {
    if (rows <= 0) return;
    if (static_cast<std::size_t>(row_bytes) != tensor.row_bytes())
      throw InternalError(what + ": rows of " + std::to_string(tensor.row_bytes()) +
                          " bytes to write where the dataset's are " + std::to_string(row_bytes));
    const long long at = offset + first * row_bytes;
    if (!reserve_dir.empty()) reserve_space(fd, at, rows * row_bytes, reserve_dir, what);
    // Rows held are written a round at a time, as transfer_rows goes (for -v's progress
    // lines and the report's byte count); rows made on demand a piece at a time, each
    // made into one reused buffer small enough to stay in the caches.
    const bool held = tensor.held();
    const std::int64_t round = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(held ? max_transfer_bytes()
                                          : std::min(max_transfer_bytes(), LazyTensor::kPieceBytes)) /
               row_bytes);
    if (!held) progress_inner_phase_start("apply", "the rows of the output, made as they are written");
    making = tensor.for_each_run(round, [&](std::int64_t done, std::int64_t now, const unsigned char* from) {
      if (!(options_.durable ? write_all_then_sync : write_all)(fd, from, static_cast<std::size_t>(now * row_bytes),
                                                                at + done * row_bytes))
        throw IOError(what + ": writing its rows into '" + file + "' failed: " + std::strerror(errno) +
                      "; nothing was committed");
      note_transfer_progress(done + now, rows, static_cast<std::size_t>(row_bytes), now, Transfer::Write, what);
      return true;
    });
    if (!held) progress_inner_phase_end("apply", making);
    if (options_.durable && flush_now && ::fsync(fd) != 0)
      throw IOError(what + ": cannot flush the rows written into '" + file + "': " + std::strerror(errno) +
                    "; nothing was committed");
  });
  PhaseClock::move("write", "apply", making);
}

bool OutputTransaction::write_directly(PendingFile& f, hid_t dataset, hid_t mem_type, const LazyTensor& tensor,
                                       const std::string& what) {
  // Contiguous data in the file's byte layout, in host memory: every rank writes its rows
  // with pwrite where HDF5 placed the dataset (MPI-IO would hand the kernel one large
  // write per rank, see write_all). The same answer on every rank.
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible) return false;
  if (tensor.shape().num_elements() == 0 || (!tensor.is_scalar() && tensor.shape().dim(0) <= 0)) return false;
  // The file's metadata is the same on every rank; a rank without a descriptor says no.
  const Extent extent = f.reserve_fd >= 0 ? raw_extent(dataset, mem_type) : Extent{};
  if (comm_.min(extent.offset >= 0 && extent.bytes > 0 ? 1 : 0) == 0) return false;
  // Flushed once for the whole file before it is closed (close_and_verify): an fsync per
  // dataset waits for the file system's journal each time, and the new file is not the
  // target's until the commit, so nothing needs its rows on disk sooner.
  write_rows_at(f.reserve_fd, tensor, extent.offset, extent.bytes, f.given, "", false, what);
  f.data_end = std::max(f.data_end, extent.offset + extent.bytes);
  return true;
}

bool OutputTransaction::write_in_place(PendingFile& f, const DatasetRef& target, const LazyTensor& tensor,
                                       const Attributes& provenance, const StorageOptions& storage) {
  // Contiguous fixed-size data already in the file's byte layout, in host memory; the
  // rest (strings, filters, device memory) goes through the new file and is copied in
  // at the commit. The same answer on every rank.
  if (!f.existed || tensor.dtype() == DType::String || storage.chunked() ||
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible)
    return false;
  const std::string what = target.str();
  const std::int64_t total_rows = tensor.is_scalar() ? 1 : tensor.shape().dim(0);
  if (total_rows <= 0 || tensor.shape().num_elements() == 0) return false;
  std::int64_t offset = -1, bytes = 0;
  on_root_agreed(comm_, [&] {
    // A dataset it replaces is deleted at the commit, where HDF5 reuses its space. A group
    // lists its datasets in the order they were made (h5py iterates partitions 0, 1, 2, …
    // by it): made now, a dataset would come before one replaced earlier in the job.
    if (f.replaced.count(target.path) > 0 || f.groups_replaced_in.count(parent_group(target.path)) > 0) return;
    const TypeHandle mem(memory_type(tensor.dtype())), type(file_type(tensor.dtype()));
    if (check_value(H5Tequal(mem.get(), type.get()), what + ": cannot compare types", ErrorKind::Internal) <= 0) return;
    DatasetHandle dataset =
        create_dataset(f.existing.get(), target.path, tensor.shape(), type.get(), storage, what, true);
    write_provenance(dataset.get(), provenance, what, comment_);
    const Extent extent = contiguous_extent(dataset.get());
    check_status(dataset.close(), what + ": cannot close the dataset");
    if (extent.offset < 0 || extent.offset < f.original_length) {
      // Room the file had free: written there, it would not be undone by cutting the file
      // back. The usual way instead.
      check_status(H5Ldelete(f.existing.get(), target.path.c_str(), H5P_DEFAULT), what + ": cannot delete the dataset");
      return;
    }
    offset = extent.offset;
    bytes = extent.bytes;
  });
  offset = comm_.max(offset);
  if (offset < 0) return false;
  bytes = comm_.max(bytes);
  // Flushed every 32 MiB a rank writes, and before the commit (close_and_verify): a stop
  // signal's handler cuts the file back, and cutting pages still being written back waits
  // for them, so few are left in flight. Not a flush per dataset: a job of thousands of
  // partitions would wait for the file system's journal thousands of times.
  constexpr long long kFlushEvery = 32LL << 20;
  const long long mine = bytes / total_rows * tensor.local_rows();
  const bool flush_now = f.in_place_unflushed + mine >= kFlushEvery;
  write_rows_at(f.target_fd, tensor, offset, bytes, f.given, std::filesystem::path(f.target).parent_path().string(),
                flush_now, what);
  f.in_place_unflushed = flush_now ? 0 : f.in_place_unflushed + mine;
  f.target_data_end = std::max<long long>(f.target_data_end, offset + bytes);
  f.in_place.push_back(target.path);
  f.taken.insert(target.path);
  test_pause("in-place");
  return true;
}

bool OutputTransaction::may_change_in_place(const PendingFile& f, const LazyTensor& tensor,
                                            const StorageOptions& storage) const {
  return f.existed && options_.overwrite && !storage.chunked() && tensor.dtype() != DType::String &&
         !tensor.is_scalar() && tensor.shape().num_elements() > 0 &&
         Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
}

bool OutputTransaction::change_in_place(PendingFile& f, const DatasetRef& target, const LazyTensor& tensor,
                                        const Attributes& provenance, const StorageOptions& storage, bool replacing) {
  if (!may_change_in_place(f, tensor, storage)) return false;
  const std::string what = target.str();
  long long offset = -1;
  on_root_agreed(comm_, [&] {
    // A group lists its datasets in the order made: one replaced earlier in the job is made
    // at the commit, so this one is too (write_in_place).
    if (!replacing || f.groups_replaced_in.count(parent_group(target.path)) > 0) return;
    offset = row_changeable_offset(f.existing.get(), target.path, tensor.shape(), tensor.dtype(), f.original_length);
  });
  offset = comm_.max(offset);
  if (offset < 0) return false;
  // The rows changed are held on rank 0 until the commit (nothing below the file's original
  // length changes before it), so at most kMaxChanged of them; and a run costs a journal
  // record and a write, so scattered rows are worth it only while they cost less than a
  // replacement, which writes the dataset three times.
  constexpr std::int64_t kMaxChanged = std::int64_t(64) << 20, kRunCost = std::int64_t(8) << 10;
  const std::int64_t dataset_bytes =
      tensor.shape().num_elements() * static_cast<std::int64_t>(dtype_size(tensor.dtype()));
  const std::int64_t limit = dataset_bytes / 2;
  const auto cost = [&](std::int64_t bytes, std::int64_t runs) {
    return bytes + 16 * runs > kMaxChanged ? std::numeric_limits<std::int64_t>::max() : bytes + runs * kRunCost;
  };
  ChangedRows changes;
  double making = 0;
  run_agreed(comm_, [&] {
    const int fd = ::open(f.target.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      throw IOError(what + ": cannot open '" + f.given + "' to read the dataset it replaces: " + std::strerror(errno));
    try {
      changes = find_changed_rows(tensor, fd, offset, cost, limit, making, what);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
  });
  PhaseClock::move("write", "apply", making);
  const std::vector<std::int64_t> totals = comm_.sum(std::vector<std::int64_t>{
      changes.over ? 1 : 0, rows_in(changes.runs) * static_cast<std::int64_t>(tensor.row_bytes()),
      static_cast<std::int64_t>(changes.runs.size()), changes.differ});
  if (totals[0] > 0 || cost(totals[1], totals[2]) > limit) return false;
  if (comm_.rank() == 0) {
    const std::string note = what + ": " + std::to_string(totals[3]) + " of its " +
                             std::to_string(tensor.shape().dim(0)) +
                             " rows differ from the dataset it replaces: written into it, in place";
    progress_note(note.c_str());
  }
  std::string packed;
  run_agreed(comm_, [&] { packed = pack_changed_rows(tensor, changes); });
  const std::vector<std::string> all = comm_.gather(packed, 0);
  packed = std::string();
  on_root_agreed(comm_, [&] {
    // The attributes first: HDF5 reads the dataset's header back, and each read looks through
    // every change held back.
    DatasetHandle dataset(check_id(H5Dopen2(f.existing.get(), target.path.c_str(), H5P_DEFAULT),
                                   what + ": cannot open the dataset it replaces"));
    if (has_provenance(dataset.get(), provenance)) {
      check_status(H5Oset_comment(dataset.get(), comment_.c_str()), what + ": cannot write the dataset's comment");
    } else {
      remove_attributes(dataset.get(), what);
      write_provenance(dataset.get(), provenance, what, comment_);
    }
    check_status(dataset.close(), what + ": cannot close the dataset");
    const long long row_bytes = static_cast<long long>(tensor.row_bytes());
    for (const std::string& from : all) {
      for_each_changed_run(
          from, tensor.row_bytes(), [&](std::int64_t first, std::int64_t rows, const unsigned char* bytes) {
            f.journal->change(offset + first * row_bytes, bytes, static_cast<std::size_t>(rows * row_bytes), what);
          });
    }
  });
  f.in_place.push_back(target.path);
  f.taken.insert(target.path);
  test_pause("changed in place");
  return true;
}

void OutputTransaction::write(const DatasetRef& target, const DistTensor& tensor, const Attributes& provenance) {
  write(target, LazyTensor(tensor), provenance, options_.storage);
}

void OutputTransaction::write(const DatasetRef& target, const DistTensor& tensor, const Attributes& provenance,
                              const StorageOptions& storage) {
  write(target, LazyTensor(tensor), provenance, storage);
}

bool OutputTransaction::write(const DatasetRef& target, const LazyTensor& output, const Attributes& provenance) {
  return write(target, output, provenance, options_.storage);
}

namespace {

// The names of the datasets directly in \p group of \p file that are numbers from \p from
// up ("0", "1", ...: the members of a group of partitions) and that a shardops job of \p op
// wrote, in no particular order.
std::vector<std::string> numbered_members(hid_t file, const std::string& group, std::int64_t from,
                                          const std::string& op) {
  struct Found {
    std::int64_t from;
    const std::string& op;
    std::vector<std::string> names;
  } found{from, op, {}};
  const GroupHandle g(H5Gopen2(file, group.c_str(), H5P_DEFAULT));
  if (!g.valid()) {
    hdf5_error_detail();  // not there, or not a group: nothing of it to drop
    return {};
  }
  auto visit = [](hid_t loc, const char* name, const H5L_info_t* info, void* data) -> herr_t {
    auto& f = *static_cast<Found*>(data);
    const std::string n(name);
    if (info->type != H5L_TYPE_HARD || n.empty() || n.size() > 18 ||
        n.find_first_not_of("0123456789") != std::string::npos || (n.size() > 1 && n[0] == '0'))
      return 0;
    H5O_info_t object;
    if (H5Oget_info_by_name2(loc, name, &object, H5O_INFO_BASIC, H5P_DEFAULT) < 0 || object.type != H5O_TYPE_DATASET) {
      hdf5_error_detail();
      return 0;
    }
    // Only partitions a job of this op wrote (they carry its version and its op): a dataset
    // the user named like one, or another op's output (a gather written to "5"), stays.
    if (std::stoll(n) < f.from) return 0;
    const DatasetHandle dataset(H5Dopen2(loc, name, H5P_DEFAULT));
    if (!dataset.valid()) {
      hdf5_error_detail();
      return 0;
    }
    if (H5Aexists(dataset.get(), kVersionAttribute) > 0 && provenance_text(dataset.get(), "op") == f.op)
      f.names.push_back(n);
    hdf5_error_detail();  // what the checks left on HDF5's error stack
    return 0;
  };
  if (H5Literate(g.get(), H5_INDEX_NAME, H5_ITER_NATIVE, nullptr, visit, &found) < 0) hdf5_error_detail();
  return found.names;
}

}  // namespace

void OutputTransaction::drop_numbered_members(const DatasetRef& group, std::int64_t from, const std::string& op) {
  const std::string what = group.str();
  try {
    PendingFile& f = pending_for(group);
    run_agreed(comm_, [&] {
      if (comm_.rank() != 0 || !f.existing.valid()) return;
      for (const std::string& name : numbered_members(f.existing.get(), group.path, from, op)) {
        refuse_replacing_dimension_scales(f.existing.get(), group.path + "/" + name, what, true);
        f.dropped.insert(group.path + "/" + name);
      }
    });
  } catch (...) {
    failed_ = true;
    throw;
  }
}

bool OutputTransaction::write(const DatasetRef& target, const LazyTensor& output, const Attributes& provenance,
                              const StorageOptions& storage) {
  if (committed_) throw InvalidArgument("OutputTransaction::write after commit (" + target.str() + ")");
  if (failed_) throw InvalidArgument("OutputTransaction::write after a failed step (" + target.str() + ")");
  const std::string what = target.str();
  if (!target.rows.empty()) {
    throw InvalidArgument(what + ": an output is a whole dataset; '" + target.rows + "' selects rows of an input");
  }
  // The op may make what HDF5 cannot store (a stitch of rank-32 data with a scalar index): a
  // usage error, like a --shape of as many dimensions, not a failure of the file.
  check_dataset_rank(static_cast<std::size_t>(output.shape().rank()), what);
  // Every rank writes the same dataset of the same tensor: HDF5's collective calls with other
  // names would put one rank's choice in the file, or its rows in another's dataset.
  agree_on_call(comm_,
                "OutputTransaction::write(" + what + " " + dtype_name(output.dtype()) + output.shape().str() + ")");
  try {
    PendingFile& f = pending_for(target);
    comment();               // collective: made here, where every rank comes
    bool replacing = false;  // rank 0: the output replaces a dataset of the existing target
    run_agreed(comm_, [&] {
      if (output.layout().nranks() != comm_.size()) {
        throw InvalidArgument(what + ": the tensor is laid out over " + std::to_string(output.layout().nranks()) +
                              " ranks, the communicator has " + std::to_string(comm_.size()));
      }
      if (output.is_scalar() && output.layout() != RowLayout::on_rank(1, comm_.size(), 0)) {
        throw InternalError(what + ": a scalar DistTensor must live on rank 0 alone");
      }
      if (f.taken.count(target.path) > 0) throw InvalidArgument(what + ": the dataset is written twice by this job");
      check_target(f.file.get(), target, false, what, true);
      // A dataset it may change row by row needs room for the rows that change only.
      if (!may_change_in_place(f, output, storage)) plan_output_bytes(f, target, output, storage, what);
      if (comm_.rank() == 0 && f.existing.valid())
        replacing = check_target(f.existing.get(), target, options_.overwrite, what, false);
    });
    if (change_in_place(f, target, output, provenance, storage, replacing)) return !output.held();
    if (replacing) {
      f.replaced.insert(target.path);
      f.groups_replaced_in.insert(parent_group(target.path));
    }
    if (may_change_in_place(f, output, storage))
      run_agreed(comm_, [&] { plan_output_bytes(f, target, output, storage, what); });
    if (write_in_place(f, target, output, provenance, storage)) return !output.held();

    const bool strings = output.dtype() == DType::String;
    StringOutput string_output;
    if (strings) string_output = prepare_strings(comm_, output.tensor(), what);

    DatasetHandle dataset;
    TypeHandle mem_type;
    std::vector<unsigned char> staging;  // only when MemSpace is not host-accessible
    const void* data = nullptr;
    // Creating a dataset in the new file is collective, and writes (allocating the chunks of
    // a compressed one writes them).
    run_agreed_collective_io(comm_, [&] {
      if (strings) {
        // Checked as for numbers above, now that the strings' bytes are known.
        const long long bytes =
            string_output.heap_bytes + (storage.compression == Compression::None ? string_output.element_bytes : 0);
        plan_bytes(f, target, bytes, bytes, what);
      }
      // String types have no byte order: the file type is the memory type.
      mem_type = strings ? string_file_type(string_output.format) : memory_type(output.dtype());
      const TypeHandle type = strings ? string_file_type(string_output.format) : file_type(output.dtype());
      dataset = create_dataset(f.file.get(), target.path, output.shape(), type.get(), storage, what);
      write_provenance(dataset.get(), provenance, what, comment_);
    });
    reserve(f, dataset.get(), output, what);
    // Parallel HDF5 1.10 cannot write variable-length data through MPI-IO ("Parallel IO
    // does not support writing VL ... datatypes yet"), and its collective filtered writes
    // lose the mark of a chunk an optional filter left as it was (LZF cannot shrink
    // random data), so h5py then fails to read it. Those datasets are made collectively;
    // then the ranks take turns, in rank order, each opening the file alone to write its
    // own rows: variable-length strings once the file is closed at the commit, all in one
    // turn (write_deferred_strings); LZF now, the file reopened after.
    const bool vlen = strings && !string_output.format.fixed_length;
    const bool serial = vlen || storage.compression == Compression::Lzf;
    if (!serial && !strings && write_directly(f, dataset.get(), mem_type.get(), output, what)) {
      run_agreed_collective_io(comm_, [&] { check_status(dataset.close(), what + ": cannot close the dataset"); });
      f.written.push_back(target.path);
      f.taken.insert(target.path);
      return !output.held();
    }
    if (vlen) {
      run_agreed_collective_io(comm_, [&] { check_status(dataset.close(), what + ": cannot close the dataset"); });
      run_agreed(comm_, [&] {
        f.deferred_strings.push_back({target.path, what, output.tensor(), string_output.format});
      });
      f.written.push_back(target.path);
      f.taken.insert(target.path);
      return false;
    }
    // HDF5 writes the rest from memory: rows made on demand are made whole first.
    DistTensor tensor;
    run_agreed(comm_, [&] {
      Kokkos::Timer timer;
      tensor = output.whole();
      if (!output.held()) PhaseClock::move("write", "apply", timer.seconds());
      if (strings) return;
      // A collective filtered write compresses every chunk of the rank's rows in HDF5's
      // own memory before it writes any: about the block's bytes again (random data does
      // not shrink), which the job must have, or it is OOM-killed mid-write.
      if (!serial && (storage.shuffle || storage.compression != Compression::None))
        check_allocation(static_cast<std::size_t>(tensor.local().nbytes()),
                         what + ": HDF5's buffers to compress this rank's rows");
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
    if (!serial && !strings) {
      transfer_rows(comm_, dataset.get(), mem_type.get(), tensor.shape(), first, rows, const_cast<void*>(data),
                    Transfer::Write, what);
    } else if (!serial) {
      // Fixed length: each round's strings NUL-padded to the width, collective as any row.
      RowStaging fill;
      fill.fill = [&](unsigned char* buffer, std::int64_t from, std::int64_t n) {
        pad_strings(string_output, from, n, buffer);
      };
      transfer_rows_staged(comm_, dataset.get(), mem_type.get(), tensor.shape(), first, rows, fill, Transfer::Write,
                           what);
    }
    run_agreed_collective_io(comm_, [&] { check_status(dataset.close(), what + ": cannot close the dataset"); });
    const std::int64_t elements = rows * (tensor.is_scalar() ? 1 : tensor.row_elements());
    if (serial && comm_.max(elements) != 0) {
      run_agreed_collective_io(comm_, [&] {
        check_status(f.file.close(), "output file '" + f.given + "': cannot close the temporary file '" + f.temp + "'");
      });
      for (int turn = 0; turn < comm_.size(); ++turn) {
        run_agreed(comm_, [&] {
          if (turn != rank || elements == 0) return;
          std::vector<unsigned char> padded;
          const void* buffer = data;
          if (strings) {
            padded.resize(static_cast<std::size_t>(elements * string_output.format.width));
            pad_strings(string_output, 0, elements, padded.data());
            buffer = padded.data();
          }
          FileHandle file = open_serial(f.temp, H5F_ACC_RDWR, what + ": writing its rows failed");
          write_block_serially(file.get(), target.path, mem_type.get(), buffer, static_cast<std::size_t>(elements),
                               tensor.shape(), first, rows, what);
          check_status(file.close(), what + ": writing its rows failed");
        });
      }
      f.file = open_output_file(comm_, f.temp, f.given, what);
    }
    f.written.push_back(target.path);
    f.taken.insert(target.path);
    return false;
  } catch (...) {
    failed_ = true;
    throw;
  }
}

void OutputTransaction::commit_on_root() {
  // Rows mapped from an input's pages were read until now.
  if (options_.inputs != nullptr) options_.inputs->check_unchanged();
  if (files_.empty()) return;
  // A rank that a stop signal reaches from here on (its commit window not yet open)
  // leaves the targets to this commit, and to the journals should it fail.
  for (const auto& f : files_) f->lock.mark_committing();
  if (files_.size() > 1) {
    commit_together(files_, options_.durable);
    return;
  }
  PendingFile& f = *files_.front();
  if (f.existed) {
    merge_into_existing(f)->finish();
    remove_quietly(f.temp);
  } else {
    rename_new_file(f.temp, f.target, options_.durable, "output file '" + f.given + "'");
  }
}

void OutputTransaction::commit() {
  if (committed_) return;
  if (failed_) throw InternalError("OutputTransaction::commit after a failed step");
  try {
    for (const auto& f : files_) close_and_verify(*f);
    // No stop signal cuts a commit short: each one is acted on after it.
    CommitWindow window;
    ScopedPhase phase("commit");
    on_root_agreed(comm_, [&] {
      commit_on_root();
      for (const auto& f : files_) f->target_on_stop.reset();  // the targets are complete: never cut
      window.committed();
      window.end();  // a signal held back acts now, saying the outputs are in place
    });
    window.committed();
    committed_ = true;
    files_.clear();  // drops the locks
  } catch (...) {
    failed_ = true;
    abort();
    throw;
  }
}

void OutputTransaction::abort() noexcept {
  if (files_.empty()) return;
  for (const auto& f : files_) {
    // Cut the new file first: closing it writes metadata, which must fit on a full disk.
    if (comm_.rank() == 0 && f->file.valid() && f->reserve_fd >= 0) static_cast<void>(::ftruncate(f->reserve_fd, 0));
    f->file.reset();
    if (comm_.rank() == 0) remove_quietly(f->temp);
    // Closing removes them, unless the close failed (a full disk).
    for (const std::string& side : mpi_io_side_files(f->temp, comm_.rank())) remove_quietly(side);
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
