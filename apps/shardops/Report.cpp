#include "Report.hpp"

#include <cstdio>
#include <sstream>

#include "shardops/Version.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/Phases.hpp"

namespace shardops {
namespace app {

const char* const kReportPhases[5] = {"read", "validate", "route", "apply", "write"};

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string report_json(const Comm& comm, const RunRecord& record, double wall_seconds) {
  const auto totals = PhaseClock::totals();
  double local[6];
  for (int i = 0; i < 5; ++i) {
    const auto it = totals.find(kReportPhases[i]);
    local[i] = it == totals.end() ? 0.0 : it->second;
  }
  local[5] = wall_seconds;
  double max[6];
  check_mpi(MPI_Allreduce(local, max, 6, MPI_DOUBLE, MPI_MAX, comm.get()), "MPI_Allreduce");
  const std::int64_t sent = comm.sum(record.bytes_sent_local);
  if (comm.rank() != 0) return "";
  {
    std::ostringstream os;
    os << "{\n  \"shardops_version\": " << json_string(SHARDOPS_VERSION_STRING) << ",\n"
       << "  \"command\": " << json_string(record.command) << ",\n"
       << "  \"ranks\": " << comm.size() << ",\n  \"options\": " << json_string(record.options) << ",\n"
       << "  \"inputs\": [";
    for (std::size_t i = 0; i < record.inputs.size(); ++i) os << (i ? ", " : "") << json_string(record.inputs[i]);
    os << "],\n  \"outputs\": [";
    for (std::size_t i = 0; i < record.outputs.size(); ++i) os << (i ? ", " : "") << json_string(record.outputs[i]);
    os << "],\n  \"seconds\": {";
    for (int i = 0; i < 5; ++i) os << (i ? ", " : "") << json_string(kReportPhases[i]) << ": " << max[i];
    os << ", \"total\": " << max[5] << "},\n"
       << "  \"seconds_are\": \"max over ranks\",\n"
       << "  \"bytes\": {\"read\": " << record.bytes_read << ", \"written\": " << record.bytes_written
       << ", \"sent_between_ranks\": " << sent << "}\n}\n";
    return os.str();
  }
}

}  // namespace app
}  // namespace shardops
