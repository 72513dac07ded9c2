#include "shardops/ops/DistElementwise.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "shardops/ops/detail/DistCommon.hpp"

namespace shardops {

namespace {

// A scalar argument, exactly (a real as its bits: two reals that print alike may differ).
std::string scalar_text(const Scalar& s) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &s.f, sizeof bits);
  return s.is_integer ? std::to_string(s.i) : s.str() + "/" + std::to_string(bits);
}

}  // namespace

DistTensor range(const Comm& comm, DType dtype, std::int64_t start, std::int64_t limit, std::int64_t delta) {
  agree_on_op(comm, "Range",
              std::string(dtype_name(dtype)) + " start=" + std::to_string(start) + " limit=" + std::to_string(limit) +
                  " delta=" + std::to_string(delta));
  // TF's RangeOp: delta != 0, and the range must run towards limit.
  if (delta == 0) throw InvalidArgument("Requires delta != 0: " + std::to_string(delta));
  if (delta > 0 && start > limit) {
    throw InvalidArgument("Requires start <= limit when delta > 0: " + std::to_string(start) + "/" +
                          std::to_string(limit));
  }
  if (delta < 0 && start < limit) {
    throw InvalidArgument("Requires start >= limit when delta < 0: " + std::to_string(start) + "/" +
                          std::to_string(limit));
  }
  if (dtype == DType::Int32) {
    // TF's int32 Range takes int32 start, limit and delta.
    for (const auto& [name, v] :
         {std::pair<const char*, std::int64_t>{"start", start}, {"limit", limit}, {"delta", delta}})
      if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
        throw InvalidArgument(std::string("range: ") + name + " = " + std::to_string(v) +
                              " does not fit dtype int32 (use dtype: int64)");
  }
  // The count in unsigned arithmetic: limit - start and -delta may not fit int64.
  const std::uint64_t span = limit > start ? static_cast<std::uint64_t>(limit) - static_cast<std::uint64_t>(start)
                                           : static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(limit);
  const std::uint64_t step = delta > 0 ? static_cast<std::uint64_t>(delta) : 0 - static_cast<std::uint64_t>(delta);
  const std::uint64_t count = span / step + (span % step != 0 ? 1 : 0);
  if (count > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw InvalidArgument("range(" + std::to_string(start) + ", " + std::to_string(limit) + ", " +
                          std::to_string(delta) + ") has " + std::to_string(count) +
                          " elements, more than fit in int64");
  const auto n = static_cast<std::int64_t>(count);
  const RowLayout layout = RowLayout::balanced(n, comm.size());
  const int r = comm.rank();
  return DistTensor(range_values(dtype, start, delta, layout.offset(r), layout.count(r)), Shape{n}, layout, r);
}

DistTensor compare_scalar(const Comm& comm, CompareOp op, const DistTensor& x, const Scalar& s, Denormals denormals) {
  agree_on_op(comm, compare_op_name(op), "x=" + call_text(comm, x) + " y=" + scalar_text(s));
  return DistTensor(compare_scalar(op, x.local(), s, denormals), x.shape(), x.layout(), comm.rank());
}

DistTensor arith_scalar(const Comm& comm, ArithOp op, const DistTensor& x, const Scalar& s, Denormals denormals) {
  agree_on_op(comm, op == ArithOp::Add ? "Add" : "Mul", "x=" + call_text(comm, x) + " y=" + scalar_text(s));
  return DistTensor(arith_scalar(op, x.local(), s, denormals), x.shape(), x.layout(), comm.rank());
}

DistTensor cast(const Comm& comm, const DistTensor& x, DType to, Denormals denormals) {
  agree_on_op(comm, "Cast", "x=" + call_text(comm, x) + " DstT=" + dtype_name(to));
  // The lowest rank's error is the first bad element in global order.
  Tensor local;
  run_agreed(comm, [&] {
    local = cast_values(x.local(), to, x.is_scalar() ? 0 : x.row_offset() * x.row_elements(), denormals);
  });
  return DistTensor(local, x.shape(), x.layout(), comm.rank());
}

DistTensor random_uniform(const Comm& comm, DType dtype, const Shape& shape, std::uint64_t seed, const Scalar& minval,
                          const Scalar& maxval) {
  agree_on_op(comm, "RandomUniform",
              std::string(dtype_name(dtype)) + shape.str() + " seed=" + std::to_string(seed) +
                  " minval=" + scalar_text(minval) + " maxval=" + scalar_text(maxval));
  const int r = comm.rank();
  if (shape.rank() == 0) {
    const RowLayout layout = RowLayout::on_rank(1, comm.size(), 0);
    const Shape local = r == 0 ? Shape() : Shape{0};
    return DistTensor(random_uniform(dtype, local, 0, seed, minval, maxval), shape, layout, r);
  }
  const RowLayout layout = RowLayout::balanced(shape.dim(0), comm.size());
  const std::int64_t first = layout.offset(r) * shape.product_from(1);
  return DistTensor(random_uniform(dtype, shape.with_dim0(layout.count(r)), first, seed, minval, maxval), shape, layout,
                    r);
}

}  // namespace shardops
