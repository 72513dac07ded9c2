// The shardops command: parses the command line, runs one op across the ranks of
// MPI_COMM_WORLD, and makes every rank exit with the same code (docs/cli.md): 0
// success, 2 bad input or usage, 3 I/O failure, 1 internal error, 128 + the signal for
// a job stopped by SIGHUP/SIGINT/SIGTERM. Errors are printed once, by rank 0, so a
// job of N ranks does not print N copies.
#include <hdf5.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CommandLine.hpp"
#include "DeckRunner.hpp"
#include "ErrorReport.hpp"
#include "ListCommand.hpp"
#include "OpCommands.hpp"
#include "Report.hpp"
#include "ReportFile.hpp"
#include "shardops/core/KokkosArgs.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/core/Progress.hpp"
#include "shardops/core/Settings.hpp"
#include "shardops/hdf5/Hdf5Handle.hpp"
#include "shardops/hdf5/StopSignals.hpp"
#include "shardops/route/Comm.hpp"
#include "shardops/route/LauncherLink.hpp"
#include "shardops/route/MpiStartup.hpp"
#include "shardops/route/NodeMemory.hpp"

namespace {

// After the commit: a standard output that cannot take the summary (a full disk) is a
// warning, never a failure of a job whose outputs are in place.
void print_summary(const shardops::app::RunRecord& record, int ranks, double seconds) {
  errno = 0;
  std::cout << "shardops " << record.command << ": " << ranks << (ranks == 1 ? " rank, " : " ranks, ") << seconds
            << " s\n";
  // One line each, whatever the names hold (a newline in a file name: one_line escapes it).
  for (const std::string& o : record.outputs) std::cout << "  wrote " << shardops::app::one_line(o) << "\n";
  std::cout.flush();
  if (!std::cout && errno != EPIPE) {
    std::cerr << "shardops: warning: cannot write the summary to standard output"
              << (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string())
              << "; the job's outputs are committed" << std::endl;
  }
}

}  // namespace

// True if the command line only asks for help, the version or the list of ops: answered
// before MPI and Kokkos start, which cost more than the answer (a script's `shardops --version`).
bool only_help_or_version(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0 || std::strcmp(argv[i], "--help") == 0 ||
        std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--list-ops") == 0)
      return true;
  }
  return false;
}

// Collective: run_agreed for the whole command, except that a rank whose error no step of
// the op agreed on (one the other ranks cannot see coming, such as an allocation failing
// under `ulimit -v`, which the memory budget does not read) does not wait forever for ranks
// that wait for it inside an exchange: after a while it says why, removes what the job
// wrote, and ends the job with its exit code.
template <class Body>
void run_agreed_or_end_job(const shardops::Comm& comm, Body&& body) {
  const std::optional<shardops::PendingError> failed = shardops::pending_error_of(std::forward<Body>(body));
  // Long against the gap between ranks reaching the end of a job, short against a user's wait.
  constexpr std::chrono::seconds kPatience{10};
  shardops::agree_on_error_or_abort(comm, failed ? &*failed : nullptr, kPatience, [&](const shardops::PendingError& e) {
    shardops::io::clean_up_as_if_stopped();
    // One write of the whole line: other ranks' lines and the launcher's cannot land inside it.
    std::cerr << "shardops: error: " + shardops::app::one_line(e.message) + " (rank " + std::to_string(comm.rank()) +
                     "; the other ranks did not come to agree on this failure, so the job ends here and what "
                     "it wrote is removed, as for a stop signal)\n"
              << std::flush;
  });
}

// The rank of this process as the launcher tells it (mpirun, srun), before MPI_Init.
bool launcher_rank_is_zero() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
    if (const char* value = std::getenv(name)) return std::strcmp(value, "0") == 0;
  }
  return true;
}

