#include "shardops/ops/DistCommon.hpp"

#include "shardops/ops/DistOps.hpp"

namespace shardops {

namespace {
std::int64_t g_last_bytes_sent = 0;
}

std::size_t per_tensor_overhead_bytes(int ranks) {
  const auto per_rank = static_cast<std::size_t>(ranks) + 1;
  return sizeof(DistTensor) + sizeof(Tensor) + 3 * sizeof(std::int64_t) * per_rank + 2 * sizeof(std::string);
}

void check_tensor_count(const Comm& comm, std::int64_t count, const std::string& what) {
  run_agreed(comm, [&] { check_count(count, per_tensor_overhead_bytes(comm.size()), what); });
}

std::int64_t last_bytes_sent() { return g_last_bytes_sent; }
void set_last_bytes_sent(std::int64_t bytes) { g_last_bytes_sent = bytes; }

DistTensor align_to(const Comm& comm, const DistTensor& data, const DistTensor& index) {
  if (index.is_scalar()) {
    if (data.is_scalar()) return data;
    return data.redistribute(comm, RowLayout::on_rank(data.layout().total(), comm.size(), 0));
  }
  if (data.is_scalar() || data.layout() == index.layout()) return data;
  if (data.layout().total() != index.layout().total()) return data;  // shape check will report it
  return data.redistribute(comm, index.layout());
}

void agree_index_error(const Comm& comm, bool found, std::int64_t order, const std::string& message,
                       const std::string& subject) {
  PendingError e{ErrorKind::InvalidArgument, message, order, subject};
  agree_on_error(comm, found ? &e : nullptr);
}

}  // namespace shardops
