#include "shardops/ops/detail/DistCommon.hpp"

#include <limits>

#include "shardops/ops/DistOps.hpp"

namespace shardops {

std::size_t per_tensor_overhead_bytes(int ranks) {
  // The sizes of the objects alone are a third of what a tensor costs: each also has Kokkos'
  // record of its allocation and its label, the job's record and name of it, and, written,
  // HDF5's objects for its dataset. kBookkeeping is above what heaptrack and the peak
  // resident memory show per tensor for dynamic-partition with 10^5 outputs or more, held in
  // a deck or written by the command; the layout's counts grow with the ranks.
  constexpr std::size_t kBookkeeping = 2048;
  const auto per_rank = static_cast<std::size_t>(ranks) + 1;
  return kBookkeeping + 3 * sizeof(std::int64_t) * per_rank;
}

void check_tensor_count(const Comm& comm, std::int64_t count, const std::string& what) {
  run_agreed(comm, [&] { check_count(count, per_tensor_overhead_bytes(comm.size()), what); });
}

void agree_index_error(const Comm& comm, bool found, std::int64_t order, const std::string& message,
                       const std::string& subject, bool changed) {
  // A changed input comes first: what the job read is void.
  const PendingError e =
      changed ? PendingError{ErrorKind::IO, input_changed_text(), std::numeric_limits<std::int64_t>::min(), subject}
              : PendingError{ErrorKind::InvalidArgument, message, order, subject};
  agree_on_error(comm, found || changed ? &e : nullptr);
}

std::string call_text(const Comm& comm, const DistTensor& t) {
  t.check_on(comm);
  return std::string(dtype_name(t.dtype())) + t.shape().str();
}

void agree_on_op(const Comm& comm, const char* op, const std::string& arguments) {
  if (comm.size() > 1) agree_on_call(comm, std::string(op) + "(" + arguments + ")");
}

void agree_on_op(const Comm& comm, const char* op, const std::string& arguments, const OpOptions& options) {
  if (comm.size() == 1) return;
  // Of the route's settings only the rows per round: every rank must cut an exchange into the
  // same rounds. Host staging and GPU-aware MPI are each rank's own (route/GpuAwareMpi.hpp).
  agree_on_op(comm, options.tf_name.empty() ? op : options.tf_name.c_str(),
              arguments + " bad_indices=" + (options.bad_indices == BadIndices::Error ? "error" : "ignore") +
                  " denormals=" + (options.denormals == Denormals::Flush ? "flush" : "keep") +
                  " gather_params=" + std::to_string(static_cast<int>(options.gather_params)) +
                  " rows_per_round=" + std::to_string(options.route.rows_per_round()));
}

}  // namespace shardops
