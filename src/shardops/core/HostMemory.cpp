#include "shardops/core/HostMemory.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "shardops/core/Error.hpp"
#include "shardops/core/Settings.hpp"

namespace shardops {

namespace {

/// Whether this system is a virtual machine that hands free memory back to its host in
/// blocks of a huge page or less (virtio-balloon free page reporting): the host then
/// unmaps them, and a huge page drawn from them is faulted in again on the host, many
/// times slower than small pages, which come from blocks the kernel keeps split
/// (bench/tools/fresh_memory_probe measures both).
bool host_takes_back_free_memory() {
#if defined(__linux__)
  std::ifstream order_file("/sys/module/page_reporting/parameters/page_reporting_order");
  int order = -1;
  if (!(order_file >> order) || order < 0 || order > 9) return false;  // 9: 2 MiB of 4 KiB pages
  std::error_code ec;
  const std::filesystem::path balloons("/sys/bus/virtio/drivers/virtio_balloon");
  for (const auto& device : std::filesystem::directory_iterator(balloons, ec)) {
    // One character per feature bit; bit 5 is VIRTIO_BALLOON_F_REPORTING.
    std::ifstream features(device.path() / "features");
    std::string bits;
    if (features >> bits && bits.size() > 5 && bits[5] == '1') return true;
  }
#endif
  return false;
}

/// SHARDOPS_HUGE_PAGES=1 or 0 decides; unset, huge pages except where the host takes
/// free memory back (above): there a one-op job, which touches all its memory once,
/// would spend seconds faulting it in, while repeated calls on kept memory lose less
/// than 2x with small pages.
}  // namespace

bool huge_pages_in_use() noexcept {
  static const bool wanted = [] {
    try {
      if (const std::optional<bool> chosen = switch_setting("SHARDOPS_HUGE_PAGES")) return *chosen;
    } catch (const Error&) {  // a value it does not take: check_settings() says so, as unset here
    }
    return !host_takes_back_free_memory();
  }();
  return wanted;
}

namespace {

std::atomic<std::size_t>& new_bytes() {
  static std::atomic<std::size_t> bytes{0};
  return bytes;
}

/// The whole pages of \p page bytes (a power of two) inside [p, p + bytes): what madvise
/// may be given for that range without touching memory outside it.
struct PageRange {
  void* begin = nullptr;
  std::size_t bytes = 0;
};
[[maybe_unused]] PageRange whole_pages_inside(void* p, std::size_t bytes, std::uintptr_t page) {
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) & ~(page - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(page - 1);
  if (end <= begin) return PageRange{};
  return PageRange{reinterpret_cast<void*>(begin), static_cast<std::size_t>(end - begin)};
}

/// One mapping: its start and length.
struct Block {
  unsigned char* p = nullptr;
  std::size_t bytes = 0;
};

/// \p bytes straight from the OS (zero), advised to use huge pages; nullptr if refused.
unsigned char* map_fresh_pages(std::size_t bytes) {
#if defined(__linux__) && defined(MAP_ANONYMOUS)
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  advise_huge_pages(p, bytes);
  return static_cast<unsigned char*>(p);
#else
  (void)bytes;
  return nullptr;
#endif
}

void unmap_pages(unsigned char* p, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MAP_ANONYMOUS)
  (void)munmap(p, bytes);
#else
  (void)p;
  (void)bytes;
#endif
}

/// The scratch View caches (HostMemory.hpp), and whether Kokkos::finalize will empty them.
struct ViewCaches {
  std::mutex mutex;
  std::vector<detail::ViewCacheHooks> hooks;
  bool finalize_hook = false;
};

ViewCaches& view_caches() {
  static ViewCaches* caches = new ViewCaches;  // never destroyed, like the caches
  return *caches;
}

/// The registered caches' hooks, copied under the lock (a hook takes its cache's own).
std::vector<detail::ViewCacheHooks> view_cache_hooks() {
  std::lock_guard<std::mutex> lock(view_caches().mutex);
  return view_caches().hooks;
}

std::size_t free_view_bytes() noexcept {
  std::size_t bytes = 0;
  for (const auto& h : view_cache_hooks()) bytes += h.free_bytes();
  return bytes;
}

/// Freed blocks kept for the next request of their size. Never destroyed: tensors in
/// static storage may give their blocks back after static destruction began.
class KeptBlocks {
 public:
  static KeptBlocks& instance() {
    static KeptBlocks* kept = new KeptBlocks;
    return *kept;
  }

