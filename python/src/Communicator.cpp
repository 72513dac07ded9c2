#include "Communicator.hpp"

#include <cstdint>

namespace shardops::python {
namespace {

int delete_cached_comm(MPI_Comm, int, void* attribute, void*) {
  delete static_cast<Comm*>(attribute);
  return MPI_SUCCESS;
}

int comm_keyval() {
  static const int keyval = [] {
    int k = MPI_KEYVAL_INVALID;
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &delete_cached_comm, &k, nullptr),
              "MPI_Comm_create_keyval");
    return k;
  }();
  return keyval;
}

Comm cached_comm(MPI_Comm parent) {
  void* attribute = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(parent, comm_keyval(), &attribute, &found), "MPI_Comm_get_attr");
  if (found) return *static_cast<Comm*>(attribute);
  auto* comm = new Comm(parent);
  check_mpi(MPI_Comm_set_attr(parent, comm_keyval(), comm), "MPI_Comm_set_attr");
  return *comm;
}

// MPI must be running for any call that moves data between ranks or opens a file: mpi4py
// starts it when the extension is imported, unless the program set mpi4py.rc.initialize
// to False (and has not called MPI.Init() yet) or has called MPI.Finalize().
void require_mpi() {
  int started = 0, finished = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&finished);
  if (finished) throw InvalidArgument("MPI has been finalized (MPI.Finalize()): shardops needs MPI running");
  if (!started)
    throw InvalidArgument(
        "MPI is not running (mpi4py.rc.initialize = False and no MPI.Init() yet): shardops needs MPI running");
}

MPI_Comm handle_of(const py::handle& comm) {
  require_mpi();
  if (comm.is_none()) return MPI_COMM_SELF;
  // mpi4py's own MPI_Comm (the library both are linked with); _addressof raises
  // TypeError for anything that is not an mpi4py communicator.
  const py::module_ mpi = py::module_::import("mpi4py.MPI");
  if (!py::isinstance(comm, mpi.attr("Comm"))) throw py::type_error("comm must be None or an mpi4py.MPI.Comm");
  const auto address = mpi.attr("_addressof")(comm).cast<std::uintptr_t>();
  const MPI_Comm handle = *reinterpret_cast<const MPI_Comm*>(address);
  if (handle == MPI_COMM_NULL) throw py::value_error("comm is MPI.COMM_NULL");
  int inter = 0;
  check_mpi(MPI_Comm_test_inter(handle, &inter), "MPI_Comm_test_inter");
  if (inter) throw py::type_error("comm must be an intracommunicator, not an intercommunicator");
  return handle;
}

}  // namespace

Comm comm_or_self(const py::handle& comm) { return cached_comm(handle_of(comm)); }

std::optional<Comm> distributed_comm(const py::handle& comm) {
  if (comm.is_none()) return std::nullopt;  // no MPI call: a one-rank op runs without MPI
  const MPI_Comm handle = handle_of(comm);
  int size = 1;
  check_mpi(MPI_Comm_size(handle, &size), "MPI_Comm_size");
  if (size == 1) return std::nullopt;
  return cached_comm(handle);
}

}  // namespace shardops::python
