#include "shardops/hdf5/detail/MappedRows.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "shardops/hdf5/StopSignals.hpp"

namespace shardops::io::detail {

namespace {

// File systems whose page cache is this machine's own (statfs f_type).
bool local_file_system(long type) {
  switch (static_cast<unsigned long>(type)) {
    case 0xEF53UL:      // ext2, ext3, ext4
    case 0x58465342UL:  // xfs
    case 0x9123683EUL:  // btrfs
    case 0x01021994UL:  // tmpfs
    case 0xF2F52010UL:  // f2fs
    case 0x794C7630UL:  // overlayfs (containers), over one of these
      return true;
    default: return false;
  }
}

#ifdef MADV_POPULATE_READ
constexpr int kPopulateRead = MADV_POPULATE_READ;
#else
constexpr int kPopulateRead = 22;  // Linux 5.14; older kernels answer EINVAL
#endif

// Closes a descriptor when it goes out of scope.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

std::optional<Tensor> try_mapping(const std::string& file, long long offset, DType dtype, const Shape& shape) {
  const auto bytes = static_cast<long long>(shape.num_elements()) * static_cast<long long>(dtype_size(dtype));
  // Elements at their own alignment (up to 16 bytes: complex128); the kernels move rows in
  // words that every row address aligns to (core/Dispatch.hpp word_selector).
  const long long align = std::min<long long>(static_cast<long long>(dtype_size(dtype)), 16);
  if (bytes <= 0 || offset < 0 || offset % align != 0) return std::nullopt;
  const Descriptor d{::open(file.c_str(), O_RDONLY | O_CLOEXEC)};
  if (d.fd < 0) return std::nullopt;
  struct statfs fs {};
  struct stat st {};
  if (::fstatfs(d.fd, &fs) != 0 || !local_file_system(static_cast<long>(fs.f_type))) return std::nullopt;
  if (::fstat(d.fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < offset + bytes) return std::nullopt;
  const long long page = ::sysconf(_SC_PAGESIZE);
  if (page <= 0) return std::nullopt;
  const long long start = offset - offset % page;
  const auto length = static_cast<std::size_t>(offset + bytes - start);
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, d.fd, static_cast<off_t>(start));
  if (p == MAP_FAILED) return std::nullopt;
  // Maps every page now, in one call (reading what is not cached yet), rather than one
  // fault per few pages inside the kernels; without the call (before Linux 5.14), start
  // reading what is not cached.
  if (::madvise(p, length, kPopulateRead) != 0) static_cast<void>(::madvise(p, length, MADV_WILLNEED));
  std::shared_ptr<MappedRange> guard;
  try {
    guard = std::make_shared<MappedRange>(p, length, file);
  } catch (const std::exception&) {
    ::munmap(p, length);
    return std::nullopt;
  }
  // The guard goes with the deleter, after the pages are unmapped.
  std::shared_ptr<unsigned char> owner(static_cast<unsigned char*>(p),
                                       [length, guard](unsigned char* q) { ::munmap(q, length); });
  return Tensor::adopt_host(dtype, shape, std::move(owner), static_cast<unsigned char*>(p) + (offset - start));
}

}  // namespace

std::optional<Tensor> map_file_rows(const std::string& file, long long offset, DType dtype, const Shape& shape) {
  // Never throws: the ranks agree on the outcome right after, and a rank that threw would
  // leave the others waiting in that agreement.
  try {
    return try_mapping(file, offset, dtype, shape);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace shardops::io::detail
