#include "shardops/hdf5/JournaledCommit.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "shardops/core/Error.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"

namespace shardops::io {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'S', 'H', 'O', 'P', 'J', 'R', 'N', '1'};
// Held-back writes are journaled and applied early once they pass this many bytes,
// so memory stays bounded when HDF5 reuses freed space for a large dataset.
constexpr std::size_t kMaxHeldBack = std::size_t(64) << 20;

struct Header {
  char magic[8];
  std::uint64_t device;
  std::uint64_t inode;
  std::uint64_t original_length;
  std::uint64_t checksum;
};

std::uint64_t fnv1a(const void* data, std::size_t n, std::uint64_t h = 1469598103934665603ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::uint64_t header_checksum(const Header& h) { return fnv1a(&h, offsetof(Header, checksum)); }

// Reads up to n bytes; what lies past the end of the file reads as zeros.
bool read_all(int fd, void* data, std::size_t n, off_t at) {
  auto* p = static_cast<unsigned char*>(data);
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, at);
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

}  // namespace

// ---------------------------------------------------------------------------
// The session: the journal file and the writes held back below the original length.

struct JournaledCommit::Session {
  std::string target, journal, what;
  bool durable = true;
  int journal_fd = -1;
  off_t journal_end = 0;
  std::uint64_t original_length = 0;
  struct Held {
    haddr_t addr;
    std::vector<unsigned char> bytes;
  };
  std::vector<Held> held;  // in write order: a later one wins where they overlap
  std::size_t held_bytes = 0;
  int target_fd = -1;   // while the driver has the file open
  PropListHandle fapl;  // opens the target through the driver
  std::string failure;  // the first failed step, for finish()
  bool finished = false;
  bool early_apply = true;  // apply held-back writes once they pass kMaxHeldBack
  bool cancelled = false;   // cancel(): every write is dropped, nothing applied

  bool fail(const std::string& step) {
    if (failure.empty()) failure = step + ": " + std::strerror(errno);
    return false;
  }

  // Journals the original bytes of every held-back range, then writes the ranges.
  bool apply_held() {
    if (held.empty()) return true;
    if (durable && ::fsync(target_fd) != 0) return fail("flushing the new data to disk");
    for (const Held& h : held) {
      std::vector<unsigned char> record(16 + h.bytes.size() + 8);
      const std::uint64_t addr = h.addr, len = h.bytes.size();
      std::memcpy(record.data(), &addr, 8);
      std::memcpy(record.data() + 8, &len, 8);
      if (!read_all(target_fd, record.data() + 16, h.bytes.size(), static_cast<off_t>(h.addr)))
        return fail("reading the bytes to save");
      const std::uint64_t sum = fnv1a(record.data(), 16 + h.bytes.size());
      std::memcpy(record.data() + 16 + h.bytes.size(), &sum, 8);
      if (!write_all(journal_fd, record.data(), record.size(), journal_end)) return fail("writing the journal");
      journal_end += static_cast<off_t>(record.size());
    }
    if (durable && ::fsync(journal_fd) != 0) return fail("flushing the journal to disk");
    for (const Held& h : held) {
      if (!write_all(target_fd, h.bytes.data(), h.bytes.size(), static_cast<off_t>(h.addr)))
        return fail("writing into the file");
    }
    held.clear();
    held_bytes = 0;
    return true;
  }
};

// ---------------------------------------------------------------------------
// The file driver (HDF5's virtual file layer), sec2-like but for the held-back writes.

