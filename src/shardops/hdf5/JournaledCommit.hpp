#pragma once
/// \file
/// \brief Changing an existing HDF5 file in place, all or nothing: an undo journal.
///
/// HDF5 1.10 has no transactions: adding datasets to a file rewrites some of its
/// metadata where it lies (the superblock, the root group's heap and B-tree), and a
/// process killed half way through could leave a file whose old datasets are lost.
/// JournaledCommit opens the file through a file driver of ours that:
///  - writes bytes past the file's original length L straight into the file (until the
///    commit nothing reaches them: HDF5 ignores bytes past the end it records, and
///    they are cut off again by a roll-back);
///  - holds back every write below L; when the file is closed (or the held-back bytes
///    pass a bound), it first appends the original bytes of those ranges to the journal
///    ".NAME.shardops-journal.TOKEN" (checksummed records, flushed to disk), then
///    writes them into the file.
/// The journal is removed once the file is closed: that is the commit point. Until
/// then a roll-back (by this job after an error, or by the next job writing the file
/// after a crash) writes the saved bytes back in reverse order and cuts the file to L,
/// which gives the file as it was, byte for byte.

#include <hdf5.h>

#include <cstddef>
#include <memory>
#include <string>

namespace shardops::io {

/// \brief One in-place change of \p target (a resolved path). Not collective: one rank
/// (rank 0) runs it, holding the target's FileLock.
class JournaledCommit {
 public:
  /// \brief Creates the journal beside \p target. \p durable: flush the journal and the
  /// file to disk before each step that relies on them (fsync).
  /// \throws IOError naming \p what if the journal cannot be created.
  JournaledCommit(const std::string& target, bool durable, const std::string& what);
  /// Rolls back unless finish() was called.
  ~JournaledCommit();
  JournaledCommit(const JournaledCommit&) = delete;
  JournaledCommit& operator=(const JournaledCommit&) = delete;

  /// A file access property list that opens the target through the journal.
  hid_t file_access() const noexcept;
  /// The journal's path (it exists until finish() or a roll-back).
  const std::string& journal_path() const noexcept;
  /// \brief After the file was closed without error: removes the journal, the commit
  /// point. \throws IOError if a held-back write failed (the file is rolled back).
  /// The same as prepare(), then discard().
  void finish();
  /// \brief After the file was closed without error: checks that every held-back write
  /// succeeded and closes the journal, which stays: the change is complete on disk and
  /// can still be rolled back (a commit of several files, JobCommit.hpp, keeps every
  /// file's journal until its own commit point). \throws IOError as finish().
  void prepare();
  /// Removes the journal, after prepare(): the change stands. Never throws.
  void discard() noexcept;
  /// \brief Whether held-back writes are applied (journaled first) once they pass a bound,
  /// to keep memory bounded (the default), or all held until the file is closed: then
  /// nothing below the original length changes before the close, and cutting the file
  /// back to that length undoes everything (what a stop signal's handler can do).
  void set_early_apply(bool allowed) noexcept;
  /// \brief Changes the \p n bytes at \p address, below the original length, to \p bytes, as
  /// a write HDF5 makes there through file_access() does: held back, then journaled and
  /// applied with HDF5's own. For a dataset's raw data (the rows of a contiguous dataset
  /// changed in place), which HDF5 does not cache: the handle must not read it after.
  /// \throws IOError naming \p what if the range reaches past the original length, or the
  /// bytes cannot be held.
  void change(long long address, const void* bytes, std::size_t n, const std::string& what);
  /// Makes the driver drop every further write and apply nothing at close (which then
  /// succeeds): for closing an HDF5 handle of the file before a roll-back. Never throws.
  void cancel() noexcept;
  /// The file's length before the change.
  long long original_length() const noexcept;
  /// Restores the file as it was and removes the journal; never throws.
  void roll_back() noexcept;

  struct Session;

 private:
  std::unique_ptr<Session> session_;
};

/// \brief Rolls back what a journal says about \p target: restores the saved bytes, cuts
/// the file to its original length, removes the journal. A journal that does not belong to
/// \p target, or is unreadable, is only removed. \p dead_job (a journal left by a job that
/// died): only if the file is as that job left it (its length, the fingerprint of its head);
/// a file another program changed since keeps that change, and the journal is removed.
/// Never throws. Returns true if the file was changed back.
bool roll_back_journal(const std::string& target, const std::string& journal, bool dead_job = true) noexcept;

/// \brief Whether roll_back_journal(\p target, \p journal) would change \p target back: the
/// journal is \p target's and the file is as its dead job left it, or the journal is there
/// but this user may not read it (another user's job left it: that cannot be told). A job
/// that finds this after the clean-up (which a user without write access to the file, or
/// without read access to the journal, cannot do) must neither read nor write the file.
/// Never throws.
bool journal_still_applies(const std::string& target, const std::string& journal) noexcept;

/// The name prefix of \p target's journals: ".NAME.shardops-journal.".
std::string journal_prefix_of(const std::string& target);

}  // namespace shardops::io
