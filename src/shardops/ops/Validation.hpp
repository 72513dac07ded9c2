#pragma once
/// \file
/// \brief Shape validation of every op, in TensorFlow's order and with its CPU
/// kernel's message texts, plus the geometry each kernel works in.
///
/// These functions see only shapes (global shapes in a distributed run), never
/// data, so every rank reaches the same verdict without communicating. Checks that
/// need data (index values) are done by the kernels and reported with the
/// *_index_error() texts below.

#include <cstdint>
#include <string>
#include <vector>

#include "shardops/core/DType.hpp"
#include "shardops/core/Shape.hpp"

namespace shardops {

/// What to do with an index that is out of range (TF's bad_indices_policy).
enum class BadIndices {
  Error,   ///< fail with TensorFlow's message (the default, TF's CPU behaviour)
  Ignore,  ///< skip the row (scatter, stitch, partition) or write zeros (gather)
};
/// "error" or "default" / "ignore" (any case, so TF's DEFAULT, ERROR, IGNORE too) ->
/// BadIndices. \throws InvalidArgument otherwise.
BadIndices bad_indices_from_string(const std::string& text);

// ---------------------------------------------------------------- DynamicPartition
struct PartitionGeometry {
  std::int64_t num_rows = 0;    ///< partitions.num_elements()
  std::int64_t slice_size = 0;  ///< elements per row: data.shape[partitions.rank:]
  Shape slice_shape;            ///< data.shape[partitions.rank:]
  int num_partitions = 0;
};
PartitionGeometry check_dynamic_partition(const Shape& data, const Shape& partitions, std::int64_t num_partitions);
/// TF's rule for the attribute alone (1 to 2^31 - 1), as check_dynamic_partition applies it.
/// \throws InvalidArgument with TF's text
void check_num_partitions(std::int64_t num_partitions);
/// "partitions[1,0] = 7 is not in [0, 4)" ("partitions = 17 ..." for a scalar).
std::string partition_index_error(const Shape& partitions, std::int64_t flat, std::int32_t value, int num_partitions);

// ---------------------------------------------------------------- DynamicStitch
struct StitchGeometry {
  std::int64_t first_dim = 0;      ///< max index + 1
  std::int64_t slice_size = 0;     ///< elements per row: data[0].shape[indices[0].rank:]
  Shape output;                    ///< [first_dim] + slice shape
  std::vector<std::int64_t> rows;  ///< indices[m].num_elements()
};
/// \param max_index the largest index over all inputs (-1 if all are empty).
StitchGeometry check_dynamic_stitch(const std::vector<Shape>& indices, const std::vector<Shape>& data,
                                    std::int64_t max_index);
/// "indices[3] is out of range" (flat position inside that one index tensor).
std::string stitch_index_error(std::int64_t flat);

// ---------------------------------------------------------------- Scatter family
enum class ScatterOp { ScatterNd, Update, Add, Sub, Min, Max };
const char* scatter_op_name(ScatterOp op) noexcept;  // TF op name ("TensorScatterAdd"), from the op registry

struct ScatterGeometry {
  int index_depth = 0;             ///< K = indices.shape[-1]
  std::int64_t num_updates = 0;    ///< index rows
  std::int64_t slice_size = 0;     ///< elements per update row: shape[K:]
  std::int64_t output_rows = 0;    ///< prod(shape[:K])
  std::vector<std::int64_t> dims;  ///< shape[:K], for bounds checks and linearisation
  Shape output;                    ///< the output shape
  Shape batch;                     ///< indices.shape[:-1], for error positions
  bool empty_output = false;       ///< output has no elements: nothing is checked or applied
};
/// Validates the shapes for \p op (its dtypes are checked first, by
/// expect_scatter_dtypes). \p shape is ScatterNd's shape argument (raw, so a negative
/// dim is reported in TF's order) or the tensor's shape. TF's kernel indexes with
/// \p index_dtype: sizes past it are refused with its messages.
ScatterGeometry check_scatter(ScatterOp op, const std::vector<std::int64_t>& shape, const Shape& indices,
                              const Shape& updates, DType index_dtype);
/// "indices[0,1] = [5, 0] does not index into shape [5,1]".
std::string scatter_index_error(const ScatterGeometry& g, std::int64_t row, const std::vector<std::int64_t>& index);

// ---------------------------------------------------------------- GatherNd
struct GatherGeometry {
  int index_depth = 0;
  std::int64_t num_slices = 0;   ///< index rows
  std::int64_t slice_size = 0;   ///< elements per output row: params.shape[K:]
  std::int64_t params_rows = 0;  ///< prod(params.shape[:K])
  std::vector<std::int64_t> dims;
  Shape output;
  Shape batch;
  Shape params;
};
/// The shapes, as TF's GatherNd checks them; its kernel indexes with \p index_dtype (sizes
/// past it are refused with its messages).
GatherGeometry check_gather_nd(const Shape& params, const Shape& indices, DType index_dtype);
/// "indices[0,1] = [7] does not index into param shape [3], node name: GatherNd".
std::string gather_index_error(const GatherGeometry& g, std::int64_t row, const std::vector<std::int64_t>& index);

}  // namespace shardops