// Open MPI started without a launcher (`shardops ls`, or a one-rank job run bare) keeps its
// session files under $TMPDIR: one that is not a folder this user may write (a stale
// TMPDIR=/tmp/slurm_JOB in a login shell) fails MPI_Init with pages of Open MPI's text and exit
// 1, as if shardops had a bug. Said here in one line instead, as a bad setting; "" if fine.
std::string singleton_tmpdir_error() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "OMPI_MCA_orte_tmpdir_base"})
    if (std::getenv(name) != nullptr) return "";  // a launcher made the session folder
  const char* dir = std::getenv("TMPDIR");
  if (dir == nullptr || *dir == '\0') return "";
  struct stat st {};
  std::string why;
  if (::stat(dir, &st) != 0) {
    why = std::strerror(errno);
    // Open MPI makes missing folders (mkdir -p) where it may: in the nearest that is there.
    std::filesystem::path up = std::filesystem::absolute(dir).lexically_normal();
    while (errno == ENOENT && up.has_parent_path() && up != up.parent_path() && ::stat(up.c_str(), &st) != 0)
      up = up.parent_path();
    if (::stat(up.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(up.c_str(), W_OK | X_OK) == 0) return "";
  } else if (!S_ISDIR(st.st_mode)) {
    why = "not a folder";
  } else if (::access(dir, W_OK | X_OK) != 0) {
    why = "not writable for this user";
  } else {
    return "";
  }
  return std::string("TMPDIR is '") + dir + "' (" + why +
         "): Open MPI keeps its session files there when shardops runs without mpirun; point TMPDIR at a folder "
         "this user may write, or unset it (then /tmp)";
}

