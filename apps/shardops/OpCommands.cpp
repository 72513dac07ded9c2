#include "OpCommands.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>

#include "CommandLine.hpp"
#include "ReportFile.hpp"
#include "ShapeText.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/core/Settings.hpp"
#include "shardops/hdf5/FileListing.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Io.hpp"
#include "shardops/kernels/StringKernels.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/ops/OpRegistry.hpp"
#include "shardops/route/NodeMemory.hpp"

namespace shardops {
namespace app {

namespace {

template <class T>
std::string describe(const T& t) {
  return t.shape().str() + " " + dtype_name(t.dtype());
}

// Collective: the tensor's bytes (a string tensor's: the strings' own bytes; strings are
// always held).
std::int64_t global_bytes(const Comm& comm, const DistTensor& t) {
  if (is_string(t.dtype())) return comm.sum(string_payload_bytes(t.local()));
  return t.shape().num_elements() * static_cast<std::int64_t>(dtype_size(t.dtype()));
}
std::int64_t global_bytes(const Comm& comm, const LazyTensor& t) {
  if (t.held()) return global_bytes(comm, t.tensor());
  return t.shape().num_elements() * static_cast<std::int64_t>(dtype_size(t.dtype()));
}

// Whether an op that can leave its output's rows to be made as they are written
// (OpInfo::run_lazy) does so: SHARDOPS_STREAM_OUTPUTS=0 makes every output whole first,
// as the ops do for decks and Python.
bool stream_outputs() { return switch_setting("SHARDOPS_STREAM_OUTPUTS").value_or(true); }

// How inputs are read: datasets of 1 MiB or more mapped where the file allows it
// (io::ReadOptions says why a job that reads, runs one op and exits may).
// SHARDOPS_MAP_INPUTS=0 copies every dataset, =all maps every one that can be.
io::ReadOptions input_reading() {
  const std::string map = word_setting("SHARDOPS_MAP_INPUTS").value_or("1");
  io::ReadOptions options;
  options.map_file = map != "0";
  if (map == "all") options.map_from_bytes = 0;
  return options;
}

// Collective: the inputs the op would read whole on every rank (OpInfo::replicated_inputs),
// from the inputs' shapes and dtypes; none if a dataset cannot be inspected (reading it
// reports that, naming the input).
std::vector<std::string> replicated_inputs(const Comm& comm, io::InputFiles& files, const OpInfo& op, const Request& r,
                                           const OpOptions& options) {
  if (!op.replicated_inputs || comm.size() == 1) return {};
  std::map<std::string, InputSpec> specs;
  try {
    for (const OpInput& in : op.inputs) {
      const auto given = r.inputs.find(in.name);
      if (!in.is_list && given != r.inputs.end() && given->second.size() == 1) {
        const io::DatasetInfo info = files.inspect(io::parse_dataset_ref(given->second.front()));
        specs[in.name] = InputSpec{info.shape, info.dtype};
      }
    }
  } catch (const Error&) {
    return {};  // every rank throws alike (io::inspect)
  }
  return op.replicated_inputs(specs, RankPlacement{comm.size(), all_on_one_node(comm)}, options);
}

// Reads one input (collective), recording it for errors and the report. A paired
// input is read in its index tensor's row layout, so no rows move afterwards.
DistTensor read_input(const Comm& comm, io::InputFiles& files, const std::string& subject, const std::string& option,
                      const std::string& name, InputList& inputs, RunRecord& record,
                      const DistTensor* pair_with = nullptr, bool replicate = false,
                      const RowRuns* only_rows = nullptr) {
  inputs.add(subject, option, name);
  const io::DatasetRef ref = io::parse_dataset_ref(name);
  const RowLayout* layout = nullptr;
  RowLayout paired;
  if (pair_with && !pair_with->is_scalar()) {
    const io::DatasetInfo info = files.inspect(ref);
    if (info.shape.rank() > 0 && info.shape.dim(0) == pair_with->layout().total()) {
      paired = pair_with->layout();
      layout = &paired;
    }
  }
  io::ReadOptions reading = input_reading();
  reading.replicate = replicate;
  reading.only_rows = only_rows;
  std::int64_t rows_read = 0;
  reading.rows_read = &rows_read;
  DistTensor t = files.read(ref, layout, reading);
  inputs.describe(subject, describe(t));
  record.inputs.push_back(name);
  // Only the rows read where the op asked for a few (the same on every rank).
  record.bytes_read +=
      only_rows == nullptr || is_string(t.dtype())
          ? global_bytes(comm, t)
          : comm.sum(rows_read) * t.shape().product_from(1) * static_cast<std::int64_t>(dtype_size(t.dtype()));
  return t;
}

// Collective: the rows of input \p in (dataset \p name) the op reads, of this rank's block
// (OpInfo::rows_read), now that the input naming them is in \p args; std::nullopt for all,
// and where the dataset cannot be inspected (reading it reports that, naming the input).
std::optional<RowRuns> rows_to_read(const Comm& comm, io::InputFiles& files, const OpInfo& op, const OpInput& in,
                                    const std::string& name, const OpArgs& args) {
  if (!op.rows_read || in.is_list || in.rows_named_by.empty()) return std::nullopt;
  io::DatasetInfo info;
  try {
    info = files.inspect(io::parse_dataset_ref(name));
  } catch (const Error&) {
    return std::nullopt;  // every rank throws alike (io::inspect)
  }
  if (info.shape.rank() == 0) return std::nullopt;
  return op.rows_read(comm, args, in.name, InputSpec{info.shape, info.dtype},
                      RowLayout::balanced(info.shape.dim(0), comm.size()));
}

struct Output {
  std::string dataset;
  LazyTensor tensor;
};

void write_outputs(const Comm& comm, const Request& r, const std::vector<Output>& outputs, bool per_partition,
                   io::InputWatch& inputs, RunRecord& record) {
  ScopedPhase phase("write");
  const io::Attributes attrs{{"op", r.command}, {"options", record.options}, {"inputs", record.inputs}};
  io::OutputTransaction file(comm, io::OutputOptions{r.overwrite, !r.no_fsync, r.storage, &inputs});
  // --overwrite of a group of partitions replaces the group: partitions an earlier job wrote
  // beyond this job's go too.
  if (per_partition && r.overwrite)
    file.drop_numbered_members(io::parse_dataset_ref(r.out), static_cast<std::int64_t>(outputs.size()), r.command);
  record.outputs.reserve(record.outputs.size() + outputs.size());
  record.written.reserve(record.written.size() + outputs.size());
  for (const Output& o : outputs) {
    const bool streamed = file.write(io::parse_dataset_ref(o.dataset), o.tensor, attrs);
    record.outputs.push_back(o.dataset + " " + describe(o.tensor));
    record.written.push_back({o.dataset, o.tensor.shape().dims(), dtype_name(o.tensor.dtype()), "", streamed});
    record.bytes_written += global_bytes(comm, o.tensor);
  }
  file.commit();
}

// The input \p in is read after: the one whose row layout it is read in (OpInput::paired_with)
// or whose values name the rows of it that are read (OpInput::rows_named_by); "" if none.
const std::string& read_after(const OpInput& in) { return in.paired_with.empty() ? in.rows_named_by : in.paired_with; }

// The order inputs are read in: the op's order, but an input read after another (read_after)
// right after that one.
std::vector<const OpInput*> read_order(const OpInfo& op) {
  std::vector<const OpInput*> order, waiting;
  auto placed = [&](const std::string& name) {
    return std::any_of(order.begin(), order.end(), [&](const OpInput* in) { return in->name == name; });
  };
  for (const OpInput& in : op.inputs) {
    if (!read_after(in).empty() && !placed(read_after(in))) {
      waiting.push_back(&in);
      continue;
    }
    order.push_back(&in);
    for (auto it = waiting.begin(); it != waiting.end();) {
      if (placed(read_after(**it))) {
        order.push_back(*it);
        it = waiting.erase(it);
      } else {
        ++it;
      }
    }
  }
  order.insert(order.end(), waiting.begin(), waiting.end());
  return order;
}

// A group of partitions read as a list input (with_partition_groups): its file when its
// members were counted.
struct ListedGroup {
  std::string given;  ///< "--data F:/parts"
  std::string file;   ///< as given
  bool seen = false;  ///< rank 0 saw the file then
  io::InputWatch::Identity identity;
};

// Rethrows \p e, as an IOError (exit 3: run again) where a group's file changed since its
// members were counted: another job that wrote the group meanwhile (--overwrite with another
// number of partitions) leaves members of two versions, or one fewer, which the op would take
// for the user's mistake (exit 2). Every rank looks for itself (no collective in an error's path).
[[noreturn]] void rethrow_if_group_changed(const Error& e, const std::vector<ListedGroup>& listed) {
  if (e.kind() != ErrorKind::IO) {
    for (const ListedGroup& g : listed) {
      io::InputWatch::Identity now;
      if (g.seen && (!io::InputWatch::identity_of(g.file, now) || !(now == g.identity)))
        throw IOError(g.given + " was written by another job while this job read it (its partitions changed: " +
                      std::string(e.what()) + "); run the job again");
    }
  }
  throw;
}

// Collective: \p given with each list input given as one group (no row selection) replaced
// by the group's datasets GROUP/0 … GROUP/N-1 (io::partition_group_size): dynamic-partition's
// --out, stitched back with `--indices F:/positions --data F:/parts` (thousands of datasets
// would not fit on a command line). Rank 0 looks; every rank gets its answer.
Request with_partition_groups(const Comm& comm, const OpInfo& op, const Request& given,
                              std::vector<ListedGroup>& listed) {
  Request r = given;
  std::string counted;  // "--indices F:/g (16 datasets)" of the lists so far, for a mismatch
  std::size_t count = 0;
  for (const OpInput& in : op.inputs) {
    if (!in.is_list) continue;
    std::vector<std::string>& names = r.inputs.at(in.name);
    const std::string option = option_name(in.name);
    if (names.size() == 1) {
      const io::DatasetRef ref = io::parse_dataset_ref(names.front());
      std::int64_t n = -1;
      ListedGroup group{option + " " + names.front(), ref.file, false, {}};
      if (ref.rows.empty()) {
        run_agreed(comm, [&] {
          if (comm.rank() != 0) return;
          group.seen = io::InputWatch::identity_of(ref.file, group.identity);
          n = io::partition_group_size(ref.file, ref.path, option + " " + names.front()).value_or(-1);
        });
        n = comm.max(n);
      }
      if (n > 0) {
        // Rank 0's view, on every rank: their error paths (no collective there) decide alike.
        std::string seen = comm.broadcast(
            group.seen ? std::string(reinterpret_cast<const char*>(&group.identity), sizeof group.identity) : "", 0);
        group.seen = seen.size() == sizeof group.identity;
        if (group.seen) std::memcpy(&group.identity, seen.data(), sizeof group.identity);
        listed.push_back(std::move(group));
        check_tensor_count(comm, n, option + " " + names.front() + " (" + std::to_string(n) + " datasets)");
        std::vector<std::string> members;
        members.reserve(static_cast<std::size_t>(n));
        for (std::int64_t k = 0; k < n; ++k) members.push_back(ref.file + ":" + ref.path + "/" + std::to_string(k));
        names = std::move(members);
      }
    }
    const std::vector<std::string>& as_given = given.inputs.at(in.name);
    const std::string these = option + (as_given.size() == 1 ? " " + as_given.front() : std::string()) + " (" +
                              std::to_string(names.size()) + (names.size() == 1 ? " dataset)" : " datasets)");
    if (!counted.empty() && names.size() != count)
      throw InvalidArgument("usage: " + counted + " and " + these + " must name as many datasets, one pair each");
    if (counted.empty()) {
      counted = these;
      count = names.size();
    }
  }
  return r;
}

}  // namespace

void run_op_command(const Comm& comm, const Request& given, RunRecord& record, InputList& inputs) {
  const OpInfo& op = op_for_command(given.command);
  std::vector<ListedGroup> listed;
  const Request r = with_partition_groups(comm, op, given, listed);
  record.command = r.command;
  record.options = std::string("bad_indices=") + (r.options.bad_indices == BadIndices::Error ? "error" : "ignore");
  std::vector<Output> outputs;
  const std::string out = r.out;
  // A malformed --out, or one with a row selection, is a usage error before any work.
  if (!io::parse_dataset_ref(out).rows.empty())
    throw InvalidArgument("--out " + out + ": an output is a whole dataset; a [start:stop] selects rows of an input");

  OpArgs args;
  OpStats stats;  // what the op reports (bytes sent)
  args.options = r.options;
  args.options.stats = &stats;
  for (const OpAttr& a : op.attrs) {
    const auto it = r.attrs.find(a.name);
    if (it == r.attrs.end()) continue;
    if (a.kind == AttrKind::Int) {
      args.ints[a.name] = {std::stoll(it->second)};  // CLI11 checked it is one
    } else if (a.kind == AttrKind::Shape) {
      args.ints[a.name] = parse_shape(it->second);
    } else {
      throw InternalError("the command line has no " + std::string(attr_kind_name(a.kind)) + " attributes");
    }
    record.options += ", " + a.name + "=" + it->second;
  }
  // Bounded before any work: every partition is an output tensor and a dataset, every
  // input an input tensor.
  if (op.output_per_partition) {
    const std::int64_t n = args.integer("num_partitions");
    check_num_partitions(n);  // TF's bound, the same on any machine, before the memory's
    check_tensor_count(comm, n, "--num-partitions " + std::to_string(n) + " (one output tensor each)");
  }
  std::vector<std::string> lists;
  std::int64_t list_tensors = 0, pairs = 0;
  for (const OpInput& in : op.inputs) {
    if (!in.is_list) continue;
    lists.push_back(option_name(in.name));
    pairs = static_cast<std::int64_t>(r.inputs.at(in.name).size());
    list_tensors += pairs;
  }
  if (!lists.empty()) {
    std::string names;
    for (std::size_t i = 0; i < lists.size(); ++i)
      names += (i == 0 ? "" : i + 1 == lists.size() ? " and " : ", ") + lists[i];
    check_tensor_count(comm, list_tensors,
                       std::to_string(pairs) + (lists.size() == 2 ? " pairs of " : " sets of ") + names + " inputs");
  }
  // An output the folder cannot take (missing, not writable, a name too long, a file there
  // that is not a regular or writable one) is refused before any work; the write checks again.
  run_agreed(comm, [&] {
    if (comm.rank() == 0) io::resolve_output_path(io::parse_dataset_ref(out).file, out);
  });
  // The inputs' files must not change until the commit: the op and a streamed output read
  // rows mapped from their pages.
  io::InputWatch watch(comm);
  const io::DatasetRef out_ref = io::parse_dataset_ref(out);
  watch.will_write(out_ref.file, out_ref.path);
  const std::size_t recorded_before = record.inputs.size();
  std::vector<LazyTensor> results;
  try {
    ScopedPhase phase("read");
    io::InputFiles files(comm, &watch);  // closed before the op: an input's file may take an output
    const std::vector<std::string> whole = replicated_inputs(comm, files, op, r, args.options);
    for (const OpInput* in : read_order(op)) {
      const std::vector<std::string>& datasets = r.inputs.at(in->name);
      std::vector<DistTensor>& tensors = args.tensors[in->name];
      for (std::size_t m = 0; m < datasets.size(); ++m) {
        const std::string subject = in->is_list ? in->name + "[" + std::to_string(m) + "]" : in->name;
        const DistTensor* pair = nullptr;
        if (!in->paired_with.empty()) {
          const std::vector<DistTensor>& with = args.tensors.at(in->paired_with);
          pair = in->is_list ? &with.at(m) : &with.front();
        }
        const std::optional<RowRuns> rows = rows_to_read(comm, files, op, *in, datasets[m], args);
        tensors.push_back(read_input(comm, files, subject, option_name(in->name), datasets[m], inputs, record, pair,
                                     std::find(whole.begin(), whole.end(), in->name) != whole.end(),
                                     rows ? &*rows : nullptr));
      }
    }
  } catch (const Error& e) {
    rethrow_if_group_changed(e, listed);
  }
  // The inputs as the job records them (report, provenance): in the op's order, whatever
  // order they were read in.
  record.inputs.resize(recorded_before);
  for (const OpInput& in : op.inputs)
    record.inputs.insert(record.inputs.end(), r.inputs.at(in.name).begin(), r.inputs.at(in.name).end());
  if (record.report_file != nullptr) record.report_file->refuse_files_read(comm, watch.files_read());
  try {
    if (op.run_lazy && stream_outputs()) {
      results = op.run_lazy(comm, op, args);
    } else {
      for (DistTensor& t : op.run(comm, op, args)) results.emplace_back(std::move(t));
    }
  } catch (const Error& e) {
    rethrow_if_group_changed(e, listed);
  }
  // Moved, not copied: a job may have millions of partitions (one output each).
  outputs.reserve(results.size());
  if (op.output_per_partition) {
    for (std::size_t p = 0; p < results.size(); ++p)
      outputs.push_back({out + "/" + std::to_string(p), std::move(results[p])});
  } else {
    outputs.push_back({out, std::move(results.at(0))});
  }
  std::vector<LazyTensor>().swap(results);
  record.bytes_sent_local = stats.bytes_sent;
  write_outputs(comm, r, outputs, op.output_per_partition, watch, record);
}

}  // namespace app
}  // namespace shardops
