// What a one-op job would save by never holding its output in fresh memory: a gather of
// 64-byte rows written to a new file, two ways (docs/performance-job.md):
//   whole     the output in fresh anonymous memory, faulted in at once as shardops does
//             (shardops::prefault_pages), gathered with streaming stores, then written
//   streamed  the output made 8 MiB at a time in one reused buffer, each piece written
//             as soon as it is made
// Both write as shardops writes (pwrite pieces of 256 KiB, each 8 MiB handed to the disk
// with sync_file_range, one fsync at the end) and free what they used; the table gives
// the median of --reps runs of each part.
//
//   streamed_output_probe [--params-rows 4194304] [--rows 8388608] [--dir /tmp] [--reps 3]
#include <emmintrin.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "shardops/core/HostMemory.hpp"

namespace {

constexpr std::size_t kRow = 64;
constexpr std::size_t kPiece = std::size_t(256) << 10;
constexpr std::size_t kFlushEvery = std::size_t(8) << 20;

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void fail(const char* what) {
  std::perror(what);
  std::exit(1);
}

// out[k] = params[idx[k]] for k in [0, n), prefetching ahead; streaming stores where the
// rows go to memory that is written once, plain stores into a buffer that stays in cache.
void gather(const unsigned char* params, const std::int64_t* idx, unsigned char* out, std::size_t n, bool stream) {
  for (std::size_t k = 0; k < n; ++k) {
    if (k + 16 < n) __builtin_prefetch(params + static_cast<std::size_t>(idx[k + 16]) * kRow);
    const unsigned char* src = params + static_cast<std::size_t>(idx[k]) * kRow;
    unsigned char* dst = out + k * kRow;
    for (std::size_t b = 0; b < kRow; b += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + b));
      if (stream)
        _mm_stream_si128(reinterpret_cast<__m128i*>(dst + b), v);
      else
        _mm_store_si128(reinterpret_cast<__m128i*>(dst + b), v);
    }
  }
  if (stream) _mm_sfence();
}

// pwrite in pieces, starting the disk's writeback every kFlushEvery bytes of the file.
void write_at(int fd, const unsigned char* p, std::size_t n, std::size_t offset) {
  while (n > 0) {
    const std::size_t c = std::min(n, kPiece);
    const ssize_t w = ::pwrite(fd, p, c, static_cast<off_t>(offset));
    if (w <= 0) fail("pwrite");
    const std::size_t end = offset + static_cast<std::size_t>(w);
    if (end / kFlushEvery != offset / kFlushEvery) {
      const std::size_t from = (end / kFlushEvery - 1) * kFlushEvery;
      (void)::sync_file_range(fd, static_cast<off_t>(from), static_cast<off_t>(kFlushEvery), SYNC_FILE_RANGE_WRITE);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
    offset = end;
  }
}

struct Parts {
  double fault = 0, gather = 0, write = 0, fsync = 0, free = 0;
  double total() const { return fault + gather + write + fsync + free; }
};

int open_new(const std::string& path) {
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path.c_str());
  return fd;
}

Parts whole(const unsigned char* params, const std::vector<std::int64_t>& idx, const std::string& path) {
  Parts t;
  const std::size_t bytes = idx.size() * kRow;
  const int fd = open_new(path);
  auto t0 = Clock::now();
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) fail("mmap");
  auto* out = static_cast<unsigned char*>(m);
  shardops::prefault_pages(out, bytes);
  t.fault = since(t0);
  t0 = Clock::now();
  gather(params, idx.data(), out, idx.size(), true);
  t.gather = since(t0);
  t0 = Clock::now();
  write_at(fd, out, bytes, 0);
  t.write = since(t0);
  t0 = Clock::now();
  if (::fsync(fd) != 0) fail("fsync");
  t.fsync = since(t0);
  t0 = Clock::now();
  ::munmap(m, bytes);
  t.free = since(t0);
  ::close(fd);
  ::unlink(path.c_str());
  return t;
}

Parts streamed(const unsigned char* params, const std::vector<std::int64_t>& idx, const std::string& path) {
  Parts t;
  const std::size_t per = kFlushEvery / kRow;  // rows per piece of the output
  const int fd = open_new(path);
  auto t0 = Clock::now();
  void* m = ::mmap(nullptr, kFlushEvery, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) fail("mmap");
  auto* buf = static_cast<unsigned char*>(m);
  shardops::prefault_pages(buf, kFlushEvery);
  t.fault = since(t0);
  for (std::size_t first = 0; first < idx.size(); first += per) {
    const std::size_t n = std::min(per, idx.size() - first);
    t0 = Clock::now();
    gather(params, idx.data() + first, buf, n, false);
    t.gather += since(t0);
    t0 = Clock::now();
    write_at(fd, buf, n * kRow, first * kRow);
    t.write += since(t0);
  }
  t0 = Clock::now();
  if (::fsync(fd) != 0) fail("fsync");
  t.fsync = since(t0);
  t0 = Clock::now();
  ::munmap(m, kFlushEvery);
  t.free = since(t0);
  ::close(fd);
  ::unlink(path.c_str());
  return t;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t params_rows = std::size_t(1) << 22, rows = std::size_t(1) << 23;
  std::string dir = "/tmp";
  int reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--params-rows") {
      params_rows = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (a == "--rows") {
      rows = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (a == "--dir") {
      dir = argv[i + 1];
    } else if (a == "--reps") {
      reps = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr,
                   "usage: streamed_output_probe [--params-rows 4194304] [--rows 8388608] [--dir /tmp] [--reps 3]\n");
      return 2;
    }
  }
  if (params_rows == 0 || rows == 0) {
    std::fprintf(stderr, "streamed_output_probe: --params-rows and --rows must be positive\n");
    return 2;
  }
  std::vector<unsigned char> params(params_rows * kRow, 1);  // touched before any clock
  std::vector<std::int64_t> idx(rows);
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (auto& v : idx) {  // xorshift: rows of params at random, fixed seed
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v = static_cast<std::int64_t>(x % params_rows);
  }
  const std::string path = dir + "/.streamed_output_probe." + std::to_string(::getpid());
  std::vector<Parts> w, s;
  for (int r = 0; r < reps; ++r) {  // interleaved, so both meet the machine in the same state
    w.push_back(whole(params.data(), idx, path));
    s.push_back(streamed(params.data(), idx, path));
  }
  std::printf("gather of %zu rows of %zu bytes from %zu, written to a new file in %s; median of %d\n", rows, kRow,
              params_rows, dir.c_str(), reps);
  std::printf("| output | fault in s | gather s | write s | fsync s | free s | total s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  auto row = [](const char* what, const std::vector<Parts>& p) {
    std::vector<double> f, g, wr, fs, fr, tot;
    for (const Parts& q : p) {
      f.push_back(q.fault);
      g.push_back(q.gather);
      wr.push_back(q.write);
      fs.push_back(q.fsync);
      fr.push_back(q.free);
      tot.push_back(q.total());
    }
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", what, median_of(f), median_of(g), median_of(wr),
                median_of(fs), median_of(fr), median_of(tot));
  };
  row("whole, in fresh memory", w);
  row("streamed, 8 MiB at a time", s);
  return 0;
}
