#include "CommandLine.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <climits>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "shardops/Version.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/hdf5/StorageLayout.hpp"
#include "shardops/ops/OpRegistry.hpp"

namespace shardops {
namespace app {

namespace {

// A whole number written in plain digits (a leading '-' allowed) that fits an int64 and is
// at least \p least. CLI11's own checks print their range as a double, and take a value
// too large to convert as the largest int64.
CLI::Validator whole_number(long long least) {
  return CLI::Validator(
      [least](std::string& text) -> std::string {
        const std::size_t sign = !text.empty() && text[0] == '-' ? 1 : 0;
        const bool digits = text.size() > sign && std::all_of(text.begin() + static_cast<std::ptrdiff_t>(sign),
                                                              text.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!digits) return "expected a whole number, got '" + text + "'";
        long long value = 0;
        try {
          value = std::stoll(text);
        } catch (const std::out_of_range&) {
          return "'" + text + "' does not fit a 64-bit integer";
        }
        if (value < least)
          return "expected a whole number of at least " + std::to_string(least) + ", got '" + text + "'";
        return "";
      },
      "INT");
}

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
      ->check(whole_number(1));
  sub->add_flag("--no-fsync", r.no_fsync,
                "Do not flush the outputs to disk before the commit (faster; a power cut may then lose a "
                "committed output, a killed job still cannot)");
  sub->add_option("--report", r.report, "Write per-phase times and bytes moved to this JSON file")
      ->check(CLI::Validator([](std::string& path) { return path.empty() ? std::string("a file name is needed") : ""; },
                             "FILE"));
  sub->add_option("--schedule", schedule,
                  "How order-dependent kernels run: auto (default), sequential or parallel (same result)")
      ->check(CLI::IsMember({"auto", "sequential", "parallel"}));
  // Switches take no value (--quiet=x): CLI11 would read one as a count, failing outside its
  // own usage errors.
  auto* v = sub->add_flag_function(
                   "-v,--verbose", [&r](std::int64_t) { r.verbosity = Verbosity::Verbose; }, "Print progress (rank 0)")
                ->disable_flag_override();
  auto* q = sub->add_flag_function(
                   "-q,--quiet", [&r](std::int64_t) { r.verbosity = Verbosity::Quiet; }, "Print nothing but errors")
                ->disable_flag_override();
  v->excludes(q);
}

}  // namespace

std::string option_name(const std::string& name) {
  std::string option = "--" + name;
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}

std::optional<Request> parse_command_line(int argc, char** argv, bool print) {
  CLI::App app{"shardops " SHARDOPS_VERSION_STRING
               ": TensorFlow's data-movement ops on tensors sharded by rows across MPI ranks.\n"
               "Inputs and outputs are HDF5 datasets named FILE:/path. Run under mpirun or srun."};
  app.set_version_flag("--version", "shardops " SHARDOPS_VERSION_STRING);
  std::ostringstream null_stream;
  std::ostream& out = print ? std::cout : null_stream;
  app.add_flag_function(
         "--list-ops",
         [&out](std::int64_t) {
           out << op_registry_json() << std::flush;
           throw CLI::Success();
         },
         "Print every op (names, inputs, attributes, dtypes) as JSON and exit")
      ->disable_flag_override();
  app.require_subcommand(1, 1);
  Request r;
  std::string bad_indices = "error", schedule = "auto";

  // One subcommand per op of the registry that has one; its options are the op's inputs
  // and attributes. The values land in these maps (a map's elements stay where they are).
  std::map<std::string, std::string> single_inputs;
  std::map<std::string, std::vector<std::string>> list_inputs;
  std::map<std::string, std::int64_t> int_attrs;
  std::map<std::string, std::string> text_attrs;
  for (const OpInfo& op : op_registry()) {
    if (op.command.empty()) continue;
    CLI::App* sub = app.add_subcommand(op.command, op.summary);
    sub->footer("\n" + op.meaning + "\n\nExample:\n  " + op.example);
    for (const OpInput& in : op.inputs) {
      const std::string option = option_name(in.name);
      if (in.is_list) {
        sub->add_option(option, list_inputs[in.name], in.help)->required();
      } else {
        sub->add_option(option, single_inputs[in.name], in.help)->required();
      }
    }
    for (const OpAttr& a : op.attrs) {
      // An int attribute's own minimum is the op's check, with TensorFlow's text.
      CLI::Option* o =
          a.kind == AttrKind::Int
              ? sub->add_option(option_name(a.name), int_attrs[a.name], a.help)->check(whole_number(LLONG_MIN))
              : sub->add_option(option_name(a.name), text_attrs[a.name], a.help);
      if (a.required) o->required();
    }
    sub->add_option("--out", r.out,
                    op.output_per_partition ? "Output group: outputs go to OUT/0 .. OUT/N-1" : "Output dataset")
        ->required();
    add_common(sub, r, bad_indices, schedule);
  }

  CLI::App* ls = app.add_subcommand("ls", "List the datasets of a file: shape, TF dtype, chunks, filters");
  ls->add_option("target", r.listing, "FILE or FILE:/group (or FILE:/dataset)")->required();
  ls->add_flag("-a,--attributes", r.list_attributes, "Show each dataset's attributes too");
  ls->add_flag_function(
        "-q,--quiet", [&](std::int64_t) { r.verbosity = Verbosity::Quiet; }, "Print nothing (check the file only)")
      ->disable_flag_override();
  ls->footer("\nExample:\n  shardops ls data.h5:/inputs -a");

  CLI::App* run = app.add_subcommand("run", "Run a deck: a pipeline of ops over named tensors (YAML)");
  run->add_option("deck", r.deck, "The deck file (see inputs/ for examples)")->required()->check(CLI::ExistingFile);
  run->add_option("--set", r.set, "Override a deck parameter: --set rows=1000000 (repeatable)");
  run->footer(
      "\nA deck names its input tensors (HDF5 datasets FILE:/path, relative to the deck's folder, or inline values),\n"
      "a list of steps (every op, plus range, equal/not_equal/greater/greater_equal/less/less_equal, add/multiply by\n"
      "a scalar, cast and random_uniform), and the outputs to write. Intermediate tensors stay distributed in memory;\n"
      "outputs are written together, atomically.\n"
      "The deck is checked completely before any work starts.\n\nExample:\n  mpirun -n 2 shardops run "
      "inputs/pipeline.yaml --set rows=100000");
  add_common(run, r, bad_indices, schedule);

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
  } catch (const CLI::Success&) {
    return std::nullopt;  // --list-ops printed
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (app.get_subcommands().empty()) {
      if (argc <= 1) {
        what = "no command given";
      } else if (argv[1][0] != '-') {
        // CLI11 would only say "A subcommand is required": name the word it did not know.
        what = std::string("unknown command '") + argv[1] + "' (the commands are " + op_commands() + ", ls, run)";
      }
    }
    // CLI11's "quiet was given a disallowed flag override": say it as a user would.
    const std::string override_text = " was given a disallowed flag override";
    if (const std::size_t at = what.find(override_text); at != std::string::npos)
      what = "--" + what.substr(0, at) + " takes no value";
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
  if (r.command == "run") return r;
  const OpInfo& op = op_for_command(r.command);
  // List inputs pair up element by element (DynamicStitch's indices[m] with data[m]); their
  // lengths are compared once a group given for a list is counted (with_partition_groups).
  for (const OpInput& in : op.inputs)
    r.inputs[in.name] = in.is_list ? list_inputs[in.name] : std::vector<std::string>{single_inputs[in.name]};
  for (const OpAttr& a : op.attrs) {
    if (!chosen->count(option_name(a.name))) continue;
    r.attrs[a.name] = a.kind == AttrKind::Int ? std::to_string(int_attrs[a.name]) : text_attrs[a.name];
  }
  return r;
}

}  // namespace app
}  // namespace shardops
