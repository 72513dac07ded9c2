#include "OpCommands.hpp"

#include <iostream>
#include <map>

#include "CommandLine.hpp"
#include "ShapeText.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/hdf5/Io.hpp"
#include "shardops/kernels/StringKernels.hpp"
#include "shardops/ops/DistOps.hpp"

namespace shardops {
namespace app {

namespace {

std::string describe(const DistTensor& t) { return t.shape().str() + " " + dtype_name(t.dtype()); }

// Collective: the tensor's bytes (a string tensor's: the strings' own bytes).
std::int64_t global_bytes(const Comm& comm, const DistTensor& t) {
  if (is_string(t.dtype())) return comm.sum(string_payload_bytes(t.local()));
  return t.shape().num_elements() * static_cast<std::int64_t>(dtype_size(t.dtype()));
}

// Reads one input (collective), recording it for errors and the report. A paired
// input is read in its index tensor's row layout, so no rows move afterwards.
DistTensor read_input(const Comm& comm, const std::string& subject, const std::string& option, const std::string& name,
                      InputList& inputs, RunRecord& record, const DistTensor* pair_with = nullptr) {
  inputs.add(subject, option, name);
  const io::DatasetRef ref = io::parse_dataset_ref(name);
  const RowLayout* layout = nullptr;
  RowLayout paired;
  if (pair_with && !pair_with->is_scalar()) {
    const io::DatasetInfo info = io::inspect(comm, ref);
    if (info.shape.rank() > 0 && info.shape.dim(0) == pair_with->layout().total()) {
      paired = pair_with->layout();
      layout = &paired;
    }
  }
  DistTensor t = io::read_dataset(comm, ref, layout);
  inputs.describe(subject, describe(t));
  record.inputs.push_back(name);
  record.bytes_read += global_bytes(comm, t);
  return t;
}

struct Output {
  std::string dataset;
  DistTensor tensor;
};

void write_outputs(const Comm& comm, const Request& r, const std::vector<Output>& outputs, RunRecord& record) {
  ScopedPhase phase("write");
  const io::Attributes attrs{{"op", r.command}, {"options", record.options}, {"inputs", record.inputs}};
  io::OutputTransaction file(comm, io::OutputOptions{r.overwrite, !r.no_fsync, r.storage});
  for (const Output& o : outputs) {
    file.write(io::parse_dataset_ref(o.dataset), o.tensor, attrs);
    record.outputs.push_back(o.dataset + " " + describe(o.tensor));
    record.written.push_back({o.dataset, o.tensor.shape().dims(), dtype_name(o.tensor.dtype()), ""});
    record.bytes_written += global_bytes(comm, o.tensor);
  }
  file.commit();
}

ScatterOp tensor_scatter_op(const std::string& command) {
  if (command == "tensor-scatter-update") return ScatterOp::Update;
  if (command == "tensor-scatter-add") return ScatterOp::Add;
  if (command == "tensor-scatter-sub") return ScatterOp::Sub;
  if (command == "tensor-scatter-min") return ScatterOp::Min;
  if (command == "tensor-scatter-max") return ScatterOp::Max;
  throw InternalError("unknown tensor-scatter command " + command);
}

}  // namespace

void run_op_command(const Comm& comm, const Request& r, RunRecord& record, InputList& inputs) {
  OpStats stats;  // what the op reports (bytes sent)
  OpOptions options = r.options;
  options.stats = &stats;
  record.command = r.command;
  record.options = std::string("bad_indices=") + (r.options.bad_indices == BadIndices::Error ? "error" : "ignore");
  std::vector<Output> outputs;
  const std::string out = r.out;
  // A malformed --out, or one with a row selection, is a usage error before any work.
  if (!io::parse_dataset_ref(out).rows.empty())
    throw InvalidArgument("--out " + out + ": an output is a whole dataset; a [start:stop] selects rows of an input");

  if (r.command == "dynamic-partition") {
    DistTensor partitions, data;
    // Bounded before any work: every partition is an output tensor and a dataset.
    check_tensor_count(comm, r.num_partitions,
                       "--num-partitions " + std::to_string(r.num_partitions) + " (one output tensor each)");
    {
      ScopedPhase phase("read");
      partitions = read_input(comm, "partitions", "--partitions", r.partitions, inputs, record);
      data = read_input(comm, "data", "--data", r.data, inputs, record, &partitions);
    }
    const std::vector<DistTensor> parts = dynamic_partition(comm, data, partitions, r.num_partitions, options);
    for (std::size_t p = 0; p < parts.size(); ++p) outputs.push_back({out + "/" + std::to_string(p), parts[p]});
    record.options += ", num_partitions=" + std::to_string(r.num_partitions);
  } else if (r.command == "dynamic-stitch" || r.command == "parallel-dynamic-stitch") {
    std::vector<DistTensor> indices, data;
    check_tensor_count(comm, 2 * static_cast<std::int64_t>(r.indices_list.size()),
                       std::to_string(r.indices_list.size()) + " pairs of --indices and --data inputs");
    {
      ScopedPhase phase("read");
      for (std::size_t m = 0; m < r.indices_list.size(); ++m) {
        const std::string sm = "[" + std::to_string(m) + "]";
        indices.push_back(read_input(comm, "indices" + sm, "--indices", r.indices_list[m], inputs, record));
      }
      for (std::size_t m = 0; m < r.data_list.size(); ++m) {
        const std::string sm = "[" + std::to_string(m) + "]";
        data.push_back(read_input(comm, "data" + sm, "--data", r.data_list[m], inputs, record, &indices[m]));
      }
    }
    outputs.push_back({out, dynamic_stitch(comm, indices, data, options)});
  } else if (r.command == "scatter-nd") {
    const std::vector<std::int64_t> shape = parse_shape(r.shape);
    DistTensor indices, updates;
    {
      ScopedPhase phase("read");
      indices = read_input(comm, "indices", "--indices", r.indices, inputs, record);
      updates = read_input(comm, "updates", "--updates", r.updates, inputs, record, &indices);
    }
    outputs.push_back({out, scatter_nd(comm, indices, updates, shape, options)});
    record.options += ", shape=" + r.shape;
  } else if (r.command.rfind("tensor-scatter-", 0) == 0) {
    DistTensor tensor, indices, updates;
    {
      ScopedPhase phase("read");
      tensor = read_input(comm, "tensor", "--tensor", r.tensor, inputs, record);
      indices = read_input(comm, "indices", "--indices", r.indices, inputs, record);
      updates = read_input(comm, "updates", "--updates", r.updates, inputs, record, &indices);
    }
    outputs.push_back({out, tensor_scatter(comm, tensor_scatter_op(r.command), tensor, indices, updates, options)});
  } else if (r.command == "gather-nd") {
    DistTensor params, indices;
    {
      ScopedPhase phase("read");
      params = read_input(comm, "params", "--params", r.params, inputs, record);
      indices = read_input(comm, "indices", "--indices", r.indices, inputs, record);
    }
    outputs.push_back({out, gather_nd(comm, params, indices, options)});
  } else {
    throw InternalError("unknown command " + r.command);
  }
  record.bytes_sent_local = stats.bytes_sent;
  write_outputs(comm, r, outputs, record);
}

}  // namespace app
}  // namespace shardops