int main(int argc, char** argv) {
  if (only_help_or_version(argc, argv)) {
    std::vector<char*> args = shardops::split_kokkos_args(argc, argv, false);
    try {
      if (!shardops::app::parse_command_line(static_cast<int>(args.size()), args.data(), launcher_rank_is_zero()))
        return 0;
    } catch (const shardops::Error& e) {
      if (launcher_rank_is_zero()) std::cerr << "shardops: error: " << shardops::app::one_line(e.what()) << std::endl;
      return e.exit_code();
    }
    // A request after all (--help given as a value): run it as usual.
  }
  // Else a `ulimit -f` below the shared-memory segment Open MPI makes in MPI_Init (a few MB,
  // with two or more ranks on a node) kills each rank there without a word (SIGXFSZ); the
  // stop handlers ignore it from then on anyway.
  static_cast<void>(std::signal(SIGXFSZ, SIG_IGN));
  // A job of one rank runs without MPI (MpiStartup.hpp).
  const bool mpi = shardops::mpi_needed();
  std::string mtl_set, sharedfp_set;
  int rank = 0, size = 1;
  if (mpi) {
    // Else Open MPI loads transport libraries for absent hardware (~0.1 s each).
    mtl_set = shardops::skip_absent_mtls();
    // Else an input whose path is longer than about 240 bytes aborts the process, or cannot be read.
    sharedfp_set = shardops::skip_path_bound_sharedfp();
    if (const std::string error = singleton_tmpdir_error(); !error.empty()) {
      std::cerr << "shardops: error: " << shardops::app::one_line(error) << std::endl;
      return static_cast<int>(shardops::ErrorKind::InvalidArgument);
    }
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    shardops::prompt_launcher_link();  // else MPI_Finalize waits ~40 ms on the launcher
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  // SIGTERM/SIGINT/SIGHUP: remove what the job wrote so far and exit 128 + signal.
  shardops::io::install_stop_handlers(rank == 0);
  // Every rank has the same arguments and refuses them alike; after MPI started, so that
  // no rank ends (and has mpirun stop the others) before rank 0 has said why.
  if (const std::string error = shardops::kokkos_args_error(argc, argv); !error.empty()) {
    const int code = static_cast<int>(shardops::ErrorKind::InvalidArgument);
    if (rank == 0) std::cerr << "shardops: error: " << shardops::app::one_line(error) << std::endl;
    shardops::io::exit_quietly_on_stop(code);  // mpirun stops the others once one has exited
    if (mpi) MPI_Finalize();
    return code;
  }
  std::vector<char*> kokkos_args = shardops::split_kokkos_args(argc, argv, true);
  int kokkos_argc = static_cast<int>(kokkos_args.size());
  Kokkos::initialize(kokkos_argc, kokkos_args.data());
  int code = 0;
  {
    using namespace shardops;
    std::vector<char*> args = split_kokkos_args(argc, argv, false);
    app::RunRecord record;
    record.started = app::utc_now();
    record.command_line.assign(argv, argv + argc);
    record.mpi_mtl_set = mtl_set;
    record.mpi_sharedfp_set = sharedfp_set;
    app::InputList inputs;
    std::string command;
    try {
      const Comm comm = mpi ? Comm(MPI_COMM_WORLD) : Comm::self();
      share_node_memory(comm);
      Kokkos::Timer timer;
      // A setting a rank does not take, or one its ranks see differently (a variable
      // exported on one host and not passed to the others: mpirun's -x, srun's --export),
      // is an error on every rank before any collective work.
      std::vector<std::string> warnings;
      run_agreed(comm, [&] { warnings = check_settings(); });
      if (const auto d = first_difference(comm, shared_settings_text())) {
        const auto shown = [](const std::string& text) { return text.empty() ? std::string("none") : text; };
        throw InvalidArgument("the ranks' SHARDOPS_* settings differ: rank 0 has " + shown(d->first) + "; rank " +
                              std::to_string(d->rank) + " has " + shown(d->theirs) +
                              ": every rank must see the same (mpirun -x NAME=VALUE, or srun --export)");
      }
      run_agreed_or_end_job(comm, [&] {
        for (const std::string& warning : warnings)
          if (rank == 0) std::cerr << "shardops: warning: " << warning << std::endl;
        const auto request = app::parse_command_line(static_cast<int>(args.size()), args.data(), rank == 0);
        if (!request) return;  // help or version printed
        command = request->command;
        set_progress(rank == 0 && request->verbosity == app::Verbosity::Verbose);
        std::unique_ptr<app::ReportFile> report;
        if (!request->report.empty())
          report = std::make_unique<app::ReportFile>(comm, request->report, app::job_files(*request));
        record.report_file = report.get();
        if (request->command == "ls") {
          app::run_list_command(comm, *request);
          return;
        }
        if (request->command == "run") {
          app::run_deck_command(comm, *request, record, inputs);
        } else {
          app::run_op_command(comm, *request, record, inputs);
        }
        const double seconds = timer.seconds();
        if (report) report->write(app::report_json(comm, record, seconds));
        if (rank == 0 && request->verbosity != app::Verbosity::Quiet) print_summary(record, size, seconds);
      });
    } catch (const Error& e) {
      code = e.exit_code();
      if (rank == 0)
        std::cerr << "shardops: error: " << app::one_line(app::format_error(command, e, inputs)) << std::endl;
    } catch (const std::exception& e) {
      const auto [kind, text] = foreign_error(e);
      code = static_cast<int>(kind);
      if (rank == 0)
        std::cerr << "shardops: " << (kind == ErrorKind::Internal ? "internal error: " : "error: ")
                  << app::one_line(text) << std::endl;
    }
  }
  // mpirun stops the other ranks as soon as one exits non-zero: they end with the same code.
  if (code != 0) {
    shardops::io::exit_quietly_on_stop(code);
    // The job has failed and cleaned up; a file HDF5 could not close would crash
    // MPI_Finalize (Hdf5Handle.hpp). mpirun reports the exit code alike either way.
    if (shardops::io::files_still_open()) {
      std::cout.flush();
      std::cerr.flush();
      std::_Exit(code);
    }
  }
  Kokkos::finalize();
  if (mpi) {
    MPI_Finalize();  // closes HDF5 too (parallel HDF5 hooks its end to MPI_Finalize)
  } else {
    // HDF5 closes itself at exit otherwise, after this program's statics are gone, which
    // crashed after a failed open of a dataset it cannot read.
    H5close();
  }
  return code;
}
