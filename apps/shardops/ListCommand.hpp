#pragma once
/// \file
/// \brief `shardops ls FILE[:/group]`: the datasets a file holds, as a user checks them
/// before naming inputs.

#include "Request.hpp"
#include "shardops/route/Comm.hpp"

namespace shardops {
namespace app {

/// Collective (rank 0 reads and prints). \throws shardops::Error, the same on every rank.
void run_list_command(const Comm& comm, const Request& request);

}  // namespace app
}  // namespace shardops
