#pragma once
/// \file
/// \brief How string tensors hold their strings: 8-byte handles into a pool of
/// offsets + bytes.
///
/// Why this representation: a string tensor's elements are StringHandles, one per
/// element, and its bytes live once in a StringPool (entry k is
/// bytes[offsets[k], offsets[k+1])). Every movement op (partition, stitch, gather,
/// scatter-update) then moves strings exactly as it moves any 8-byte element, with
/// the same validation, routing and deterministic last-writer rules, and memory is
/// 8 bytes per element plus the actual string bytes. Fixed-width rows sized by the
/// longest string would cost (elements x longest) instead: one 64 KiB string among
/// a million labels would need 64 GiB. Across ranks only handles travel through
/// the op's routing; the bytes of the strings a rank ends up with are fetched once,
/// from the rank that holds them (route/StringExchange.hpp).
///
/// A handle names the rank whose pool holds the string ("home") and the entry
/// there, so handles stay meaningful while they travel; 0 is the empty string, so
/// zero-filled outputs (rows no index names, ScatterNd's start) are empty strings,
/// as in TensorFlow. Pools are immutable once built: tensors share them freely.

#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/core/Kokkos.hpp"

namespace shardops {

/// One string element: 0 = "", else ((home << kHandleEntryBits) | entry) + 1.
using StringHandle = std::uint64_t;

/// Entries per pool: 2^40 (a trillion strings per rank); homes: 2^23 ranks.
inline constexpr int kHandleEntryBits = 40;

KOKKOS_INLINE_FUNCTION StringHandle make_string_handle(int home, std::int64_t entry) {
  return ((static_cast<StringHandle>(home) << kHandleEntryBits) | static_cast<StringHandle>(entry)) + 1;
}
KOKKOS_INLINE_FUNCTION int string_handle_home(StringHandle h) { return static_cast<int>((h - 1) >> kHandleEntryBits); }
KOKKOS_INLINE_FUNCTION std::int64_t string_handle_entry(StringHandle h) {
  return static_cast<std::int64_t>((h - 1) & ((StringHandle(1) << kHandleEntryBits) - 1));
}

/// How strings were stored in HDF5, kept so an output is written the way its
/// input was (h5py's `string_dtype()` is variable-length UTF-8; `S<n>` is
/// fixed-length ASCII). Tensors made in C++ default to variable-length UTF-8.
struct StringFormat {
  bool fixed_length = false;
  std::int64_t width = 0;  ///< fixed_length: bytes per element as read (outputs may widen)
  bool utf8 = true;        ///< else ASCII
};

/// \brief The strings of one rank's string tensors: entry k is
/// bytes[offsets[k], offsets[k+1]). `home` is the rank whose handles name entries
/// of this pool (0 outside distributed use).
struct StringPool {
  Kokkos::View<std::int64_t*, MemSpace> offsets;  ///< entries + 1 (empty View: no entries)
  Kokkos::View<char*, MemSpace> bytes;
  int home = 0;
  StringFormat format;

  std::int64_t entries() const noexcept {
    return offsets.extent(0) == 0 ? 0 : static_cast<std::int64_t>(offsets.extent(0)) - 1;
  }
  std::int64_t nbytes() const noexcept { return static_cast<std::int64_t>(bytes.extent(0)); }
};

}  // namespace shardops
