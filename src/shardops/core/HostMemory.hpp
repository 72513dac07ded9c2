#pragma once
/// \file
/// \brief Large allocations that start out cheap to touch.
///
/// Every op writes fresh outputs and scratch arrays of tens to hundreds of MB. With
/// 4 KiB pages the first touch of each page is a fault, which can cost as much as the
/// op's own work; 2 MiB transparent huge pages cut the number of faults 512-fold.
/// Linux hands them only to regions that ask (THP mode "madvise", the default on
/// Debian), so large host-accessible allocations ask, before their first touch, except
/// on a virtual machine that hands free memory back to its host (virtio-balloon free page
/// reporting), where a fresh huge page is faulted in again on the host at a small
/// fraction of the speed of small pages. SHARDOPS_HUGE_PAGES=1 or 0 in the environment
/// decides instead.
///
/// Even with huge pages, the OS must zero every fresh page on first touch, a large
/// part of the time of an op that writes a large output. Ops called again and again
/// on the same shapes (time steps, batches, a benchmark's repeats) would pay that
/// every call, so large allocations are kept when freed and handed to the next
/// request of (nearly) the same size, as TensorFlow's CPU
/// allocator and PyTorch's caching allocators do. What is kept is capped by
/// SHARDOPS_REUSE_MEMORY_MB (default 2048 per process; 0 turns reuse off): past the
/// cap, everything free is returned to the OS. release_kept_memory() returns it at
/// any time (a long-running program switching to other shapes may call it).
///
/// Two kinds are kept, under that one cap: tensor blocks (raw pages with a shared_ptr
/// owner, so that a cold zeroed tensor still comes free from the OS) and large
/// scratch Views from allocate_uninitialized (Kokkos-managed: the cache holds a
/// reference and hands a View out again once it holds the only one). Device memory
/// is not kept.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Kokkos_Core.hpp>

#include "shardops/kokkos_ext/KokkosExt.hpp"

namespace shardops {

/// Whether large allocations ask for huge pages (the file comment says when).
bool huge_pages_in_use() noexcept;

/// Asks the OS to back the whole 2 MiB pages inside [p, p + bytes) with huge pages
/// (nothing for small ranges, on other systems, or where huge_pages_in_use() is false).
void advise_huge_pages(void* p, std::size_t bytes) noexcept;

/// \brief Faults in the pages of [p, p + bytes) now, writable (one call,
/// MADV_POPULATE_WRITE), for a block the caller will write nearly whole. Touching the
/// pages one by one costs a trap each, and twice that for a page read before it is
/// written (the shared zero page is mapped first, then replaced); streaming stores
/// into lines the OS has just zeroed run at a fraction of their speed, while faulting
/// the block first lets those lines leave the cache before the op writes. The zeroing
/// itself is the same either way. Nothing where the OS lacks the call.
void prefault_pages(void* p, std::size_t bytes) noexcept;

/// \brief prefault_pages for memory an op is about to write, where that helps: when the
/// host runs kernels on one thread. With several (an OpenMP Kokkos) the kernels' own first
/// touches spread the faults over the threads and put each page on the NUMA node of the
/// thread that writes it; one call here would fault it all on one thread, onto one node.
void fault_in_for_writing(void* p, std::size_t bytes) noexcept;

/// A block of host memory of at least the bytes asked for, and whether it reads as
/// zero (fresh pages) or holds whatever its last owner left (reused).
struct HostBlock {
  std::shared_ptr<unsigned char> memory;  ///< nullptr: not available (allocate as usual)
  bool zeroed = false;
};

/// \brief \p bytes of host memory for a large tensor: a kept block that fits when
/// there is one (see the file comment), else fresh pages from the OS (which read as
/// zero). When its last owner drops it, the block is kept for reuse. Thread-safe.
HostBlock reusable_pages(std::size_t bytes);

/// Returns all kept memory (blocks and scratch Views nobody else holds) to the OS:
/// for measurements of cold calls and tests; Kokkos::finalize() calls it too.
void release_kept_memory() noexcept;

/// Bytes kept for reuse now (blocks and free scratch Views).
std::size_t kept_memory_bytes() noexcept;

/// Bytes of large scratch Views in use now (kept ones that someone besides the cache
/// holds): memory the job holds that no tensor counts (core/MemoryBudget.hpp adds it).
std::size_t scratch_in_use_bytes() noexcept;

/// Bytes of large allocations (kKeepFrom or more: tensor blocks and scratch Views)
/// made anew rather than served from kept memory, since the process started: what
/// the OS must zero on their first touch (benchmarks compare first calls with it).
std::size_t new_allocation_bytes() noexcept;

/// Returns all kept memory to the OS when it exceeds the SHARDOPS_REUSE_MEMORY_MB cap.
void enforce_keep_limit() noexcept;

/// Smallest allocation kept for reuse (and, for tensors, taken as fresh OS pages):
/// below it, malloc's own free lists serve. Not much higher: glibc hands blocks above
/// its mmap threshold (which rises only to the sizes freed) fresh pages, or gives them back
/// when freed, so repeated calls would zero their mid-size scratch every time, and a route's
/// arriving owner rows (one int64 per row) would be faulted in inside MPI's copy.
constexpr std::size_t kKeepFrom = std::size_t(1) << 20;

namespace detail {

/// The SHARDOPS_REUSE_MEMORY_MB cap in bytes (0: nothing is kept).
std::size_t keep_limit();

/// A kept size serves a request of \p want bytes when it wastes at most an eighth.
inline bool fits(std::size_t have, std::size_t want) { return have >= want && have - want <= want / 8; }

/// A cache of scratch Views registers how to release and count its free ones, so
/// release_kept_memory() empties every cache.
struct ViewCacheHooks {
  void (*release_free)() noexcept;
  std::size_t (*free_bytes)() noexcept;
  std::size_t (*used_bytes)() noexcept;
};
void register_view_cache(ViewCacheHooks hooks);

/// Adds \p bytes to new_allocation_bytes().
void count_new_allocation(std::size_t bytes) noexcept;

/// Whether a View of this type lives in plain host memory, where faulting its pages in
/// up front only saves faults. Other host-accessible spaces (CUDA's managed memory) would
/// move their pages to the host for it.
template <class ViewType>
constexpr bool plain_host_memory() {
  return std::is_same<typename ViewType::memory_space, Kokkos::HostSpace>::value;
}

/// A new View of \p n elements in host-accessible memory, advised to use huge pages; a large
/// one (kKeepFrom or more) is counted in new_allocation_bytes() and, as scratch is written
/// before it is read, faulted in at once where that helps (fault_in_for_writing, plain host
/// memory only).
template <class ViewType>
ViewType new_host_view(const std::string& label, std::size_t n) {
  ViewType v = kx::make_uninitialized<ViewType>(label, n);
  const std::size_t bytes = v.span() * sizeof(typename ViewType::value_type);
  advise_huge_pages(v.data(), bytes);
  if (bytes >= kKeepFrom) {
    if (plain_host_memory<ViewType>()) fault_in_for_writing(v.data(), bytes);
    count_new_allocation(bytes);
  }
  return v;
}

/// Kept scratch Views of one type: a View is free when the cache holds its only reference.
template <class ViewType>
class KeptViews {
 public:
  static KeptViews& instance() {
    static KeptViews* kept = [] {
      auto* k = new KeptViews;  // never destroyed: emptied by Kokkos::finalize (see .cpp)
      register_view_cache({&release_free_views, &free_view_bytes, &used_view_bytes});
      return k;
    }();
    return *kept;
  }

