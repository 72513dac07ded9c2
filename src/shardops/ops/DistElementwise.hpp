#pragma once
/// \file
/// \brief The element-wise helpers on row-sharded tensors (collective over \p comm;
/// no data moves between ranks). Results are the same at every rank count.

#include "shardops/ops/Elementwise.hpp"
#include "shardops/route/DistTensor.hpp"

namespace shardops {

/// tf.range(start, limit, delta) for int32/int64, balanced across ranks.
DistTensor range(const Comm& comm, DType dtype, std::int64_t start, std::int64_t limit, std::int64_t delta);

DistTensor compare_scalar(const Comm& comm, CompareOp op, const DistTensor& x, const Scalar& s,
                          Denormals denormals = Denormals::Flush);
DistTensor arith_scalar(const Comm& comm, ArithOp op, const DistTensor& x, const Scalar& s,
                        Denormals denormals = Denormals::Flush);
/// Collective: tf.cast of \p x (see cast_values); an element that does not fit is
/// reported as a one-rank run would (the first in global order), on every rank.
DistTensor cast(const Comm& comm, const DistTensor& x, DType to, Denormals denormals = Denormals::Flush);

/// Uniform random tensor of \p shape, balanced across ranks (see ops/Elementwise.hpp).
DistTensor random_uniform(const Comm& comm, DType dtype, const Shape& shape, std::uint64_t seed, const Scalar& minval,
                          const Scalar& maxval);

}  // namespace shardops
