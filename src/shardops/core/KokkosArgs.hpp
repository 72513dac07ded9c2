#pragma once
/// \file
/// \brief Splitting a program's arguments between Kokkos and the program: Kokkos gets
/// only its --kokkos-* arguments (it would also act on a plain --help, and print its
/// own help over the program's), the program gets the rest. argv[0] goes to both. The
/// Kokkos ones are checked first: Kokkos ignores a name it does not know (a typo would
/// change nothing, silently) and aborts the process on a number it cannot read.

#include <cstring>
#include <string>
#include <vector>

#include "shardops/kokkos_ext/KokkosExt.hpp"

namespace shardops {

/// The arguments of argv that are Kokkos' (\p kokkos true) or the program's (false).
inline std::vector<char*> split_kokkos_args(int argc, char** argv, bool kokkos) {
  std::vector<char*> args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if ((std::strncmp(argv[i], "--kokkos-", 9) == 0) == kokkos) args.push_back(argv[i]);
  }
  return args;
}

namespace detail {
// Whether \p text is a whole number of at most 9 digits (what Kokkos reads as an int) of at
// least \p least.
inline bool is_number(const std::string& text, long least) {
  return !text.empty() && text.size() <= 9 && text.find_first_not_of("0123456789") == std::string::npos &&
         std::stol(text) >= least;
}
// Whether \p text is one of the '|'-separated \p words.
inline bool is_one_of(const std::string& text, const std::string& words) {
  return !text.empty() && ("|" + words + "|").find("|" + text + "|") != std::string::npos;
}
inline std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return text;
}
}  // namespace detail

/// \brief What is wrong with the --kokkos-* arguments of argv (the usage error to report),
/// or "" when this Kokkos reads each of them as given (kx::command_line_arguments()).
inline std::string kokkos_args_error(int argc, char** argv) {
  const std::vector<kx::CommandLineArgument> known = kx::command_line_arguments();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.compare(0, 9, "--kokkos-") != 0) continue;
    const std::size_t eq = arg.find('=');
    const std::string name = arg.substr(9, eq == std::string::npos ? std::string::npos : eq - 9);
    const kx::CommandLineArgument* found = nullptr;
    for (const kx::CommandLineArgument& k : known)
      if (name == k.name) found = &k;
    if (!found) {
      std::string names;
      for (const kx::CommandLineArgument& k : known)
        names += std::string(names.empty() ? "" : ", ") + "--kokkos-" + k.name;
      return "usage: '" + arg + "' is not an argument of this build's Kokkos (it takes " + names + ")";
    }
    const bool given = eq != std::string::npos;
    const std::string value = given ? arg.substr(eq + 1) : std::string();
    const std::string option = "--kokkos-" + name;
    const std::string bad = "usage: '" + arg + "': " + option;
    switch (found->value) {
      case kx::ArgValue::None:
        if (given) return bad + " takes no value";
        break;
      case kx::ArgValue::Bool:
        if (given && !detail::is_one_of(detail::lower(value), "true|yes|1|false|no|0"))
          return bad + " takes true or false, or no value";
        break;
      case kx::ArgValue::Count:
        if (!detail::is_number(value, 1)) return bad + " takes a whole number from 1 to 999999999: " + option + "=N";
        break;
      case kx::ArgValue::Index:
        if (!detail::is_number(value, 0)) return bad + " takes a whole number from 0 to 999999999: " + option + "=N";
        break;
      case kx::ArgValue::IndexPair: {
        const std::size_t comma = value.find(',');
        if (!detail::is_number(value.substr(0, comma), 0) ||
            (comma != std::string::npos && !detail::is_number(value.substr(comma + 1), 0)))
          return bad + " takes a whole number or two, each from 0 to 999999999: " + option + "=N[,M]";
        break;
      }
      case kx::ArgValue::Word:
        if (!detail::is_one_of(value, found->words)) return bad + " takes one of " + found->words;
        break;
      case kx::ArgValue::Text:
        if (!given) return bad + " takes a value: " + option + "=VALUE";
        break;
    }
  }
  return "";
}

}  // namespace shardops
