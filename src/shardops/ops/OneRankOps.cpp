// The one-rank ops of Ops.hpp: the distributed ops over a one-rank communicator, so
// that one rank and many run the same code.
#include "shardops/ops/DistOps.hpp"

namespace shardops {

namespace {

std::vector<DistTensor> whole(const std::vector<Tensor>& tensors) {
  std::vector<DistTensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(DistTensor::whole(t));
  return out;
}

}  // namespace

std::vector<Tensor> dynamic_partition(const Tensor& data, const Tensor& partitions, std::int64_t num_partitions,
                                      const OpOptions& options) {
  const std::vector<DistTensor> parts =
      dynamic_partition(Comm::self(), DistTensor::whole(data), DistTensor::whole(partitions), num_partitions, options);
  std::vector<Tensor> out;
  out.reserve(parts.size());
  for (const DistTensor& p : parts) out.push_back(p.local());
  return out;
}

Tensor dynamic_stitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data, const OpOptions& options) {
  return dynamic_stitch(Comm::self(), whole(indices), whole(data), options).local();
}

Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const std::vector<std::int64_t>& shape,
                  const OpOptions& options) {
  return scatter_nd(Comm::self(), DistTensor::whole(indices), DistTensor::whole(updates), shape, options).local();
}

Tensor tensor_scatter(ScatterOp op, const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                      const OpOptions& options) {
  return tensor_scatter(Comm::self(), op, DistTensor::whole(tensor), DistTensor::whole(indices),
                        DistTensor::whole(updates), options)
      .local();
}

Tensor gather_nd(const Tensor& params, const Tensor& indices, const OpOptions& options) {
  return gather_nd(Comm::self(), DistTensor::whole(params), DistTensor::whole(indices), options).local();
}

}  // namespace shardops
