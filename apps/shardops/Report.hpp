#pragma once
/// \file
/// \brief The --report JSON and the summary rank 0 prints.

#include <cstdint>
#include <string>
#include <vector>

#include "shardops/route/Comm.hpp"

namespace shardops {
namespace app {

/// One dataset a command wrote.
struct OutputRecord {
  std::string dataset;  ///< "FILE:/path"
  std::vector<std::int64_t> shape;
  std::string dtype;      ///< TF's name
  std::string tensor;     ///< the deck's tensor name ("" for an op command)
  bool streamed = false;  ///< its rows were made as they were written (LazyTensor), never held whole
};

/// One step of a deck, as this rank timed it.
struct StepRecord {
  std::string where;  ///< "deck.yaml:12"
  std::string op;
  double seconds = 0;
};

class ReportFile;

/// \brief What a command did, for the report: filled as the command runs.
struct RunRecord {
  std::string command;
  std::vector<std::string> command_line;  ///< argv as given
  std::string started;                    ///< UTC, ISO 8601
  std::vector<std::string> inputs;        ///< "FILE:/path"
  std::vector<std::string> outputs;       ///< "FILE:/path shape dtype"
  std::vector<OutputRecord> written;
  std::vector<StepRecord> steps;      ///< decks
  std::int64_t bytes_read = 0;        ///< global bytes of all inputs
  std::int64_t bytes_written = 0;     ///< global bytes of all outputs
  std::int64_t bytes_sent_local = 0;  ///< bytes this rank sent to other ranks
  std::string options;
  std::string mpi_mtl_set;       ///< what skip_absent_mtls() gave OMPI_MCA_mtl ("" if nothing)
  std::string mpi_sharedfp_set;  ///< what skip_path_bound_sharedfp() gave OMPI_MCA_sharedfp ("" if nothing)
  /// The --report file, if any: the commands check it against the files they read.
  const ReportFile* report_file = nullptr;
};

/// Phases always present in the report, in this order.
extern const char* const kReportPhases[5];

/// \brief Collective: reduces the phase and step times over ranks (min, mean, max and
/// the rank of the max, and each rank's), the bytes sent (sum) and the ranks' hosts;
/// returns the report as JSON on rank 0 ("" on the other ranks).
std::string report_json(const Comm& comm, const RunRecord& record, double wall_seconds);

/// The current time, UTC, ISO 8601 ("2026-12-01T10:20:00Z").
std::string utc_now();

}  // namespace app
}  // namespace shardops
