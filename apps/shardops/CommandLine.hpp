#pragma once
/// \file
/// \brief Parsing the command line (docs/cli.md) with CLI11.

#include <optional>

#include "Request.hpp"

namespace shardops {
namespace app {

/// \brief Parses argv. Returns the request, or std::nullopt after printing help or
/// the version (exit 0). \throws InvalidArgument for a usage error (exit 2), with
/// CLI11's message. Only \p print ranks write to stdout.
std::optional<Request> parse_command_line(int argc, char** argv, bool print);

}  // namespace app
}  // namespace shardops
