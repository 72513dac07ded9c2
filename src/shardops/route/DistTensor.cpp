#include "shardops/route/DistTensor.hpp"

#include "shardops/kernels/StringKernels.hpp"
#include "shardops/route/StringExchange.hpp"
#include "shardops/route/detail/ExchangePlan.hpp"

namespace shardops {

namespace {
// Local shape of a block of `rows` rows of a tensor of global shape `global`.
Shape block_shape(const Shape& global, std::int64_t rows, bool owns_scalar) {
  if (global.rank() == 0) return owns_scalar ? Shape() : Shape{0};
  return global.with_dim0(rows);
}
}  // namespace

DistTensor::DistTensor(Tensor local, Shape global_shape, RowLayout layout, int rank)
    : local_(std::move(local)), shape_(std::move(global_shape)), layout_(std::move(layout)), rank_(rank) {
  // A caller's mistakes (a block, layout or rank that do not fit together): InvalidArgument.
  if (rank_ < 0 || rank_ >= layout_.nranks()) {
    throw InvalidArgument("DistTensor: rank " + std::to_string(rank_) + " of a layout over " +
                          std::to_string(layout_.nranks()) + " ranks");
  }
  const Shape expected = block_shape(shape_, layout_.count(rank_), layout_.count(rank_) > 0);
  if (local_.shape() != expected) {
    throw InvalidArgument("DistTensor: rank " + std::to_string(rank_) + " holds " + local_.shape().str() +
                          ", layout says " + expected.str() + " of " + shape_.str());
  }
  if (shape_.rank() > 0 && layout_.total() != shape_.dim(0)) {
    throw InvalidArgument("DistTensor: layout of " + std::to_string(layout_.total()) + " rows for shape " +
                          shape_.str());
  }
}

DistTensor DistTensor::with_replica(Tensor all) const {
  if (all.dtype() != dtype() || all.shape() != shape_) {
    throw InternalError("DistTensor::with_replica: " + all.shape().str() + " " + dtype_name(all.dtype()) + " for " +
                        shape_.str() + " " + dtype_name(dtype()));
  }
  DistTensor t = *this;
  t.replica_ = std::move(all);
  t.has_replica_ = true;
  return t;
}

void DistTensor::check_on(const Comm& comm) const {
  if (layout_.nranks() == comm.size() && rank_ == comm.rank()) return;
  const auto ranks = [](int n) { return std::to_string(n) + (n == 1 ? " rank" : " ranks"); };
  throw InvalidArgument("a " + std::string(dtype_name(dtype())) + shape_.str() + " tensor laid out over " +
                        ranks(layout_.nranks()) + " (this process's block being rank " + std::to_string(rank_) +
                        "'s) was given with a communicator of " + ranks(comm.size()) + " (this process its rank " +
                        std::to_string(comm.rank()) + "): pass the communicator the tensor was made with");
}

DistTensor DistTensor::from_local(const Comm& comm, const Tensor& local) {
  const RowLayout layout = RowLayout::from_local(comm, local.rows());
  // The dtype and the trailing dims must agree: compare every rank's with rank 0's.
  const Shape tail = local.rank() == 0 ? Shape() : local.shape().suffix(1);
  const std::string root_dtype = comm.broadcast(dtype_name(local.dtype()), 0);
  if (comm.max(root_dtype != dtype_name(local.dtype()) ? 1 : 0))
    throw InvalidArgument("DistTensor::from_local: ranks disagree on the dtype of the tensor (rank 0 has " +
                          root_dtype + ")");
  std::vector<std::int64_t> mine{local.rank()};
  mine.insert(mine.end(), tail.dims().begin(), tail.dims().end());
  const std::string root_dims = comm.broadcast(Shape(std::vector<std::int64_t>(mine)).str(), 0);
  const std::int64_t mismatch = comm.max(Shape(std::vector<std::int64_t>(mine)).str() != root_dims ? 1 : 0);
  if (mismatch)
    throw InvalidArgument("DistTensor::from_local: ranks disagree on the rank or trailing dims of the tensor");
  if (local.rank() == 0) throw InvalidArgument("DistTensor::from_local: a scalar cannot be split by rows");
  // A rank's string handles must name its own pool (StringPool's home).
  const Tensor block =
      is_string(local.dtype()) && local.strings().home != comm.rank() ? compact_strings(local, comm.rank()) : local;
  return DistTensor(block, tail.prepend(layout.total()), layout, comm.rank());
}

DistTensor DistTensor::whole(const Tensor& t) {
  // The one rank's string handles must name its own pool (home 0).
  const Tensor own = is_string(t.dtype()) && t.strings().home != 0 ? compact_strings(t, 0) : t;
  if (t.rank() == 0) return DistTensor(own, Shape(), RowLayout::on_rank(1, 1, 0), 0);
  return DistTensor(own, t.shape(), RowLayout::on_rank(t.shape().dim(0), 1, 0), 0);
}

DistTensor DistTensor::from_replicated(const Comm& comm, const Tensor& full) {
  if (full.rank() == 0) return from_replicated(comm, full, RowLayout::on_rank(1, comm.size(), 0));
  return from_replicated(comm, full, RowLayout::balanced(full.shape().dim(0), comm.size()));
}

DistTensor DistTensor::from_replicated(const Comm& comm, const Tensor& full, const RowLayout& layout) {
  const int r = comm.rank();
  if (layout.nranks() != comm.size())
    throw InvalidArgument("DistTensor::from_replicated: a layout over " + std::to_string(layout.nranks()) +
                          " ranks for a communicator of " + std::to_string(comm.size()));
  const std::int64_t rows = full.rank() == 0 ? 1 : full.shape().dim(0);
  if (layout.total() != rows)
    throw InvalidArgument("DistTensor::from_replicated: a layout of " + std::to_string(layout.total()) +
                          " rows for a tensor of shape " + full.shape().str());
  // String blocks get a pool of their own strings, homed at this rank.
  auto own = [&](const Tensor& t) { return is_string(t.dtype()) ? compact_strings(t, r) : t.deep_copy(); };
  if (full.rank() == 0) {
    Tensor local = layout.count(r) > 0 ? own(full) : Tensor(full.dtype(), Shape{0});
    return DistTensor(local, Shape(), layout, r);
  }
  const Tensor block = own(full.slice_rows(layout.offset(r), layout.offset(r) + layout.count(r)));
  return DistTensor(block, full.shape(), layout, r);
}

DistTensor DistTensor::redistribute(const Comm& comm, const RowLayout& target, const RouteOptions& route) const {
  check_on(comm);
  if (target.nranks() != comm.size())
    throw InvalidArgument("DistTensor::redistribute: a layout over " + std::to_string(target.nranks()) +
                          " ranks for a communicator of " + std::to_string(comm.size()));
  if (target == layout_) return *this;
  if (target.total() != layout_.total()) throw InternalError("DistTensor::redistribute to a layout with another total");
  const OwnerOf owner = target.device_owner();
  const std::int64_t base = row_offset();
  auto dest_of = KOKKOS_LAMBDA(const std::int64_t i)->std::int64_t { return owner(base + i); };
  const std::int64_t n = layout_.count(rank_);
  const ExchangePlan plan = ExchangePlan::build(comm, n, dest_of, route);
  const std::size_t rb = row_bytes();
  const ByteView recv = plan.forward(local_.data(), rb);
  const int r = comm.rank();
  Tensor local(dtype(), block_shape(shape_, target.count(r), target.count(r) > 0), Init::Uninitialized,
               "shardops::DistTensor::redistribute");
  if (local.nbytes() > 0) {
    Kokkos::deep_copy(FlatView<unsigned char>(local.data(), local.nbytes()),
                      Kokkos::subview(recv, std::make_pair(std::size_t(0), local.nbytes())));
  }
  // Strings: the handles moved; now the bytes of the strings that arrived.
  if (is_string(dtype())) local = fetch_strings(comm, local, local_.strings(), route);
  return DistTensor(local, shape_, target, r);
}

DistTensor DistTensor::rebalance(const Comm& comm, const RouteOptions& route) const {
  check_on(comm);
  if (is_scalar()) return *this;
  return redistribute(comm, RowLayout::balanced(layout_.total(), comm.size()), route);
}

Tensor DistTensor::allgather(const Comm& comm, const RouteOptions& route) const {
  check_on(comm);
  if (is_string(dtype())) return allgather_strings(comm, *this);
  // This rank's block is copied into place, the others arrive there.
  Tensor all(dtype(), shape_, Init::Uninitialized, "shardops::DistTensor::allgather");
  const std::size_t rb = row_bytes();
  if (rb == 0 || all.nbytes() == 0) return all;
  const ByteView whole(all.data(), all.nbytes());
  const ByteView mine(local_.data(), local_.nbytes());
  const std::size_t mine_at = static_cast<std::size_t>(layout_.offset(rank_)) * rb;
  Kokkos::deep_copy(Kokkos::subview(whole, std::make_pair(mine_at, mine_at + mine.extent(0))), mine);
  replicate_blocks(comm, layout_, mine, whole, rb, OwnBlock::InPlace, route);
  return all;
}

DistTensor align_to(const Comm& comm, const DistTensor& data, const DistTensor& index, const RouteOptions& route) {
  if (index.is_scalar()) {
    if (data.is_scalar()) return data;
    return data.redistribute(comm, RowLayout::on_rank(data.layout().total(), comm.size(), 0), route);
  }
  if (data.is_scalar() || data.layout() == index.layout()) return data;
  if (data.layout().total() != index.layout().total()) return data;  // the op's shape check reports it
  return data.redistribute(comm, index.layout(), route);
}

}  // namespace shardops
