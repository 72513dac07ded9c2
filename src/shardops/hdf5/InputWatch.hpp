#pragma once
/// \file
/// \brief The input files of a job, kept from changing under it: a file another program
/// is writing is not read half-written, and a file changed while the job used it fails
/// the job before its commit instead of giving a wrong output.
///
/// HDF5 programs lock a file while they have it open (shared for readers, exclusive for
/// writers; h5py's HDF5 does, and a shardops job writing into an existing file holds the
/// exclusive lock from its first write to the end of its commit), but the MPI-IO driver
/// that reads inputs takes no lock. So, on rank 0: before a file is first opened, its lock
/// is tried; a file that a shardops job is writing is waited for (as long as that job's
/// lock, SHARDOPS_LOCK_TIMEOUT), one that another program has open for writing is an error
/// at once, as HDF5 would make it. The file's identity (inode, size, times of change) is
/// noted then and compared again once its rows are read, and at the job's commit for a
/// file whose pages the job maps (its rows are read from the file's pages until then). A
/// lock is not held meanwhile: a job may read more files than it may keep descriptors
/// open (`ulimit -n`), and a held lock would keep the user's own h5py from writing the
/// file after a `shardops.read` in Python.

#include <string>
#include <vector>

#include "shardops/route/Comm.hpp"

namespace shardops::io {

class InputWatch {
 public:
  explicit InputWatch(const Comm& comm) : comm_(comm) {}

  /// \brief Rank 0, before \p file is opened for reading (other ranks: nothing): waits
  /// while a shardops job holds its write lock, then notes its identity (once per file).
  /// \throws IOError naming \p what if another program has \p file open for writing (HDF5's
  /// exclusive lock; HDF5_USE_FILE_LOCKING=FALSE skips the test), or if a job writing it
  /// holds it longer than SHARDOPS_LOCK_TIMEOUT. A file that cannot be opened is left to
  /// the open that follows to report.
  void opening(const std::string& file, const std::string& what);

  /// \brief Collective: \throws IOError on every rank if a file noted by opening() (only
  /// \p file, where it is not empty) changed since.
  void verify(const std::string& file = "") const;
  /// \brief verify() on this rank alone (rank 0 checks, the others have nothing to), for a
  /// caller already inside an agreed step on rank 0.
  void check_unchanged(const std::string& file = "") const;

  /// \brief Rank 0, about to write into \p target (a resolved path) and holding its write
  /// lock: \throws IOError if \p target is an input of this job that changed since it was
  /// opened, then stops watching it (its changes from here on are the job's own).
  void writing(const std::string& target);

 private:
  struct Identity {
    std::string file;  ///< as the job named it
    unsigned long long device = 0, inode = 0;
    long long size = 0, modified_ns = 0, changed_ns = 0;
    bool operator==(const Identity& o) const {
      return device == o.device && inode == o.inode && size == o.size && modified_ns == o.modified_ns &&
             changed_ns == o.changed_ns;
    }
  };
  /// Throws IOError if \p noted's file is no longer as noted.
  static void check(const Identity& noted);

  Comm comm_;
  std::vector<Identity> noted_;  ///< rank 0 only
};

}  // namespace shardops::io
