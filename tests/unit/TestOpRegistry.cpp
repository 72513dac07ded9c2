// The op registry (ops/OpRegistry.hpp): its names are unique, agree with the names the
// ops give themselves, and a name that is not in it is an error.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "shardops/core/Error.hpp"
#include "shardops/ops/OpRegistry.hpp"
#include "shardops/ops/detail/TfKernels.hpp"

namespace shardops {
namespace {

TEST(OpRegistry, NamesAreUnique) {
  std::set<std::string> names, commands, tf_names, pythons;
  for (const OpInfo& op : op_registry()) {
    EXPECT_TRUE(names.insert(op.name).second) << op.name;
    EXPECT_TRUE(tf_names.insert(op.tf_name).second) << op.tf_name;
    if (!op.command.empty()) {
      EXPECT_TRUE(commands.insert(op.command).second) << op.command;
    }
    if (!op.python.empty()) {
      EXPECT_TRUE(pythons.insert(op.python).second) << op.python;
    }
    EXPECT_TRUE(op.run) << op.name << " has no entry point";
  }
  EXPECT_EQ(commands.size(), 10u);
}

TEST(OpRegistry, EntriesAreConsistent) {
  for (const OpInfo& op : op_registry()) {
    SCOPED_TRACE(op.name);
    // The subcommand is the deck name with dashes.
    if (!op.command.empty()) {
      std::string dashed = op.name;
      for (char& c : dashed) c = c == '_' ? '-' : c;
      EXPECT_EQ(op.command, dashed);
    }
    if (op.family == OpFamily::ScatterNd || op.family == OpFamily::TensorScatter) {
      EXPECT_EQ(op.tf_name, scatter_op_name(op.scatter));
    }
    std::set<std::string> keys;
    for (const OpInput& in : op.inputs) {
      EXPECT_TRUE(keys.insert(in.name).second) << in.name;
      if (!in.paired_with.empty()) {
        ASSERT_NE(op.input(in.paired_with), nullptr) << in.name << " pairs with " << in.paired_with;
        EXPECT_EQ(op.input(in.paired_with)->is_list, in.is_list);
      }
    }
    for (const OpAttr& a : op.attrs) {
      EXPECT_TRUE(keys.insert(a.name).second) << a.name;
      EXPECT_TRUE(a.required || !a.fallback.empty()) << a.name << " has neither a value nor a fallback";
    }
    if (op.output_per_partition) {
      EXPECT_NE(op.attr("num_partitions"), nullptr);
    }
    if (op.tindices) {
      EXPECT_EQ(tf_allowed_index_dtypes(op.tf_name.c_str()), op.index_dtypes);
      for (DType index : op.kernel_index) {  // a kernel only for an allowed index dtype
        EXPECT_NE(std::find(op.index_dtypes.begin(), op.index_dtypes.end(), index), op.index_dtypes.end());
      }
    }
  }
  for (const CompareOp c : {CompareOp::Equal, CompareOp::NotEqual, CompareOp::Greater, CompareOp::GreaterEqual,
                            CompareOp::Less, CompareOp::LessEqual}) {
    EXPECT_NE(find_op(compare_op_name(c)), nullptr) << compare_op_name(c);
  }
}

TEST(OpRegistry, KernelTables) {
  const OpInfo& add = op_named("tensor_scatter_add");
  EXPECT_FALSE(add.has_kernel(DType::Bool, DType::Int32));
  EXPECT_TRUE(add.has_kernel(DType::Complex64, DType::Int64));
  EXPECT_FALSE(add.has_string_kernel());
  EXPECT_FALSE(op_named("tensor_scatter_max").has_kernel(DType::Complex128, DType::Int32));
  EXPECT_FALSE(op_named("scatter_nd").has_kernel(DType::Float32, DType::Int16));  // allowed, but no kernel
  EXPECT_TRUE(op_named("gather_nd").has_kernel(DType::String, DType::Int16));
  EXPECT_TRUE(op_named("dynamic_partition").has_kernel(DType::String, DType::Int32));
  EXPECT_FALSE(op_named("dynamic_partition").has_kernel(DType::Float32, DType::Int64));
}

TEST(OpRegistry, UnknownNamesAreErrors) {
  EXPECT_EQ(find_op("tensor_scatter_mul"), nullptr);
  EXPECT_EQ(find_op_by_command("tensor-scatter-mul"), nullptr);
  EXPECT_EQ(find_op_by_tf_name("TensorScatterMul"), nullptr);
  EXPECT_EQ(find_op(""), nullptr);
  try {
    op_named("tensor_scatter_mul");
    ADD_FAILURE() << "no error for an unknown op";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown op 'tensor_scatter_mul' (known: dynamic_partition, "),
              std::string::npos)
        << e.what();
  }
  try {
    op_for_command("tensor-scatter-mul");
    ADD_FAILURE() << "no error for an unknown command";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown command 'tensor-scatter-mul'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tf_allowed_index_dtypes("TensorScatterMul"), InternalError);
}

TEST(OpRegistry, Json) {
  const std::string json = op_registry_json();
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.front(), '[');
  for (const OpInfo& op : op_registry()) {
    EXPECT_NE(json.find("\"name\": \"" + op.name + "\""), std::string::npos) << op.name;
  }
  EXPECT_NE(json.find("\"no_kernel_dtypes\": [\"bool\", \"string\", \"complex64\", \"complex128\"]"),
            std::string::npos);
}

}  // namespace
}  // namespace shardops
