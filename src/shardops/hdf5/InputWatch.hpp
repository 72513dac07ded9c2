#pragma once
/// \file
/// \brief The input files of a job, kept from changing under it: a file another program
/// is writing is not read half-written, and a dataset that another job replaces while this
/// one uses it fails the job before its commit instead of giving a wrong output.
///
/// HDF5 programs lock a file while they have it open (shared for readers, exclusive for
/// writers; h5py's HDF5 does, and a shardops job writing into an existing file holds the
/// exclusive lock from its first write to the end of its commit), but the MPI-IO driver
/// that reads inputs takes no lock. So, on rank 0: before a file is first opened, its lock
/// is tried; a file that a shardops job is writing is waited for (as long as that job's
/// lock, SHARDOPS_LOCK_TIMEOUT), one that another program has open for writing is an error
/// at once, as HDF5 would make it (this very process's own writer, a Python program's h5py,
/// is not another program: it orders its own calls). The file's identity (inode, size, times of change) and,
/// for each dataset read, its place in the file and its written_comment() are noted. Once a
/// dataset's rows are read into memory (read_done), and at the job's commit for rows mapped
/// from the file's pages (read from the file until then: check_unchanged), a file whose
/// identity changed is opened again: another
/// job adding datasets to it is no harm, but a dataset read that is gone, moved or written
/// anew (an --overwrite, which HDF5 puts in the old one's place) is an error.
///
/// No lock is held meanwhile: a job may read more files than it may keep descriptors open
/// (`ulimit -n`), and a held lock would keep the user's own h5py from writing the file
/// after a `shardops.read` in Python. A changed file that another program still holds open for
/// writing is an error (it may have written into a dataset in its place, which no comparison
/// sees); such a program that opened the file after the job did and closed it again before
/// the check is not noticed.

#include <hdf5.h>

#include <string>
#include <utility>
#include <vector>

#include "shardops/route/Comm.hpp"

namespace shardops::io {

class InputWatch {
 public:
  explicit InputWatch(const Comm& comm) : comm_(comm) {}

  /// \brief Rank 0 (others: nothing): the job reads \p file too, a file that is not HDF5 (the
  /// raw file of a dataset stored outside its file, h5py's external=), for files_read().
  void read_from(const std::string& file);
  /// Rank 0: every file the job read, as named (its inputs', the files their links and
  /// virtual datasets lead to, raw files): a report never replaces one.
  const std::vector<std::string>& files_read() const noexcept { return files_read_; }
  /// \brief Rank 0 (others: nothing), before any input is read: the datasets the job will
  /// write (\p file, \p path: a dataset, or a group of them). An input among them, or below
  /// one, that the job replaces (--overwrite of its own input: a job that adds to a dataset in
  /// place) stays watched once its rows are in memory, until the job writes its file
  /// (writing()): another job that replaced it meanwhile would otherwise have its change lost
  /// under this job's, both exiting 0. Such a job fails instead, and can be run again.
  void will_write(const std::string& file, const std::string& path);
  /// \brief Rank 0, before \p file is opened for reading (other ranks: nothing): waits
  /// while a shardops job holds its write lock, then notes its identity (once per file).
  /// \throws IOError naming \p what if another program has \p file open for writing (HDF5's
  /// exclusive lock; HDF5_USE_FILE_LOCKING=FALSE skips the test), or if a job writing it
  /// holds it longer than SHARDOPS_LOCK_TIMEOUT. A file that cannot be opened is left to
  /// the open that follows to report.
  void opening(const std::string& file, const std::string& what);

  /// \brief Rank 0 (others: nothing): notes where \p dataset (\p path in \p file, open) lies
  /// and which job wrote it, before its rows are read.
  /// \throws IOError if this job read \p path before and it has been written anew since
  /// (the job would mix the two); call it inside an agreed step.
  void reading(const std::string& file, const std::string& path, hid_t dataset);

  /// \brief Rank 0 (others: nothing): the rows of \p path in \p file are mapped from the
  /// file's pages, read from it until the commit: check_unchanged() checks the dataset then,
  /// whatever other reads of it finish before (read_done).
  void mapped(const std::string& file, const std::string& path);