  /// The smallest kept block that fits \p bytes (detail::fits), or none.
  Block take(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto best = blocks_.end();
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (detail::fits(it->bytes, bytes) && (best == blocks_.end() || it->bytes < best->bytes)) best = it;
    }
    if (best == blocks_.end()) return Block{};
    const Block b = *best;
    blocks_.erase(best);
    bytes_ -= b.bytes;
    return b;
  }

  /// Keeps \p b (enforce_keep_limit() trims later), or unmaps it when reuse is off.
  void give_back(const Block& b) noexcept {
    if (detail::keep_limit() > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      try {
        blocks_.push_back(b);
        bytes_ += b.bytes;
        return;
      } catch (...) {  // no memory for the list entry: release the block instead
      }
    }
    unmap_pages(b.p, b.bytes);
  }

  void release_all() noexcept {
    std::vector<Block> released;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      released.swap(blocks_);
      bytes_ = 0;
    }
    for (const Block& b : released) unmap_pages(b.p, b.bytes);
  }

  std::size_t bytes() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }

 private:
  std::mutex mutex_;
  std::vector<Block> blocks_;
  std::size_t bytes_ = 0;
};

std::shared_ptr<unsigned char> owned(const Block& b) {
  return std::shared_ptr<unsigned char>(b.p, [b](unsigned char*) { KeptBlocks::instance().give_back(b); });
}

}  // namespace

HostBlock reusable_pages(std::size_t bytes) {
  if (bytes == 0) return HostBlock{};
  if (detail::keep_limit() > 0) {
    enforce_keep_limit();
    const Block kept = KeptBlocks::instance().take(bytes);
    if (kept.p) return HostBlock{owned(kept), false};
  }
  unsigned char* p = map_fresh_pages(bytes);
  if (!p) return HostBlock{};
  detail::count_new_allocation(bytes);
  return HostBlock{owned(Block{p, bytes}), true};
}

void release_kept_memory() noexcept {
  KeptBlocks::instance().release_all();
  for (const auto& h : view_cache_hooks()) h.release_free();
}

std::size_t kept_memory_bytes() noexcept { return KeptBlocks::instance().bytes() + free_view_bytes(); }

std::size_t scratch_in_use_bytes() noexcept {
  std::size_t bytes = 0;
  for (const auto& h : view_cache_hooks()) bytes += h.used_bytes();
  return bytes;
}

void enforce_keep_limit() noexcept {
  if (kept_memory_bytes() > detail::keep_limit()) release_kept_memory();
}

std::size_t new_allocation_bytes() noexcept { return new_bytes().load(std::memory_order_relaxed); }

namespace detail {

void count_new_allocation(std::size_t bytes) noexcept { new_bytes().fetch_add(bytes, std::memory_order_relaxed); }

std::size_t keep_limit() {
  static const std::size_t limit = [] {
    unsigned long long mb = 2048;
    try {
      mb = count_setting("SHARDOPS_REUSE_MEMORY_MB").value_or(mb);
    } catch (const Error&) {  // a value it does not take: check_settings() says so, as unset here
    }
    return static_cast<std::size_t>(std::min<unsigned long long>(mb, std::numeric_limits<std::size_t>::max() >> 20))
           << 20;
  }();
  return limit;
}

void register_view_cache(ViewCacheHooks hooks) {
  ViewCaches& caches = view_caches();
  std::lock_guard<std::mutex> lock(caches.mutex);
  caches.hooks.push_back(hooks);
  // Kept Views are Kokkos allocations: they must go before Kokkos does.
  if (!caches.finalize_hook) {
    Kokkos::push_finalize_hook([] { release_kept_memory(); });
    caches.finalize_hook = true;
  }
}

}  // namespace detail

void advise_huge_pages(void* p, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t(2) << 20;
  if (p == nullptr || bytes < 2 * kHuge || !huge_pages_in_use()) return;
  // A hint: if the kernel refuses (no THP), the memory is simply used with small pages.
  const PageRange r = whole_pages_inside(p, bytes, kHuge);
  if (r.bytes > 0) (void)madvise(r.begin, r.bytes, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void prefault_pages(void* p, std::size_t bytes) noexcept {
#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL, and the pages fault as they are written
#endif
  // madvise takes whole pages: those inside the range (a View's data starts past its
  // header, not on a page); the pages at its ends fault as they are written.
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  if (p == nullptr || page == 0 || (page & (page - 1)) != 0) return;
  const PageRange r = whole_pages_inside(p, bytes, page);
  if (r.bytes > 0) (void)madvise(r.begin, r.bytes, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)bytes;
#endif
}

void fault_in_for_writing(void* p, std::size_t bytes) noexcept {
  if (kx::concurrency(Kokkos::DefaultHostExecutionSpace()) > 1) return;
  prefault_pages(p, bytes);
}

}  // namespace shardops
