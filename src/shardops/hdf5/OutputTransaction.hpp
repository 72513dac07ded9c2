#pragma once
/// \file
/// \brief Atomic output (docs/output-safety.md): datasets are written into temporary files
/// beside their targets and renamed into place only when every rank succeeded.

#include <memory>
#include <string>
#include <vector>

#include "shardops/hdf5/DatasetRef.hpp"
#include "shardops/hdf5/InputWatch.hpp"
#include "shardops/hdf5/Provenance.hpp"
#include "shardops/hdf5/StorageLayout.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/DistTensor.hpp"
#include "shardops/route/LazyTensor.hpp"

namespace shardops::io {

/// Options of an output transaction.
struct OutputOptions {
  /// Replace output datasets that already exist (the CLI's --overwrite). Groups are never replaced.
  bool overwrite = false;
  /// Flush the outputs to disk before the commit counts as done (fsync of the new data,
  /// the journal and the directory); the CLI's --no-fsync turns it off.
  bool durable = true;
  /// How datasets are stored unless a write() says otherwise.
  StorageOptions storage = {};
  /// The job's input files (InputFiles' watch): the commit fails, nothing committed, if a
  /// dataset whose rows the job still read from the file (mapped) was written anew; an input
  /// the job writes into is checked before it does.
  InputWatch* inputs = nullptr;
};

/// \brief A set of output datasets that appear together or not at all.
///
/// The first write() to a file takes the file's lock (FileLock: jobs writing one file
/// take turns), undoes what jobs that died writing it left behind, and creates a new,
/// empty HDF5 file beside it (".NAME.shardops-tmp.TOKEN"); an existing target is opened
/// on rank 0 through an undo journal (JournaledCommit), nothing of it below its original
/// length to change before the commit. A contiguous fixed-size dataset that replaces
/// nothing is written straight into an existing target, past its end (its bytes are
/// written once); the others go into the new file. Space for each dataset is reserved on
/// disk before it is written, and sizes are checked after, so a full disk is an error
/// before the commit, never a file with holes. commit() then, on rank 0:
///  - a target that did not exist: renames the new file to it (never over a file that
///    appeared meanwhile);
///  - an existing target: copies the new file's datasets into it (deleting the ones
///    they replace) and closes it, which applies the held-back changes, journaled, so the
///    cost is the bytes added, not the file, and a failure or a kill leaves the target as
///    it was.
/// If anything fails, or the transaction is destroyed uncommitted, the new files are
/// removed and the targets are left as they were. See docs/output-safety.md for what a
/// crash at each moment leaves behind.
///
/// Every member function is collective over the Comm, and every failure is agreed:
/// all ranks throw the same error. The destructor closes files (collective for the
/// MPI-IO driver), so all ranks must destroy the transaction together, which they
/// do when they leave a scope by the same, agreed, error.
///
/// With several files the set is atomic too: one undo record (JobCommit) is the job's
/// commit point, and a file that fails undoes the ones changed before it.
class OutputTransaction {
 public:
  struct PendingFile;
  explicit OutputTransaction(const Comm& comm, OutputOptions options = {});
  ~OutputTransaction();
  OutputTransaction(const OutputTransaction&) = delete;
  OutputTransaction& operator=(const OutputTransaction&) = delete;

  /// \brief Collective: writes \p tensor as dataset \p target (each rank its row block
  /// as a hyperslab, collective transfer; a scalar by rank 0), in h5py's type layout,
  /// with \p provenance and shardops_version as string attributes. Parent groups are
  /// created as needed.
  ///
  /// A string tensor keeps its pool's StringFormat: fixed-length strings are written
  /// NULPAD, as wide as the format's width or the longest string, whichever is larger,
  /// collectively through a staging buffer of one round; variable-length strings with
  /// the format's charset. Parallel HDF5 1.10 cannot write variable-length data with
  /// the MPI-IO driver, so for those the dataset is created collectively and its rows
  /// are written by commit(), once the temporary file is closed: the ranks take turns in
  /// rank order, each opening it once with the serial driver to write its own rows of
  /// every such dataset. Until then the transaction keeps \p tensor (its strings); memory
  /// per rank while writing: one dataset's block of strings copied.
  /// \throws InvalidArgument naming \p target if a variable-length string holds a NUL
  /// byte (nothing is written).
  /// \throws InvalidArgument also if \p target exists (without overwrite; the message
  /// suggests --overwrite), names a group, lies below a dataset, or is written twice;
  /// IOError if the output directory is missing or not writable, an existing target
  /// file is not HDF5, or HDF5 fails. After an error the transaction can only be
  /// destroyed or aborted: nothing of it is committed.
  void write(const DatasetRef& target, const DistTensor& tensor, const Attributes& provenance);
  /// As above, stored as \p storage says (chunked and filtered: written collectively too).
  void write(const DatasetRef& target, const DistTensor& tensor, const Attributes& provenance,
             const StorageOptions& storage);
  /// \brief As above, for an output whose rows may be made on demand (LazyTensor): where
  /// the rows go to the file by pwrite (contiguous storage), each rank makes its rows a
  /// piece at a time into one reused buffer and writes each piece as it is made, so the
  /// output is never held whole; the time spent making them counts in the "apply" phase,
  /// not "write". Elsewhere (chunked or filtered storage) they are made whole first.
  /// \return whether the rows were made as they were written (the same on every rank)
  bool write(const DatasetRef& target, const LazyTensor& output, const Attributes& provenance);
  bool write(const DatasetRef& target, const LazyTensor& output, const Attributes& provenance,
             const StorageOptions& storage);

