/// \file
/// \brief shardops._shardops: starts Kokkos, maps shardops' errors to the package's
/// exception classes (shardops/_errors.py) and binds the ops and I/O.

#include <mpi.h>

#include <cstring>

#include <Kokkos_Core.hpp>

#include <pybind11/stl.h>

#include "Arrays.hpp"
#include "Bindings.hpp"
#include "Call.hpp"
#include "Communicator.hpp"
#include "shardops/Version.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/ops/OpRegistry.hpp"
#include "shardops/route/LauncherLink.hpp"
#include "shardops/route/MpiStartup.hpp"

namespace shardops::python {
namespace {

const char* exception_class(const Error& e) {
  switch (e.kind()) {
    case ErrorKind::InvalidArgument:
      if (std::strncmp(e.what(), kNoKernelText, sizeof(kNoKernelText) - 1) == 0) return "NotFoundError";
      return out_of_memory_text(e.what()) ? "ResourceExhaustedError" : "InvalidArgumentError";
    case ErrorKind::IO: return "IOError";
    case ErrorKind::Internal: break;
  }
  return "InternalError";
}

void raise_as_python(const Error& e) {
  const py::object cls = py::module_::import("shardops._errors").attr(exception_class(e));
  const py::object error = cls(e.what());
  error.attr("subject") = e.subject();
  PyErr_SetObject(cls.ptr(), error.ptr());
}

/// Kokkos lives as long as the interpreter: started at import, finalized at exit
/// (atexit, registered by the package), after the memory kept for reuse is returned. A
/// daemon thread may still be inside a call then: finalized once that call has ended
/// (LibraryTurn), and no call starts after.
void finalize_kokkos() {
  const LibraryTurn turn;
  LibraryTurn::finalize();
  release_kept_memory();
  if (Kokkos::is_initialized()) Kokkos::finalize();
}

}  // namespace
}  // namespace shardops::python

PYBIND11_MODULE(_shardops, m) {
  using namespace shardops::python;
  shardops::skip_absent_mtls();  // before mpi4py starts MPI (no effect if it has)
  shardops::skip_path_bound_sharedfp();
  py::module_::import("mpi4py.MPI");  // MPI is started by mpi4py, before Kokkos
  int mpi_started = 0;
  MPI_Initialized(&mpi_started);
  if (mpi_started) shardops::prompt_launcher_link();  // else MPI_Finalize waits ~40 ms at exit
  if (!Kokkos::is_initialized()) Kokkos::initialize();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const shardops::Error& e) {
      raise_as_python(e);
    }
  });
  m.def("_finalize", &finalize_kokkos);
  m.def("empty", &empty_array, py::arg("shape"), py::arg("dtype"));
  m.attr("__version__") = SHARDOPS_VERSION_STRING;
  m.attr("no_kernel_text") = shardops::kNoKernelText;
  bind_ops(m);
  bind_io(m);
}
