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
#include <new>
#include <optional>
#include <vector>

// xxHash's functions inlined here: nothing to link, nothing a consumer of the library needs.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "shardops/core/Error.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/hdf5/StopSignals.hpp"

namespace shardops::io {

namespace fs = std::filesystem;

namespace {

// Version 2 adds what tells a dead job's change from one another program made after it:
// a fingerprint of the file's head before the change. Version 3 (the header of version 2)
// seals each record with XXH3-64 (xxHash) instead of FNV-1a, which went a byte at a time:
// every saved byte is checksummed, and a dataset replaced with --overwrite saves them all.
constexpr char kMagic[8] = {'S', 'H', 'O', 'P', 'J', 'R', 'N', '3'};
constexpr char kMagicV2[8] = {'S', 'H', 'O', 'P', 'J', 'R', 'N', '2'};
constexpr char kMagicV1[8] = {'S', 'H', 'O', 'P', 'J', 'R', 'N', '1'};
// The head of the file fingerprinted: HDF5's superblock and the root group's metadata lie
// there in the files h5py writes, and any program that changes the file through HDF5
// rewrites the superblock (its end-of-file address) when the file's length changes.
constexpr std::size_t kHeadBytes = std::size_t(64) << 10;
// The address of the record that ends the journal of a complete change (prepare()): it holds
// the fingerprint of the head as the change left it. No saved range lies there.
constexpr std::uint64_t kCompleteMarker = ~std::uint64_t(0);
// Held-back writes are journaled and applied early once they pass this many bytes,
// so memory stays bounded when HDF5 reuses freed space for a large dataset.
constexpr std::size_t kMaxHeldBack = std::size_t(64) << 20;

struct HeaderV1 {
  char magic[8];
  std::uint64_t device;
  std::uint64_t inode;
  std::uint64_t original_length;
  std::uint64_t checksum;
};

struct Header {
  char magic[8];
  std::uint64_t device;
  std::uint64_t inode;
  std::uint64_t original_length;
  std::uint64_t head_length;  ///< min(original_length, kHeadBytes)
  std::uint64_t head_hash;    ///< fingerprint() of the file before the change
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
std::uint64_t header_checksum(const HeaderV1& h) { return fnv1a(&h, offsetof(HeaderV1, checksum)); }

// Appends to \p records a journal record of \p n bytes at \p addr: the address, the length,
// the bytes (the caller fills them at the pointer returned), then seal_record()'s checksum
// of all that. Records follow one another in a journal, so several are written at once.
unsigned char* start_record(std::vector<unsigned char>& records, std::uint64_t addr, std::size_t n) {
  const std::size_t at = records.size();
  records.resize(at + 16 + n + 8);
  const std::uint64_t len = n;
  std::memcpy(records.data() + at, &addr, 8);
  std::memcpy(records.data() + at + 8, &len, 8);
  return records.data() + at + 16;
}

// The checksum that seals a record of this version: the address, the length and the bytes.
std::uint64_t record_checksum(const unsigned char* body, std::size_t n) { return XXH3_64bits(body, n); }

// Seals the record that starts at byte \p at of \p records and ends them.
void seal_record(std::vector<unsigned char>& records, std::size_t at) {
  const std::uint64_t sum = record_checksum(records.data() + at, records.size() - at - 8);
  std::memcpy(records.data() + records.size() - 8, &sum, 8);
}

// The bytes of the file's head a journal fingerprints, of a file of \p length bytes.
std::uint64_t head_length_of(std::uint64_t length) { return std::min<std::uint64_t>(length, kHeadBytes); }

// More than a superblock and its driver information take.
constexpr std::uint64_t kSuperblockBytes = 1024;

// A range of a file's bytes.
struct Span {
  std::uint64_t at, bytes;
};

// The bytes of a file of \p length bytes (open as \p fd) a journal fingerprints: its head,
// where HDF5's superblock and the root group's metadata lie in the files h5py writes, and,
// past a user block that reaches beyond the head (MATLAB's 512 bytes do not; 64 KiB and
// more do), as many bytes from the superblock on: a program that changes the file through
// HDF5 rewrites the superblock there, while the user block stays as it was.
std::vector<Span> fingerprinted_spans(int fd, std::uint64_t length) {
  std::vector<Span> spans{{0, head_length_of(length)}};
  const auto superblock =
      static_cast<std::uint64_t>(hdf5_superblock_at(fd, static_cast<long long>(length)).value_or(0));
  if (superblock > 0 && superblock + kSuperblockBytes > spans[0].bytes && superblock < length)
    spans.push_back({superblock, std::min<std::uint64_t>(length - superblock, kHeadBytes)});
  return spans;
}

// fnv1a of the fingerprinted spans of the file open as \p fd, for its length \p length, with
// \p put_back applied to the bytes read (the journal's saved ranges), into \p hash.
template <class PutBack>
bool fingerprint(int fd, std::uint64_t length, std::uint64_t& hash, PutBack&& put_back) {
  std::uint64_t h = 1469598103934665603ull;
  for (const Span& span : fingerprinted_spans(fd, length)) {
    std::vector<unsigned char> bytes(static_cast<std::size_t>(span.bytes));
    if (!read_all(fd, bytes.data(), bytes.size(), static_cast<off_t>(span.at))) return false;
    put_back(span, bytes);
    h = fnv1a(bytes.data(), bytes.size(), h);
  }
  hash = h;
  return true;
}

// fingerprint() of the file \p path as it is, for a file of \p length bytes.
bool file_fingerprint(const std::string& path, std::uint64_t length, std::uint64_t& hash) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = fingerprint(fd, length, hash, [](const Span&, std::vector<unsigned char>&) {});
  ::close(fd);
  return ok;
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
    std::size_t at, size;  // its bytes in held_data
  };
  std::vector<Held> held;  // in write order: a later one wins where they overlap
  // The held-back bytes, one after another, and a journal record being made: their memory
  // is kept from round to round, not faulted in afresh for every write HDF5 makes.
  std::vector<unsigned char> held_data, record;
  int target_fd = -1;  // while the driver has the file open
  // The driver's descriptor once HDF5 closed the file, kept with HDF5's exclusive lock on it
  // (flock) until the change is committed or rolled back: another program opening the file
  // with HDF5 meanwhile would read a change that may still be undone.
  int locked_fd = -1;
  PropListHandle fapl;  // opens the target through the driver
  CleanupPath on_stop;  // the journal goes if a signal stops the job (held-back writes never reached the file)
  std::string failure;  // the first failed step, for finish()
  bool finished = false;
  bool early_apply = true;  // apply held-back writes once they pass kMaxHeldBack
  bool cancelled = false;   // cancel(): every write is dropped, nothing applied

