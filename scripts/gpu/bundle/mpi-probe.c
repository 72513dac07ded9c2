/* mpi-probe: 2+ ranks; rank 0 sends 8 MiB to each other rank, which checks it. Exit 0 when every
   byte arrived: setup-on-device.sh runs it with vader's CMA single copy to see if CMA works here. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, n, bad = 0, allbad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int count = 1 << 21;
  int* b = malloc(sizeof(int) * count);
  for (int p = 1; p < n; ++p) {
    if (r == 0) {
      for (int i = 0; i < count; ++i) b[i] = i ^ p;
      MPI_Send(b, count, MPI_INT, p, 7, MPI_COMM_WORLD);
    } else if (r == p) {
      MPI_Recv(b, count, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < count; ++i) bad += b[i] != (i ^ p);
    }
  }
  MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (r == 0) printf("mpi-probe: %d ranks, %s\n", n, allbad ? "CORRUPT" : "ok");
  free(b);
  MPI_Finalize();
  return allbad != 0;
}
