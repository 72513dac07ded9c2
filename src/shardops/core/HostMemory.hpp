#pragma once
/// \file
/// \brief Large allocations that start out cheap to touch.
///
/// Every op writes fresh outputs and scratch arrays of tens to hundreds of MB. With
/// 4 KiB pages the first touch of each page is a fault (measured here: about 0.6 ms
/// per MB, as much as the op's own work); 2 MiB transparent huge pages cut the faults
/// 512-fold. Linux hands them only to regions that ask (THP mode "madvise", the
/// default on Debian), so large host-accessible allocations ask, before their first
/// touch. SHARDOPS_HUGE_PAGES=0 in the environment turns this off (for comparisons).

#include <cstddef>
#include <memory>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/kokkos_ext/KokkosExt.hpp"

namespace shardops {

/// Asks the OS to back the whole 2 MiB pages inside [p, p + bytes) with huge pages
/// (nothing for small ranges, on other systems, or with SHARDOPS_HUGE_PAGES=0).
void advise_huge_pages(void* p, std::size_t bytes) noexcept;

/// \brief \p bytes of zeroed host memory straight from the OS, advised to use huge
/// pages: fresh anonymous pages read as zero, so nothing is written until the op
/// writes (a memset of a 64 MB output costs ~10 ms here). Returns nullptr where that
/// is not available (then allocate and fill as usual). Freed with the last owner.
std::shared_ptr<unsigned char> fresh_zeroed_pages(std::size_t bytes);

/// An uninitialised View of \p n elements; a large one in host-accessible memory is
/// advised to use huge pages before anything touches it.
template <class ViewType>
ViewType allocate_uninitialized(const std::string& label, std::size_t n) {
  ViewType v = kx::make_uninitialized<ViewType>(label, n);
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ViewType::memory_space>::accessible)
    advise_huge_pages(v.data(), v.span() * sizeof(typename ViewType::value_type));
  return v;
}

}  // namespace shardops
