#include "CommandLine.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>

#include "shardops/Version.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/hdf5/StorageLayout.hpp"

namespace shardops {
namespace app {

namespace {

struct OpHelp {
  const char* name;
  const char* summary;
  const char* meaning;
  const char* example;
};

const OpHelp kHelp[] = {
    {"dynamic-partition", "Split rows of data into N outputs by partition id (tf.dynamic_partition)",
     "outputs[p] holds the slices data[j] with partitions[j] == p, in order of j. partitions is int32 with a shape "
     "that is a prefix of data's; each output has shape [count_p] + data.shape[partitions.rank:]. Outputs are written "
     "to OUT/0 .. OUT/N-1 and stay on the ranks that held their rows.",
     "mpirun -n 4 shardops dynamic-partition --data in.h5:/x --partitions in.h5:/p --num-partitions 4 --out "
     "out.h5:/parts"},
    {"dynamic-stitch", "Interleave data tensors by indices (tf.dynamic_stitch)",
     "merged[indices[m][i]] = data[m][i] for every input m and position i; when an index repeats, the last (m, i) in "
     "order wins; rows that no index names are zero. merged has shape [max(indices)+1] + "
     "data[0].shape[indices[0].rank:]. "
     "Give the index datasets after --indices and the data datasets, in the same order, after --data.",
     "mpirun -n 4 shardops dynamic-stitch --indices in.h5:/i0 in.h5:/i1 --data in.h5:/d0 in.h5:/d1 --out "
     "out.h5:/merged"},
    {"parallel-dynamic-stitch", "Same as dynamic-stitch (tf.raw_ops.ParallelDynamicStitch)",
     "Identical result to dynamic-stitch: TensorFlow leaves duplicates across inputs undefined for the parallel op; "
     "shardops gives the DynamicStitch result, which is one of the outcomes TensorFlow allows.",
     "mpirun -n 4 shardops parallel-dynamic-stitch --indices in.h5:/i0 in.h5:/i1 --data in.h5:/d0 in.h5:/d1 --out "
     "out.h5:/m"},
    {"scatter-nd", "Scatter updates into zeros of a given shape, summing duplicates (tf.scatter_nd)",
     "output = zeros(shape), then output[indices[i]] += updates[i] for every index row i in order (the last dimension "
     "of "
     "indices is the index depth K; an index addresses a slice when K < rank). Duplicates accumulate in index order, "
     "bool accumulates as OR.",
     "mpirun -n 4 shardops scatter-nd --indices in.h5:/idx --updates in.h5:/upd --shape 1048576,16 --out out.h5:/y"},
    {"tensor-scatter-update", "Copy of tensor with rows replaced at indices (tf.tensor_scatter_nd_update)",
     "output = tensor, then output[indices[i]] = updates[i] for every index row i in order: the last duplicate wins.",
     "mpirun -n 4 shardops tensor-scatter-update --tensor in.h5:/t --indices in.h5:/idx --updates in.h5:/u --out "
     "out.h5:/y"},
    {"tensor-scatter-add", "Copy of tensor with updates added at indices (tf.tensor_scatter_nd_add)",
     "output = tensor, then output[indices[i]] += updates[i] for every index row i in order.",
     "mpirun -n 4 shardops tensor-scatter-add --tensor in.h5:/t --indices in.h5:/idx --updates in.h5:/u --out "
     "out.h5:/y"},
    {"tensor-scatter-sub", "Copy of tensor with updates subtracted at indices (tf.tensor_scatter_nd_sub)",
     "output = tensor, then output[indices[i]] -= updates[i] for every index row i in order.",
     "mpirun -n 4 shardops tensor-scatter-sub --tensor in.h5:/t --indices in.h5:/idx --updates in.h5:/u --out "
     "out.h5:/y"},
    {"tensor-scatter-min", "Copy of tensor with the running minimum at indices (tf.tensor_scatter_nd_min)",
     "output = tensor, then output[indices[i]] = min(output[indices[i]], updates[i]) in index order (TensorFlow's NaN "
     "rules: a NaN already in the output stays, a NaN update is ignored). Not defined for complex dtypes.",
     "mpirun -n 4 shardops tensor-scatter-min --tensor in.h5:/t --indices in.h5:/idx --updates in.h5:/u --out "
     "out.h5:/y"},
    {"tensor-scatter-max", "Copy of tensor with the running maximum at indices (tf.tensor_scatter_nd_max)",
     "output = tensor, then output[indices[i]] = max(output[indices[i]], updates[i]) in index order. Not defined for "
     "complex dtypes.",
     "mpirun -n 4 shardops tensor-scatter-max --tensor in.h5:/t --indices in.h5:/idx --updates in.h5:/u --out "
     "out.h5:/y"},
    {"gather-nd", "Gather slices of params at indices (tf.gather_nd)",
     "output[i] = params[indices[i]]: the last dimension of indices (K, 0 <= K <= rank) indexes the leading dims of "
     "params, so output has shape indices.shape[:-1] + params.shape[K:]; K = 0 copies all of params per index row.",
     "mpirun -n 4 shardops gather-nd --params in.h5:/p --indices in.h5:/idx --out out.h5:/y"},
};

void add_common(CLI::App* sub, Request& r, std::string& bad_indices, std::string& schedule) {
  // TF's attr spells the policies DEFAULT/ERROR/IGNORE; any case is accepted.
  sub->add_option("--bad-indices", bad_indices,
                  "What an out-of-range index does: error (default; also 'default', TF's name) or ignore "
                  "(skip it; gather-nd writes zeros)")
      ->check(CLI::IsMember({"error", "default", "ignore"}, CLI::ignore_case));
  sub->add_flag("--keep-denormals", r.keep_denormals,
                "Keep subnormal floats in the arithmetic ops (scatter-nd, tensor-scatter-add/sub/min/max) instead of "
                "flushing them to zero as TensorFlow's CPU kernels do (docs/tf-fidelity.md)");
  sub->add_flag("--overwrite", r.overwrite, "Replace the output dataset if it exists");
  sub->add_option("--compression", r.compression,
                  "Store outputs chunked and compressed: none (default), gzip, gzip=LEVEL (0-9) or lzf");
  sub->add_flag("--shuffle", r.storage.shuffle, "Shuffle the bytes of each chunk before compressing");
  sub->add_option("--chunk-rows", r.storage.chunk_rows,
                  "Rows of axis 0 per chunk (default: contiguous; about 1 MiB chunks when compressing)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--no-fsync", r.no_fsync,
                "Do not flush the outputs to disk before the commit (faster; a power cut may then lose a "
                "committed output, a killed job still cannot)");
  sub->add_option("--report", r.report, "Write per-phase times and bytes moved to this JSON file");
  sub->add_option("--schedule", schedule,
                  "How order-dependent kernels run: auto (default), sequential or parallel (same result)")
      ->check(CLI::IsMember({"auto", "sequential", "parallel"}));
  auto* v = sub->add_flag_function(
      "-v,--verbose", [&r](std::int64_t) { r.verbosity = Verbosity::Verbose; }, "Print progress (rank 0)");
  auto* q = sub->add_flag_function(
      "-q,--quiet", [&r](std::int64_t) { r.verbosity = Verbosity::Quiet; }, "Print nothing but errors");
  v->excludes(q);
}

}  // namespace

std::optional<Request> parse_command_line(int argc, char** argv, bool print) {
  CLI::App app{"shardops " SHARDOPS_VERSION_STRING
               ": TensorFlow's data-movement ops on tensors sharded by rows across MPI ranks.\n"
               "Inputs and outputs are HDF5 datasets named FILE:/path. Run under mpirun or srun."};
  app.set_version_flag("--version", "shardops " SHARDOPS_VERSION_STRING);
  app.require_subcommand(1, 1);
  Request r;
  std::string bad_indices = "error", schedule = "auto";

  for (const OpHelp& h : kHelp) {
    CLI::App* sub = app.add_subcommand(h.name, h.summary);
    sub->footer(std::string("\n") + h.meaning + "\n\nExample:\n  " + h.example);
    const std::string name = h.name;
    if (name == "dynamic-partition") {
      sub->add_option("--data", r.data, "Data dataset")->required();
      sub->add_option("--partitions", r.partitions, "int32 partition ids (shape: a prefix of data's)")->required();
      sub->add_option("--num-partitions", r.num_partitions, "Number of outputs (>= 1)")->required();
      sub->add_option("--out", r.out, "Output group: outputs go to OUT/0 .. OUT/N-1")->required();
    } else if (name == "dynamic-stitch" || name == "parallel-dynamic-stitch") {
      sub->add_option("--indices", r.indices_list, "int32 index datasets, one per data input")->required();
      sub->add_option("--data", r.data_list, "Data datasets, in the order of --indices")->required();
      sub->add_option("--out", r.out, "Output dataset")->required();
    } else if (name == "scatter-nd") {
      sub->add_option("--indices", r.indices, "int32/int64 indices [..., K]")->required();
      sub->add_option("--updates", r.updates, "Updates: indices.shape[:-1] + shape[K:]")->required();
      sub->add_option("--shape", r.shape, "Output shape, comma-separated (e.g. 4,4,4)")->required();
      sub->add_option("--out", r.out, "Output dataset")->required();
    } else if (name.rfind("tensor-scatter-", 0) == 0) {
      sub->add_option("--tensor", r.tensor, "The tensor to update (a copy is written)")->required();
      sub->add_option("--indices", r.indices, "int32/int64 indices [..., K]")->required();
      sub->add_option("--updates", r.updates, "Updates: indices.shape[:-1] + tensor.shape[K:]")->required();
      sub->add_option("--out", r.out, "Output dataset")->required();
    } else if (name == "gather-nd") {
      sub->add_option("--params", r.params, "The tensor to gather from")->required();
      sub->add_option("--indices", r.indices, "int32/int64 indices [..., K]")->required();
      sub->add_option("--out", r.out, "Output dataset")->required();
    }
    add_common(sub, r, bad_indices, schedule);
  }

  CLI::App* ls = app.add_subcommand("ls", "List the datasets of a file: shape, TF dtype, chunks, filters");
  ls->add_option("target", r.listing, "FILE or FILE:/group (or FILE:/dataset)")->required();
  ls->add_flag("-a,--attributes", r.list_attributes, "Show each dataset's attributes too");
  ls->add_flag_function(
      "-q,--quiet", [&](std::int64_t) { r.verbosity = Verbosity::Quiet; }, "Print nothing (check the file only)");
  ls->footer("\nExample:\n  shardops ls data.h5:/inputs -a");

  CLI::App* run = app.add_subcommand("run", "Run a deck: a pipeline of ops over named tensors (YAML)");
  run->add_option("deck", r.deck, "The deck file (see inputs/ for examples)")->required()->check(CLI::ExistingFile);
  run->add_option("--set", r.set, "Override a deck parameter: --set rows=1000000 (repeatable)");
  run->footer(
      "\nA deck names its input tensors (HDF5 datasets FILE:/path, relative to the deck's folder, or inline values),\n"
      "a list of steps (every op, plus range, equal/not_equal, add/multiply by a scalar and random_uniform), and the\n"
      "outputs to write. Intermediate tensors stay distributed in memory; outputs are written together, atomically.\n"
      "The deck is checked completely before any work starts.\n\nExample:\n  mpirun -n 2 shardops run "
      "inputs/pipeline.yaml --set rows=100000");
  add_common(run, r, bad_indices, schedule);

  std::ostringstream null_stream;
  std::ostream& out = print ? std::cout : null_stream;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e, out, out);
    return std::nullopt;
  } catch (const CLI::CallForAllHelp& e) {
    app.exit(e, out, out);
    return std::nullopt;
  } catch (const CLI::CallForVersion& e) {
    app.exit(e, out, out);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (app.get_subcommands().empty()) {
      if (argc <= 1) {
        what = "no command given";
      } else if (argv[1][0] != '-') {
        // CLI11 would only say "A subcommand is required": name the word it did not know.
        std::string known;
        for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
          known += (known.empty() ? "" : ", ") + sub->get_name();
        }
        what = std::string("unknown command '") + argv[1] + "' (the commands are " + known + ")";
      }
    }
    throw InvalidArgument("usage: " + what + " (run shardops --help)");
  }
  r.command = app.get_subcommands().front()->get_name();
  if (!r.compression.empty()) io::parse_compression(r.compression, r.storage);
  if (r.command == "ls") return r;
  const CLI::App* chosen = app.get_subcommands().front();
  r.bad_indices_given = chosen->count("--bad-indices") > 0;
  r.schedule_given = chosen->count("--schedule") > 0;
  r.options.bad_indices = bad_indices_from_string(bad_indices);
  r.options.denormals = r.keep_denormals ? Denormals::Keep : Denormals::Flush;
  r.options.schedule = schedule == "sequential" ? Schedule::Sequential
                       : schedule == "parallel" ? Schedule::Parallel
                                                : Schedule::Auto;
  if ((r.command == "dynamic-stitch" || r.command == "parallel-dynamic-stitch") &&
      r.indices_list.size() != r.data_list.size()) {
    throw InvalidArgument("usage: --indices and --data must name the same number of datasets, got " +
                          std::to_string(r.indices_list.size()) + " and " + std::to_string(r.data_list.size()));
  }
  return r;
}

}  // namespace app
}  // namespace shardops
