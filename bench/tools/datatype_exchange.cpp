// Is MPI's own way of sending scattered rows faster than packing them first? For
// rows whose destinations are random, compares per repeat (max over ranks):
//   raw       MPI_Alltoallv of ready, grouped buffers (the exchange floor)
//   pack      copying the sent rows into per-peer order, then the same Alltoallv
//   datatype  one MPI_Type_create_hindexed_block per peer over the rows where they lie
//             (its build and commit timed apart), then MPI_Alltoallw straight from them
//
//   mpirun -n 2 build-bench/bench/datatype_exchange [rows per rank, default 2^20] [repeats, 5]
//
// Rows are 64 bytes, each bound for a random rank (this one's stay: not sent), as in
// the standard scatter workload. The answer here decides that ExchangePlan packs.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "../common/timing.hpp"

namespace {

constexpr int kRowBytes = 64;

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const long n = argc > 1 ? std::atol(argv[1]) : (1L << 20);
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;

  std::vector<unsigned char> rows(static_cast<std::size_t>(n) * kRowBytes);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<unsigned char>(i * 7 + static_cast<unsigned>(me));
  std::mt19937_64 rng(static_cast<std::uint64_t>(me) + 1);
  std::vector<int> dest(static_cast<std::size_t>(n));
  for (auto& d : dest) d = static_cast<int>(rng() % static_cast<std::uint64_t>(np));

  // Counts and offsets in rows, and the rows of each peer in order (worked out once).
  std::vector<int> sc(np, 0), rc(np), sd(np), rd(np);
  for (long i = 0; i < n; ++i)
    if (dest[static_cast<std::size_t>(i)] != me) ++sc[dest[static_cast<std::size_t>(i)]];
  MPI_Alltoall(sc.data(), 1, MPI_INT, rc.data(), 1, MPI_INT, MPI_COMM_WORLD);
  long stot = 0, rtot = 0;
  for (int r = 0; r < np; ++r) {
    sd[r] = static_cast<int>(stot);
    rd[r] = static_cast<int>(rtot);
    stot += sc[r];
    rtot += rc[r];
  }
  std::vector<long> row_of_slot(static_cast<std::size_t>(stot));
  {
    std::vector<long> cursor(sd.begin(), sd.end());
    for (long i = 0; i < n; ++i) {
      const int d = dest[static_cast<std::size_t>(i)];
      if (d != me) row_of_slot[static_cast<std::size_t>(cursor[d]++)] = i;
    }
  }
  std::vector<unsigned char> sbuf(static_cast<std::size_t>(std::max(stot, 1L)) * kRowBytes),
      rbuf(static_cast<std::size_t>(std::max(rtot, 1L)) * kRowBytes);
  MPI_Datatype row;
  MPI_Type_contiguous(kRowBytes, MPI_BYTE, &row);
  MPI_Type_commit(&row);

  std::vector<double> raw, pack, build, datatype;
  for (int rep = 0; rep < repeats + 1; ++rep) {  // the first is a warm-up
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Alltoallv(sbuf.data(), sc.data(), sd.data(), row, rbuf.data(), rc.data(), rd.data(), row, MPI_COMM_WORLD);
    const double t_raw = max_over_ranks(MPI_COMM_WORLD, MPI_Wtime() - t0);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (long s = 0; s < stot; ++s)
      std::memcpy(&sbuf[static_cast<std::size_t>(s) * kRowBytes],
                  &rows[static_cast<std::size_t>(row_of_slot[static_cast<std::size_t>(s)]) * kRowBytes], kRowBytes);
    MPI_Alltoallv(sbuf.data(), sc.data(), sd.data(), row, rbuf.data(), rc.data(), rd.data(), row, MPI_COMM_WORLD);
    const double t_pack = max_over_ranks(MPI_COMM_WORLD, MPI_Wtime() - t0);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    std::vector<MPI_Datatype> stypes(static_cast<std::size_t>(np), MPI_BYTE),
        rtypes(static_cast<std::size_t>(np), MPI_BYTE);
    std::vector<int> scw(np, 0), rcw(np), sdw(np, 0), rdw(np);
    for (int r = 0; r < np; ++r) {
      rcw[r] = rc[r] * kRowBytes;
      rdw[r] = rd[r] * kRowBytes;
      if (r == me || sc[r] == 0) continue;
      std::vector<MPI_Aint> displacement(static_cast<std::size_t>(sc[r]));
      for (int k = 0; k < sc[r]; ++k)
        displacement[static_cast<std::size_t>(k)] = row_of_slot[static_cast<std::size_t>(sd[r] + k)] * kRowBytes;
      MPI_Type_create_hindexed_block(sc[r], kRowBytes, displacement.data(), MPI_BYTE,
                                     &stypes[static_cast<std::size_t>(r)]);
      MPI_Type_commit(&stypes[static_cast<std::size_t>(r)]);
      scw[r] = 1;
    }
    const double t_build = max_over_ranks(MPI_COMM_WORLD, MPI_Wtime() - t0);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    MPI_Alltoallw(rows.data(), scw.data(), sdw.data(), stypes.data(), rbuf.data(), rcw.data(), rdw.data(),
                  rtypes.data(), MPI_COMM_WORLD);
    const double t_datatype = max_over_ranks(MPI_COMM_WORLD, MPI_Wtime() - t0);
    for (int r = 0; r < np; ++r)
      if (scw[r] == 1) MPI_Type_free(&stypes[static_cast<std::size_t>(r)]);
    if (rep > 0) {
      raw.push_back(t_raw);
      pack.push_back(t_pack);
      build.push_back(t_build);
      datatype.push_back(t_datatype);
    }
  }
  MPI_Type_free(&row);
  if (me == 0) {
    std::printf("datatype_exchange: %d ranks, %ld rows of %d B per rank, %.1f MB sent by rank 0, median of %d\n", np, n,
                kRowBytes, static_cast<double>(stot) * kRowBytes / 1e6, repeats);
    std::printf("| raw Alltoallv ms | pack + Alltoallv ms | hindexed types build ms | Alltoallw with them ms |\n");
    std::printf("|---:|---:|---:|---:|\n");
    std::printf("| %.1f | %.1f | %.1f | %.1f |\n", median(raw) * 1e3, median(pack) * 1e3, median(build) * 1e3,
                median(datatype) * 1e3);
  }
  MPI_Finalize();
  return 0;
}
