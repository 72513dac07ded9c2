#pragma once
/// \file
/// \brief mpi4py communicators -> shardops Comms, and the agreement every distributed
/// call starts with.

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "shardops/route/Comm.hpp"

namespace shardops::python {

namespace py = pybind11;

/// \brief The Comm for \p comm: None means MPI_COMM_SELF, else an mpi4py
/// communicator. The Comm (a dup) is cached on the communicator as an MPI attribute, so
/// it is made once per communicator (collectively, on the first call) and freed with it.
/// \throws TypeError if \p comm is not an mpi4py Comm.
Comm comm_or_self(const py::handle& comm);

/// The Comm of a distributed call, or nothing when \p comm is None or has one rank
/// (the call then runs the one-rank ops on whole tensors).
std::optional<Comm> distributed_comm(const py::handle& comm);

}  // namespace shardops::python
