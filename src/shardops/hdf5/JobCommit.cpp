#include "shardops/hdf5/JobCommit.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include "shardops/core/Error.hpp"
#include "shardops/hdf5/FileLock.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/JournaledCommit.hpp"

namespace shardops::io {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRecordMagic = "SHOPUND1";
constexpr const char* kNoteMagic = "SHOPJOB1";
constexpr const char* kRecordInfix = ".shardops-undo.";
constexpr const char* kNoteInfix = ".shardops-member.";

// Fields end with a NUL byte: paths cannot hold one.
std::string encode(const std::vector<std::string>& fields) {
  std::string out;
  for (const std::string& f : fields) out.append(f).push_back('\0');
  return out;
}

std::vector<std::string> decode(const std::string& bytes) {
  std::vector<std::string> fields;
  std::size_t at = 0;
  for (std::size_t nul = bytes.find('\0'); nul != std::string::npos; nul = bytes.find('\0', at)) {
    fields.push_back(bytes.substr(at, nul - at));
    at = nul + 1;
  }
  return fields;
}

bool read_whole(const std::string& path, std::string& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

// The fields of the note at \p path: {magic, record, kind ("journal" or "new"), file,
// device, inode}; empty for a note that is not whole (being written when its job died,
// before the file changed).
std::vector<std::string> read_note(const std::string& path) {
  std::string bytes;
  std::vector<std::string> f = read_whole(path, bytes) ? decode(bytes) : std::vector<std::string>();
  if (f.size() != 6 || f[0] != kNoteMagic) f.clear();
  return f;
}

// Whether \p target is the new file that \p note (read_note) says its job put in place.
bool is_noted_new_file(const std::string& target, const std::vector<std::string>& note) {
  struct stat st {};
  return note[2] == "new" && ::stat(target.c_str(), &st) == 0 &&
         std::to_string(static_cast<unsigned long long>(st.st_dev)) == note[4] &&
         std::to_string(static_cast<unsigned long long>(st.st_ino)) == note[5];
}

// Creates \p path holding \p bytes (never over an existing file), flushed with \p durable.
void write_new(const std::string& path, const std::string& bytes, bool durable, const std::string& what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw IOError(what + ": cannot create '" + path + "': " + std::strerror(errno));
  // Names and inodes only: readable by a job of another user that undoes a killed job's change.
  static_cast<void>(::fchmod(fd, S_IRUSR | S_IWUSR | S_IRGRP | S_IROTH));
  const bool ok = write_all(fd, bytes.data(), bytes.size(), 0) && (!durable || ::fsync(fd) == 0);
  const int err = errno;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    throw IOError(what + ": cannot write '" + path + "': " + std::strerror(err));
  }
  if (durable) sync_dir_of(path);
}

// The token of a record's name (".NAME.shardops-undo.TOKEN").
std::string token_of(const std::string& record) {
  const std::string name = fs::path(record).filename().string();
  const std::size_t at = name.rfind(kRecordInfix);
  return at == std::string::npos ? std::string() : name.substr(at + std::strlen(kRecordInfix));
}

// Removes \p record once no target it lists has a note of it left.
void remove_record_if_unreferenced(const std::string& record) noexcept {
  try {
    std::string bytes;
    if (!read_whole(record, bytes)) return;
    const std::vector<std::string> fields = decode(bytes);
    const std::string token = token_of(record);
    if (!fields.empty() && fields[0] == kRecordMagic && !token.empty()) {
      for (std::size_t i = 1; i < fields.size(); ++i) {
        if (path_exists(hidden_path_beside(fields[i], kNoteInfix + token))) return;
      }
    }
    remove_quietly(record);
  } catch (...) {
  }
}

}  // namespace

JobCommit::JobCommit(std::vector<std::string> targets, bool durable, const std::string& what)
    : targets_(std::move(targets)), token_(unique_token()), what_(what), durable_(durable), notes_(targets_.size()) {
  if (targets_.empty()) throw InternalError("JobCommit without targets");
  record_ = hidden_path_beside(targets_[0], kRecordInfix + token_);
  std::vector<std::string> fields{kRecordMagic};
  fields.insert(fields.end(), targets_.begin(), targets_.end());
  write_new(record_, encode(fields), durable_, what_);
}

JobCommit::~JobCommit() {
  if (committed_) return;
  remove_notes();
  remove_quietly(record_);
  if (durable_) sync_dir_of(record_);
}

void JobCommit::write_note(std::size_t i, Note note) {
  if (i >= targets_.size()) throw InternalError("JobCommit: no target " + std::to_string(i));
  note.path = hidden_path_beside(targets_[i], kNoteInfix + token_);
  write_new(
      note.path,
      encode({kNoteMagic, record_, note.kind, note.file, std::to_string(static_cast<unsigned long long>(note.device)),
              std::to_string(static_cast<unsigned long long>(note.inode))}),
      durable_, what_);
  notes_[i] = std::move(note);
}

void JobCommit::note_journal(std::size_t i, const std::string& journal) {
  Note note;
  note.kind = "journal";
  note.file = journal;
  write_note(i, std::move(note));
}

