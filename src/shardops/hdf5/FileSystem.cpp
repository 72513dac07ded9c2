#include "shardops/hdf5/FileSystem.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <pwd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "shardops/core/Error.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"

namespace shardops::io {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int err) { return std::strerror(err); }

std::string parent_dir(const std::string& file) {
  const fs::path parent = fs::path(file).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// fsync a file or directory; false on failure.
bool sync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  return ::close(fd) == 0 && ok;
}

}  // namespace

namespace {

constexpr int kWriteFlag = 0x01;      // HDF5's H5F_SUPER_WRITE_ACCESS
constexpr int kSwmrWriteFlag = 0x04;  // H5F_SUPER_SWMR_WRITE_ACCESS

// The write flags of the HDF5 superblock of the open file \p fd of \p size bytes (0 where
// none are set, or the superblock is older than version 3, the one that carries them in byte
// 11), or nullopt where there is no signature.
std::optional<int> superblock_write_flags(int fd, long long size) {
  const std::optional<long long> at = hdf5_superblock_at(fd, size);
  if (!at) return std::nullopt;
  unsigned char head[12] = {};
  const ssize_t got = ::pread(fd, head, sizeof head, static_cast<off_t>(*at));
  return got == sizeof head && head[8] >= 3 ? head[11] & (kWriteFlag | kSwmrWriteFlag) : 0;
}

// The error for a file whose superblock carries the write \p flags.
IOError marked_open_for_writing(const std::string& file, int flags, const std::string& role, const std::string& what) {
  return IOError(what + ": " + role + " '" + file + "' is marked as open for writing by an HDF5 program" +
                 ((flags & kSwmrWriteFlag) != 0 ? " in SWMR mode" : "") +
                 " (its superblock's write flag): that program still has it open, or was killed before it closed "
                 "it, so what it holds may be half-written. Where no program has it open, `h5clear -s` clears "
                 "the flag");
}

}  // namespace

std::optional<long long> hdf5_superblock_at(int fd, long long size) {
  static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  for (long long at = 0; at + 8 <= size; at = at == 0 ? 512 : at * 2) {
    unsigned char head[8] = {};
    if (::pread(fd, head, sizeof head, static_cast<off_t>(at)) < static_cast<ssize_t>(sizeof head)) return std::nullopt;
    if (std::memcmp(head, signature, sizeof signature) == 0) return at;
  }
  return std::nullopt;
}

void refuse_if_marked_open_for_writing(const std::string& file, const std::string& role, const std::string& what) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  const std::optional<int> flags = ::fstat(fd, &st) == 0 ? superblock_write_flags(fd, st.st_size) : std::nullopt;
  ::close(fd);
  if (flags && *flags != 0) throw marked_open_for_writing(file, *flags, role, what);
}

void check_input_file(const std::string& file, const std::string& what) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) throw InvalidArgument(what + ": file '" + file + "' does not exist");
    if (err == ELOOP) throw InvalidArgument(what + ": file '" + file + "' is a loop of symbolic links");
    throw IOError(what + ": cannot access file '" + file + "': " + errno_text(err));
  }
  if (!S_ISREG(st.st_mode)) throw IOError(what + ": '" + file + "' is not a regular file");
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IOError(what + ": cannot open file '" + file + "' for reading: " + errno_text(errno));
  const std::optional<int> flags = superblock_write_flags(fd, st.st_size);
  ::close(fd);
  if (!flags) throw IOError(what + ": '" + file + "' is not an HDF5 file (no HDF5 signature found)");
  // HDF5 refuses such a file itself, with its file locking on or off (h5py does, with
  // HDF5_USE_FILE_LOCKING=FALSE too); inputs are opened through MPI-IO, which does not look,
  // so the flags are checked here.
  if (*flags != 0) throw marked_open_for_writing(file, *flags, "the input file", what);
}

