#include "shardops/ops/Validation.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "shardops/core/Error.hpp"

namespace shardops {

namespace {

std::string join_values(const std::vector<std::int64_t>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out;
}

std::string str(std::int64_t v) { return std::to_string(v); }

// TensorShape::dim_size on a dim that does not exist: treat as a mismatch.
std::int64_t dim_or(const Shape& s, int i, std::int64_t fallback) {
  return (i >= 0 && i < s.rank()) ? s.dim(i) : fallback;
}

// scatter_nd_op.cc: an empty output is fine only if nothing is scattered into it.
bool valid_empty_output(std::int64_t num_inputs, std::int64_t num_indices, std::int64_t num_updates) {
  if (num_indices == 0 && num_updates == 0) return true;
  return num_inputs != 0 && num_indices != 0 && num_updates != 0;
}

}  // namespace

BadIndices bad_indices_from_string(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  // TF's attr values are "", DEFAULT, ERROR and IGNORE; DEFAULT means ERROR on CPU.
  if (lower == "error" || lower == "default" || lower.empty()) return BadIndices::Error;
  if (lower == "ignore") return BadIndices::Ignore;
  throw InvalidArgument("bad indices policy must be 'error' (or 'default') or 'ignore', got '" + text + "'");
}

// ------------------------------------------------------------ DynamicPartition

void check_num_partitions(std::int64_t num_partitions) {
  if (num_partitions < 1) {
    throw InvalidArgument("Value for attr 'num_partitions' of " + str(num_partitions) + " must be at least minimum 1");
  }
  if (num_partitions > 2147483647) {
    throw InvalidArgument("Value for attr 'num_partitions' of " + str(num_partitions) + " does not fit in int32");
  }
}

PartitionGeometry check_dynamic_partition(const Shape& data, const Shape& partitions, std::int64_t num_partitions) {
  check_num_partitions(num_partitions);
  if (!data.starts_with(partitions)) {
    throw InvalidArgument("data.shape must start with partitions.shape, got data.shape = " + data.str() +
                          ", partitions.shape = " + partitions.str());
  }
  PartitionGeometry g;
  g.num_rows = partitions.num_elements();
  g.slice_shape = data.suffix(partitions.rank());
  g.slice_size = g.slice_shape.num_elements();
  g.num_partitions = static_cast<int>(num_partitions);
  return g;
}

std::string partition_index_error(const Shape& partitions, std::int64_t flat, std::int32_t value, int num_partitions) {
  return "partitions" + slice_debug_string(partitions, flat) + " = " + str(value) + " is not in [0, " +
         str(num_partitions) + ")";
}

// ------------------------------------------------------------ DynamicStitch

StitchGeometry check_dynamic_stitch(const std::vector<Shape>& indices, const std::vector<Shape>& data,
                                    std::int64_t max_index) {
  if (indices.empty()) throw InvalidArgument("DynamicStitchOp: Must have some inputs");
  if (indices.size() != data.size()) {
    throw InvalidArgument("DynamicStitchOp: Must have the same number of indices and data tensors, got " +
                          str(static_cast<std::int64_t>(indices.size())) + " and " +
                          str(static_cast<std::int64_t>(data.size())));
  }
  const Shape& data0 = data[0];
  const Shape& indices0 = indices[0];
  for (std::size_t m = 0; m < indices.size(); ++m) {
    const std::string n = str(static_cast<std::int64_t>(m));
    if (!data[m].starts_with(indices[m])) {
      throw InvalidArgument("data[" + n + "].shape = " + data[m].str() + " does not start with indices[" + n +
                            "].shape = " + indices[m].str());
    }
    if (m > 0 && data0.suffix(indices0.rank()) != data[m].suffix(indices[m].rank())) {
      throw InvalidArgument("Need data[0].shape[" + str(indices0.rank()) + ":] = data[" + n + "].shape[" +
                            str(indices[m].rank()) + ":], got data[0].shape = " + data0.str() + ", data[" + n +
                            "].shape = " + data[m].str() + ", indices[0].shape = " + indices0.str() + ", indices[" + n +
                            "].shape = " + indices[m].str());
    }
  }
  // TF counts the output's rows in an int: an index of INT32_MAX makes it negative.
  if (max_index >= std::numeric_limits<std::int32_t>::max())
    throw InvalidArgument("Expected a non-negative size, got " + str(std::numeric_limits<std::int32_t>::min()));
  StitchGeometry g;
  g.first_dim = max_index + 1;
  const Shape slice = data0.suffix(indices0.rank());
  g.slice_size = slice.num_elements();
  g.output = slice.prepend(g.first_dim);
  for (const Shape& s : indices) g.rows.push_back(s.num_elements());
  return g;
}

std::string stitch_index_error(std::int64_t flat) { return "indices[" + str(flat) + "] is out of range"; }

// ------------------------------------------------------------ Scatter family

// scatter_op_name() is in OpRegistry.cpp: the registry holds each op's TF name.

namespace {

// ScatterNdOp::Compute's own checks (before DoScatterNd).
void check_scatter_nd_compute(const std::vector<std::int64_t>& raw_shape, const Shape& indices, const Shape& updates) {
  const Shape shape(raw_shape);  // "Dimension -1 must be >= 0"
  if (!valid_empty_output(static_cast<std::int64_t>(raw_shape.size()), indices.num_elements(),
                          updates.num_elements())) {
    throw InvalidArgument("Indices and updates specified for empty output shape");
  }
  const int outer = indices.rank() - 1;
  for (int i = 0; i < outer; ++i) {
    if (indices.dim(i) != dim_or(updates, i, -1)) {
      throw InvalidArgument("Dimensions [0," + str(outer) + ") of indices[shape=" + indices.str() +
                            "] must match dimensions [0," + str(outer) + ") of updates[shape=" + updates.str() + "]");
    }
  }
  const std::int64_t ix = indices.dim(outer);
  const std::string inner_err = "Dimensions [" + str(ix) + "," + str(shape.rank()) + ") of input[shape=" + shape.str() +
                                "] must match dimensions [" + str(outer) + "," + str(updates.rank()) +
                                ") of updates[shape=" + updates.str() + "]";
  if (updates.rank() - outer != shape.rank() - ix) throw InvalidArgument(inner_err);
  for (int i = 0; i + outer < updates.rank(); ++i) {
    if (updates.dim(i + outer) != dim_or(shape, static_cast<int>(ix) + i, -1)) throw InvalidArgument(inner_err);
  }
}

// TensorScatterOp::Compute's own checks.
void check_tensor_scatter_compute(const Shape& shape, const Shape& indices, const Shape& updates) {
  if (!valid_empty_output(shape.num_elements(), indices.num_elements(), updates.num_elements())) {
    throw InvalidArgument("Indices and updates specified for empty output shape");
  }
  const int outer = indices.rank() - 1;
  for (int i = 0; i < outer; ++i) {
    if (indices.dim(i) != dim_or(updates, i, -1)) {
      throw InvalidArgument("Outer dimensions of indices and update must match. Indices shape: " + indices.str() +
                            ", updates shape:" + updates.str());
    }
  }
  const std::int64_t ix = indices.dim(outer);
  if (updates.rank() - outer != shape.rank() - ix) {
    throw InvalidArgument("Inner dimensions of output shape must match inner dimensions of updates shape. Output: " +
                          shape.str() + " updates: " + updates.str());
  }
  for (int i = 0; i + outer < updates.rank(); ++i) {
    if (updates.dim(i + outer) != dim_or(shape, static_cast<int>(ix) + i, -1)) {
      throw InvalidArgument("The inner " + str(shape.rank() - ix) + " dimensions of output.shape=" + shape.str() +
                            " must match the inner " + str(updates.rank() - outer) +
                            " dimensions of updates.shape=" + updates.str());
    }
  }
}

// functor::PrepareAndValidateInputs + ValidateScatterNdUpdateShape, shared by all.
void check_scatter_common(const Shape& params, const Shape& indices, const Shape& updates) {
  if (params.rank() < 1) throw InvalidArgument("Output must be at least 1-D, got shape: " + params.str());
  if (!valid_empty_output(params.num_elements(), indices.num_elements(), updates.num_elements())) {
    throw InvalidArgument("Indices and updates specified for empty output.  indices shape: " + indices.str());
  }
  if (updates.dim(0) != indices.dim(0)) {
    throw InvalidArgument("Dimensions [0,1) of indices[shape=" + indices.str() + "] = " + str(indices.dim(0)) +
                          " must match dimensions [0,1) of updates[shape=" + updates.str() +
                          "] = " + str(updates.dim(0)));
  }
  const std::int64_t slice_dim = indices.rank() > 1 ? indices.dim(indices.rank() - 1) : 1;
  const std::int64_t batch_dim = indices.rank() > 1 ? indices.rank() - 1 : 1;
  const std::string prefix_err = "Dimensions [0," + str(batch_dim) + ") of indices[shape=" + indices.str() +
                                 "] must match dimensions [0," + str(batch_dim) +
                                 ") of updates[shape=" + updates.str() + "]";
  const std::string suffix_err = "Dimensions [" + str(slice_dim) + "," + str(params.rank()) +
                                 ") of input[shape=" + params.str() + "] must match dimensions [" + str(slice_dim) +
                                 "," + str(updates.rank()) + ") of updates[shape=" + updates.str() + "]";
  if (updates.rank() < batch_dim) throw InvalidArgument(prefix_err);
  if (params.rank() < slice_dim + (updates.rank() - batch_dim)) throw InvalidArgument(suffix_err);
  if (updates.rank() != batch_dim + params.rank() - slice_dim) throw InvalidArgument(suffix_err);
  for (int d = 0; d < batch_dim; ++d) {
    if (updates.dim(d) != indices.dim(d)) throw InvalidArgument(prefix_err);
  }
  for (int d = 0; d < updates.rank() - batch_dim; ++d) {
    if (updates.dim(d + static_cast<int>(batch_dim)) != params.dim(d + static_cast<int>(slice_dim))) {
      throw InvalidArgument(suffix_err);
    }
  }
}

// The largest value of the index dtype TensorFlow's kernel indexes with (it checks sizes
// against it); an index dtype it has no kernel for is refused before this.
std::int64_t index_max(DType index_dtype) {
  switch (index_dtype) {
    case DType::Int16: return std::numeric_limits<std::int16_t>::max();
    case DType::Int32: return std::numeric_limits<std::int32_t>::max();
    default: return std::numeric_limits<std::int64_t>::max();
  }
}

// Throws TF's "<what> <dtype> indexing: <size> > <max>" ("params_shape[0] too large for
// int32 indexing: 2147483648 > 2147483647") if \p size is past \p index_dtype.
void check_index_space(const std::string& what, std::int64_t size, DType index_dtype, bool names_dtype = true) {
  if (size <= index_max(index_dtype)) return;
  throw InvalidArgument(what + (names_dtype ? std::string(" ") + tf_dtype_name(index_dtype) : std::string()) +
                        " indexing: " + str(size) + " > " + str(index_max(index_dtype)));
}

}  // namespace

ScatterGeometry check_scatter(ScatterOp op, const std::vector<std::int64_t>& shape, const Shape& indices,
                              const Shape& updates, DType index_dtype) {
  if (indices.rank() < 1) throw InvalidArgument("Indices shape must have rank at least one. Found:" + indices.str());
  if (updates.rank() < 1) throw InvalidArgument("Updates shape must have rank at least one. Found:" + updates.str());
  if (op == ScatterOp::ScatterNd) {
    check_scatter_nd_compute(shape, indices, updates);
  } else {
    check_tensor_scatter_compute(Shape(shape), indices, updates);
  }
  const Shape params(shape);
  check_scatter_common(params, indices, updates);
  // The index space TF's kernel has (PrepareAndValidateInputs), in its order.
  const std::int64_t slice_dim = indices.rank() > 1 ? indices.dim(indices.rank() - 1) : 1;
  check_index_space("indices has too many elements for", indices.num_elements(), index_dtype);
  check_index_space("params_shape[0] too large for", params.dim(0), index_dtype);
  check_index_space("slice size is too large for",
                    params.product_from(static_cast<int>(std::min<std::int64_t>(slice_dim, params.rank()))),
                    index_dtype, false);

  ScatterGeometry g;
  g.output = params;
  g.empty_output = params.num_elements() == 0;
  g.batch = indices.prefix(indices.rank() - 1);
  g.num_updates = indices.num_elements() / std::max<std::int64_t>(slice_dim, 1);
  if (g.empty_output) return g;
  if (slice_dim < 1 || slice_dim > 7) {
    throw InvalidArgument("Only indices.shape[-1] values between 1 and 5 are currently supported.  Requested rank: " +
                          str(slice_dim));
  }
  g.index_depth = static_cast<int>(slice_dim);
  g.slice_size = params.product_from(g.index_depth);
  g.output_rows = params.product(0, g.index_depth);
  g.dims.assign(params.dims().begin(), params.dims().begin() + g.index_depth);
  return g;
}

std::string scatter_index_error(const ScatterGeometry& g, std::int64_t row, const std::vector<std::int64_t>& index) {
  return "indices" + slice_debug_string(g.batch, row) + " = [" + join_values(index) + "] does not index into shape " +
         g.output.str();
}

// ------------------------------------------------------------ GatherNd

GatherGeometry check_gather_nd(const Shape& params, const Shape& indices, DType index_dtype) {
  if (params.rank() < 1) throw InvalidArgument("params must be at least a vector");
  if (indices.rank() < 1) throw InvalidArgument("indices must be at least a vector");
  const std::int64_t depth = indices.dim(indices.rank() - 1);
  if (depth > params.rank()) {
    throw InvalidArgument("index innermost dimension length must be <= params rank; saw: " + str(depth) + " vs. " +
                          str(params.rank()));
  }
  // The index space TF's kernel has (DoGatherNd), in its order.
  check_index_space("params.NumElements() too large for", params.num_elements(), index_dtype);
  check_index_space("slice size is too large for", params.product_from(static_cast<int>(depth)), index_dtype, false);
  GatherGeometry g;
  g.index_depth = static_cast<int>(depth);
  g.batch = indices.prefix(indices.rank() - 1);
  g.num_slices = g.batch.num_elements();
  const Shape slice = params.suffix(g.index_depth);
  g.output = g.batch.concat(slice);
  g.slice_size = slice.num_elements();
  g.params_rows = params.product(0, g.index_depth);
  g.dims.assign(params.dims().begin(), params.dims().begin() + g.index_depth);
  g.params = params;
  if (g.num_slices > 0) {
    if (params.num_elements() == 0) {
      throw InvalidArgument("Requested more than 0 entries, but params is empty.  Params shape: " + params.str());
    }
    if (depth > 7) {
      throw InvalidArgument("Only indices.shape[-1] values between 1 and 7 are currently supported.  Requested rank: " +
                            str(depth));
    }
  }
  return g;
}

std::string gather_index_error(const GatherGeometry& g, std::int64_t row, const std::vector<std::int64_t>& index) {
  return "indices" + slice_debug_string(g.batch, row) + " = [" + join_values(index) +
         "] does not index into param shape " + g.params.str() + ", node name: GatherNd";
}

}  // namespace shardops
