// The shardops command: parses the command line, runs one op across the ranks of
// MPI_COMM_WORLD, and makes every rank exit with the same code (SPEC section 4):
// 0 success, 2 bad input or usage, 3 I/O failure, 1 internal error. Errors are
// printed once, by rank 0.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstring>
#include <iostream>
#include <vector>

#include "CommandLine.hpp"
#include "DeckRunner.hpp"
#include "ErrorReport.hpp"
#include "OpCommands.hpp"
#include "Report.hpp"
#include "shardops/core/KokkosArgs.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/dist/Comm.hpp"
#include "shardops/dist/NodeMemory.hpp"

namespace {

void print_summary(const shardops::app::RunRecord& record, int ranks, double seconds) {
  std::cout << "shardops " << record.command << ": " << ranks << (ranks == 1 ? " rank, " : " ranks, ") << seconds
            << " s\n";
  for (const std::string& o : record.outputs) std::cout << "  wrote " << o << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<char*> kokkos_args = shardops::split_kokkos_args(argc, argv, true);
  int kokkos_argc = static_cast<int>(kokkos_args.size());
  Kokkos::initialize(kokkos_argc, kokkos_args.data());
  int code = 0;
  {
    using namespace shardops;
    std::vector<char*> args = split_kokkos_args(argc, argv, false);
    app::RunRecord record;
    app::InputList inputs;
    std::string command;
    try {
      const Comm comm(MPI_COMM_WORLD);
      share_node_memory(comm);
      Kokkos::Timer timer;
      run_agreed(comm, [&] {
        const auto request = app::parse_command_line(static_cast<int>(args.size()), args.data(), rank == 0);
        if (!request) return;  // help or version printed
        command = request->command;
        if (request->command == "run") {
          app::run_deck_command(comm, *request, record, inputs);
        } else {
          app::run_op_command(comm, *request, record, inputs);
        }
        const double seconds = timer.seconds();
        if (!request->report.empty()) app::write_report(comm, record, request->report, seconds);
        if (rank == 0 && request->verbosity != app::Verbosity::Quiet) print_summary(record, size, seconds);
      });
    } catch (const Error& e) {
      code = e.exit_code();
      if (rank == 0) std::cerr << "shardops: error: " << app::format_error(command, e, inputs) << std::endl;
    } catch (const std::exception& e) {
      code = 1;
      if (rank == 0) std::cerr << "shardops: internal error: " << e.what() << std::endl;
    }
  }
  Kokkos::finalize();
  MPI_Finalize();
  return code;
}