std::string resolved_path(const std::string& file, const std::string& what) {
  const auto loop = [&] { return InvalidArgument(what + ": '" + file + "' is a loop of symbolic links"); };
  // A relative name in a current folder that was removed (or cannot be named) leads nowhere.
  if (!file.empty() && file.front() != '/') {
    std::vector<char> cwd(4096);
    if (::getcwd(cwd.data(), cwd.size()) == nullptr && errno != ERANGE)
      throw IOError(what + ": '" + file + "' is a relative path, and the current folder cannot be found (" +
                    std::strerror(errno) + ": removed?); give an absolute path or run from a folder that exists");
  }
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(fs::absolute(fs::path(file), ec), ec);
  if (ec == std::errc::too_many_symbolic_link_levels) throw loop();
  if (ec) resolved = fs::absolute(fs::path(file)).lexically_normal();
  // A symbolic link to a file that does not exist yet: a write goes where it points, as a
  // shell's redirection puts it (weakly_canonical leaves such a link unresolved).
  for (int hops = 0; fs::is_symlink(fs::symlink_status(resolved, ec)); ++hops) {
    if (hops == 40) throw loop();
    const fs::path to = fs::read_symlink(resolved, ec);
    if (ec) break;
    resolved = fs::weakly_canonical(resolved.parent_path() / to, ec);
    if (ec == std::errc::too_many_symbolic_link_levels) throw loop();
  }
  return resolved.string();
}

bool same_file(const std::string& a, const std::string& b) noexcept {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  try {
    const fs::path ra = resolved_path(a, a), rb = resolved_path(b, b);
    if (ra == rb) return true;
    if (ra.filename() != rb.filename()) return false;
    return ::stat(ra.parent_path().c_str(), &sa) == 0 && ::stat(rb.parent_path().c_str(), &sb) == 0 &&
           sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  } catch (...) {
    return a == b;  // a loop of links: refused as such where it is written or read
  }
}

std::string resolve_output_path(const std::string& file, const std::string& what) {
  const fs::path resolved = resolved_path(file, what);
  if (resolved.filename().empty()) throw IOError(what + ": output file name '" + file + "' names a directory");
  const std::string target = resolved.string();
  const std::string dir = parent_dir(target);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    throw IOError(what + ": cannot write '" + file + "': directory '" + dir + "' " +
                  (err == ENOENT    ? std::string("does not exist")
                   : err == ENOTDIR ? std::string("is not a directory (a component of it is a file)")
                                    : "is not accessible: " + errno_text(err)));
  }
  if (!S_ISDIR(st.st_mode)) throw IOError(what + ": cannot write '" + file + "': '" + dir + "' is not a directory");
  // Refused now, not at the rename after all the work.
  const long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  const std::string name = resolved.filename().string();
  if (name_max > 0 && name.size() > static_cast<std::size_t>(name_max)) {
    throw IOError(what + ": cannot write '" + file + "': its name is " + std::to_string(name.size()) +
                  " bytes, more than the file system of '" + dir + "' takes (" + std::to_string(name_max) + ")");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw IOError(what + ": cannot write '" + file + "': directory '" + dir +
                  "' is not writable: " + errno_text(errno));
  }
  if (::stat(target.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      throw IOError(what + ": cannot write '" + file + "': it exists and is not a regular file");
    // It would be replaced by rename, but a read-only file says "leave me alone". The
    // mode bits decide, not access(): that always succeeds for root.
    if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      throw IOError(what + ": cannot write '" + file + "': the existing file is read-only (mode " + mode + ")");
    }
    if (::access(target.c_str(), R_OK | W_OK) != 0) {
      throw IOError(what + ": cannot write '" + file +
                    "': the existing file is not readable and writable: " + errno_text(errno));
    }
    // Its inode's own flags (chattr), which no mode bit shows and root does not pass either:
    // a file changed in place must take writes anywhere, and be cut back if the job fails.
    int flags = 0;
    const int fd = ::open(target.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
      if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) flags = 0;
      ::close(fd);
    }
    if ((flags & (FS_APPEND_FL | FS_IMMUTABLE_FL)) != 0) {
      throw IOError(what + ": cannot write '" + file + "': the existing file is " +
                    ((flags & FS_IMMUTABLE_FL) != 0 ? "immutable (chattr +i" : "append-only (chattr +a") +
                    "; lsattr shows it), and shardops changes a file in place");
    }
  }
  return target;
}

bool path_exists(const std::string& path) noexcept {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string unique_token() {
  static std::atomic<unsigned> counter{0};
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return std::to_string(::getpid()) + "." + std::to_string(nanos) + "." + std::to_string(counter++);
}

std::string other_owner_of_unreadable(const std::string& path) {
  struct stat st {};
  if (::access(path.c_str(), R_OK) == 0 || ::stat(path.c_str(), &st) != 0 || st.st_uid == ::geteuid()) return "";
  const passwd* pw = ::getpwuid(st.st_uid);
  return pw != nullptr ? std::string(pw->pw_name) : "uid " + std::to_string(st.st_uid);
}

std::string this_process_text() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
  return "pid " + std::to_string(::getpid()) + " on host " + host;
}

