// The start-up any MPI program pays: MPI_Init and MPI_Finalize, nothing else.
// scripts/bench/job_bench.py times `mpirun -n N mpi_init_only` next to `mpirun -n N true`
// and `mpirun -n N shardops --version`, which tells MPI's share of shardops' start-up
// from shardops' own (loading its libraries, Kokkos, parsing).
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Finalize();
  return 0;
}