  bool fail(const std::string& step) {
    if (failure.empty()) failure = step + ": " + std::strerror(errno);
    return false;
  }

  // Journals the original bytes of every held-back range, then writes the ranges. Only the
  // journal is flushed before they are written: the target is flushed once, when the driver
  // closes it. A round's saved bytes may be an earlier round's new bytes, not yet on disk;
  // rolling back in reverse order puts back the original bytes whichever writes were made.
  bool apply_held() {
    if (held.empty()) return true;
    // The records go to the journal a few MiB at a time: HDF5 holds back many small writes
    // (metadata), and a change in place of scattered rows one per run of rows.
    constexpr std::size_t kRecordsAtOnce = std::size_t(4) << 20;
    const auto write_records = [&] {
      const bool written = durable ? write_all_then_sync(journal_fd, record.data(), record.size(), journal_end)
                                   : write_all(journal_fd, record.data(), record.size(), journal_end);
      journal_end += static_cast<off_t>(record.size());
      record.clear();
      return written;
    };
    record.clear();
    for (const Held& h : held) {
      const std::size_t at = record.size();
      if (!read_all(target_fd, start_record(record, h.addr, h.size), h.size, static_cast<long long>(h.addr)))
        return fail("reading the bytes to save");  // the bytes there now
      seal_record(record, at);
      if (record.size() >= kRecordsAtOnce && !write_records()) return fail("writing the journal");
    }
    if (!record.empty() && !write_records()) return fail("writing the journal");
    if (durable && ::fsync(journal_fd) != 0) return fail("flushing the journal to disk");
    for (const Held& h : held) {
      const unsigned char* bytes = held_data.data() + h.at;
      // Only writes of many pages start their disk writes at once: each start writes whole
      // pages, and small writes side by side (metadata, rows) would write a page many times.
      constexpr std::size_t kStartFrom = std::size_t(64) << 10;
      const bool written = durable && h.size >= kStartFrom ? write_all_then_sync(target_fd, bytes, h.size, h.addr)
                                                           : write_all(target_fd, bytes, h.size, h.addr);
      if (!written) return fail("writing into the file");
    }
    drop_held();
    test_pause("journal round applied");
    return true;
  }