std::string hidden_stem(const std::string& target) {
  const std::string name = fs::path(target).filename().string();
  // The longest suffix (".shardops-journal." + a token) takes under 60 bytes.
  constexpr std::size_t kLongest = 120, kKept = 80;
  if (name.size() <= kLongest) return "." + name;
  std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a
  for (const unsigned char c : name) hash = (hash ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return "." + name.substr(0, kKept) + "~" + hex;
}

std::string hidden_path_beside(const std::string& target, const std::string& suffix) {
  return (fs::path(target).parent_path() / (hidden_stem(target) + suffix)).string();
}

std::string temp_path_beside(const std::string& target) {
  return hidden_path_beside(target, ".shardops-tmp." + unique_token());
}

void rename_new_file(const std::string& temp, const std::string& target, bool durable, const std::string& what) {
  if (durable && !sync_path(temp, O_RDONLY)) {
    throw IOError(what + ": cannot flush the temporary file '" + temp + "' to disk: " + errno_text(errno));
  }
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) != 0) {
    const int err = errno;
    if (err == EEXIST) {
      throw IOError(what + ": '" + target +
                    "' was created by another program while this job ran; it is left as it is and nothing was "
                    "written (run again to add to it)");
    }
    if (err != EINVAL && err != ENOSYS) {
      throw IOError(what + ": cannot rename the temporary file '" + temp + "' to '" + target + "': " + errno_text(err));
    }
    // A file system without RENAME_NOREPLACE: link() never replaces either.
    if (::link(temp.c_str(), target.c_str()) != 0) {
      const int link_err = errno;
      throw IOError(
          what + ": cannot move the temporary file '" + temp + "' to '" + target +
          "': " + (link_err == EEXIST ? std::string("the target appeared while this job ran") : errno_text(link_err)));
    }
    ::unlink(temp.c_str());
  }
  if (durable) sync_path(parent_dir(target), O_RDONLY | O_DIRECTORY);
}

bool reserve_space(int fd, long long offset, long long length, const std::string& dir, const std::string& what,
                   bool keep_size) {
  if (length <= 0) return true;
  int rc;
  do {
    rc = ::fallocate(fd, keep_size ? FALLOC_FL_KEEP_SIZE : 0, static_cast<off_t>(offset), static_cast<off_t>(length));
  } while (rc != 0 && errno == EINTR);
  if (rc == 0) return true;
  const int err = errno;
  if (err == EOPNOTSUPP || err == ENOSYS) return false;
  const std::string free = free_space_text(dir);
  throw IOError(what + ": " +
                (err == ENOSPC   ? std::string("no space left on the device")
                 : err == EDQUOT ? std::string("disk quota exceeded")
                                 : errno_text(err)) +
                ": cannot reserve " + std::to_string(length) + " bytes in '" + dir + "'" +
                (free.empty() ? "" : " (" + free + ")") + "; nothing was written");
}

void expect_room(const std::string& dir, long long bytes, long long file_end, const std::string& what) {
  struct rlimit limit {};
  if (file_end > 0 && ::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      static_cast<unsigned long long>(file_end) > static_cast<unsigned long long>(limit.rlim_cur)) {
    throw IOError(what + ": file too large: with this dataset the file grows to about " + std::to_string(file_end) +
                  " bytes, past the largest file this job may write (" + std::to_string(limit.rlim_cur) +
                  " bytes: the file size limit, `ulimit -f`); nothing was written");
  }
  struct statvfs st {};
  if (bytes <= 0 || ::statvfs(dir.c_str(), &st) != 0) return;
  const auto free = static_cast<unsigned long long>(st.f_bavail) * st.f_frsize;
  if (static_cast<unsigned long long>(bytes) <= free) return;
  throw IOError(what + ": no space left on the device: the dataset needs " + std::to_string(bytes) + " bytes, '" + dir +
                "' has " + std::to_string(free) + " bytes free; nothing was written");
}

