#pragma once
/// \file
/// \brief Splitting a program's arguments between Kokkos and the program: Kokkos gets
/// only its --kokkos-* arguments (it would also act on a plain --help, and print its
/// own help over the program's), the program gets the rest. argv[0] goes to both.

#include <cstring>
#include <vector>

namespace shardops {

/// The arguments of argv that are Kokkos' (\p kokkos true) or the program's (false).
inline std::vector<char*> split_kokkos_args(int argc, char** argv, bool kokkos) {
  std::vector<char*> args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if ((std::strncmp(argv[i], "--kokkos-", 9) == 0) == kokkos) args.push_back(argv[i]);
  }
  return args;
}

}  // namespace shardops