  /// \brief Collective, once the rows of \p path in \p file are read into memory:
  /// \throws IOError on every rank if a dataset of \p file noted by reading() is gone or not
  /// the one read; from then on a change to \p path no longer reaches these rows (a later
  /// read of it is compared by reading()). Rows mapped from the file are not read yet: their
  /// dataset is left for check_unchanged().
  void read_done(const std::string& file, const std::string& path);
  /// \brief Rank 0 (the others have nothing to check), inside an agreed step, once the rows
  /// mapped from inputs are no longer read (the job's commit): read_done()'s check for every
  /// dataset still noted.
  void check_unchanged();

  /// \brief Rank 0, about to write into \p target (a resolved path) and holding its write
  /// lock: the check of check_unchanged() for \p target, then stops watching it (its changes
  /// from here on are the job's own).
  void writing(const std::string& target);

  // What is noted of a file and of a dataset read from it.
  struct Identity {
    unsigned long long device = 0, inode = 0;
    long long size = 0, modified_ns = 0, changed_ns = 0;
    bool operator==(const Identity& o) const {
      return device == o.device && inode == o.inode && size == o.size && modified_ns == o.modified_ns &&
             changed_ns == o.changed_ns;
    }
  };
  /// \brief \p file's identity now into \p out; false if \p file cannot be seen. Any change to
  /// the file's bytes changes it.
  static bool identity_of(const std::string& file, Identity& out);
  struct Mark {
    std::string path;
    haddr_t object = HADDR_UNDEF, data = HADDR_UNDEF;  ///< its object header and (contiguous) data
    hsize_t bytes = 0;                                 ///< its data's bytes in the file
    std::string written;                               ///< its written_comment(), if any
    /// Its rows are still read from the file (being read, or mapped): check() compares it.
    /// Else they are in memory, and the mark is kept only for a later read of the dataset.
    bool in_use = true;
    bool is_mapped = false;     ///< some of its rows are mapped: in use until the commit
    bool written_over = false;  ///< its rows are in memory and the job writes over it: in use until then
    bool read_earlier = false;  ///< written_over, read by an earlier call of this process (written_over_since)
    /// The same dataset in the same place (whatever the rows' use).
    bool operator==(const Mark& o) const {
      return path == o.path && object == o.object && data == o.data && bytes == o.bytes && written == o.written;
    }
  };
  /// \brief One dataset as a read found it: its file (as named, and its identity then) and
  /// its mark.
  struct ReadNote {
    std::string file;
    Identity identity;
    Mark mark;
  };

  /// \brief Rank 0 (others: none): every dataset read through this watch, as found then. A
  /// program that reads in one call and writes in a later one (Python's read, then write)
  /// keeps them for written_over_since().
  std::vector<ReadNote> read_notes() const;
  /// \brief Rank 0 (others: nothing), before the job's first write: the job writes over the
  /// dataset of \p note, whose rows an earlier call of this process read. Checked as
  /// will_write's are once the job holds the file's lock (writing()): another job or program
  /// that wrote it since fails this job (IOError), as that change would be lost under it.
  void written_over_since(const ReadNote& note);

 private:
  struct Watched {
    std::string file;  ///< as the job named it
    Identity identity;
    std::vector<Mark> marks;
  };
  /// Throws IOError if a dataset \p w noted is gone or another one; else takes the file's
  /// present identity as the one to compare with next. Nothing to do for a file none of whose
  /// datasets is still noted.
  static void check(Watched& w);
  static Mark mark_of(const std::string& path, hid_t dataset);

  /// Whether the job writes over \p path of \p file (will_write).
  bool rewritten(const std::string& file, const std::string& path) const;

  Comm comm_;
  std::vector<Watched> watched_;                              ///< rank 0 only
  std::vector<std::pair<std::string, std::string>> written_;  ///< will_write's, rank 0 only
  std::vector<std::string> files_read_;                       ///< rank 0 only
};

}  // namespace shardops::io
