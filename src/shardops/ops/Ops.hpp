#pragma once
/// \file
/// \brief The ops on one rank's tensors: TensorFlow's CPU results, bit for bit.
///
/// Each op validates in TensorFlow's order and throws InvalidArgument with TF's
/// message text; nothing is allocated before the shapes are known to be valid.
/// Each is the distributed op of ops/DistOps.hpp over Comm::self(), a one-rank
/// communicator that needs no MPI: one rank and many run the same code.

#include <cstdint>
#include <string>
#include <vector>

#include "shardops/core/Tensor.hpp"
#include "shardops/kernels/Schedule.hpp"
#include "shardops/ops/Validation.hpp"
#include "shardops/route/GpuAwareMpi.hpp"

namespace shardops {

/// How the distributed GatherNd gets the params rows other ranks hold
/// (ops/DistGather.cpp). Every choice gives the same bytes.
enum class GatherParams {
  Auto,       ///< Replicate when params are no larger than a rank's share of the output, else Fetch
  Fetch,      ///< send each index to its row's owner, which sends the row back
  Replicate,  ///< every rank receives all of params (one exchange) and gathers locally
};

/// What an op reports about its run, for the caller's report.
struct OpStats {
  /// Bytes this rank sent to other ranks in the op's main exchange (0 on one rank, or
  /// when every row stayed where it was).
  std::int64_t bytes_sent = 0;
};

/// Options common to all ops.
struct OpOptions {
  BadIndices bad_indices = BadIndices::Error;
  Schedule schedule = Schedule::Auto;
  GatherParams gather_params = GatherParams::Auto;  ///< distributed GatherNd only
  /// Subnormal floats in the arithmetic ops (ScatterNd, TensorScatterAdd/Sub/Min/Max):
  /// flushed to zero as TF's CPU kernels do, or kept (core/TfFloat.hpp).
  Denormals denormals = Denormals::Flush;
  /// How the distributed ops move rows between ranks (a default one reads the
  /// environment once, when the options are made: route/GpuAwareMpi.hpp).
  RouteOptions route;
  /// Where the op writes what it reports (null: nowhere). The op overwrites it.
  OpStats* stats = nullptr;
};

/// outputs[p] = rows data[j] with partitions[j] == p, in order of j.
std::vector<Tensor> dynamic_partition(const Tensor& data, const Tensor& partitions, std::int64_t num_partitions,
                                      const OpOptions& options = {});

/// merged[indices[m][i]] = data[m][i]; the last (m, i) wins; rows no index names are zero.
/// ParallelDynamicStitch gives the same result (one of the outcomes TF allows).
Tensor dynamic_stitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data,
                      const OpOptions& options = {});

/// zeros(shape), then output[index] += update for each index row in order.
Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const std::vector<std::int64_t>& shape,
                  const OpOptions& options = {});

/// A copy of \p tensor with each index row's update assigned (op = Update, last wins)
/// or combined (Add, Sub, Min, Max) in index order.
Tensor tensor_scatter(ScatterOp op, const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                      const OpOptions& options = {});

/// output[i] = params[indices[i]] (slices when the index depth < params rank).
Tensor gather_nd(const Tensor& params, const Tensor& indices, const OpOptions& options = {});

/// TF's dtype-mismatch text: "cannot compute ScatterNd as input #1(zero-based) was
/// expected to be a float tensor but is a double tensor". Throws if they differ.
void expect_dtype(const char* op, int input, DType expected, DType actual);

/// TF's input checks of the scatter family, in TF's order: the index dtype and the
/// kernel for (\p dtype, \p indices) (check_tf_kernel), then (TensorScatter*) updates
/// of the tensor's dtype.
void expect_scatter_dtypes(ScatterOp op, bool has_tensor, DType dtype, DType indices, DType updates,
                           BadIndices bad_indices);

/// The largest value of an int32 tensor (DynamicStitch's indices), -1 if it is empty.
std::int64_t max_int32(const Tensor& ids);

/// The K values of index row \p row of an [n, K] index tensor, on the host.
std::vector<std::int64_t> index_row_values(const Tensor& indices, std::int64_t row, int depth);

}  // namespace shardops
