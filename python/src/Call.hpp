#pragma once
/// \file
/// \brief One call of an op or of I/O from Python: its communicator, its converted
/// inputs, and the agreement that makes a bad input on one rank an error on all.

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <utility>

#include "Arrays.hpp"
#include "Communicator.hpp"
#include "shardops/dist/DistTensor.hpp"

namespace shardops::python {

class Call {
 public:
  /// \p comm None or one rank: the one-rank ops on whole tensors.
  explicit Call(std::optional<Comm> comm) : comm_(std::move(comm)) {}

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
    // A Python error while converting (np.asarray failing, say) is bad input too.
    run_agreed(*comm_, [&] {
      try {
        convert(inputs_);
      } catch (const Error&) {
        throw;
      } catch (const std::exception& e) {
        throw InvalidArgument(e.what());
      }
    });
    py::gil_scoped_release release;
    agree_on_signature(*comm_, inputs_.signature());
  }

  /// Collective: input \p t as this rank's block (a scalar: rank 0's value).
  DistTensor dist(const Tensor& t) const {
    return t.rank() == 0 ? DistTensor::from_replicated(*comm_, t) : DistTensor::from_local(*comm_, t);
  }

 private:
  std::optional<Comm> comm_;
  CallInputs inputs_;
};

}  // namespace shardops::python