void JobCommit::note_new_file(std::size_t i, const std::string& temp) {
  struct stat st {};
  if (::stat(temp.c_str(), &st) != 0) throw IOError(what_ + ": cannot stat '" + temp + "': " + std::strerror(errno));
  Note note;
  note.kind = "new";
  note.file = temp;
  note.device = st.st_dev;
  note.inode = st.st_ino;
  write_note(i, std::move(note));
}

void JobCommit::remove_new_files() noexcept {
  for (std::size_t i = 0; i < notes_.size(); ++i) {
    const Note& n = notes_[i];
    if (n.path.empty() || n.kind != "new") continue;
    struct stat st {};
    if (::stat(targets_[i].c_str(), &st) == 0 && st.st_dev == n.device && st.st_ino == n.inode) {
      ::unlink(targets_[i].c_str());
      if (durable_) sync_dir_of(targets_[i]);
    }
  }
}

void JobCommit::commit() {
  // The commit point: from here on every change stands.
  if (::unlink(record_.c_str()) != 0 && errno != ENOENT)
    throw IOError(what_ + ": cannot remove the undo record '" + record_ + "': " + std::strerror(errno));
  if (durable_) sync_dir_of(record_);
  committed_ = true;
}

void JobCommit::remove_notes() noexcept {
  for (Note& n : notes_) {
    if (!n.path.empty()) remove_quietly(n.path);
    n.path.clear();
  }
}

void settle_job_commits(const std::string& target) noexcept {
  try {
    for (const std::string& note_path : leftovers_of(target, kNoteInfix)) {
      const std::vector<std::string> f = read_note(note_path);
      // A note that is not whole: nothing to undo here (a journal it was about to name is
      // rolled back as any journal without a note).
      if (!f.empty()) {
        const std::string& record = f[1];
        const bool undo = path_exists(record);
        if (f[2] == "journal") {
          if (undo) {
            roll_back_journal(target, f[3]);
          } else {
            remove_quietly(f[3]);
          }
        } else if (undo && is_noted_new_file(target, f)) {
          ::unlink(target.c_str());
        }
        remove_quietly(note_path);
        if (undo) remove_record_if_unreferenced(record);
      } else {
        remove_quietly(note_path);
      }
    }
    // A record beside this target whose job died before it wrote any note.
    for (const std::string& record : leftovers_of(target, kRecordInfix)) remove_record_if_unreferenced(record);
  } catch (...) {
  }
}

void clean_up_after_dead_jobs(const std::string& target) noexcept {
  settle_job_commits(target);  // first: a commit of several files decides what its journals mean
  try {
    for (const std::string& journal : leftovers_of(target, ".shardops-journal.")) roll_back_journal(target, journal);
    for (const std::string& temp : leftovers_of(target, ".shardops-tmp.")) remove_quietly(temp);
  } catch (...) {
  }
}

std::string uncommitted_change_left(const std::string& target) noexcept {
  try {
    std::vector<std::string> settled;  // journals of commits whose point passed: nothing to undo
    for (const std::string& note_path : leftovers_of(target, kNoteInfix)) {
      const std::vector<std::string> f = read_note(note_path);
      if (f.empty()) continue;
      if (!path_exists(f[1])) {
        if (f[2] == "journal") settled.push_back(f[3]);
        continue;
      }
      if (f[2] == "journal" ? journal_still_applies(target, f[3]) : is_noted_new_file(target, f)) return note_path;
    }
    for (const std::string& journal : leftovers_of(target, ".shardops-journal.")) {
      if (std::find(settled.begin(), settled.end(), journal) == settled.end() && journal_still_applies(target, journal))
        return journal;
    }
  } catch (...) {
  }
  return {};
}

std::string uncommitted_change_text(const std::string& file, const std::string& left) {
  // A journal of another user's job that this user may not read: that user (or root) can
  // undo it; otherwise any user who may write the file and its folder can.
  const std::string maker = other_owner_of_unreadable(left);
  return "'" + file + "' holds a change that no shardops job committed ('" + left +
         "' beside it), which this user cannot undo (" +
         (maker.empty() ? std::string("the file or its folder is not writable for it); a shardops job of a user who "
                                      "may write the file undoes it")
                        : "it was left by a job of " + maker + " and is not readable for this user); a shardops job " +
                              "of " + maker + " or of root undoes it") +
         " when it reads or writes the file";
}

std::vector<std::string> uncommitted_change_of(const std::string& target) {
  // A job writes journals and notes only while it holds the file's lock, and a job that
  // dies holding it leaves the lock file with them: where there is none, there is nothing to
  // look for (readers ask for every input file; a folder may hold many files).
  if (!path_exists(lock_path_of(target))) return {};
  // One look at the folder: every leftover, then the journals and notes among them.
  const std::size_t stem = hidden_stem(target).size();
  std::vector<std::string> found;
  for (std::string& path : leftovers_of(target, ".shardops-")) {
    const std::string name = fs::path(path).filename().string();
    if (name.compare(stem, std::strlen(".shardops-journal."), ".shardops-journal.") == 0 ||
        name.compare(stem, std::strlen(kNoteInfix), kNoteInfix) == 0)
      found.push_back(std::move(path));
  }
  return found;
}

}  // namespace shardops::io
