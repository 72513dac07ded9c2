#pragma once
/// \file
/// \brief What the user asked for, as parsed from the command line.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "shardops/hdf5/StorageLayout.hpp"
#include "shardops/ops/Ops.hpp"

namespace shardops {
namespace app {

enum class Verbosity { Quiet, Normal, Verbose };

/// \brief One op invocation. Dataset names are "FILE:/path".
struct Request {
  std::string command;  ///< subcommand name, e.g. "scatter-nd"
  /// An op's inputs by name (OpInfo::inputs): one dataset each, several for a list input.
  std::map<std::string, std::vector<std::string>> inputs;
  /// An op's attributes by name (OpInfo::attrs) as given: "4", "4,4,4".
  std::map<std::string, std::string> attrs;
  std::string out;
  std::string deck;              ///< run: the deck file
  std::vector<std::string> set;  ///< run: NAME=VALUE parameter overrides
  std::string listing;           ///< ls: FILE or FILE:/group
  bool list_attributes = false;  ///< ls -a
  // Common options.
  OpOptions options;
  bool bad_indices_given = false;  ///< given on the command line (wins over a deck's options)
  bool schedule_given = false;
  bool keep_denormals = false;  ///< --keep-denormals (sets options.denormals)
  bool overwrite = false;
  bool no_fsync = false;       ///< --no-fsync: outputs are not flushed to disk at the commit
  std::string compression;     ///< --compression as given
  io::StorageOptions storage;  ///< --compression, --shuffle, --chunk-rows
  std::string report;
  Verbosity verbosity = Verbosity::Normal;
};

}  // namespace app
}  // namespace shardops
