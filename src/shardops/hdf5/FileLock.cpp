#include "shardops/hdf5/FileLock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "shardops/core/Error.hpp"
#include "shardops/core/NumberText.hpp"
#include "shardops/core/Progress.hpp"
#include "shardops/core/Settings.hpp"
#include "shardops/hdf5/FileSystem.hpp"

namespace shardops::io {

double lock_timeout_seconds() { return seconds_setting("SHARDOPS_LOCK_TIMEOUT").value_or(300.0); }

std::string gave_up_text(double waited) {
  return "gave up after " + fixed_text(waited, waited < 10 ? 1 : 0) +  // 0.5, 300
         " s (SHARDOPS_LOCK_TIMEOUT sets how long to wait)";
}

std::string lock_path_of(const std::string& target) { return hidden_path_beside(target, ".shardops-lock"); }

namespace {

// "pid P on host H": who holds the lock, as the holder wrote it into the lock file.
std::string holder_of(int fd) {
  char buffer[256] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  std::string text = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text.empty() ? std::string("another process") : text;
}

}  // namespace

FileLock::FileLock(const std::string& target, double timeout_seconds, const std::string& what)
    : path_(lock_path_of(target)) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto waited = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  bool told = false;
  for (;;) {
    // Any user's job may have left the file (killed before it removed it): one that cannot
    // be written is locked read-only (flock needs no write access), else a job of another
    // user could not write the target until the first user ran a job there again.
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EACCES) fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    // Readable by every user whatever this one's umask, so that their jobs can open it to wait
    // their turn, and readers see it held (it holds a process's name, nothing of the target).
    struct stat st {};
    if (fd >= 0 && ::fstat(fd, &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & 0444) != 0444)
      static_cast<void>(::fchmod(fd, (st.st_mode & 07777) | 0444));
    if (fd < 0) {
      const int err = errno;
      const std::string owner = err == EACCES ? other_owner_of_unreadable(path_) : "";
      if (!owner.empty()) {
        throw IOError(what + ": the lock file '" + path_ + "' was left by a job of " + owner +
                      " and is not readable for this user (an earlier shardops made it so under a umask like 077); " +
                      owner + " or root can remove it, when no job of theirs is writing '" + target + "'");
      }
      throw IOError(what + ": cannot create the lock file '" + path_ + "': " + std::strerror(err) +
                    (err == EMFILE ? descriptor_shortage_text() : ""));
    }
    // Poll with a non-blocking lock: a blocking flock could not be given up on time.
    for (;;) {
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
      const int err = errno;
      if (err == EINTR) continue;
      if (err != EWOULDBLOCK) {
        ::close(fd);
        throw IOError(what + ": the file system refuses a lock on '" + path_ + "' (" + std::strerror(err) +
                      "); shardops needs one to keep concurrent jobs from losing each other's datasets");
      }
      if (waited() >= timeout_seconds) {
        const std::string holder = holder_of(fd);
        ::close(fd);
        throw IOError(what + ": '" + target + "' is being written by " + holder + "; " + gave_up_text(waited()));
      }
      if (!told && waited() >= 1.0 && progress_on()) {  // -v: a wait is not a slow write
        told = true;
        const std::string note = "waiting for '" + target + "', which " + holder_of(fd) + " is writing (up to " +
                                 std::to_string(static_cast<long long>(timeout_seconds)) + " s, SHARDOPS_LOCK_TIMEOUT)";
        progress_note(note.c_str());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (still_named(fd, path_)) {
      fd_ = fd;
      break;
    }
    ::close(fd);  // the holder removed it as we waited: lock the new one
  }
  text_ = "shardops " + this_process_text() + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, text_.data(), text_.size(), 0) < 0) {
    // A waiter's message depends on it, and the cuts of a stop signal (which then make none).
  }
}

void FileLock::mark_committing() noexcept {
  if (fd_ < 0) return;
  const std::string marked = "shardops committing: " + text_;
  // One write over the text, longer than it: no moment holds text() exactly.
  static_cast<void>(::pwrite(fd_, marked.data(), marked.size(), 0));
}

namespace {
// An flock of the open file \p fd, tried without waiting: 0, or flock's errno.
int try_flock(int fd, bool exclusive) {
  while (::flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}
}  // namespace

bool lock_held_elsewhere(const std::string& path, bool exclusive, std::string* holder) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  const bool held = try_flock(fd, exclusive) == EWOULDBLOCK;
  if (held && holder != nullptr) *holder = holder_of(fd);
  ::close(fd);  // drops the lock, if it was taken
  return held;
}

void remove_stale_lock(const std::string& target) noexcept {
  try {
    const std::string path = lock_path_of(target);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return;
    if (try_flock(fd, true) == 0 && still_named(fd, path)) static_cast<void>(::unlink(path.c_str()));
    ::close(fd);
  } catch (...) {
    // a name that cannot be made: nothing to remove
  }
}

std::string shardops_writer_of(const std::string& file) {
  std::string holder;
  try {
    if (lock_held_elsewhere(lock_path_of(resolved_path(file, file)), false, &holder)) return holder;
  } catch (const Error&) {
    // a loop of links: opening the file reports it
  }
  return "";
}

bool hdf5_file_locking() {
  const char* use = std::getenv("HDF5_USE_FILE_LOCKING");
  return use == nullptr || (std::strcmp(use, "FALSE") != 0 && std::strcmp(use, "0") != 0);
}

FileLock::FileLock(FileLock&& other) noexcept
    : path_(std::move(other.path_)),
      text_(std::move(other.text_)),
      fd_(std::exchange(other.fd_, -1)),
      keep_file_(other.keep_file_) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    text_ = std::move(other.text_);
    fd_ = std::exchange(other.fd_, -1);
    keep_file_ = other.keep_file_;
  }
  return *this;
}

void FileLock::release() noexcept {
  if (fd_ < 0) return;
  // Unlink while holding the lock: a waiter then finds the name gone and starts again.
  if (!keep_file_) ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace shardops::io
