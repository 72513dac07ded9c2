#pragma once
/// \file
/// \brief One call of an op or of I/O from Python: its communicator, its converted
/// inputs, and the agreement that makes a bad input on one rank an error on all.

#include <pybind11/pybind11.h>

#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "Arrays.hpp"
#include "Communicator.hpp"
#include "shardops/route/DistTensor.hpp"

namespace shardops::python {

/// \brief The GIL given up for as long as it lives, as py::gil_scoped_release does, but
/// taken back in a destructor that may throw: in a daemon thread while the interpreter
/// exits, taking the GIL back ends the thread (pthread_exit, which unwinds its stack), and
/// an unwind out of py::gil_scoped_release's noexcept destructor aborts the whole process.
class ReleasedGil {
 public:
  ReleasedGil() : state_(PyEval_SaveThread()) {}
  ~ReleasedGil() noexcept(false) { PyEval_RestoreThread(state_); }
  ReleasedGil(const ReleasedGil&) = delete;
  ReleasedGil& operator=(const ReleasedGil&) = delete;

 private:
  PyThreadState* state_;
};

/// \brief Held by a call from Python for as long as it runs: calls from several Python
/// threads take turns in the library. Kokkos' execution spaces take one caller at a time,
/// and parallel HDF5 (Debian's) is built without HDF5's thread-safe option: two threads
/// inside it at once crash the process. Waited for without the GIL, so that the thread
/// holding it can always take the GIL back.
class LibraryTurn {
 public:
  /// \throws InternalError once the library is finalized (the interpreter is exiting).
  LibraryTurn() : lock_(mutex(), std::try_to_lock) {
    if (!lock_.owns_lock()) {
      ReleasedGil release;
      lock_.lock();
    }
    if (finalized()) throw InternalError("shardops has been finalized (the interpreter is exiting): no call can run");
  }

  /// \brief Marks the library finalized, holding the turn (a call that is running ends
  /// first): from then on every call fails at once. For the module's exit hook.
  static void finalize() { finalized() = true; }

 private:
  static std::mutex& mutex();
  static bool& finalized();
  std::unique_lock<std::mutex> lock_;
};

class Call {
 public:
  /// \p comm None or one rank: the one-rank ops on whole tensors.
  explicit Call(std::optional<Comm> comm) : comm_(std::move(comm)), inputs_(comm_ ? comm_->rank() : 0) {}

  const std::optional<Comm>& comm() const noexcept { return comm_; }
  const CallInputs& inputs() const noexcept { return inputs_; }

  /// \brief Runs \p convert (which adds the inputs to inputs()); distributed, then
  /// collectively: an error on any rank is raised on all (the lowest rank's), and all
  /// ranks must pass the same input names, dtypes and ranks and the same noted arguments.
  template <class Convert>
  void convert(Convert&& convert) {
    if (!comm_) {
      convert(inputs_);
      return;
    }
    // A Python error while converting (np.asarray failing, say) is bad input too. Its
    // text is taken holding the GIL; the agreement waits for the other ranks without it,
    // so that the process's other Python threads run meanwhile.
    const std::optional<PendingError> pending = pending_error_of([&] {
      try {
        convert(inputs_);
      } catch (const Error&) {
        throw;
      } catch (const std::exception& e) {
        throw InvalidArgument(e.what());
      }
    });
    ReleasedGil release;
    agree_on_error(*comm_, pending ? &*pending : nullptr);
    // The inputs' names, dtypes and ranks, and the noted arguments: a rank whose call
    // differs must not leave the others waiting in the op.
    agree_on_call(*comm_, inputs_.signature());
  }

  /// \brief Collective (after convert()): every input as this rank's block of a
  /// DistTensor (a 0-d input: rank 0's value). One allgather of all inputs' row counts and
  /// trailing dims, instead of one DistTensor::from_local (three collectives) per input.
  /// \throws InvalidArgument (on every rank) if the ranks' trailing dims differ.
  std::vector<DistTensor> dist_inputs() const;

 private:
  LibraryTurn turn_;  ///< first: taken before anything else, given back last
  std::optional<Comm> comm_;
  CallInputs inputs_;
};

}  // namespace shardops::python