void expect_inodes(const std::string& dir, long long own, int ranks, const std::string& what) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0 || st.f_files == 0) return;
  const auto free = static_cast<long long>(::geteuid() == 0 ? st.f_ffree : st.f_favail);
  const long long left = free - own, mpi = 2LL * ranks;
  if (left == 0 || left >= mpi) return;
  const std::string inodes = std::to_string(free) + (free == 1 ? " inode" : " inodes");
  if (left < 0) {
    throw IOError(what + ": no free inodes on the file system of '" + dir + "': the job makes " + std::to_string(own) +
                  " files beside the output there, " + inodes + " are free; nothing was written");
  }
  throw IOError(what + ": few free inodes on the file system of '" + dir + "': " + inodes + " for the job's " +
                std::to_string(own) + (own == 1 ? " file" : " files") + " beside the output and Open MPI's " +
                std::to_string(mpi) + " (two per rank), which it would make for some ranks and not the others, " +
                "leaving the job waiting; free " + std::to_string(mpi - left) + " more; nothing was written");
}

std::string file_size_limit_text() {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return "";
  return "; the largest file this job may write is " + std::to_string(limit.rlim_cur) +
         " bytes (the file size limit, `ulimit -f`)";
}

long long descriptors_left() noexcept {
  constexpr long long kUnknown = 1LL << 40;
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kUnknown;
  std::error_code ec;
  long long open = 0;
  for (fs::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++open;
  if (ec == std::errc::too_many_files_open) return 0;  // not even one left to list them
  if (ec || open == 0) return kUnknown;
  return static_cast<long long>(limit.rlim_cur) - (open - 1);  // less the iterator's own descriptor
}

std::string descriptor_shortage_text() {
  const long long left = descriptors_left();
  if (left >= kDescriptorsPerOpen) return "";
  struct rlimit limit {};
  static_cast<void>(::getrlimit(RLIMIT_NOFILE, &limit));
  return "; this process has " + (left > 0 ? "only " + std::to_string(left) : std::string("no")) +
         " file descriptors left (too many open files: its limit, `ulimit -n`, is " + std::to_string(limit.rlim_cur) +
         ")";
}

std::string free_space_text(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return "";
  return std::to_string(static_cast<unsigned long long>(st.f_bavail) * st.f_frsize) + " bytes free";
}

bool still_named(int fd, const std::string& path) noexcept {
  struct stat by_fd {
  }, by_name{};
  if (::fstat(fd, &by_fd) != 0 || ::stat(path.c_str(), &by_name) != 0) return false;
  return by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino;
}

long long file_size(const std::string& path) noexcept {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1;
}

std::vector<std::string> leftovers_of(const std::string& target, const std::string& suffix_prefix) {
  const std::string prefix = hidden_stem(target) + suffix_prefix;
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(parent_dir(target), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0) found.push_back(it->path().string());
  }
  return found;
}

bool read_all(int fd, void* data, std::size_t n, long long at) {
  auto* p = static_cast<unsigned char*>(data);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(at));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) {
      std::memset(p, 0, n);
      return true;
    }
    p += r;
    n -= static_cast<std::size_t>(r);
    at += r;
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t n, long long at) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (n > 0) {
    // At most 256 KiB at a time. Linux sizes the page-cache folios of a write by the
    // write, and large folios come from the large blocks of free memory that a virtual
    // machine reporting its free memory to the host (virtio-balloon free page reporting)
    // has handed back, each then faulted in again on the host, many times slower
    // (bench/tools/fresh_memory_probe). Small writes cost nothing measurable elsewhere.
    const ssize_t w = ::pwrite(fd, p, std::min<std::size_t>(n, std::size_t(256) << 10), static_cast<off_t>(at));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
    at += w;
  }
  return true;
}

bool write_all_then_sync(int fd, const void* data, std::size_t n, long long at) {
  constexpr std::size_t kSlice = std::size_t(8) << 20;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t done = 0; done < n;) {
    const std::size_t now = std::min(kSlice, n - done);
    if (!write_all(fd, p + done, now, at + static_cast<long long>(done))) return false;
#ifdef SYNC_FILE_RANGE_WRITE
    // Only starts the writes: a file system without it writes at the fsync instead.
    static_cast<void>(::sync_file_range(fd, static_cast<off_t>(at + static_cast<long long>(done)),
                                        static_cast<off_t>(now), SYNC_FILE_RANGE_WRITE));
#endif
    done += now;
  }
  return true;
}

void sync_dir_of(const std::string& path) noexcept {
  static_cast<void>(sync_path(parent_dir(path), O_RDONLY | O_DIRECTORY));
}

void remove_quietly(const std::string& path) noexcept { static_cast<void>(std::remove(path.c_str())); }

std::vector<std::string> mpi_io_side_files(const std::string& file, int rank) {
  const std::string r = std::to_string(rank);
  return {file + ".data." + r, file + ".metadata." + r};
}

}  // namespace shardops::io
