/* An MPI profiling (PMPI) library that counts, per rank, the all-to-all exchanges a program
 * makes and the point-to-point messages they stand for: one per peer other than the rank
 * itself that is sent a non-empty block (what a linear or pairwise all-to-all sends; Open
 * MPI's tuned module may combine the small ones, as Bruck's algorithm does). At MPI_Finalize each
 * rank writes one JSON line to $EXCHANGE_COUNTER_DIR/rank-R.json. scripts/bench/scaling.py
 * builds it with mpicc and loads it with LD_PRELOAD.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long long n_alltoall, n_alltoallv, msgs_alltoall, msgs_alltoallv, bytes_alltoallv, n_allgatherv;

static int remote_peers(MPI_Comm comm, int* me) {
  int size = 0;
  PMPI_Comm_size(comm, &size);
  PMPI_Comm_rank(comm, me);
  return size;
}

int MPI_Alltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  int me = 0;
  const int size = remote_peers(comm, &me);
  n_alltoall++;
  if (sc > 0) msgs_alltoall += size - 1;
  return PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm);
}

int MPI_Alltoallv(const void* sb, const int* sc, const int* sd, MPI_Datatype st, void* rb, const int* rc, const int* rd,
                  MPI_Datatype rt, MPI_Comm comm) {
  int me = 0, type_size = 0;
  const int size = remote_peers(comm, &me);
  PMPI_Type_size(st, &type_size);
  n_alltoallv++;
  for (int p = 0; p < size; ++p) {
    if (p != me && sc[p] > 0) {
      msgs_alltoallv++;
      bytes_alltoallv += (long long)sc[p] * type_size;
    }
  }
  return PMPI_Alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm);
}

int MPI_Allgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int* rc, const int* rd, MPI_Datatype rt,
                   MPI_Comm comm) {
  n_allgatherv++;
  return PMPI_Allgatherv(sb, sc, st, rb, rc, rd, rt, comm);
}

int MPI_Finalize(void) {
  const char* dir = getenv("EXCHANGE_COUNTER_DIR");
  int me = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.json", dir, me);
    FILE* f = fopen(path, "w");
    if (f) {
      fprintf(f,
              "{\"rank\": %d, \"alltoall_calls\": %lld, \"alltoall_messages\": %lld, \"alltoallv_calls\": %lld, "
              "\"alltoallv_messages\": %lld, \"alltoallv_bytes\": %lld, \"allgatherv_calls\": %lld}\n",
              me, n_alltoall, msgs_alltoall, n_alltoallv, msgs_alltoallv, bytes_alltoallv, n_allgatherv);
      fclose(f);
    }
  }
  return PMPI_Finalize();
}
