#include "shardops/hdf5/InputWatch.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "shardops/core/Error.hpp"
#include "shardops/hdf5/FileLock.hpp"

namespace shardops::io {

namespace {

long long nanoseconds(const struct timespec& t) { return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec; }

std::optional<struct stat> stat_of(const std::string& file) {
  struct stat s {};
  if (::stat(file.c_str(), &s) != 0) return std::nullopt;
  return s;
}

// Whether some process holds an exclusive lock on \p file (a writer, in HDF5's scheme);
// false where it cannot be told (no such file, a file system without locks).
bool locked_for_writing(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  int status;
  do {
    status = ::flock(fd, LOCK_SH | LOCK_NB);
  } while (status != 0 && errno == EINTR);
  const bool busy = status != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // drops the shared lock, if taken
  return busy;
}

}  // namespace

void InputWatch::opening(const std::string& file, const std::string& what) {
  if (comm_.rank() != 0) return;
  if (std::any_of(noted_.begin(), noted_.end(), [&](const Identity& n) { return n.file == file; })) return;
  if (hdf5_file_locking()) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const double timeout = lock_timeout_seconds();
    // A writer that ends its commit drops HDF5's lock and its own a moment apart: another
    // program's lock is one still held when the job's has been gone for a while.
    constexpr double kSettle = 1.0;
    auto job_gone_since = Clock::now();
    while (locked_for_writing(file)) {
      const double waited = std::chrono::duration<double>(Clock::now() - start).count();
      const std::string writer = shardops_writer_of(file);
      if (!writer.empty()) {
        job_gone_since = Clock::now();
        if (waited >= timeout) {
          throw IOError(what + ": '" + file + "' is being written by " + writer + "; gave up waiting after " +
                        std::to_string(static_cast<long long>(waited)) +
                        " s (SHARDOPS_LOCK_TIMEOUT sets how long to wait)");
        }
      } else if (std::chrono::duration<double>(Clock::now() - job_gone_since).count() >= kSettle) {
        throw IOError(what + ": '" + file +
                      "' is open for writing in another program (HDF5's file lock is held by a writer), so what "
                      "it holds may be half-written; close it there and run again (HDF5_USE_FILE_LOCKING=FALSE "
                      "reads it anyway)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  const std::optional<struct stat> s = stat_of(file);
  if (!s) return;  // the open reports why
  noted_.push_back(Identity{file, static_cast<unsigned long long>(s->st_dev),
                            static_cast<unsigned long long>(s->st_ino), static_cast<long long>(s->st_size),
                            nanoseconds(s->st_mtim), nanoseconds(s->st_ctim)});
}

void InputWatch::check(const Identity& noted) {
  const std::optional<struct stat> s = stat_of(noted.file);
  const Identity now = s ? Identity{noted.file,
                                    static_cast<unsigned long long>(s->st_dev),
                                    static_cast<unsigned long long>(s->st_ino),
                                    static_cast<long long>(s->st_size),
                                    nanoseconds(s->st_mtim),
                                    nanoseconds(s->st_ctim)}
                         : Identity{noted.file};
  if (now == noted) return;
  throw IOError("the input file '" + noted.file + "' " + (s ? "changed" : "was removed") +
                " while this job read it (another program wrote it), so what the job read may be inconsistent; "
                "nothing was written: run the job again");
}

void InputWatch::check_unchanged(const std::string& file) const {
  for (const Identity& n : noted_) {
    if (file.empty() || n.file == file) check(n);
  }
}

void InputWatch::verify(const std::string& file) const {
  run_agreed(comm_, [&] { check_unchanged(file); });
}

void InputWatch::writing(const std::string& target) {
  const std::optional<struct stat> t = stat_of(target);
  if (!t) return;
  for (auto it = noted_.begin(); it != noted_.end();) {
    if (it->device == static_cast<unsigned long long>(t->st_dev) &&
        it->inode == static_cast<unsigned long long>(t->st_ino)) {
      check(*it);
      it = noted_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace shardops::io
