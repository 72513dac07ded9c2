#pragma once
/// \file
/// \brief Every op, on one rank's tensors and on row-sharded ones: the public op
/// headers (ops/Partition.hpp, Stitch.hpp, Scatter.hpp, Gather.hpp) and the input
/// checks the ops share.
///
/// Each op validates in TensorFlow's order and throws InvalidArgument with TF's
/// message text; nothing is allocated before the shapes are known to be valid.

#include <cstdint>
#include <string>
#include <vector>

#include "shardops/core/Tensor.hpp"
#include "shardops/ops/Gather.hpp"
#include "shardops/ops/OpOptions.hpp"
#include "shardops/ops/Partition.hpp"
#include "shardops/ops/Scatter.hpp"
#include "shardops/ops/Stitch.hpp"
#include "shardops/ops/Validation.hpp"

namespace shardops {

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
