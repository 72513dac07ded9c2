#include "DeckRunner.hpp"

#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "Deck.hpp"
#include "ReportFile.hpp"
#include "shardops/core/Dispatch.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/hdf5/Io.hpp"
#include "shardops/kernels/StringKernels.hpp"
#include "shardops/ops/DistOps.hpp"
#include "shardops/ops/OpRegistry.hpp"

namespace shardops {
namespace app {

namespace {

using Env = std::map<std::string, DistTensor>;

std::string describe(const DistTensor& t) { return t.shape().str() + " " + dtype_name(t.dtype()); }

// An inline value, built on every rank, each keeping its block.
DistTensor inline_tensor(const Comm& comm, const DeckInput& in) {
  const Shape shape(in.shape);
  if (is_string(in.dtype)) return DistTensor::from_replicated(comm, make_string_tensor(shape, in.string_values));
  std::vector<unsigned char> bytes(static_cast<std::size_t>(shape.num_elements()) * dtype_size(in.dtype));
  dispatch_dtype(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = reinterpret_cast<T*>(bytes.data());
    // The loader refused what the dtype does not take (a real for an integer, a number for bool).
    for (std::size_t k = 0; k < in.real_values.size(); ++k) {
      if constexpr (std::is_same<T, bool>::value) {
        out[k] = in.int_values[k] != 0;
      } else if constexpr (std::is_same<T, half_t>::value) {
        out[k] = half_t(static_cast<float>(in.real_values[k]));
      } else if constexpr (std::is_integral<T>::value) {
        out[k] = static_cast<T>(in.int_values[k]);  // modulo 2^bits, as tf.constant([300], dtype=uint8)
      } else if constexpr (std::is_floating_point<T>::value) {
        out[k] = static_cast<T>(in.real_values[k]);
      } else {
        out[k] = T(static_cast<typename T::value_type>(in.real_values[k]));
      }
    }
  });
  return DistTensor::from_replicated(comm, Tensor::from_host_bytes(in.dtype, shape, bytes.data(), bytes.size()));
}

// Runs one step through its op's entry in the registry; returns its outputs in
// step.outputs order.
std::vector<DistTensor> run_step(const Comm& comm, const DeckStep& step, const Env& env, const OpOptions& options) {
  const OpInfo& op = op_named(step.op);  // the loader refused any other name
  OpArgs args;
  args.options = options;
  for (const OpInput& in : op.inputs) {
    const auto it = step.args.find(in.name);
    if (it == step.args.end()) continue;
    std::vector<DistTensor>& tensors = args.tensors[in.name];
    if (in.is_list) {
      for (const std::string& name : it->second.list) tensors.push_back(env.at(name));
    } else {
      tensors.push_back(env.at(it->second.text));
    }
  }
  // A missing optional attribute takes its fallback, read as the deck would write it.
  DeckStep given = step;
  for (const OpAttr& a : op.attrs) {
    if (!given.args.count(a.name)) given.args[a.name] = DeckValue{a.fallback, {}, false, step.line, {}};
  }
  for (const OpAttr& a : op.attrs) {
    switch (a.kind) {
      case AttrKind::Int: args.ints[a.name] = {deck_int(given, a.name)}; break;
      case AttrKind::Shape: args.ints[a.name] = deck_int_list(given, a.name); break;
      case AttrKind::IntOrTensor: {  // a tensor's name: its number of rows
        const auto it = env.find(given.args.at(a.name).text);
        args.ints[a.name] = {it != env.end() ? (it->second.is_scalar() ? 1 : it->second.shape().dim(0))
                                             : deck_int(given, a.name)};
        break;
      }
      case AttrKind::Number: break;  // below, once the dtype it converts to is known
      case AttrKind::DType: args.dtypes[a.name] = dtype_from_name(deck_text_or(given, a.name, "")); break;
    }
  }
  // A number converts to the dtype of the op's tensor (x + y), or of what it makes
  // (random_uniform's minval), where it has to fit: TF wraps it into the dtype, and a
  // wrapped bound is not the one written.
  const bool makes = op.inputs.empty();
  for (const OpAttr& a : op.attrs) {
    if (a.kind != AttrKind::Number) continue;
    const DType dtype = makes ? args.dtypes.at("dtype") : args.tensors.at(op.inputs.front().name).front().dtype();
    args.numbers[a.name] = deck_scalar_as(given, a.name, dtype, !makes);
  }
  return op.run(comm, op, args);
}

}  // namespace

void run_deck_command(const Comm& comm, const Request& r, RunRecord& record, InputList& inputs) {
  const Deck deck = load_deck(r.deck, r.set);
  record.command = "run " + r.deck;
  OpOptions options = r.options;
  if (!r.bad_indices_given && !deck.bad_indices.empty())
    options.bad_indices = bad_indices_from_string(deck.bad_indices);
  if (!r.schedule_given && !deck.schedule.empty()) {
    options.schedule = deck.schedule == "sequential" ? Schedule::Sequential
                       : deck.schedule == "parallel" ? Schedule::Parallel
                                                     : Schedule::Auto;
  }
  record.options = std::string("bad_indices=") + (options.bad_indices == BadIndices::Error ? "error" : "ignore");
  const bool talk = comm.rank() == 0 && r.verbosity == Verbosity::Verbose;

  // An output whose folder cannot take it (not writable, a name too long, a file there that
  // is not a regular or writable one) is refused before any work, as for one op; a folder
  // the deck will create is checked when it is made.
  run_agreed(comm, [&] {
    if (comm.rank() != 0) return;
    for (const DeckOutput& o : deck.outputs) {
      const std::string file = io::parse_dataset_ref(o.dataset).file;
      const std::filesystem::path parent = std::filesystem::path(file).parent_path();
      std::error_code ec;
      if (!parent.empty() && !std::filesystem::exists(parent, ec)) continue;
      try {
        io::resolve_output_path(file, o.dataset);
      } catch (const Error& e) {
        throw_error(e.kind(), deck.path + ":" + std::to_string(o.line) + ": output '" + o.name + "': " + e.what());
      }
    }
  });
  Env env;
  // The datasets each tensor was made from, for the outputs' provenance.
  std::map<std::string, std::set<std::string>> sources;
  // The inputs' files are watched until the commit where the deck writes over an input
  // (io::InputWatch::will_write): another job's change to it is then an error, not lost.
  io::InputWatch watch(comm);
  std::vector<io::DatasetRef> targets;  // the outputs, in the deck's order
  for (const DeckOutput& o : deck.outputs) {
    targets.push_back(io::parse_dataset_ref(o.dataset));
    watch.will_write(targets.back().file, targets.back().path);
  }
  {
    ScopedPhase phase("read");
    io::InputFiles files(comm, &watch);  // closed before the writes: an input's file may take an output
    for (const DeckInput& in : deck.inputs) {
      const std::string where = deck.path + ":" + std::to_string(in.line) + ": tensor '" + in.name + "'";
      try {
        if (in.dataset.empty()) {
          env[in.name] = inline_tensor(comm, in);
        } else {
          inputs.add(in.name, "tensor " + in.name, in.dataset);
          env[in.name] = files.read(io::parse_dataset_ref(in.dataset));
          record.inputs.push_back(in.dataset);
          sources[in.name].insert(in.dataset);
          record.bytes_read +=
              env[in.name].shape().num_elements() * static_cast<std::int64_t>(dtype_size(env[in.name].dtype()));
        }
      } catch (const Error& e) {
        throw_error(e.kind(), where + ": " + e.what());
      }
      inputs.describe(in.name, describe(env[in.name]));
    }
  }
  if (record.report_file != nullptr) record.report_file->refuse_files_read(comm, watch.files_read());
  std::int64_t sent = 0;
  OpStats stats;  // each step's op reports the bytes it sent here
  options.stats = &stats;
  for (const DeckStep& step : deck.steps) {
    stats = OpStats();
    Kokkos::Timer timer;
    std::vector<DistTensor> results;
    try {
      results = run_step(comm, step, env, options);
    } catch (const Error& e) {
      // Name the dataset an index error is about, when the tensor came from one.
      std::string about;
      if (!e.subject().empty()) {
        const std::string key = e.subject().substr(0, e.subject().find('['));
        const auto it = step.args.find(key);
        if (it != step.args.end()) {
          std::string name = it->second.text;
          if (it->second.is_list) {
            const std::size_t open = e.subject().find('[');
            const std::size_t m = open == std::string::npos ? 0 : std::stoul(e.subject().substr(open + 1));
            name = m < it->second.list.size() ? it->second.list[m] : "";
          }
          if (!name.empty()) about = " (tensor '" + name + "')";
        }
      }
      throw_error(e.kind(), step.where + ": " + e.what() + about);
    }
    sent += stats.bytes_sent;
    std::set<std::string> from;
    for (const std::string& name : step.inputs) {
      const auto it = sources.find(name);
      if (it != sources.end()) from.insert(it->second.begin(), it->second.end());
    }
    for (std::size_t k = 0; k < results.size(); ++k) {
      env[step.outputs[k]] = results[k];
      sources[step.outputs[k]] = from;
    }
    for (const std::string& name : step.dropped) env.erase(name);
    record.steps.push_back({step.where, step.op, timer.seconds()});
    if (talk) {
      std::cout << "[shardops] " << step.where << " -> " << step.outputs.front()
                << (step.outputs.size() > 1 ? " .. " + step.outputs.back() : "") << " " << describe(results.front())
                << " in " << timer.seconds() << " s" << std::endl;
    }
  }
  record.bytes_sent_local = sent;

  ScopedPhase phase("write");
  // A deck owns its output folders: create them (rank 0; every rank agrees on failure).
  run_agreed(comm, [&] {
    if (comm.rank() != 0) return;
    for (const DeckOutput& o : deck.outputs) {
      const std::filesystem::path parent = std::filesystem::path(io::parse_dataset_ref(o.dataset).file).parent_path();
      std::error_code ec;
      if (!parent.empty()) std::filesystem::create_directories(parent, ec);
      if (ec)
        throw IOError(deck.path + ":" + std::to_string(o.line) + ": cannot create " + parent.string() + ": " +
                      ec.message());
    }
  });
  io::OutputTransaction out(comm, io::OutputOptions{r.overwrite, !r.no_fsync, r.storage, &watch});
  out.open_in_lock_order(targets);
  for (std::size_t i = 0; i < deck.outputs.size(); ++i) {
    const DeckOutput& o = deck.outputs[i];
    const DistTensor& t = env.at(o.name);
    const std::set<std::string>& from = sources[o.name];
    const io::Attributes attrs{{"op", "run"},
                               {"deck", deck.path},
                               {"tensor", o.name},
                               {"options", record.options},
                               {"inputs", std::vector<std::string>(from.begin(), from.end())},
                               {"set", deck.set}};
    try {
      out.write(targets[i], t, attrs, o.storage_given ? o.storage : r.storage);
    } catch (const Error& e) {
      throw_error(e.kind(), deck.path + ":" + std::to_string(o.line) + ": output '" + o.name + "': " + e.what());
    }
    record.outputs.push_back(o.dataset + " " + describe(t) + " (" + o.name + ")");
    record.written.push_back({o.dataset, t.shape().dims(), dtype_name(t.dtype()), o.name});
    record.bytes_written += t.shape().num_elements() * static_cast<std::int64_t>(dtype_size(t.dtype()));
  }
  out.commit();
}

}  // namespace app
}  // namespace shardops
