#include "Report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>
#include <utility>

#include "shardops/Version.hpp"
#include "shardops/core/Error.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/ops/OpRegistry.hpp"

namespace shardops {
namespace app {

const char* const kReportPhases[5] = {"read", "validate", "route", "apply", "write"};

using nlohmann::json;

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

namespace {

// Collective: \p value of every rank (on rank 0; other ranks get an empty vector).
std::vector<double> gather_doubles(const Comm& comm, const std::vector<double>& values) {
  if (comm.size() == 1) return values;
  std::vector<double> all(comm.rank() == 0 ? values.size() * static_cast<std::size_t>(comm.size()) : 0);
  check_mpi(MPI_Gather(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, all.data(),
                       static_cast<int>(values.size()), MPI_DOUBLE, 0, comm.get()),
            "MPI_Gather");
  return all;
}

// Collective: each rank's host name (on rank 0).
std::vector<std::string> gather_hosts(const Comm& comm) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  if (comm.get() == MPI_COMM_NULL) {  // one rank without MPI: the name MPI gives, gethostname's
    static_cast<void>(::gethostname(name, sizeof name - 1));
    return {name};
  }
  int length = 0;
  check_mpi(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
  std::vector<char> all(comm.rank() == 0 ? static_cast<std::size_t>(MPI_MAX_PROCESSOR_NAME) * comm.size() : 0);
  check_mpi(
      MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm.get()),
      "MPI_Gather");
  std::vector<std::string> hosts;
  for (int r = 0; comm.rank() == 0 && r < comm.size(); ++r)
    hosts.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  return hosts;
}

// min / mean / max / the rank of the max / every rank's value, of one quantity.
json spread(const std::vector<double>& all, std::size_t quantities, std::size_t which) {
  const std::size_t ranks = all.size() / quantities;
  json per_rank = json::array();
  double lo = 0, hi = 0, sum = 0;
  int hi_rank = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    const double v = all[r * quantities + which];
    per_rank.push_back(v);
    if (r == 0 || v < lo) lo = v;
    if (r == 0 || v > hi) {
      hi = v;
      hi_rank = static_cast<int>(r);
    }
    sum += v;
  }
  return json{{"min", lo},
              {"mean", ranks ? sum / static_cast<double>(ranks) : 0.0},
              {"max", hi},
              {"max_rank", hi_rank},
              {"per_rank", per_rank}};
}

}  // namespace

std::string report_json(const Comm& comm, const RunRecord& record, double wall_seconds) {
  const auto totals = PhaseClock::totals();
  std::vector<double> local;
  for (const char* phase : kReportPhases) {
    const auto it = totals.find(phase);
    local.push_back(it == totals.end() ? 0.0 : it->second);
  }
  local.push_back(wall_seconds);
  for (const StepRecord& step : record.steps) local.push_back(step.seconds);
  const std::vector<double> all = gather_doubles(comm, local);
  const std::vector<std::string> hosts = gather_hosts(comm);
  const std::int64_t sent = comm.sum(record.bytes_sent_local);
  if (comm.rank() != 0) return "";

  const std::size_t q = local.size();
  json report;
  report["shardops_version"] = SHARDOPS_VERSION_STRING;
  report["command"] = record.command;
  // The TensorFlow op an op command ran (null for run and ls), from the op registry.
  const OpInfo* op = find_op_by_command(record.command);
  report["tf_op"] = op != nullptr ? json(op->tf_name) : json(nullptr);
  report["command_line"] = record.command_line;
  report["started"] = record.started;
  report["ranks"] = comm.size();
  json unique_hosts = json::array();
  for (const std::string& h : hosts) {
    if (std::find(unique_hosts.begin(), unique_hosts.end(), h) == unique_hosts.end()) unique_hosts.push_back(h);
  }
  report["hosts"] = unique_hosts;
  report["host_of_rank"] = hosts;
  // Which Slurm job, step and array task ran it (null outside Slurm): the tasks of an array
  // share a file of reports; each task is its own job with an id of its own.
  for (const auto& [key, variable] : {std::pair<const char*, const char*>{"slurm_job_id", "SLURM_JOB_ID"},
                                      {"slurm_step_id", "SLURM_STEP_ID"},
                                      {"slurm_array_job_id", "SLURM_ARRAY_JOB_ID"},
                                      {"slurm_array_task_id", "SLURM_ARRAY_TASK_ID"}}) {
    const char* value = std::getenv(variable);
    report[key] = value != nullptr ? json(value) : json(nullptr);
  }
  report["options"] = record.options;
  // What this process set for MPI itself before MPI_Init (route/MpiStartup.hpp).
  report["mpi_settings"] = json::object();
  if (!record.mpi_mtl_set.empty()) report["mpi_settings"]["OMPI_MCA_mtl"] = record.mpi_mtl_set;
  if (!record.mpi_sharedfp_set.empty()) report["mpi_settings"]["OMPI_MCA_sharedfp"] = record.mpi_sharedfp_set;
  report["inputs"] = record.inputs;
  json outputs = json::array();
  for (const OutputRecord& o : record.written) {
    json item{{"dataset", o.dataset}, {"shape", o.shape}, {"dtype", o.dtype}};
    if (!o.tensor.empty()) item["tensor"] = o.tensor;
    item["streamed"] = o.streamed;
    outputs.push_back(item);
  }
  report["outputs"] = outputs;
  json seconds, phases;
  for (std::size_t i = 0; i < 5; ++i) {
    phases[kReportPhases[i]] = spread(all, q, i);
    seconds[kReportPhases[i]] = phases[kReportPhases[i]]["max"];
  }
  phases["total"] = spread(all, q, 5);
  seconds["total"] = phases["total"]["max"];
  report["seconds"] = seconds;
  report["seconds_are"] = "max over ranks; phases has min, mean, max, the rank of the max and every rank's";
  report["phases"] = phases;
  if (!record.steps.empty()) {
    json steps = json::array();
    for (std::size_t k = 0; k < record.steps.size(); ++k) {
      const OpInfo* step_op = find_op(record.steps[k].op);
      steps.push_back(json{{"where", record.steps[k].where},
                           {"op", record.steps[k].op},
                           {"tf_op", step_op != nullptr ? json(step_op->tf_name) : json(nullptr)},
                           {"seconds", spread(all, q, 6 + k)}});
    }
    report["steps"] = steps;
  }
  report["bytes"] = json{{"read", record.bytes_read}, {"written", record.bytes_written}, {"sent_between_ranks", sent}};
  return report.dump(2) + "\n";
}

}  // namespace app
}  // namespace shardops
