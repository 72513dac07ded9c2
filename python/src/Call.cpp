#include "Call.hpp"

#include <numeric>

namespace shardops::python {

std::mutex& LibraryTurn::mutex() {
  static std::mutex m;
  return m;
}

bool& LibraryTurn::finalized() {
  static bool done = false;  // read and written holding mutex()
  return done;
}

std::vector<DistTensor> Call::dist_inputs() const {
  const std::vector<Tensor>& tensors = inputs_.tensors();
  std::vector<std::int64_t> mine;  // every non-scalar input's dims, back to back
  for (const Tensor& t : tensors) mine.insert(mine.end(), t.shape().dims().begin(), t.shape().dims().end());
  // The ranks agreed on every input's number of dims (the signature), so all send as many.
  const std::vector<std::int64_t> all = mine.empty() ? mine : comm_->allgather(mine);
  const std::size_t stride = mine.size();
  const int size = comm_->size();
  std::vector<DistTensor> out;
  std::size_t at = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.rank() == 0) {
      out.push_back(DistTensor::from_replicated(*comm_, t));
      continue;
    }
    const auto dims = static_cast<std::size_t>(t.rank());
    std::vector<std::int64_t> counts(static_cast<std::size_t>(size));
    for (int q = 0; q < size; ++q) {
      const std::size_t base = static_cast<std::size_t>(q) * stride + at;
      counts[static_cast<std::size_t>(q)] = all[base];
      for (std::size_t d = 1; d < dims; ++d) {
        if (all[base + d] != all[at + d]) {
          throw InvalidArgument(inputs_.names()[i] + ": the ranks' blocks differ in dimension " + std::to_string(d) +
                                " (rank 0: " + std::to_string(all[at + d]) + ", rank " + std::to_string(q) + ": " +
                                std::to_string(all[base + d]) + ")");
        }
      }
    }
    std::vector<std::int64_t> global(t.shape().dims());
    global[0] = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
    out.emplace_back(t, Shape(std::move(global)), RowLayout(std::move(counts)), comm_->rank());
    at += dims;
  }
  return out;
}

}  // namespace shardops::python
