#include "shardops/core/HostMemory.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace shardops {

namespace {

bool huge_pages_wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("SHARDOPS_HUGE_PAGES");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return wanted;
}

}  // namespace

std::shared_ptr<unsigned char> fresh_zeroed_pages(std::size_t bytes) {
#if defined(__linux__) && defined(MAP_ANONYMOUS)
  if (bytes == 0) return nullptr;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  advise_huge_pages(p, bytes);
  return std::shared_ptr<unsigned char>(static_cast<unsigned char*>(p),
                                        [bytes](unsigned char* q) { (void)munmap(q, bytes); });
#else
  (void)bytes;
  return nullptr;
#endif
}

void advise_huge_pages(void* p, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t(2) << 20;
  if (p == nullptr || bytes < 2 * kHuge || !huge_pages_wanted()) return;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHuge - 1);
  // A hint: if the kernel refuses (no THP), the memory is simply used with small pages.
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace shardops
