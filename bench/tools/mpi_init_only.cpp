// The start-up any MPI program pays: MPI_Init and MPI_Finalize, nothing else.
// scripts/bench/job_bench.py times `mpirun -n N mpi_init_only` next to `mpirun -n N true`
// and `mpirun -n N shardops --version`, which tells MPI's share of shardops' start-up
// from shardops' own (loading its libraries, Kokkos, parsing).
//
//   mpirun -n N mpi_init_only [--prompt-link] [--print]
//
// --prompt-link: call shardops::prompt_launcher_link() after MPI_Init, as the shardops
// command does (route/LauncherLink.hpp); --print: each rank prints how long its MPI_Init
// and MPI_Finalize took (docs/design.md, "Start-up and exit").
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "shardops/route/LauncherLink.hpp"

int main(int argc, char** argv) {
  bool prompt = false, print = false;
  for (int i = 1; i < argc; ++i) {
    prompt = prompt || std::strcmp(argv[i], "--prompt-link") == 0;
    print = print || std::strcmp(argv[i], "--print") == 0;
  }
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  MPI_Init(&argc, &argv);
  const auto t1 = Clock::now();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int changed = prompt ? shardops::prompt_launcher_link() : 0;
  MPI_Barrier(MPI_COMM_WORLD);  // every rank done with MPI_Init before anyone finalizes
  const auto t2 = Clock::now();
  MPI_Finalize();
  const auto t3 = Clock::now();
  const auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  if (print)
    std::printf("rank %d: MPI_Init %.1f ms, MPI_Finalize %.1f ms%s\n", rank, ms(t1 - t0), ms(t3 - t2),
                prompt ? (changed > 0 ? " (launcher link prompt)" : " (no launcher link found)") : "");
  return 0;
}