namespace {

struct DriverInfo {
  JournaledCommit::Session* session;
};

struct DriverFile {
  H5FD_t pub;  // must be first
  int fd;
  haddr_t eoa, eof;
  dev_t device;
  ino_t inode;
  JournaledCommit::Session* session;
};

void* info_copy(const void* info) {
  auto* copy = static_cast<DriverInfo*>(std::malloc(sizeof(DriverInfo)));
  if (copy != nullptr) std::memcpy(copy, info, sizeof(DriverInfo));
  return copy;
}

herr_t info_free(void* info) {
  std::free(info);
  return 0;
}

H5FD_t* driver_open(const char* name, unsigned flags, hid_t fapl, haddr_t) {
  const auto* info = static_cast<const DriverInfo*>(H5Pget_driver_info(fapl));
  if (info == nullptr || info->session == nullptr || (flags & H5F_ACC_RDWR) == 0 || (flags & H5F_ACC_TRUNC) != 0)
    return nullptr;
  const int fd = ::open(name, O_RDWR | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return nullptr;
  }
  auto* f = static_cast<DriverFile*>(std::calloc(1, sizeof(DriverFile)));
  if (f == nullptr) {
    ::close(fd);
    return nullptr;
  }
  f->fd = fd;
  f->eof = static_cast<haddr_t>(st.st_size);
  f->device = st.st_dev;
  f->inode = st.st_ino;
  f->session = info->session;
  f->session->target_fd = fd;
  return &f->pub;
}

herr_t driver_close(H5FD_t* file) {
  auto* f = reinterpret_cast<DriverFile*>(file);
  const bool cancelled = f->session->cancelled;
  bool ok = cancelled || (f->session->failure.empty() && f->session->apply_held());
  if (!cancelled && f->session->durable && ok && ::fsync(f->fd) != 0)
    ok = f->session->fail("flushing the file to disk");
  if (::close(f->fd) != 0 && ok) ok = f->session->fail("closing the file");
  f->session->target_fd = -1;
  std::free(f);
  return ok ? 0 : -1;
}

int driver_cmp(const H5FD_t* a, const H5FD_t* b) {
  const auto* f = reinterpret_cast<const DriverFile*>(a);
  const auto* g = reinterpret_cast<const DriverFile*>(b);
  if (f->device != g->device) return f->device < g->device ? -1 : 1;
  if (f->inode != g->inode) return f->inode < g->inode ? -1 : 1;
  return 0;
}

herr_t driver_query(const H5FD_t*, unsigned long* flags) {
  *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
           H5FD_FEAT_AGGREGATE_SMALLDATA;
  return 0;
}

haddr_t driver_get_eoa(const H5FD_t* file, H5FD_mem_t) { return reinterpret_cast<const DriverFile*>(file)->eoa; }

herr_t driver_set_eoa(H5FD_t* file, H5FD_mem_t, haddr_t addr) {
  reinterpret_cast<DriverFile*>(file)->eoa = addr;
  return 0;
}

haddr_t driver_get_eof(const H5FD_t* file, H5FD_mem_t) { return reinterpret_cast<const DriverFile*>(file)->eof; }

herr_t driver_get_handle(H5FD_t* file, hid_t, void** handle) {
  *handle = &reinterpret_cast<DriverFile*>(file)->fd;
  return 0;
}

herr_t driver_read(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, size_t size, void* buffer) {
  auto* f = reinterpret_cast<DriverFile*>(file);
  if (addr == HADDR_UNDEF || addr + size > f->eoa) return -1;
  if (!read_all(f->fd, buffer, size, static_cast<off_t>(addr))) return -1;
  // What was written below the original length is still held back here.
  auto* out = static_cast<unsigned char*>(buffer);
  for (const auto& h : f->session->held) {
    const haddr_t lo = std::max(addr, h.addr), hi = std::min<haddr_t>(addr + size, h.addr + h.bytes.size());
    if (lo < hi) std::memcpy(out + (lo - addr), h.bytes.data() + (lo - h.addr), hi - lo);
  }
  return 0;
}

herr_t driver_write(H5FD_t* file, H5FD_mem_t, hid_t, haddr_t addr, size_t size, const void* buffer) {
  auto* f = reinterpret_cast<DriverFile*>(file);
  JournaledCommit::Session& s = *f->session;
  if (s.cancelled) return 0;  // closing a cancelled change: nothing reaches the file
  if (addr == HADDR_UNDEF || addr + size > f->eoa || !s.failure.empty()) return -1;
  const auto* in = static_cast<const unsigned char*>(buffer);
  const haddr_t split = std::min<haddr_t>(addr + size, std::max<haddr_t>(addr, s.original_length));
  if (split > addr) {  // below the original length: hold back
    s.held.push_back({addr, std::vector<unsigned char>(in, in + (split - addr))});
    s.held_bytes += split - addr;
    if (s.early_apply && s.held_bytes > kMaxHeldBack && !s.apply_held()) return -1;
  }
  if (addr + size > split) {
    if (!write_all(f->fd, in + (split - addr), addr + size - split, static_cast<off_t>(split))) {
      s.fail("writing the new data");
      return -1;
    }
  }
  f->eof = std::max<haddr_t>(f->eof, addr + size);
  return 0;
}

herr_t driver_truncate(H5FD_t* file, hid_t, hbool_t) {
  auto* f = reinterpret_cast<DriverFile*>(file);
  if (f->session->cancelled) return 0;
  // Never below the original length: those bytes are the old file's until the commit,
  // and HDF5 ignores what lies past its end of allocation.
  // Even at the same size: that also frees the room reserved past the end.
  const haddr_t size = std::max<haddr_t>(f->eoa, f->session->original_length);
  if (::ftruncate(f->fd, static_cast<off_t>(size)) != 0) {
    f->session->fail("setting the file size");
    return -1;
  }
  f->eof = size;
  return 0;
}

herr_t driver_lock(H5FD_t* file, hbool_t rw) {
  const int fd = reinterpret_cast<DriverFile*>(file)->fd;
  if (::flock(fd, (rw ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0) return 0;
  // As HDF5's own drivers: a file system without locks is not an error.
  return errno == ENOSYS ? 0 : -1;
}

herr_t driver_unlock(H5FD_t* file) {
  const int fd = reinterpret_cast<DriverFile*>(file)->fd;
  return ::flock(fd, LOCK_UN) == 0 || errno == ENOSYS ? 0 : -1;
}

hid_t driver_id() {
  static const H5FD_class_t cls = [] {
    H5FD_class_t c{};
    c.name = "shardops_journal";
    c.maxaddr = (haddr_t(1) << 62) - 1;
    c.fc_degree = H5F_CLOSE_WEAK;
    c.fapl_size = sizeof(DriverInfo);
    c.fapl_copy = info_copy;
    c.fapl_free = info_free;
    c.open = driver_open;
    c.close = driver_close;
    c.cmp = driver_cmp;
    c.query = driver_query;
    c.get_eoa = driver_get_eoa;
    c.set_eoa = driver_set_eoa;
    c.get_eof = driver_get_eof;
    c.get_handle = driver_get_handle;
    c.read = driver_read;
    c.write = driver_write;
    c.truncate = driver_truncate;
    c.lock = driver_lock;
    c.unlock = driver_unlock;
    const H5FD_mem_t map[H5FD_MEM_NTYPES] = H5FD_FLMAP_DICHOTOMY;
    std::copy(map, map + H5FD_MEM_NTYPES, c.fl_map);
    return c;
  }();
  static const hid_t id = H5FDregister(&cls);
  return id;
}

}  // namespace

// ---------------------------------------------------------------------------

std::string journal_prefix_of(const std::string& target) { return hidden_stem(target) + ".shardops-journal."; }

JournaledCommit::JournaledCommit(const std::string& target, bool durable, const std::string& what)
    : session_(std::make_unique<Session>()) {
  Session& s = *session_;
  s.target = target;
  s.durable = durable;
  s.what = what;
  s.fapl = PropListHandle(check_id(H5Pcreate(H5P_FILE_ACCESS), what + ": H5Pcreate", ErrorKind::Internal));
  const DriverInfo info{&s};
  check_status(H5Pset_driver(s.fapl.get(), driver_id(), &info), what + ": H5Pset_driver", ErrorKind::Internal);
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) throw IOError(what + ": cannot stat '" + target + "': " + std::strerror(errno));
  s.original_length = static_cast<std::uint64_t>(st.st_size);
  const fs::path p(target);
  s.journal = (p.parent_path() / (journal_prefix_of(target) + unique_token())).string();
  s.journal_fd = ::open(s.journal.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (s.journal_fd < 0)
    throw IOError(what + ": cannot create the journal '" + s.journal + "': " + std::strerror(errno));
  // Readable by whoever may read the target (it holds the target's bytes): a job of another
  // user that may write the target can then undo the change of a job killed mid-commit.
  static_cast<void>(::fchmod(s.journal_fd, (st.st_mode & (S_IRUSR | S_IRGRP | S_IROTH)) | S_IWUSR));
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.device = static_cast<std::uint64_t>(st.st_dev);
  h.inode = static_cast<std::uint64_t>(st.st_ino);
  h.original_length = s.original_length;
  h.checksum = header_checksum(h);
  if (!write_all(s.journal_fd, &h, sizeof h, 0) || (durable && ::fsync(s.journal_fd) != 0)) {
    const std::string reason = std::strerror(errno);
    ::close(s.journal_fd);
    ::unlink(s.journal.c_str());
    throw IOError(what + ": cannot write the journal '" + s.journal + "': " + reason);
  }
  if (durable) sync_dir_of(s.journal);
  s.journal_end = sizeof h;
}

JournaledCommit::~JournaledCommit() {
  if (!session_) return;
  if (!session_->finished) roll_back();
  // HDF5 keeps a file whose close failed; its driver may still call in: keep the session.
  if (session_->target_fd >= 0) {
    session_->failure = "closed";
    static_cast<void>(session_.release());
  }
}

hid_t JournaledCommit::file_access() const noexcept { return session_->fapl.get(); }

const std::string& JournaledCommit::journal_path() const noexcept { return session_->journal; }

long long JournaledCommit::original_length() const noexcept {
  return static_cast<long long>(session_->original_length);
}

void JournaledCommit::prepare() {
  Session& s = *session_;
  if (s.journal_fd < 0) return;
  if (!s.failure.empty()) {
    const std::string reason = s.failure;
    roll_back();
    throw IOError(s.what + ": changing '" + s.target + "' in place failed (" + reason + "); it was restored as it was");
  }
  ::close(s.journal_fd);
  s.journal_fd = -1;
  test_pause("journaled");
}

void JournaledCommit::set_early_apply(bool allowed) noexcept { session_->early_apply = allowed; }

void JournaledCommit::cancel() noexcept {
  Session& s = *session_;
  s.cancelled = true;
  s.held.clear();
  s.held_bytes = 0;
}

void JournaledCommit::discard() noexcept {
  Session& s = *session_;
  if (s.finished) return;
  // The commit point (of this file alone): without its journal the change can no
  // longer be rolled back.
  ::unlink(s.journal.c_str());
  if (s.durable) sync_dir_of(s.journal);
  s.finished = true;
}

void JournaledCommit::finish() {
  prepare();
  discard();
}

void JournaledCommit::roll_back() noexcept {
  Session& s = *session_;
  if (s.finished) return;
  if (s.journal_fd >= 0) {
    ::close(s.journal_fd);
    s.journal_fd = -1;
  }
  s.held.clear();
  roll_back_journal(s.target, s.journal);
  s.finished = true;
}

bool roll_back_journal(const std::string& target, const std::string& journal) noexcept {
  const int jfd = ::open(journal.c_str(), O_RDONLY | O_CLOEXEC);
  if (jfd < 0) return false;
  bool changed = false;
  Header h{};
  struct stat st {};
  const bool valid = read_all(jfd, &h, sizeof h, 0) && std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 &&
                     h.checksum == header_checksum(h) && ::stat(target.c_str(), &st) == 0 &&
                     static_cast<std::uint64_t>(st.st_dev) == h.device &&
                     static_cast<std::uint64_t>(st.st_ino) == h.inode;
  if (valid) {
    // The complete records, in the order they were written.
    struct Record {
      std::uint64_t addr;
      std::vector<unsigned char> bytes;
    };
    std::vector<Record> records;
    struct stat js {};
    ::fstat(jfd, &js);
    off_t at = sizeof h;
    for (;;) {
      std::uint64_t head[2];
      if (at + 16 > js.st_size || !read_all(jfd, head, 16, at)) break;
      if (head[1] > static_cast<std::uint64_t>(js.st_size - at - 24)) break;
      std::vector<unsigned char> body(16 + head[1]);
      std::uint64_t sum = 0;
      if (!read_all(jfd, body.data(), body.size(), at) || !read_all(jfd, &sum, 8, at + static_cast<off_t>(body.size())))
        break;
      if (sum != fnv1a(body.data(), body.size())) break;
      records.push_back({head[0], std::vector<unsigned char>(body.begin() + 16, body.end())});
      at += static_cast<off_t>(body.size() + 8);
    }
    const int tfd = ::open(target.c_str(), O_RDWR | O_CLOEXEC);
    if (tfd < 0) {  // keep the journal for a job that may open the file
      ::close(jfd);
      return false;
    }
    {
      bool ok = true;
      for (auto r = records.rbegin(); r != records.rend(); ++r) {
        ok = write_all(tfd, r->bytes.data(), r->bytes.size(), static_cast<off_t>(r->addr)) && ok;
      }
      ok = ::ftruncate(tfd, static_cast<off_t>(h.original_length)) == 0 && ok;
      ok = ::fsync(tfd) == 0 && ok;
      ::close(tfd);
      changed = true;
      if (!ok) {
        // Keep the journal: the next job tries again.
        ::close(jfd);
        return changed;
      }
    }
  }
  ::close(jfd);
  ::unlink(journal.c_str());
  sync_dir_of(journal);
  return changed;
}

}  // namespace shardops::io
