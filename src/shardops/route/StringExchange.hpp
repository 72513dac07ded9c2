#pragma once
/// \file
/// \brief Moving string bytes between ranks (core/StringPool.hpp explains the
/// handle + pool representation).
///
/// A distributed op moves a string tensor's handles through its usual routing;
/// the handles it ends with may name strings held by other ranks. fetch_strings()
/// then brings each of those strings once, from the rank that holds it, with the
/// plan that routes the requests (ExchangePlan: one Alltoall of counts, Alltoallv
/// of entry numbers, of lengths back, then of the bytes back), so bytes travel
/// once and only for the strings a rank keeps.

#include <vector>

#include "shardops/core/Tensor.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/DistTensor.hpp"

namespace shardops {

/// \brief Collective: \p handles with every string it names brought to this rank:
/// a new pool homed at this rank, one entry per element in element order. Handles
/// homed at this rank name entries of \p own.
Tensor fetch_strings(const Comm& comm, const Tensor& handles, const StringPool& own,
                     const RouteOptions& route = RouteOptions());

/// Collective: \p t (handles homed anywhere) resolved with fetch_strings().
DistTensor resolve_strings(const Comm& comm, const DistTensor& t, const StringPool& own,
                           const RouteOptions& route = RouteOptions());

/// \brief Collective: string inputs prepared for an op that mixes their elements:
/// input m moved to the layout of \p layout_of[m] (nullptr: left where it is), and
/// every rank's blocks rebased onto one pool of that rank (share_string_pool).
std::vector<DistTensor> share_dist_string_pool(const Comm& comm, const std::vector<DistTensor>& inputs,
                                               const std::vector<const DistTensor*>& layout_of,
                                               const RouteOptions& route = RouteOptions());

/// Collective: the whole string tensor on every rank, its pool homed at this rank.
Tensor allgather_strings(const Comm& comm, const DistTensor& t);

}  // namespace shardops
