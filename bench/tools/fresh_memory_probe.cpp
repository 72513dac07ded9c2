// How fast this machine hands out fresh memory, the reason for two defaults of the
// library (docs/design.md#memory): huge pages off on a virtual machine that reports its
// free memory to the host, and file writes in pieces of at most 256 KiB.
//
//   fresh_memory_probe [--mb 256] [--idle 30] [--dir DIR] [--pre-mb 0]
//
// Each case starts after --idle seconds without work (the time a guest's kernel takes to
// report memory it freed), so that every case meets memory in the same state:
//   anon small / anon huge   map --mb MiB, touch one byte per 4 KiB page (huge: after
//                            MADV_HUGEPAGE on 2 MiB-aligned memory); small pages also
//                            with every page read first, and after faulting them all in
//                            with one call (shardops::prefault_pages)
//   write N KiB              write --mb MiB into a new file in DIR in pwrite pieces of N KiB
//                            (page cache folios follow the write size), then fsync
// and prints GB/s for each. --pre-mb N first touches N MiB of memory (small pages) and keeps
// it, as a job holds its inputs and outputs while it writes. It also says whether the library's page_reporting check
// sees a reporting guest here.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "shardops/core/HostMemory.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void idle(int s) { std::this_thread::sleep_for(std::chrono::seconds(s)); }

// How an anonymous block is first touched: a write per page, a read of every page before
// the writes (an accumulation into zeros: the shared zero page is mapped first), or one
// MADV_POPULATE_WRITE for the whole block (shardops::prefault_pages) before the writes.
enum class Touch { Write, ReadThenWrite, Populate };

double touch_anon(std::size_t bytes, bool huge, Touch how = Touch::Write) {
  constexpr std::size_t kHuge = std::size_t(2) << 20;
  void* raw = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  auto* p = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(raw) + kHuge - 1) & ~(kHuge - 1));
  if (huge) (void)madvise(p, bytes, MADV_HUGEPAGE);
  const auto t0 = std::chrono::steady_clock::now();
  if (how == Touch::ReadThenWrite) {
    unsigned sum = 0;
    for (std::size_t o = 0; o < bytes; o += 4096) sum += static_cast<const volatile unsigned char*>(p)[o];
    if (sum != 0) std::exit(1);  // fresh pages read as zero
  }
  if (how == Touch::Populate) shardops::prefault_pages(p, bytes);
  for (std::size_t o = 0; o < bytes; o += 4096) p[o] = 1;
  const double s = seconds_since(t0);
  munmap(raw, bytes + kHuge);
  return s;
}

double write_file(const std::string& path, const std::vector<unsigned char>& data, std::size_t piece) {
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t at = 0; at < data.size(); at += piece) {
    const std::size_t n = std::min(piece, data.size() - at);
    if (::pwrite(fd, data.data() + at, n, static_cast<off_t>(at)) != static_cast<ssize_t>(n)) {
      std::perror("pwrite");
      std::exit(1);
    }
  }
  (void)::fsync(fd);
  const double s = seconds_since(t0);
  ::close(fd);
  ::unlink(path.c_str());
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t mb = 256;
  int idle_s = 30;
  std::string dir = "/tmp";
  std::size_t pre_mb = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--mb") {
      mb = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (a == "--idle") {
      idle_s = std::atoi(argv[i + 1]);
    } else if (a == "--dir") {
      dir = argv[i + 1];
    } else if (a == "--pre-mb") {
      pre_mb = std::strtoull(argv[i + 1], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: fresh_memory_probe [--mb 256] [--idle 30] [--dir DIR] [--pre-mb 0]\n");
      return 2;
    }
  }
  const std::size_t bytes = mb << 20;
  std::vector<unsigned char> held(pre_mb << 20, 1);  // touched now, kept to the end
  std::printf("huge pages by default here: %s\n", shardops::huge_pages_in_use() ? "yes" : "no");
  std::printf("| case | seconds | GB/s |\n|---|---:|---:|\n");
  auto row = [&](const char* what, double s) {
    std::printf("| %s | %.3f | %.2f |\n", what, s, static_cast<double>(bytes) / 1e9 / s);
    std::fflush(stdout);
  };
  idle(idle_s);
  row("anon small pages", touch_anon(bytes, false));
  idle(idle_s);
  row("anon small pages, each read before written", touch_anon(bytes, false, Touch::ReadThenWrite));
  idle(idle_s);
  row("anon small pages, faulted in at once (prefault_pages)", touch_anon(bytes, false, Touch::Populate));
  idle(idle_s);
  row("anon huge pages", touch_anon(bytes, true));
  std::vector<unsigned char> data(bytes, 1);  // small pages, touched before the clock
  const std::string path = dir + "/.fresh_memory_probe." + std::to_string(::getpid());
  for (const std::size_t kib : {64, 256, 1024, 2048, 8192}) {
    idle(idle_s);
    const std::string what = "write, " + std::to_string(kib) + " KiB pieces";
    row(what.c_str(), write_file(path, data, kib << 10));
  }
  return 0;
}
