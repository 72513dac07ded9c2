#include "shardops/ops/OpRegistry.hpp"

#include <algorithm>
#include <cstdio>

#include "shardops/core/Error.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/ops/DistElementwise.hpp"
#include "shardops/ops/DistOps.hpp"

namespace shardops {

namespace {

using D = DType;

template <class T>
const T& lookup(const std::map<std::string, T>& map, const std::string& key, const char* what) {
  const auto it = map.find(key);
  if (it == map.end()) throw InternalError(std::string("OpArgs: no ") + what + " '" + key + "'");
  return it->second;
}

bool contains(const std::vector<DType>& list, DType d) { return std::find(list.begin(), list.end(), d) != list.end(); }

// The inputs and attributes the ops share.
OpInput input(std::string name, InputRole role, std::string help, std::string paired_with = "") {
  return OpInput{std::move(name), role, false, std::move(paired_with), std::move(help), {}};
}
OpInput list_input(std::string name, InputRole role, std::string help, std::string paired_with = "") {
  return OpInput{std::move(name), role, true, std::move(paired_with), std::move(help), {}};
}
OpAttr required(std::string name, AttrKind kind, std::string help) {
  return OpAttr{std::move(name), kind, true, "", std::move(help)};
}
OpAttr optional(std::string name, AttrKind kind, std::string fallback) {
  return OpAttr{std::move(name), kind, false, std::move(fallback), ""};
}

const char* const kIndexHelp = "int32/int64 indices [..., K]";

std::vector<DistTensor> run_partition(const Comm& comm, const OpInfo&, const OpArgs& a) {
  return dynamic_partition(comm, a.tensor("data"), a.tensor("partitions"), a.integer("num_partitions"), a.options);
}

std::vector<LazyTensor> run_partition_lazy(const Comm& comm, const OpInfo&, const OpArgs& a) {
  return dynamic_partition_lazy(comm, a.tensor("data"), a.tensor("partitions"), a.integer("num_partitions"), a.options);
}
// The options of a stitch, its messages naming \p op (DynamicStitch or ParallelDynamicStitch).
OpOptions stitch_options(const OpInfo& op, const OpArgs& a) {
  OpOptions options = a.options;
  options.tf_name = op.tf_name;
  return options;
}
std::vector<DistTensor> run_stitch(const Comm& comm, const OpInfo& op, const OpArgs& a) {
  return {dynamic_stitch(comm, a.tensor_list("indices"), a.tensor_list("data"), stitch_options(op, a))};
}
std::vector<LazyTensor> run_stitch_lazy(const Comm& comm, const OpInfo& op, const OpArgs& a) {
  return {dynamic_stitch_lazy(comm, a.tensor_list("indices"), a.tensor_list("data"), stitch_options(op, a))};
}
std::vector<DistTensor> run_scatter_nd(const Comm& comm, const OpInfo&, const OpArgs& a) {
  return {scatter_nd(comm, a.tensor("indices"), a.tensor("updates"), a.integers("shape"), a.options)};
}
std::vector<DistTensor> run_tensor_scatter(const Comm& comm, const OpInfo& op, const OpArgs& a) {
  return {tensor_scatter(comm, op.scatter, a.tensor("tensor"), a.tensor("indices"), a.tensor("updates"), a.options)};
}
std::vector<LazyTensor> run_scatter_nd_lazy(const Comm& comm, const OpInfo&, const OpArgs& a) {
  return {scatter_nd_lazy(comm, a.tensor("indices"), a.tensor("updates"), a.integers("shape"), a.options)};
}
std::vector<LazyTensor> run_tensor_scatter_lazy(const Comm& comm, const OpInfo& op, const OpArgs& a) {
  return {
      tensor_scatter_lazy(comm, op.scatter, a.tensor("tensor"), a.tensor("indices"), a.tensor("updates"), a.options)};
}
std::vector<DistTensor> run_gather_nd(const Comm& comm, const OpInfo&, const OpArgs& a) {
  return {gather_nd(comm, a.tensor("params"), a.tensor("indices"), a.options)};
}

std::vector<LazyTensor> run_gather_nd_lazy(const Comm& comm, const OpInfo&, const OpArgs& a) {
  return {gather_nd_lazy(comm, a.tensor("params"), a.tensor("indices"), a.options)};
}

// The element-wise helpers are timed as the report's "apply" phase (the ops time their own phases).
OpRun elementwise(std::function<DistTensor(const Comm&, const OpArgs&)> f) {
  return [f = std::move(f)](const Comm& comm, const OpInfo&, const OpArgs& a) {
    ScopedPhase phase("apply");
    return std::vector<DistTensor>{f(comm, a)};
  };
}

// The scatter family reads its indices and updates whole on every rank where the ranks share
// one node's page cache and scatter_reads_replicas says that costs less than routing.
std::vector<std::string> scatter_replicated_inputs(const std::map<std::string, InputSpec>& inputs,
                                                   const RankPlacement& placement, const OpOptions&) {
  const auto indices = inputs.find("indices"), updates = inputs.find("updates");
  if (!placement.one_node || indices == inputs.end() || updates == inputs.end()) return {};
  if (!scatter_reads_replicas(indices->second.shape, indices->second.dtype, updates->second.shape,
                              updates->second.dtype, placement.nranks))
    return {};
  return {"indices", "updates"};
}

OpInfo tensor_scatter_op(const char* name, const char* command, const char* tf_name, const char* python,
                         ScatterOp scatter, std::vector<DType> no_kernel, const char* summary, const char* meaning) {
  OpInfo op;
  op.name = name;
  op.command = command;
  op.tf_name = tf_name;
  op.python = python;
  op.family = OpFamily::TensorScatter;
  op.scatter = scatter;
  op.inputs = {input("tensor", InputRole::Tensor, "The tensor to update (a copy is written)"),
               input("indices", InputRole::Indices, kIndexHelp),
               input("updates", InputRole::Updates, "Updates: indices.shape[:-1] + tensor.shape[K:]", "indices")};
  op.tindices = true;
  op.index_dtypes = {D::Int32, D::Int64};
  op.kernel_index = {D::Int32, D::Int64};
  op.no_kernel = std::move(no_kernel);
  op.bad_indices = true;
  op.summary = summary;
  op.meaning = meaning;
  op.example = std::string("mpirun -n 4 shardops ") + command +
               " --tensor in.h5:/t --indices in.h5:/idx --updates in.h5:/u --out out.h5:/y";
  op.run = run_tensor_scatter;
  op.run_lazy = run_tensor_scatter_lazy;
  op.replicated_inputs = scatter_replicated_inputs;
  return op;
}

OpInfo compare_op(CompareOp c, const char* tf_name) {
  OpInfo op;
  op.name = compare_op_name(c);
  op.tf_name = tf_name;
  op.inputs = {input("x", InputRole::Operand, "")};
  op.attrs = {required("y", AttrKind::Number, "")};
  op.run = elementwise([c](const Comm& comm, const OpArgs& a) {
    return compare_scalar(comm, c, a.tensor("x"), a.number("y"), a.options.denormals);
  });
  return op;
}

OpInfo arith_op(ArithOp k, const char* name, const char* tf_name) {
  OpInfo op;
  op.name = name;
  op.tf_name = tf_name;
  op.inputs = {input("x", InputRole::Operand, "")};
  op.attrs = {required("y", AttrKind::Number, "")};
  op.run = elementwise([k](const Comm& comm, const OpArgs& a) {
    return arith_scalar(comm, k, a.tensor("x"), a.number("y"), a.options.denormals);
  });
  return op;
}

std::vector<OpInfo> make_registry() {
  std::vector<OpInfo> ops;
  {
    OpInfo op;
    op.name = "dynamic_partition";
    op.command = "dynamic-partition";
    op.tf_name = "DynamicPartition";
    op.python = "dynamic_partition";
    op.family = OpFamily::DynamicPartition;
    op.inputs = {input("data", InputRole::Data, "Data dataset", "partitions"),
                 input("partitions", InputRole::Partitions, "int32 partition ids (shape: a prefix of data's)")};
    op.attrs = {required("num_partitions", AttrKind::Int, "Number of outputs (>= 1)")};
    op.output_per_partition = true;
    op.index_dtypes = {D::Int32};
    op.summary = "Split rows of data into N outputs by partition id (tf.dynamic_partition)";
    op.meaning =
        "outputs[p] holds the slices data[j] with partitions[j] == p, in order of j. partitions is int32 with a shape "
        "that is a prefix of data's; each output has shape [count_p] + data.shape[partitions.rank:]. Outputs are "
        "written to OUT/0 .. OUT/N-1 and stay on the ranks that held their rows.";
    op.example =
        "mpirun -n 4 shardops dynamic-partition --data in.h5:/x --partitions in.h5:/p --num-partitions 4 --out "
        "out.h5:/parts";
    op.run = run_partition;
    op.run_lazy = run_partition_lazy;
    ops.push_back(op);
  }
  for (const bool parallel : {false, true}) {
    OpInfo op;
    op.name = parallel ? "parallel_dynamic_stitch" : "dynamic_stitch";
    op.command = parallel ? "parallel-dynamic-stitch" : "dynamic-stitch";
    op.tf_name = parallel ? "ParallelDynamicStitch" : "DynamicStitch";
    op.python = op.name;
    op.family = OpFamily::DynamicStitch;
    op.inputs = {list_input("indices", InputRole::Indices, "int32 index datasets, one per data input"),
                 list_input("data", InputRole::Data, "Data datasets, in the order of --indices", "indices")};
    op.index_dtypes = {D::Int32};
    if (parallel) {
      op.summary = "Same as dynamic-stitch (tf.raw_ops.ParallelDynamicStitch)";
      op.meaning =
          "Identical result to dynamic-stitch: TensorFlow leaves duplicates across inputs undefined for the parallel "
          "op; shardops gives the DynamicStitch result, which is one of the outcomes TensorFlow allows.";
      op.example =
          "mpirun -n 4 shardops parallel-dynamic-stitch --indices in.h5:/i0 in.h5:/i1 --data in.h5:/d0 in.h5:/d1 "
          "--out out.h5:/m";
    } else {
      op.summary = "Interleave data tensors by indices (tf.dynamic_stitch)";
      op.meaning =
          "merged[indices[m][i]] = data[m][i] for every input m and position i; when an index repeats, the last (m, "
          "i) in order wins; rows that no index names are zero. merged has shape [max(indices)+1] + "
          "data[0].shape[indices[0].rank:]. Give the index datasets after --indices and the data datasets, in the "
          "same order, after --data; a group given alone (F:/parts) stands for its datasets F:/parts/0, F:/parts/1, "
          "... as dynamic-partition writes them.";
      op.example =
          "mpirun -n 4 shardops dynamic-stitch --indices in.h5:/i0 in.h5:/i1 --data in.h5:/d0 in.h5:/d1 --out "
          "out.h5:/merged";
    }
    op.run = run_stitch;
    op.run_lazy = run_stitch_lazy;
    ops.push_back(op);
  }
  {
    OpInfo op;
    op.name = "scatter_nd";
    op.command = "scatter-nd";
    op.tf_name = "ScatterNd";
    op.python = "scatter_nd";
    op.family = OpFamily::ScatterNd;
    op.scatter = ScatterOp::ScatterNd;
    op.inputs = {input("indices", InputRole::Indices, kIndexHelp),
                 input("updates", InputRole::Updates, "Updates: indices.shape[:-1] + shape[K:]", "indices")};
    op.attrs = {required("shape", AttrKind::Shape, "Output shape, comma-separated (e.g. 4,4,4)")};
    op.tindices = true;
    op.index_dtypes = {D::Int16, D::Int32, D::Int64};
    op.kernel_index = {D::Int32, D::Int64};
    op.bad_indices = true;
    op.summary = "Scatter updates into zeros of a given shape, summing duplicates (tf.scatter_nd)";
    op.meaning =
        "output = zeros(shape), then output[indices[i]] += updates[i] for every index row i in order (the last "
        "dimension of indices is the index depth K; an index addresses a slice when K < rank). Duplicates accumulate "
        "in index order, bool accumulates as OR.";
    op.example =
        "mpirun -n 4 shardops scatter-nd --indices in.h5:/idx --updates in.h5:/upd --shape 1048576,16 --out "
        "out.h5:/y";
    op.run = run_scatter_nd;
    op.run_lazy = run_scatter_nd_lazy;
    op.replicated_inputs = scatter_replicated_inputs;
    ops.push_back(op);
  }
  {
    OpInfo op = tensor_scatter_op(
        "tensor_scatter_update", "tensor-scatter-update", "TensorScatterUpdate", "tensor_scatter_nd_update",
        ScatterOp::Update, {}, "Copy of tensor with rows replaced at indices (tf.tensor_scatter_nd_update)",
        "output = tensor, then output[indices[i]] = updates[i] for every index row i in order: the last duplicate "
        "wins.");
    op.index_dtypes = {D::Int16, D::Int32, D::Int64, D::UInt16};
    ops.push_back(op);
  }
  ops.push_back(tensor_scatter_op(
      "tensor_scatter_add", "tensor-scatter-add", "TensorScatterAdd", "tensor_scatter_nd_add", ScatterOp::Add,
      {D::Bool, D::String}, "Copy of tensor with updates added at indices (tf.tensor_scatter_nd_add)",
      "output = tensor, then output[indices[i]] += updates[i] for every index row i in order."));
  ops.push_back(tensor_scatter_op(
      "tensor_scatter_sub", "tensor-scatter-sub", "TensorScatterSub", "tensor_scatter_nd_sub", ScatterOp::Sub,
      {D::Bool, D::String}, "Copy of tensor with updates subtracted at indices (tf.tensor_scatter_nd_sub)",
      "output = tensor, then output[indices[i]] -= updates[i] for every index row i in order."));
  ops.push_back(tensor_scatter_op(
      "tensor_scatter_min", "tensor-scatter-min", "TensorScatterMin", "tensor_scatter_nd_min", ScatterOp::Min,
      {D::Bool, D::String, D::Complex64, D::Complex128},
      "Copy of tensor with the running minimum at indices (tf.tensor_scatter_nd_min)",
      "output = tensor, then output[indices[i]] = min(output[indices[i]], updates[i]) in index order (TensorFlow's "
      "NaN rules: a NaN already in the output stays, a NaN update is ignored). Not defined for complex dtypes."));
  ops.push_back(tensor_scatter_op(
      "tensor_scatter_max", "tensor-scatter-max", "TensorScatterMax", "tensor_scatter_nd_max", ScatterOp::Max,
      {D::Bool, D::String, D::Complex64, D::Complex128},
      "Copy of tensor with the running maximum at indices (tf.tensor_scatter_nd_max)",
      "output = tensor, then output[indices[i]] = max(output[indices[i]], updates[i]) in index order. Not defined "
      "for complex dtypes."));
  {
    OpInfo op;
    op.name = "gather_nd";
    op.command = "gather-nd";
    op.tf_name = "GatherNd";
    op.python = "gather_nd";
    op.family = OpFamily::GatherNd;
    op.inputs = {input("params", InputRole::Params, "The tensor to gather from"),
                 input("indices", InputRole::Indices, "int16/int32/int64 indices [..., K]")};
    op.inputs.front().rows_named_by = "indices";
    op.tindices = true;
    op.index_dtypes = {D::Int16, D::Int32, D::Int64};
    op.kernel_index = {D::Int16, D::Int32, D::Int64};
    op.bad_indices = true;
    op.summary = "Gather slices of params at indices (tf.gather_nd)";
    op.meaning =
        "output[i] = params[indices[i]]: the last dimension of indices (K, 0 <= K <= rank) indexes the leading dims "
        "of params, so output has shape indices.shape[:-1] + params.shape[K:]; K = 0 copies all of params per index "
        "row.";
    op.example = "mpirun -n 4 shardops gather-nd --params in.h5:/p --indices in.h5:/idx --out out.h5:/y";
    op.run = run_gather_nd;
    op.run_lazy = run_gather_nd_lazy;
    op.replicated_inputs = [](const std::map<std::string, InputSpec>& inputs, const RankPlacement& placement,
                              const OpOptions& options) {
      const auto params = inputs.find("params"), indices = inputs.find("indices");
      if (params == inputs.end() || indices == inputs.end()) return std::vector<std::string>();
      return gather_nd_replicates_params(params->second.shape, indices->second.shape, placement.nranks,
                                         options.gather_params)
                 ? std::vector<std::string>{"params"}
                 : std::vector<std::string>();
    };
    op.rows_read = [](const Comm& comm, const OpArgs& args, const std::string&, const InputSpec& spec,
                      const RowLayout& layout) {
      return gather_nd_params_rows(comm, spec.shape, spec.dtype, args.tensor("indices"), layout, args.options);
    };
    ops.push_back(op);
  }

  // The deck-only helpers (SPEC section 5): no subcommand, no Python function.
  {
    OpInfo op;
    op.name = "range";
    op.tf_name = "Range";
    op.attrs = {optional("start", AttrKind::Int, "0"), required("limit", AttrKind::IntOrTensor, ""),
                optional("delta", AttrKind::Int, "1"), optional("dtype", AttrKind::DType, "int32")};
    op.run = elementwise([](const Comm& comm, const OpArgs& a) {
      return range(comm, a.dtype("dtype"), a.integer("start"), a.integer("limit"), a.integer("delta"));
    });
    ops.push_back(op);
  }
  ops.push_back(compare_op(CompareOp::Equal, "Equal"));
  ops.push_back(compare_op(CompareOp::NotEqual, "NotEqual"));
  ops.push_back(compare_op(CompareOp::Greater, "Greater"));
  ops.push_back(compare_op(CompareOp::GreaterEqual, "GreaterEqual"));
  ops.push_back(compare_op(CompareOp::Less, "Less"));
  ops.push_back(compare_op(CompareOp::LessEqual, "LessEqual"));
  {
    OpInfo op;
    op.name = "cast";
    op.tf_name = "Cast";
    op.inputs = {input("x", InputRole::Operand, "")};
    op.attrs = {required("dtype", AttrKind::DType, "")};
    op.run = elementwise([](const Comm& comm, const OpArgs& a) {
      return cast(comm, a.tensor("x"), a.dtype("dtype"), a.options.denormals);
    });
    ops.push_back(op);
  }
  ops.push_back(arith_op(ArithOp::Add, "add", "AddV2"));
  ops.push_back(arith_op(ArithOp::Multiply, "multiply", "Mul"));
  {
    OpInfo op;
    op.name = "random_uniform";
    op.tf_name = "RandomUniform";
    op.attrs = {required("shape", AttrKind::Shape, ""), optional("dtype", AttrKind::DType, "float32"),
                optional("minval", AttrKind::Number, "0"), optional("maxval", AttrKind::Number, "1"),
                optional("seed", AttrKind::Int, "0")};
    op.run = elementwise([](const Comm& comm, const OpArgs& a) {
      return random_uniform(comm, a.dtype("dtype"), Shape(a.integers("shape")),
                            static_cast<std::uint64_t>(a.integer("seed")), a.number("minval"), a.number("maxval"));
    });
    ops.push_back(op);
  }
  return ops;
}

std::string join_names(std::string OpInfo::*field) {
  std::string out;
  for (const OpInfo& op : op_registry()) {
    if (!(op.*field).empty()) out += (out.empty() ? "" : ", ") + op.*field;
  }
  return out;
}

const OpInfo* find_by(std::string OpInfo::*field, const std::string& value) {
  if (value.empty()) return nullptr;
  for (const OpInfo& op : op_registry()) {
    if (op.*field == value) return &op;
  }
  return nullptr;
}

// ------------------------------------------------------------------ JSON

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string dtype_list(const std::vector<DType>& list) {
  std::string out = "[";
  for (std::size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + quote(dtype_name(list[i]));
  return out + "]";
}

const char* boolean(bool b) { return b ? "true" : "false"; }

}  // namespace

// ------------------------------------------------------------------ OpArgs

const DistTensor& OpArgs::tensor(const std::string& name) const {
  const std::vector<DistTensor>& list = lookup(tensors, name, "tensor");
  if (list.size() != 1) throw InternalError("OpArgs: input '" + name + "' is not one tensor");
  return list.front();
}
const std::vector<DistTensor>& OpArgs::tensor_list(const std::string& name) const {
  return lookup(tensors, name, "tensor");
}
std::int64_t OpArgs::integer(const std::string& name) const {
  const std::vector<std::int64_t>& v = lookup(ints, name, "integer");
  if (v.size() != 1) throw InternalError("OpArgs: attribute '" + name + "' is not one integer");
  return v.front();
}
const std::vector<std::int64_t>& OpArgs::integers(const std::string& name) const {
  return lookup(ints, name, "integer");
}
const Scalar& OpArgs::number(const std::string& name) const { return lookup(numbers, name, "number"); }
DType OpArgs::dtype(const std::string& name) const { return lookup(dtypes, name, "dtype"); }

// ------------------------------------------------------------------ OpInfo

bool OpInfo::has_kernel(DType dtype, DType index) const {
  if (contains(no_kernel, dtype)) return false;
  return contains(tindices ? kernel_index : index_dtypes, index);
}

bool OpInfo::has_string_kernel() const { return family != OpFamily::Elementwise && !contains(no_kernel, D::String); }

const OpInput* OpInfo::input(const std::string& name) const {
  for (const OpInput& in : inputs) {
    if (in.name == name) return &in;
  }
  return nullptr;
}

const OpAttr* OpInfo::attr(const std::string& name) const {
  for (const OpAttr& a : attrs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

// ------------------------------------------------------------------ look-ups

const std::vector<OpInfo>& op_registry() {
  static const std::vector<OpInfo> ops = make_registry();
  return ops;
}

const OpInfo* find_op(const std::string& name) { return find_by(&OpInfo::name, name); }
const OpInfo* find_op_by_command(const std::string& command) { return find_by(&OpInfo::command, command); }
const OpInfo* find_op_by_tf_name(const std::string& tf_name) { return find_by(&OpInfo::tf_name, tf_name); }

// Declared with ScatterOp (Validation.hpp); defined here so that an op's TF name has one
// place, its registry entry.
const char* scatter_op_name(ScatterOp op) noexcept {
  for (const OpInfo& info : op_registry()) {
    if ((info.family == OpFamily::ScatterNd || info.family == OpFamily::TensorScatter) && info.scatter == op)
      return info.tf_name.c_str();
  }
  return "Scatter";
}

const OpInfo& op_named(const std::string& name) {
  if (const OpInfo* op = find_op(name)) return *op;
  throw InvalidArgument("unknown op '" + name + "' (known: " + op_names() + ")");
}

const OpInfo& op_for_command(const std::string& command) {
  if (const OpInfo* op = find_op_by_command(command)) return *op;
  throw InvalidArgument("unknown command '" + command + "' (the op commands are " + op_commands() + ")");
}

std::string op_names() { return join_names(&OpInfo::name); }
std::string op_commands() { return join_names(&OpInfo::command); }

const char* input_role_name(InputRole role) noexcept {
  switch (role) {
    case InputRole::Data: return "data";
    case InputRole::Partitions: return "partitions";
    case InputRole::Indices: return "indices";
    case InputRole::Updates: return "updates";
    case InputRole::Tensor: return "tensor";
    case InputRole::Params: return "params";
    case InputRole::Operand: return "operand";
  }
  return "?";
}

const char* op_family_name(OpFamily family) noexcept {
  switch (family) {
    case OpFamily::DynamicPartition: return "dynamic_partition";
    case OpFamily::DynamicStitch: return "dynamic_stitch";
    case OpFamily::ScatterNd: return "scatter_nd";
    case OpFamily::TensorScatter: return "tensor_scatter";
    case OpFamily::GatherNd: return "gather_nd";
    case OpFamily::Elementwise: return "elementwise";
  }
  return "?";
}

const char* attr_kind_name(AttrKind kind) noexcept {
  switch (kind) {
    case AttrKind::Int: return "int";
    case AttrKind::Shape: return "shape";
    case AttrKind::IntOrTensor: return "int_or_tensor";
    case AttrKind::Number: return "number";
    case AttrKind::DType: return "dtype";
  }
  return "?";
}

std::string op_registry_json() {
  std::string out = "[\n";
  const std::vector<OpInfo>& ops = op_registry();
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const OpInfo& op = ops[k];
    out += "  {\"name\": " + quote(op.name) + ", \"command\": " + quote(op.command) +
           ", \"tf_name\": " + quote(op.tf_name) + ", \"python\": " + quote(op.python) +
           ", \"family\": " + quote(op_family_name(op.family)) + ",\n   \"inputs\": [";
    for (std::size_t i = 0; i < op.inputs.size(); ++i) {
      const OpInput& in = op.inputs[i];
      out += std::string(i ? ", " : "") + "{\"name\": " + quote(in.name) +
             ", \"role\": " + quote(input_role_name(in.role)) + ", \"list\": " + boolean(in.is_list) +
             ", \"paired_with\": " + quote(in.paired_with) + "}";
    }
    out += "],\n   \"attrs\": [";
    for (std::size_t i = 0; i < op.attrs.size(); ++i) {
      const OpAttr& a = op.attrs[i];
      out += std::string(i ? ", " : "") + "{\"name\": " + quote(a.name) +
             ", \"kind\": " + quote(attr_kind_name(a.kind)) + ", \"required\": " + boolean(a.required) +
             ", \"default\": " + quote(a.fallback) + "}";
    }
    out += "],\n   \"output_per_partition\": " + std::string(boolean(op.output_per_partition)) +
           ", \"bad_indices\": " + boolean(op.bad_indices) + ", \"tindices\": " + boolean(op.tindices) +
           ",\n   \"index_dtypes\": " + dtype_list(op.index_dtypes) +
           ", \"kernel_index_dtypes\": " + dtype_list(op.tindices ? op.kernel_index : op.index_dtypes) +
           ", \"no_kernel_dtypes\": " + dtype_list(op.no_kernel) + ", \"strings\": " + boolean(op.has_string_kernel()) +
           ",\n   \"summary\": " + quote(op.summary) + "}" + (k + 1 < ops.size() ? ",\n" : "\n");
  }
  return out + "]\n";
}

}  // namespace shardops
