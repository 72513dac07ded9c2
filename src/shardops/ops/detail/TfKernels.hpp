#pragma once
/// \file
/// \brief Which (dtype, index dtype) pairs TensorFlow's CPU has a kernel for, for the
/// ops with a Tindices attr, and the errors TF gives for the others, in TF's order.
///
/// TF checks a call in three steps before it looks at a shape: the op definition's
/// list of allowed Tindices (array_ops.cc: "Value for attr 'Tindices' of int8 is not
/// in the list of allowed values: ..."), then the kernel registry for the call's
/// (T, Tindices) ("Could not find device for node: ..."), then the dtype of each
/// further input. shardops follows the same table (each op's entry in the op registry,
/// ops/OpRegistry.hpp, holds its row; docs/tf-fidelity.md lists it), so a call TF
/// cannot run fails here with TF's text, whatever its shapes.

#include <vector>

#include "shardops/core/DType.hpp"
#include "shardops/ops/Validation.hpp"

namespace shardops {

/// The index dtypes \p op's definition allows, in TF's order (the attr error lists them).
/// \p op is TF's op name: "ScatterNd", "TensorScatterUpdate", ..., "GatherNd".
const std::vector<DType>& tf_allowed_index_dtypes(const char* op);

/// Whether TF registers a CPU kernel of \p op for element type \p dtype with \p index.
bool tf_has_cpu_kernel(const char* op, DType dtype, DType index);

/// TF's first two checks of a call of \p op: its index dtype is allowed, and a CPU
/// kernel exists for (\p dtype, \p index). \p dtype is the dtype T is taken from (the
/// tensor, ScatterNd's updates, GatherNd's params). \throws InvalidArgument with TF's text.
void check_tf_kernel(const char* op, DType dtype, DType index, BadIndices bad_indices);

}  // namespace shardops
