#pragma once
/// \file
/// \brief Parsing the command line (SPEC section 4) with CLI11.

#include <optional>

#include "Request.hpp"

namespace shardops {
namespace app {

/// \brief Parses argv. Returns the request, or std::nullopt after printing help or
/// the version (exit 0). \throws InvalidArgument for a usage error (exit 2), with
/// CLI11's message. Only \p print ranks write to stdout.
std::optional<Request> parse_command_line(int argc, char** argv, bool print);

/// Parses "4,4,4" into dims (exact: no spaces, no empty items, integers only).
std::vector<std::int64_t> parse_shape(const std::string& text);

}  // namespace app
}  // namespace shardops
