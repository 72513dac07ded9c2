#pragma once
/// \file
/// \brief Pieces shared by the distributed ops (not public API).

#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

#include "shardops/dist/Comm.hpp"

namespace shardops {

/// Records the bytes the op sent (read back by last_bytes_sent()).
void set_last_bytes_sent(std::int64_t bytes);

/// Collective: raises on every rank the bad-index error with the smallest \p order
/// among the ranks that \p found one.
void agree_index_error(const Comm& comm, bool found, std::int64_t order, const std::string& message,
                       const std::string& subject);

/// Device functor: the int64 value of row i of a received array (a target row).
struct ReceivedRow {
  const std::int64_t* rows;
  KOKKOS_INLINE_FUNCTION std::int64_t operator()(const std::int64_t i) const { return rows[i]; }
};

}  // namespace shardops
