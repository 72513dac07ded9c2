#include "shardops/hdf5/InputWatch.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "shardops/core/Error.hpp"
#include "shardops/hdf5/FileAccess.hpp"
#include "shardops/hdf5/FileLock.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/hdf5/JobCommit.hpp"
#include "shardops/hdf5/Provenance.hpp"

namespace shardops::io {

namespace {

// How every "changed while read" error ends.
constexpr const char* kReadAgain =
    " while this job read it (another job or program wrote it), so what the job read may mix old and new data; "
    "nothing was written: run the job again";
// The same for a dataset the job read into memory and writes over (InputWatch::will_write).
constexpr const char* kChangeWouldBeLost =
    " after this job read it (another job or program wrote it), and this job writes over it: that change would be "
    "lost under this job's; nothing was written: run the job again";

// The same for a dataset that an earlier call of this process read (written_over_since).
constexpr const char* kChangedSinceRead =
    " after this program read it (another job or program wrote it since), and this write replaces it: that change "
    "would be lost; nothing was written: read the dataset again and redo the change";

// "the input dataset 'F:/x' was written anew (shardops: written ...)": \p written is the new
// dataset's written_comment(), if it has one.
std::string written_anew(const std::string& file, const std::string& path, const std::string& written) {
  return "the input dataset '" + file + ":" + path + "' was written anew" +
         (written.empty() ? std::string() : " (" + written + ")");
}

long long nanoseconds(const timespec& t) { return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec; }

// Whether this very process holds an exclusive flock on \p file: a Python program's own h5py
// with the file open for writing, which orders its own calls. /proc/locks names each lock's
// process and file ("1: FLOCK  ADVISORY  WRITE PID MAJOR:MINOR:INODE 0 EOF", in hex but
// the inode).
bool locked_by_this_process(const std::string& file) {
  struct stat s {};
  if (::stat(file.c_str(), &s) != 0) return false;
  char where[64] = {};
  std::snprintf(where, sizeof where, "%02x:%02x:%llu", major(s.st_dev), minor(s.st_dev),
                static_cast<unsigned long long>(s.st_ino));
  const std::string pid = std::to_string(::getpid());
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream words(line);
    std::string id, kind, advisory, mode, holder, file_id;
    if (words >> id >> kind >> advisory >> mode >> holder >> file_id && kind == "FLOCK" && mode == "WRITE" &&
        holder == pid && file_id == where)
      return true;
  }
  return false;
}

// Waits while \p file is locked for writing by a shardops job (returns at once instead if not
// \p wait_for_jobs); throws if by another program.
void wait_for_writers(const std::string& file, const std::string& what, bool wait_for_jobs) {
  if (!hdf5_file_locking() || (lock_held_elsewhere(file, false) && locked_by_this_process(file))) return;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const double timeout = lock_timeout_seconds();
  // A writer that ends its commit drops HDF5's lock and its own a moment apart: another
  // program's lock is one still held when the job's has been gone for a while.
  constexpr double kSettle = 1.0;
  auto job_seen = Clock::now();
  while (lock_held_elsewhere(file, false)) {
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string writer = shardops_writer_of(file);
    if (!writer.empty()) {
      if (!wait_for_jobs) return;
      job_seen = Clock::now();
      if (waited >= timeout) {
        throw IOError(what + ": '" + file + "' is being written by " + writer + "; " + gave_up_text(waited));
      }
    } else if (std::chrono::duration<double>(Clock::now() - job_seen).count() >= kSettle) {
      throw IOError(what + ": '" + file +
                    "' is open for writing in another program (HDF5's file lock is held by a writer), so what it "
                    "holds may be half-written; close it there and run again (HDF5_USE_FILE_LOCKING=FALSE reads it "
                    "anyway)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// A shardops job killed before its commit point can leave \p file changed, with the journal
// or note that undoes the change beside it (docs/output-safety.md). That change was never
// committed: it is undone before the file is read, as the next job writing the file would,
// holding the file's lock (a job committing right now holds it too: this waits for it). \p target
// is \p file resolved.
void undo_uncommitted_change(const std::string& file, const std::string& target, const std::string& what) {
  const std::vector<std::string> found = uncommitted_change_of(target);
  if (found.empty()) return;
  std::string left;
  try {
    FileLock lock(target, lock_timeout_seconds(), what);
    clean_up_after_dead_jobs(target);
    left = uncommitted_change_left(target);
    if (!left.empty()) lock.keep_file();
  } catch (const Error& e) {
    throw IOError(what + ": '" + file + "' may hold a change that no shardops job committed ('" + found.front() +
                  "' beside it), which must be undone before the file is read, under the file's lock: " + e.what());
  }
  // The clean-up needs write access to the file and its folder; a reader without it would
  // read the change as if it had been committed.
  if (!left.empty()) throw IOError(what + ": " + uncommitted_change_text(file, left));
}

}  // namespace

void InputWatch::read_from(const std::string& file) {
  if (comm_.rank() == 0 && std::find(files_read_.begin(), files_read_.end(), file) == files_read_.end())
    files_read_.push_back(file);
}

void InputWatch::opening(const std::string& file, const std::string& what) {
  if (comm_.rank() != 0) return;
  read_from(file);
  if (std::any_of(watched_.begin(), watched_.end(), [&](const Watched& w) { return w.file == file; })) return;
  wait_for_writers(file, what, true);
  const std::string target = resolved_path(file, what);
  undo_uncommitted_change(file, target, what);
  remove_stale_lock(target);
  Identity identity;
  if (identity_of(file, identity)) watched_.push_back(Watched{file, identity, {}});  // else the open reports why
}

bool InputWatch::identity_of(const std::string& file, Identity& out) {
  struct stat s {};
  if (::stat(file.c_str(), &s) != 0) return false;
  out = Identity{static_cast<unsigned long long>(s.st_dev), static_cast<unsigned long long>(s.st_ino),
                 static_cast<long long>(s.st_size), nanoseconds(s.st_mtim), nanoseconds(s.st_ctim)};
  return true;
}

InputWatch::Mark InputWatch::mark_of(const std::string& path, hid_t dataset) {
  Mark m;
  m.path = path;
  H5O_info_t info;
  if (H5Oget_info2(dataset, &info, H5O_INFO_BASIC) >= 0) m.object = info.addr;
  m.data = H5Dget_offset(dataset);
  m.bytes = H5Dget_storage_size(dataset);
  m.written = comment_of(dataset);
  hdf5_error_detail();  // clear the stack (a contiguous offset of a chunked dataset, say)
  return m;
}

void InputWatch::reading(const std::string& file, const std::string& path, hid_t dataset) {
  if (comm_.rank() != 0) return;
  for (Watched& w : watched_) {
    if (w.file != file) continue;
    Mark m = mark_of(path, dataset);
    const auto before =
        std::find_if(w.marks.begin(), w.marks.end(), [&](const Mark& noted) { return noted.path == path; });
    if (before == w.marks.end()) {
      w.marks.push_back(std::move(m));
    } else if (*before == m) {
      before->in_use = true;
    } else {
      throw IOError(written_anew(file, path, m.written) + kReadAgain);
    }
  }
}

void InputWatch::mapped(const std::string& file, const std::string& path) {
  for (Watched& w : watched_) {
    if (w.file != file) continue;
    for (Mark& m : w.marks)
      if (m.path == path) m.is_mapped = true;
  }
}

void InputWatch::check(Watched& w) {
  Identity now;
  const bool exists = identity_of(w.file, now);
  // Nothing read from it is still in use (rows read are checked and let go: read_done).
  const bool in_use = std::any_of(w.marks.begin(), w.marks.end(), [](const Mark& m) { return m.in_use; });
  if (!in_use || (exists && now == w.identity)) return;
  if (!exists) throw IOError("the input file '" + w.file + "' was removed" + kReadAgain);
  if (now.device != w.identity.device || now.inode != w.identity.inode)
    throw IOError("the input file '" + w.file + "' was replaced by another file" + kReadAgain);
  // A program that is writing the file now may have written into a dataset where it lies,
  // which no comparison below can see. A shardops job is not waited for here: this job may
  // hold the lock of a file that job waits to read.
  wait_for_writers(w.file, "the input file '" + w.file + "' changed while this job read it", false);
  // Changed in place: another job may have added datasets, which harms none read. A commit
  // being applied at this moment may show half-written metadata: a few tries.
  std::string problem;
  const char* tail = kReadAgain;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    problem.clear();
    tail = kReadAgain;
    try {
      const FileHandle f = open_serial(w.file, H5F_ACC_RDONLY, "cannot open it again");
      const PropListHandle access = serial_link_access();  // a dataset read through a link into its file
      for (const Mark& m : w.marks) {
        if (!m.in_use) continue;
        const DatasetHandle d(H5Dopen2(f.get(), m.path.c_str(), access.get()));
        if (m.written_over) tail = m.read_earlier ? kChangedSinceRead : kChangeWouldBeLost;
        if (!d.valid()) {
          hdf5_error_detail();
          problem = "the input dataset '" + w.file + ":" + m.path + "' was removed";
          break;
        }
        const Mark found = mark_of(m.path, d.get());
        if (!(found == m)) {
          problem = written_anew(w.file, m.path, found.written);
          break;
        }
        tail = kReadAgain;
      }
    } catch (const Error& e) {
      problem = "the input file '" + w.file + "' changed, and looking at it again failed: " + e.what();
    }
    if (problem.empty()) {
      w.identity = now;
      return;
    }
  }
  throw IOError(problem + tail);
}

void InputWatch::check_unchanged() {
  for (Watched& w : watched_) check(w);
}

void InputWatch::will_write(const std::string& file, const std::string& path) {
  if (comm_.rank() == 0) written_.emplace_back(file, path);
}

bool InputWatch::rewritten(const std::string& file, const std::string& path) const {
  return std::any_of(written_.begin(), written_.end(), [&](const std::pair<std::string, std::string>& out) {
    const bool below =
        path == out.second || (path.size() > out.second.size() && path.compare(0, out.second.size(), out.second) == 0 &&
                               path[out.second.size()] == '/');
    return below && (file == out.first || same_file(file, out.first));
  });
}

void InputWatch::read_done(const std::string& file, const std::string& path) {
  run_agreed(comm_, [&] {
    for (Watched& w : watched_) {
      if (w.file != file) continue;
      check(w);
      // Its rows are in memory now: a later change to the file no longer matters to them,
      // unless this job writes over them (will_write).
      for (Mark& m : w.marks) {
        if (m.path != path || m.is_mapped) continue;
        m.written_over = rewritten(w.file, m.path);
        if (!m.written_over) m.in_use = false;
      }
    }
  });
}

std::vector<InputWatch::ReadNote> InputWatch::read_notes() const {
  std::vector<ReadNote> notes;
  for (const Watched& w : watched_) {
    for (const Mark& m : w.marks) notes.push_back(ReadNote{w.file, w.identity, m});
  }
  return notes;
}

void InputWatch::written_over_since(const ReadNote& note) {
  if (comm_.rank() != 0) return;
  Mark m = note.mark;
  m.in_use = m.written_over = m.read_earlier = true;
  m.is_mapped = false;
  watched_.push_back(Watched{note.file, note.identity, {std::move(m)}});
}

void InputWatch::writing(const std::string& target) {
  Identity t;
  if (!identity_of(target, t)) return;
  for (auto it = watched_.begin(); it != watched_.end();) {
    if (it->identity.device == t.device && it->identity.inode == t.inode) {
      check(*it);
      it = watched_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace shardops::io