  /// A free kept View of n elements (a prefix of one a little larger), or a new one,
  /// kept from now on.
  ViewType take(const std::string& label, std::size_t n) {
    enforce_keep_limit();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ViewType* best = nullptr;
      for (ViewType& v : views_) {
        if (v.use_count() == 1 && fits(v.span(), n) && (!best || v.span() < best->span())) best = &v;
      }
      if (best) return Kokkos::subview(*best, std::make_pair(std::size_t(0), n));
    }
    ViewType v = new_host_view<ViewType>(label, n);
    std::lock_guard<std::mutex> lock(mutex_);
    views_.push_back(v);
    return v;
  }

 private:
  static void release_free_views() noexcept {
    KeptViews& k = instance();
    std::lock_guard<std::mutex> lock(k.mutex_);
    k.views_.erase(
        std::remove_if(k.views_.begin(), k.views_.end(), [](const ViewType& v) { return v.use_count() == 1; }),
        k.views_.end());
  }
  static std::size_t free_view_bytes() noexcept { return view_bytes(true); }
  static std::size_t used_view_bytes() noexcept { return view_bytes(false); }
  // Bytes of the kept Views that are free (only the cache holds them) or in use.
  static std::size_t view_bytes(bool free) noexcept {
    KeptViews& k = instance();
    std::lock_guard<std::mutex> lock(k.mutex_);
    std::size_t bytes = 0;
    for (const ViewType& v : k.views_)
      if ((v.use_count() == 1) == free) bytes += v.span() * sizeof(typename ViewType::value_type);
    return bytes;
  }

  std::mutex mutex_;
  std::vector<ViewType> views_;
};

}  // namespace detail

/// An uninitialised View of \p n elements, for scratch the caller writes before it reads;
/// a large one in host-accessible memory is advised to use huge pages and, when new,
/// faulted in at once (fault_in_for_writing), and is a kept one when one fits (see the file
/// comment; device memory is not kept).
template <class ViewType>
ViewType allocate_uninitialized(const std::string& label, std::size_t n) {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ViewType::memory_space>::accessible) {
    if (n * sizeof(typename ViewType::value_type) >= kKeepFrom && detail::keep_limit() > 0)
      return detail::KeptViews<ViewType>::instance().take(label, n);
    return detail::new_host_view<ViewType>(label, n);
  } else {
    return kx::make_uninitialized<ViewType>(label, n);
  }
}

}  // namespace shardops
