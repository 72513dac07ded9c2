#include "shardops/ops/detail/TfKernels.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "shardops/core/Error.hpp"

namespace shardops {

namespace {

// One op's row of TF's tables (read from tensorflow/core/ops/array_ops.cc for the
// allowed index dtypes, and the REGISTER_KERNEL_BUILDER lines of scatter_nd_op.cc and
// gather_nd_op.cc for the kernels; docs/tf-fidelity.md shows the table).
struct TfOpKernels {
  const char* op;
  std::vector<DType> allowed_index;  ///< the op definition's Tindices list
  std::vector<DType> kernel_index;   ///< the Tindices CPU kernels are registered for
  std::vector<DType> no_kernel;      ///< element types without a CPU kernel
};

const std::vector<TfOpKernels>& table() {
  using D = DType;
  static const std::vector<TfOpKernels> rows = {
      {"ScatterNd", {D::Int16, D::Int32, D::Int64}, {D::Int32, D::Int64}, {}},
      {"TensorScatterUpdate", {D::Int16, D::Int32, D::Int64, D::UInt16}, {D::Int32, D::Int64}, {}},
      {"TensorScatterAdd", {D::Int32, D::Int64}, {D::Int32, D::Int64}, {D::Bool, D::String}},
      {"TensorScatterSub", {D::Int32, D::Int64}, {D::Int32, D::Int64}, {D::Bool, D::String}},
      {"TensorScatterMin",
       {D::Int32, D::Int64},
       {D::Int32, D::Int64},
       {D::Bool, D::String, D::Complex64, D::Complex128}},
      {"TensorScatterMax",
       {D::Int32, D::Int64},
       {D::Int32, D::Int64},
       {D::Bool, D::String, D::Complex64, D::Complex128}},
      {"GatherNd", {D::Int16, D::Int32, D::Int64}, {D::Int16, D::Int32, D::Int64}, {}},
  };
  return rows;
}

const TfOpKernels& row_of(const char* op) {
  for (const TfOpKernels& r : table())
    if (std::strcmp(r.op, op) == 0) return r;
  throw InternalError(std::string("TfKernels: no kernel table for op ") + op);
}

bool contains(const std::vector<DType>& list, DType d) { return std::find(list.begin(), list.end(), d) != list.end(); }

// TF's enum name of a dtype: DT_FLOAT, DT_HALF, DT_INT16, ...
std::string tf_enum_name(DType d) {
  std::string name = std::string("DT_") + tf_dtype_name(d);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  return name;
}

}  // namespace

const std::vector<DType>& tf_allowed_index_dtypes(const char* op) { return row_of(op).allowed_index; }

bool tf_has_cpu_kernel(const char* op, DType dtype, DType index) {
  const TfOpKernels& r = row_of(op);
  return contains(r.kernel_index, index) && !contains(r.no_kernel, dtype);
}

void check_tf_kernel(const char* op, DType dtype, DType index, BadIndices bad_indices) {
  const TfOpKernels& r = row_of(op);
  if (!contains(r.allowed_index, index)) {
    std::string allowed;
    for (DType d : r.allowed_index) allowed += std::string(allowed.empty() ? "" : ", ") + tf_dtype_name(d);
    throw InvalidArgument(std::string("Value for attr 'Tindices' of ") + tf_dtype_name(index) +
                              " is not in the list of allowed values: " + allowed,
                          "indices");
  }
  if (!tf_has_cpu_kernel(op, dtype, index)) {
    // The node as TF prints it; bad_indices_policy is the attr's value ("" by default).
    const char* policy = bad_indices == BadIndices::Ignore ? "IGNORE" : "";
    throw InvalidArgument(std::string("Could not find device for node: {{node ") + op + "}} = " + op +
                          "[T=" + tf_enum_name(dtype) + ", Tindices=" + tf_enum_name(index) +
                          ", bad_indices_policy=\"" + policy + "\"]");
  }
}

}  // namespace shardops
