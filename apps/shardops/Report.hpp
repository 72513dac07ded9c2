#pragma once
/// \file
/// \brief The --report JSON and the summary rank 0 prints.

#include <cstdint>
#include <string>
#include <vector>

#include "shardops/dist/Comm.hpp"

namespace shardops {
namespace app {

/// \brief What a command did, for the report: filled as the command runs.
struct RunRecord {
  std::string command;
  std::vector<std::string> inputs;    ///< "FILE:/path"
  std::vector<std::string> outputs;   ///< "FILE:/path shape dtype"
  std::int64_t bytes_read = 0;        ///< global bytes of all inputs
  std::int64_t bytes_written = 0;     ///< global bytes of all outputs
  std::int64_t bytes_sent_local = 0;  ///< bytes this rank sent to other ranks
  std::string options;
};

/// Phases always present in the report, in this order.
extern const char* const kReportPhases[5];

/// \brief Collective: reduces the phase times (max over ranks) and bytes sent (sum);
/// returns the report as JSON on rank 0 ("" on the other ranks).
std::string report_json(const Comm& comm, const RunRecord& record, double wall_seconds);

/// JSON string literal of \p text (quotes and escapes).
std::string json_string(const std::string& text);

}  // namespace app
}  // namespace shardops
