#pragma once
/// \file
/// \brief Parsing the command line (docs/cli.md) with CLI11.

#include <optional>
#include <string>

#include "Request.hpp"

namespace shardops {
namespace app {

/// \brief Parses argv. The op subcommands and their options come from the op registry
/// (ops/OpRegistry.hpp). Returns the request, or std::nullopt after printing help, the
/// version or the list of ops (--list-ops) (exit 0). \throws InvalidArgument for a usage error (exit 2), with
/// CLI11's message. Only \p print ranks write to stdout.
std::optional<Request> parse_command_line(int argc, char** argv, bool print);

/// The command-line option of an op's input or attribute (OpInput::name, OpAttr::name):
/// "num_partitions" -> "--num-partitions".
std::string option_name(const std::string& name);

}  // namespace app
}  // namespace shardops
