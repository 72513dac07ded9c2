#pragma once
/// \file
/// \brief One commit point for a job's outputs in several files (docs/output-safety.md).
///
/// Each file's own commit is atomic: a rename of a new file, or an in-place change with
/// an undo journal (JournaledCommit). A job that writes several files needs all of them
/// to change, or none. So, before any target changes, rank 0 writes an undo record
/// ".NAME.shardops-undo.TOKEN" beside the first target, listing the targets, and beside
/// each target, before it changes, a note ".NAME.shardops-member.TOKEN" that says how to
/// undo that file's change (roll its journal back, or remove the file it renamed into
/// place) and where the record is. Every file is then changed, its journal kept. Removing
/// the undo record is the job's commit point; the journals and notes go after it.
///
/// A job that dies before that point leaves the record: the next job that writes any of
/// the files finds the note beside it, undoes that file's change, and removes the record
/// once no note of it is left. A job that dies after it leaves notes whose record is
/// gone: the next job writing there drops the journal and keeps the change.

#include <sys/types.h>

#include <string>
#include <vector>

namespace shardops::io {

/// \brief The undo record of one job's commit into several target files. Not
/// collective: rank 0 runs it, holding every target's FileLock.
class JobCommit {
 public:
  /// \brief Writes the undo record for \p targets (resolved paths), beside the first.
  /// \p durable: flush the record and the notes to disk (fsync) before anything relies
  /// on them. \throws IOError naming \p what if the record cannot be written.
  JobCommit(std::vector<std::string> targets, bool durable, const std::string& what);
  /// Not committed: removes the notes and the record (the caller has undone the changes).
  ~JobCommit();
  JobCommit(const JobCommit&) = delete;
  JobCommit& operator=(const JobCommit&) = delete;

  /// \brief Before target \p i is changed in place through \p journal: notes how to undo
  /// it. \throws IOError if the note cannot be written.
  void note_journal(std::size_t i, const std::string& journal);
  /// \brief Before \p temp is renamed to target \p i: notes the new file (by its inode,
  /// so an undo removes that file and no other). \throws IOError as above.
  void note_new_file(std::size_t i, const std::string& temp);
  /// Removes the target files that note_new_file() noted and that are still those files;
  /// never throws. For undoing after a failure, before the destructor.
  void remove_new_files() noexcept;
  /// \brief The commit point: removes the undo record. Then the caller drops the
  /// journals and calls remove_notes().
  void commit();
  /// Removes the notes (after commit(), once the journals are gone); never throws.
  void remove_notes() noexcept;

 private:
  struct Note {
    std::string path;  ///< the note file ("" until written)
    std::string kind;  ///< "journal" or "new"
    std::string file;  ///< the journal, or the new file (renamed to the target)
    dev_t device = 0;  ///< "new": the new file's device and inode
    ino_t inode = 0;
  };
  void write_note(std::size_t i, Note note);

  std::vector<std::string> targets_;
  std::string token_, record_, what_;
  bool durable_ = true, committed_ = false;
  std::vector<Note> notes_;
};

/// \brief Rank 0, holding \p target's lock: settles what jobs that died committing
/// several files left beside \p target (see the file comment): undoes the file's change
/// if their commit point had not passed, else drops the journal; removes the notes, and
/// a record no note refers to any more. Runs before the journals and new files of
/// single-file commits are cleaned up. Never throws.
void settle_job_commits(const std::string& target) noexcept;

/// \brief Rank 0, holding \p target's lock: undoes everything jobs that died while
/// writing it left behind: settle_job_commits(), then the journals of unfinished
/// single-file commits are rolled back and new files never committed removed. Never throws.
void clean_up_after_dead_jobs(const std::string& target) noexcept;

/// \brief What beside \p target says that its bytes may hold a change no job committed:
/// a journal or a note of a commit of several files. Empty once clean_up_after_dead_jobs()
/// ran; until then a reader of \p target could read that change. Takes no lock; looks only
/// where the file's lock file is (a job that dies holding the lock leaves it).
std::vector<std::string> uncommitted_change_of(const std::string& target);

/// \brief After clean_up_after_dead_jobs(\p target): a journal or note beside \p target whose
/// change is still in the file (the clean-up could not undo it: no write access to the file
/// or its folder), or "" if none. A commit whose point passed holds no change to undo; a
/// journal whose file changed since its job is never applied. Never throws.
std::string uncommitted_change_left(const std::string& target) noexcept;

/// \brief Why a job must not read or write \p file (as the user gave it): \p left
/// (uncommitted_change_left) holds a change this user cannot undo, and whose job can.
std::string uncommitted_change_text(const std::string& file, const std::string& left);

}  // namespace shardops::io
