#pragma once
/// \file
/// \brief The lock that serialises jobs writing into one output file.
///
/// The lock is an flock() on a lock file beside the target, ".NAME.shardops-lock".
/// An advisory lock dies with its process, so a killed job never leaves the file
/// locked. The lock file is removed when the lock is released; a waiter that wins
/// the lock on a file that was removed meanwhile notices it (the path no longer
/// names the inode it locked) and tries again, so two jobs never both hold it.

#include <string>

namespace shardops::io {

/// \brief How long a job waits for another job's lock before it gives up (exit 3).
/// SHARDOPS_LOCK_TIMEOUT (seconds) overrides the default of 300.
double lock_timeout_seconds();

/// "gave up after 0.5 s (SHARDOPS_LOCK_TIMEOUT sets how long to wait)", for \p waited seconds.
std::string gave_up_text(double waited);

/// \brief An exclusive lock on one target file, held by this process (one rank).
class FileLock {
 public:
  FileLock() = default;
  /// \brief Blocks until this process holds the lock of \p target (a resolved path) or
  /// \p timeout_seconds have passed. \throws IOError naming \p what, the target and the
  /// holder (pid and host) on a timeout, or if the file system refuses locks.
  FileLock(const std::string& target, double timeout_seconds, const std::string& what);
  ~FileLock() { release(); }
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  bool held() const noexcept { return fd_ >= 0; }
  const std::string& path() const noexcept { return path_; }
  /// What the lock file holds while the job writes ("shardops pid P on host H").
  const std::string& text() const noexcept { return text_; }
  /// \brief Marks the lock file as the commit's: what it holds is no longer text(), so no
  /// rank cuts the target back from here on (CleanupTruncate). Before the commit changes
  /// the target; never throws (a failure leaves the lock as it was).
  void mark_committing() noexcept;
  /// Removes the lock file and drops the lock; never throws.
  void release() noexcept;
  /// \brief Makes release() leave the lock file: beside a change a dead job left that this
  /// job could not undo, it tells every later reader to look for it (uncommitted_change_of).
  void keep_file() noexcept { keep_file_ = true; }

 private:
  std::string path_;
  std::string text_;
  int fd_ = -1;
  bool keep_file_ = false;
};

/// The lock file of \p target: "DIR/.NAME.shardops-lock".
std::string lock_path_of(const std::string& target);

/// \brief Whether another open file holds an flock on \p path that a lock of this kind
/// (\p exclusive: any lock is in its way; shared: an exclusive one is) would wait for, tried
/// without waiting and dropped at once. False if \p path cannot be opened or its file system
/// has no locks. \p holder, if given, gets what the holder wrote into the file (a lock file's
/// "shardops pid P on host H").
bool lock_held_elsewhere(const std::string& path, bool exclusive, std::string* holder = nullptr);

/// \brief Removes the lock file of \p target (resolved) where no job holds it: the one a job
/// killed after its commit left behind, empty and harmless, which only the next job writing
/// \p target removed until then. Locked first, without waiting, and removed while locked, as
/// release() does: a job opening it meanwhile finds the name gone and takes a new one. Nothing
/// where a job holds it, or where this user cannot remove it. Never throws.
void remove_stale_lock(const std::string& target) noexcept;

/// \brief "shardops pid P on host H" if a shardops job holds the write lock of \p file
/// (as named, links resolved), else "". Takes no lock.
std::string shardops_writer_of(const std::string& file);

/// \brief Whether HDF5 programs lock the files they open: false where
/// HDF5_USE_FILE_LOCKING is FALSE (or 0), which turns HDF5's locks off.
bool hdf5_file_locking();

}  // namespace shardops::io
