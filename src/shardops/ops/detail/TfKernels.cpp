#include "shardops/ops/detail/TfKernels.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "shardops/core/Error.hpp"
#include "shardops/ops/OpRegistry.hpp"

namespace shardops {

namespace {

// TF's tables (read from tensorflow/core/ops/array_ops.cc for the allowed index dtypes,
// and the REGISTER_KERNEL_BUILDER lines of scatter_nd_op.cc and gather_nd_op.cc for the
// kernels; docs/tf-fidelity.md shows them) are part of each op's entry in the op registry.
const OpInfo& row_of(const char* op) {
  const OpInfo* info = find_op_by_tf_name(op);
  if (info == nullptr || !info->tindices) throw InternalError(std::string("TfKernels: no kernel table for op ") + op);
  return *info;
}

bool contains(const std::vector<DType>& list, DType d) { return std::find(list.begin(), list.end(), d) != list.end(); }

// TF's enum name of a dtype: DT_FLOAT, DT_HALF, DT_INT16, ...
std::string tf_enum_name(DType d) {
  std::string name = std::string("DT_") + tf_dtype_name(d);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  return name;
}

}  // namespace

const std::vector<DType>& tf_allowed_index_dtypes(const char* op) { return row_of(op).index_dtypes; }

bool tf_has_cpu_kernel(const char* op, DType dtype, DType index) { return row_of(op).has_kernel(dtype, index); }

void check_tf_kernel(const char* op, DType dtype, DType index, BadIndices bad_indices) {
  const OpInfo& r = row_of(op);
  if (!contains(r.index_dtypes, index)) {
    std::string allowed;
    for (DType d : r.index_dtypes) allowed += std::string(allowed.empty() ? "" : ", ") + tf_dtype_name(d);
    throw InvalidArgument(std::string("Value for attr 'Tindices' of ") + tf_dtype_name(index) +
                              " is not in the list of allowed values: " + allowed,
                          "indices");
  }
  if (!tf_has_cpu_kernel(op, dtype, index)) {
    // The node as TF prints it; bad_indices_policy is the attr's value ("" by default).
    const char* policy = bad_indices == BadIndices::Ignore ? "IGNORE" : "";
    throw InvalidArgument(std::string(kNoKernelText) + "{{node " + op + "}} = " + op + "[T=" + tf_enum_name(dtype) +
                          ", Tindices=" + tf_enum_name(index) + ", bad_indices_policy=\"" + policy + "\"]");
  }
}

}  // namespace shardops
