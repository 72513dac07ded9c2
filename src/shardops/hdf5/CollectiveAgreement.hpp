#pragma once
/// \file
/// \brief The agreement after collective HDF5 calls into an output file (creating,
/// writing and closing datasets and files). Such a call is several MPI calls inside HDF5;
/// an error on some ranks only (a write past the file size limit, where the other ranks'
/// rows fit) makes them leave it part-way, while another rank waits inside it for an MPI
/// call that never comes, where no agreement can reach it. So a rank with an error waits a
/// few seconds for the others to join the agreement; if they do not, it cleans up what a
/// stop signal would, says why, and ends the whole job (MPI_Abort with its error's exit
/// code; mpirun then stops the other ranks, whose stop handlers clean up theirs).

#include <optional>
#include <utility>

#include "shardops/route/Comm.hpp"

namespace shardops::io {

/// \brief Collective: agree_on_error_or_abort for the step after collective HDF5 calls
/// into an output (see the file comment); \p failed is this rank's error, if any.
void agree_after_collective_io(const Comm& comm, const std::optional<PendingError>& failed);

/// \brief Collective: run_agreed for a \p body that makes collective HDF5 calls into an
/// output file.
template <class Body>
void run_agreed_collective_io(const Comm& comm, Body&& body) {
  agree_after_collective_io(comm, pending_error_of(std::forward<Body>(body)));
}

}  // namespace shardops::io
