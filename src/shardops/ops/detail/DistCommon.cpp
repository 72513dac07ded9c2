#include "shardops/ops/detail/DistCommon.hpp"

#include "shardops/ops/DistOps.hpp"

namespace shardops {

std::size_t per_tensor_overhead_bytes(int ranks) {
  const auto per_rank = static_cast<std::size_t>(ranks) + 1;
  return sizeof(DistTensor) + sizeof(Tensor) + 3 * sizeof(std::int64_t) * per_rank + 2 * sizeof(std::string);
}

void check_tensor_count(const Comm& comm, std::int64_t count, const std::string& what) {
  run_agreed(comm, [&] { check_count(count, per_tensor_overhead_bytes(comm.size()), what); });
}

void agree_index_error(const Comm& comm, bool found, std::int64_t order, const std::string& message,
                       const std::string& subject) {
  PendingError e{ErrorKind::InvalidArgument, message, order, subject};
  agree_on_error(comm, found ? &e : nullptr);
}

}  // namespace shardops