  // Called from HDF5's C code: a failure is returned, never thrown.
  bool hold(haddr_t addr, const unsigned char* bytes, std::size_t n) noexcept {
    try {
      // Room for a whole round at once, where more than a little metadata is held back:
      // growing a step at a time would copy and fault in the bytes again at every step.
      constexpr std::size_t kLittle = std::size_t(1) << 20;
      const std::size_t needed = held_data.size() + n;
      if (needed > held_data.capacity() && needed > kLittle)
        held_data.reserve(std::max(needed, kMaxHeldBack + kLittle));
      held.push_back({addr, held_data.size(), n});
      held_data.insert(held_data.end(), bytes, bytes + n);
      return true;
    } catch (const std::bad_alloc&) {
      if (!held.empty() && held.back().at + held.back().size > held_data.size()) held.pop_back();
      errno = ENOMEM;
      try {
        fail("holding back a write");
      } catch (const std::bad_alloc&) {
      }
      return false;
    }
  }

  void end_lock() noexcept {
    if (locked_fd >= 0) ::close(locked_fd);
    locked_fd = -1;
  }

  void drop_held() noexcept {
    held.clear();
    held_data.clear();
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
  // A copy of the descriptor holds the lock (it belongs to the open file, not to one
  // descriptor) until the change stands or is undone (end_lock); the close still says
  // whether the file system took the writes (NFS reports them there).
  f->session->end_lock();
  f->session->locked_fd = ::fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
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
    const haddr_t lo = std::max(addr, h.addr), hi = std::min<haddr_t>(addr + size, h.addr + h.size);
    if (lo < hi) std::memcpy(out + (lo - addr), f->session->held_data.data() + h.at + (lo - h.addr), hi - lo);
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
    if (!s.hold(addr, in, split - addr)) return -1;
    if (s.early_apply && s.held_data.size() > kMaxHeldBack && !s.apply_held()) return -1;
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

// HDF5 unlocks the file as it closes it: the lock stays until the change stands or is
// undone (Session::locked_fd).
herr_t driver_unlock(H5FD_t*) { return 0; }

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
  // Watched before it exists: a stop signal between its making and the caller's next step
  // would leave it behind.
  s.on_stop = CleanupPath(s.journal);
  s.journal_fd = ::open(s.journal.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (s.journal_fd < 0)
    throw IOError(what + ": cannot create the journal '" + s.journal + "': " + std::strerror(errno));
  // Readable by whoever may read the target (it holds the target's bytes): a job of another
  // user that may write the target can then undo the change of a job killed mid-commit. So
  // it takes the target's group (allowed where this user is in it) and, for root, its owner
  // too: a job of root's killed writing a user's file leaves a journal that user can read
  // and remove. A journal another user cannot read is never passed over (journal_still_applies).
  static_cast<void>(::fchown(s.journal_fd, ::geteuid() == 0 ? st.st_uid : static_cast<uid_t>(-1), st.st_gid));
  static_cast<void>(::fchmod(s.journal_fd, (st.st_mode & (S_IRUSR | S_IRGRP | S_IROTH)) | S_IWUSR));
  test_pause("journal made");
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.device = static_cast<std::uint64_t>(st.st_dev);
  h.inode = static_cast<std::uint64_t>(st.st_ino);
  h.original_length = s.original_length;
  h.head_length = head_length_of(s.original_length);
  const bool head_read = file_fingerprint(target, s.original_length, h.head_hash);
  const std::string head_failure = head_read ? "" : std::strerror(errno);
  h.checksum = header_checksum(h);
  if (!head_read || !write_all(s.journal_fd, &h, sizeof h, 0) || (durable && ::fsync(s.journal_fd) != 0)) {
    const std::string reason = std::strerror(errno);
    ::close(s.journal_fd);
    ::unlink(s.journal.c_str());
    if (!head_read) throw IOError(what + ": cannot read '" + target + "': " + head_failure);
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
  // The change is complete: the journal ends with a fingerprint of the head as the change
  // left it, by which the next job tells this change from one another program made after it.
  std::uint64_t head_hash = 0;
  if (!file_fingerprint(s.target, s.original_length, head_hash)) {
    const std::string reason = std::strerror(errno);
    roll_back();
    throw IOError(s.what + ": cannot read '" + s.target + "' back (" + reason + "); it was restored as it was");
  }
  std::vector<unsigned char> record;
  std::memcpy(start_record(record, kCompleteMarker, sizeof head_hash), &head_hash, sizeof head_hash);
  seal_record(record, 0);
  if (!write_all(s.journal_fd, record.data(), record.size(), s.journal_end) ||
      (s.durable && ::fsync(s.journal_fd) != 0)) {
    const std::string reason = std::strerror(errno);
    roll_back();
    throw IOError(s.what + ": cannot write the journal '" + s.journal + "' (" + reason + "); '" + s.target +
                  "' was restored as it was");
  }
  s.journal_end += static_cast<off_t>(record.size());
  ::close(s.journal_fd);
  s.journal_fd = -1;
  test_pause("journaled");
}

void JournaledCommit::change(long long address, const void* bytes, std::size_t n, const std::string& what) {
  Session& s = *session_;
  if (address < 0 || static_cast<std::uint64_t>(address) + n > s.original_length)
    throw InternalError(what + ": a change in place at byte " + std::to_string(address) + " of " + std::to_string(n) +
                        " bytes reaches past the file's original length " + std::to_string(s.original_length));
  if (n == 0) return;
  if (!s.hold(static_cast<haddr_t>(address), static_cast<const unsigned char*>(bytes), n) ||
      (s.early_apply && s.held_data.size() > kMaxHeldBack && !s.apply_held()))
    throw IOError(what + ": changing '" + s.target + "' in place failed (" + s.failure + ")");
}

void JournaledCommit::set_early_apply(bool allowed) noexcept { session_->early_apply = allowed; }

void JournaledCommit::cancel() noexcept {
  Session& s = *session_;
  s.cancelled = true;
  s.drop_held();
}

void JournaledCommit::discard() noexcept {
  Session& s = *session_;
  if (s.finished) return;
  // The commit point (of this file alone): without its journal the change can no
  // longer be rolled back.
  ::unlink(s.journal.c_str());
  if (s.durable) sync_dir_of(s.journal);
  s.finished = true;
  s.end_lock();
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
  s.drop_held();
  roll_back_journal(s.target, s.journal, false);
  s.finished = true;
  s.end_lock();
}

namespace {

// A saved range: where, and the bytes that were there before the write the journal made way for.
struct SavedRange {
  std::uint64_t addr;
  std::vector<unsigned char> bytes;
};

// The journal's header (any version) as a Header, its magic saying which version; false if
// it is not a journal's.
bool read_header(int jfd, Header& h, off_t& records_at) {
  char magic[8];
  if (!read_all(jfd, magic, sizeof magic, 0)) return false;
  if (std::memcmp(magic, kMagic, sizeof kMagic) == 0 || std::memcmp(magic, kMagicV2, sizeof kMagicV2) == 0) {
    records_at = sizeof(Header);
    return read_all(jfd, &h, sizeof h, 0) && h.checksum == header_checksum(h);
  }
  HeaderV1 v1{};
  if (std::memcmp(magic, kMagicV1, sizeof kMagicV1) != 0 || !read_all(jfd, &v1, sizeof v1, 0) ||
      v1.checksum != header_checksum(v1))
    return false;
  // Written by an earlier shardops: no fingerprint of the head to check.
  h = Header{};
  std::memcpy(h.magic, kMagicV1, sizeof kMagicV1);
  h.device = v1.device;
  h.inode = v1.inode;
  h.original_length = v1.original_length;
  records_at = sizeof(HeaderV1);
  return true;
}

// The complete records from \p at, in the order they were written. A record cut short ends
// the list: the journal is flushed before the writes it makes way for, so none was made.
// \p complete: set where the journal ends with the record of a complete change, whose
// fingerprint of the head as the change left it goes to \p head_after. \p xxh3: the records are
// sealed as version 3 seals them (else with FNV-1a, as versions 1 and 2 did).
std::vector<SavedRange> read_records(int jfd, off_t at, bool xxh3, bool& complete, std::uint64_t& head_after) {
  complete = false;
  std::vector<SavedRange> records;
  struct stat js {};
  if (::fstat(jfd, &js) != 0) return records;
  for (;;) {
    std::uint64_t head[2];
    if (at + 16 > js.st_size || !read_all(jfd, head, 16, at)) break;
    if (head[1] > static_cast<std::uint64_t>(js.st_size - at - 24)) break;
    std::vector<unsigned char> body(16 + head[1]);
    std::uint64_t sum = 0;
    if (!read_all(jfd, body.data(), body.size(), at) || !read_all(jfd, &sum, 8, at + static_cast<off_t>(body.size())))
      break;
    if (sum != (xxh3 ? record_checksum(body.data(), body.size()) : fnv1a(body.data(), body.size()))) break;
    if (head[0] == kCompleteMarker && head[1] == 8) {
      complete = true;
      std::memcpy(&head_after, body.data() + 16, 8);
      break;
    }
    records.push_back({head[0], std::vector<unsigned char>(body.begin() + 16, body.end())});
    at += static_cast<off_t>(body.size() + 8);
  }
  return records;
}

// Whether the target holds what the dead job left of it, not a change another program made
// since (h5py adding a dataset, or making the file anew): such a change would be destroyed
// by the roll-back. The job never made the file shorter than it was. A complete change
// (\p complete) left the head whose fingerprint ends the journal (\p head_after). Else the
// job changed nothing below that length but through saved ranges; so the head of the file,
// with the saved bytes put back in reverse order, is the head the job started from,
// whichever of its writes were made. (A change another program made only inside ranges the
// job saved goes unseen there: that needs the job killed while it applied them.)
bool unchanged_since_the_job(int tfd, const Header& h, const std::vector<SavedRange>& records, bool complete,
                             std::uint64_t head_after) {
  struct stat st {};
  if (::fstat(tfd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < h.original_length) return false;
  if (std::memcmp(h.magic, kMagicV1, sizeof kMagicV1) == 0) return true;  // version 1: nothing to compare
  std::uint64_t hash = 0;
  if (complete)
    return fingerprint(tfd, h.original_length, hash, [](const Span&, std::vector<unsigned char>&) {}) &&
           hash == head_after;
  const auto put_back = [&](const Span& span, std::vector<unsigned char>& bytes) {
    for (auto r = records.rbegin(); r != records.rend(); ++r) {
      const std::uint64_t from = std::max(r->addr, span.at);
      const std::uint64_t to = std::min<std::uint64_t>(r->addr + r->bytes.size(), span.at + span.bytes);
      if (from < to)
        std::memcpy(bytes.data() + (from - span.at), r->bytes.data() + (from - r->addr),
                    static_cast<std::size_t>(to - from));
    }
  };
  return fingerprint(tfd, h.original_length, hash, put_back) && hash == h.head_hash;
}

}  // namespace

namespace {
// A journal of \p target as read from \p jfd: its header and complete records. Empty where
// it is not \p target's (another file in its place) or cannot be read.
struct JournalOfTarget {
  Header h{};
  std::vector<SavedRange> records;
  bool complete = false;
  std::uint64_t head_after = 0;
};
std::optional<JournalOfTarget> read_journal_of(int jfd, const std::string& target) {
  JournalOfTarget j;
  off_t records_at = 0;
  struct stat st {};
  if (!read_header(jfd, j.h, records_at) || ::stat(target.c_str(), &st) != 0 ||
      static_cast<std::uint64_t>(st.st_dev) != j.h.device || static_cast<std::uint64_t>(st.st_ino) != j.h.inode)
    return std::nullopt;
  const bool xxh3 = std::memcmp(j.h.magic, kMagic, sizeof kMagic) == 0;
  j.records = read_records(jfd, records_at, xxh3, j.complete, j.head_after);
  return j;
}
}  // namespace

bool journal_still_applies(const std::string& target, const std::string& journal) noexcept {
  const int jfd = ::open(journal.c_str(), O_RDONLY | O_CLOEXEC);
  // One this user may not read (another user's) may hold a change still in the file: that
  // cannot be told, so it counts as one.
  if (jfd < 0) return errno != ENOENT;
  bool applies = false;
  if (const std::optional<JournalOfTarget> j = read_journal_of(jfd, target)) {
    const int tfd = ::open(target.c_str(), O_RDONLY | O_CLOEXEC);
    if (tfd >= 0) {
      applies = unchanged_since_the_job(tfd, j->h, j->records, j->complete, j->head_after);
      ::close(tfd);
    }
  }
  ::close(jfd);
  return applies;
}

bool roll_back_journal(const std::string& target, const std::string& journal, bool dead_job) noexcept {
  const int jfd = ::open(journal.c_str(), O_RDONLY | O_CLOEXEC);
  if (jfd < 0) return false;
  bool changed = false;
  if (const std::optional<JournalOfTarget> j = read_journal_of(jfd, target)) {
    const int tfd = ::open(target.c_str(), O_RDWR | O_CLOEXEC);
    if (tfd < 0) {  // keep the journal for a job that may open the file
      ::close(jfd);
      return false;
    }
    // A file changed since its job died keeps that change: the journal goes, the file stays.
    if (!dead_job || unchanged_since_the_job(tfd, j->h, j->records, j->complete, j->head_after)) {
      bool ok = true;
      for (auto r = j->records.rbegin(); r != j->records.rend(); ++r) {
        ok = write_all(tfd, r->bytes.data(), r->bytes.size(), static_cast<off_t>(r->addr)) && ok;
      }
      ok = ::ftruncate(tfd, static_cast<off_t>(j->h.original_length)) == 0 && ok;
      ok = ::fsync(tfd) == 0 && ok;
      changed = true;
      if (!ok) {
        // Keep the journal: the next job tries again.
        ::close(tfd);
        ::close(jfd);
        return changed;
      }
    }
    ::close(tfd);
  }
  ::close(jfd);
  ::unlink(journal.c_str());
  sync_dir_of(journal);
  return changed;
}

}  // namespace shardops::io
