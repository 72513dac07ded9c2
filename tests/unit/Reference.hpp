#pragma once
/// \file
/// \brief A plain sequential reference of every op: simple loops over host bytes in
/// index order, written from TensorFlow's definitions and nothing else of shardops
/// (element arithmetic included: half sums go through the compiler's _Float16).
/// The randomized tests compare the kernels with it byte for byte.
///
/// Bad indices: the reference functions skip them (gather writes zeros), which is
/// the BadIndices::Ignore result; the *_error functions give the text TensorFlow
/// reports for the same inputs under BadIndices::Error, or "" when all are valid.

#include <cstdint>
#include <string>
#include <vector>

#include "OpsTestUtil.hpp"

namespace shardops {
namespace test {

/// outputs[p] = rows of data whose partition id is p, in order; other ids dropped.
std::vector<HostTensor> ref_dynamic_partition(const Tensor& data, const Tensor& partitions, int num_partitions);
/// The first id outside [0, num_partitions): "partitions[1,0] = 7 is not in [0, 4)".
std::string ref_partition_error(const Tensor& partitions, int num_partitions);

/// merged[indices[m][i]] = data[m][i] in order (last wins); negative indices skipped.
HostTensor ref_dynamic_stitch(const std::vector<Tensor>& indices, const std::vector<Tensor>& data);
/// The first negative index, in input order: "indices[3] is out of range".
std::string ref_stitch_error(const std::vector<Tensor>& indices);

/// \brief The scatter family in index order. \p tensor is the initial value
/// (nullptr: zeros of \p shape, i.e. ScatterNd). ScatterNd and Add add, Sub
/// subtracts, Min/Max keep the running min/max, Update assigns (last wins).
HostTensor ref_scatter(ScatterOp op, DType dtype, const Shape& shape, const Tensor* tensor, const Tensor& indices,
                       const Tensor& updates);
/// The LAST bad index row: "indices[2] = [7] does not index into shape [5]".
std::string ref_scatter_error(const Shape& shape, const Tensor& indices);

/// output[i] = params[indices[i]] (zeros for a bad index row).
HostTensor ref_gather_nd(const Tensor& params, const Tensor& indices);
/// The LAST bad index row: "indices[2] = [7] does not index into param shape [5], node name: GatherNd".
std::string ref_gather_error(const Tensor& params, const Tensor& indices);

/// One element of the scatter family's arithmetic on raw bytes: out = op(out, u).
void ref_combine(DType dtype, ScatterOp op, unsigned char* out, const unsigned char* u);

}  // namespace test
}  // namespace shardops
