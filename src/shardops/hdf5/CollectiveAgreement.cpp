#include "shardops/hdf5/CollectiveAgreement.hpp"

#include <chrono>
#include <iostream>
#include <string>

#include "shardops/hdf5/StopSignals.hpp"

namespace shardops::io {

namespace {
// How long a rank whose collective call failed waits for the others before it takes them
// to be stuck inside the call: long enough for a rank still writing its share, short
// against a user's wait.
constexpr std::chrono::seconds kPatience{5};
}  // namespace

void agree_after_collective_io(const Comm& comm, const std::optional<PendingError>& failed) {
  agree_on_error_or_abort(comm, failed ? &*failed : nullptr, kPatience, [&](const PendingError& e) {
    clean_up_as_if_stopped();
    // One write of the whole line: other ranks' lines and the launcher's cannot land inside it.
    std::cerr << "shardops: error: " + e.message + " (rank " + std::to_string(comm.rank()) +
                     "; the other ranks did not get past the collective HDF5 call that this failure cut short, "
                     "so the job ends here: nothing was committed, the output files are as they were)\n"
              << std::flush;
  });
}

}  // namespace shardops::io