  /// \brief Collective, before the first write: takes the locks of the files of \p targets
  /// (the job's outputs) and makes them ready, in the order of their resolved paths, the same
  /// in every job. Two jobs writing the same files (decks naming them in different orders)
  /// then wait for each other once instead of each holding one lock and waiting for the other
  /// until SHARDOPS_LOCK_TIMEOUT. The writes that follow find their files ready.
  void open_in_lock_order(const std::vector<DatasetRef>& targets);

  /// \brief Collective, with overwrite, where the job writes the numbered members "0" to
  /// "from - 1" of \p group (a dataset path naming a group: DynamicPartition's output): the
  /// group's datasets numbered from \p from up that an earlier job of the same \p op wrote
  /// (their "op" attribute), left by one that wrote more, are deleted at the commit, with the
  /// rest of the change, so that the group holds this job's members only. Other members
  /// (named otherwise, or written otherwise: another op's output, the user's) stay. Nothing
  /// for a new file.
  void drop_numbered_members(const DatasetRef& group, std::int64_t from, const std::string& op);

  /// \brief Collective: closes the new files, checks them, and puts their datasets in
  /// place once every rank succeeded (stop signals wait until it is done).
  /// \throws IOError if closing, checking, renaming or merging fails (the new files are
  /// removed, the targets left as they were). Nothing to do if nothing was written.
  void commit();

  /// \brief Collective: closes and removes the temporary files; targets untouched.
  /// Never throws. Called by the destructor of an uncommitted transaction.
  void abort() noexcept;

  bool committed() const noexcept { return committed_; }
  /// The new files now held (for tests and diagnostics).
  std::vector<std::string> temp_paths() const;

 private:
  /// The pending file of \p target's file, made (locked, cleaned up after dead jobs, opened)
  /// the first time; \p resolved is its resolved path where the caller has it already
  /// (rank 0's, the same on every rank), else it is resolved here.
  PendingFile& pending_for(const DatasetRef& target, const std::string& resolved = std::string());
  /// Rank 0: puts the datasets in place (renames, merges), the locks marked as the
  /// commit's first.
  void commit_on_root();
  /// Collective: this rank's rows of \p tensor written with pwrite into \p fd, where a
  /// dataset of \p bytes (all rows) starts at \p offset; space reserved first in
  /// \p reserve_dir's file system unless it is empty; flushed now when durable and \p
  /// flush_now (else the caller flushes \p fd before the commit). \p file names the file in
  /// messages.
  void write_rows_at(int fd, const LazyTensor& tensor, long long offset, std::int64_t bytes, const std::string& file,
                     const std::string& reserve_dir, bool flush_now, const std::string& what);
  /// Collective: writes \p tensor into the new file's contiguous \p dataset by pwrite, if
  /// it can; false (nothing written) where HDF5 must write it.
  bool write_directly(PendingFile& f, hid_t dataset, hid_t mem_type, const LazyTensor& tensor, const std::string& what);
  // Writes \p tensor straight into an existing target, past its original length,
  // where it can (contiguous, fixed-size, host memory, not replacing a dataset): the
  // bytes are written once, not into the new file and copied again at the commit.
  bool write_in_place(PendingFile& f, const DatasetRef& target, const LazyTensor& tensor, const Attributes& provenance,
                      const StorageOptions& storage);
  // With --overwrite, where \p tensor replaces a dataset of the existing target (rank 0's
  // \p replacing: check_target's answer) that it can
  // change row by row (row_changeable_offset: contiguous, the same shape and file type):
  // compares the rows, and if few differ (a few rows scattered into a large tensor, a job
  // run again) writes those alone into it through the journal, and the new attributes, so
  // the cost is the rows that changed, not the dataset three times (the new file, the
  // journal of the old bytes, the file). False (nothing written) where it does not.
  // Whether change_in_place may change the rows of the dataset \p tensor replaces (the same on
  // every rank; whether it does depends on the dataset and on how many rows differ).
  bool may_change_in_place(const PendingFile& f, const LazyTensor& tensor, const StorageOptions& storage) const;
  bool change_in_place(PendingFile& f, const DatasetRef& target, const LazyTensor& tensor, const Attributes& provenance,
                       const StorageOptions& storage, bool replacing);
  void reserve(PendingFile& f, hid_t dataset, const LazyTensor& tensor, const std::string& what);
  /// Collective, the new file closed: each rank in turn writes its rows of the file's
  /// variable-length string datasets (PendingFile::deferred_strings), opening it once.
  void write_deferred_strings(PendingFile& f);
  void close_and_verify(PendingFile& f);

  /// Collective: the written_comment() of this transaction's datasets (rank 0's, on every rank).
  const std::string& comment();

  Comm comm_;
  OutputOptions options_;
  std::string comment_;  ///< comment()'s, made at the first write
  std::vector<std::unique_ptr<PendingFile>> files_;
  bool committed_ = false;
  bool failed_ = false;
};

/// \brief Creates the missing groups above \p path in \p file, each tracking and indexing
/// the creation order of its links (h5py then lists them in the order written).
/// \throws IOError naming \p what.
void create_parent_groups(hid_t file, const std::string& path, const std::string& what);

}  // namespace shardops::io
