// Would ranks on one node gather faster from one shared copy of params than from a
// copy each? Times, per repeat (max over ranks), a random row gather (64-byte rows,
// prefetch, streaming stores: the shape of shardops' gather kernel) of 2^21 / ranks
// index rows per rank from
//   private  this rank's own copy of all params (huge pages advised, as shardops' buffers)
//   shared   one copy for all ranks in an MPI_Win_allocate_shared window, each rank
//            having written its block (the window's allocation and first touch timed apart)
//
//   mpirun -n 2 build-bench/bench/shared_window_gather [params rows, default 2^20] [repeats, 5]
#include <mpi.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "../common/timing.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace {

constexpr std::size_t kRowBytes = 64;

void gather(const unsigned char* params, const std::vector<std::int64_t>& idx, unsigned char* out) {
  const std::size_t n = idx.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 16 < n) __builtin_prefetch(params + static_cast<std::size_t>(idx[i + 16]) * kRowBytes);
    const unsigned char* src = params + static_cast<std::size_t>(idx[i]) * kRowBytes;
#if defined(__SSE2__)
    for (std::size_t k = 0; k < kRowBytes; k += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(out + i * kRowBytes + k),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k)));
#else
    std::memcpy(out + i * kRowBytes, src, kRowBytes);
#endif
  }
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

unsigned char* map_huge(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  (void)madvise(p, bytes, MADV_HUGEPAGE);
  return static_cast<unsigned char*>(p);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : (std::int64_t(1) << 20);
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::int64_t per_rank = (std::int64_t(2) * rows) / np;  // index rows of this rank
  const std::int64_t block = (rows + np - 1) / np;              // params rows per rank's block

  std::mt19937_64 rng(static_cast<std::uint64_t>(me) + 7);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(per_rank));
  for (auto& v : idx) v = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
  unsigned char* out = map_huge(static_cast<std::size_t>(per_rank) * kRowBytes);
  std::memset(out, 0, static_cast<std::size_t>(per_rank) * kRowBytes);
  unsigned char* own_copy = map_huge(static_cast<std::size_t>(rows) * kRowBytes);
  std::memset(own_copy, 1, static_cast<std::size_t>(rows) * kRowBytes);

  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  if (node_size != np) {
    if (me == 0) std::fprintf(stderr, "shared_window_gather: run all ranks on one node\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  MPI_Win win;
  unsigned char* mine = nullptr;
  // Contiguous by default: rank r's block follows rank r - 1's, so rank 0's base is row 0.
  MPI_Win_allocate_shared(static_cast<MPI_Aint>(block * static_cast<std::int64_t>(kRowBytes)), 1, MPI_INFO_NULL, node,
                          &mine, &win);
  MPI_Aint size = 0;
  int unit = 0;
  unsigned char* shared = nullptr;
  MPI_Win_shared_query(win, 0, &size, &unit, &shared);
  std::memset(mine, 1, static_cast<std::size_t>(block) * kRowBytes);
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t_window = max_over_ranks(MPI_COMM_WORLD, MPI_Wtime() - t0);

  std::vector<double> t_private, t_shared;
  for (int rep = 0; rep < repeats + 1; ++rep) {  // the first is a warm-up
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    gather(own_copy, idx, out);
    const double a = max_over_ranks(MPI_COMM_WORLD, MPI_Wtime() - t0);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    gather(shared, idx, out);
    const double b = max_over_ranks(MPI_COMM_WORLD, MPI_Wtime() - t0);
    if (rep > 0) {
      t_private.push_back(a);
      t_shared.push_back(b);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);  // no rank reads the window any more
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  if (me == 0) {
    std::printf("shared_window_gather: %d ranks, %lld params rows, %lld index rows per rank, median of %d\n", np,
                static_cast<long long>(rows), static_cast<long long>(per_rank), repeats);
    std::printf("| private copy gather ms | shared window gather ms | window allocate + first touch ms |\n");
    std::printf("|---:|---:|---:|\n");
    std::printf("| %.1f | %.1f | %.1f |\n", median(t_private) * 1e3, median(t_shared) * 1e3, t_window * 1e3);
  }
  munmap(out, static_cast<std::size_t>(per_rank) * kRowBytes);
  munmap(own_copy, static_cast<std::size_t>(rows) * kRowBytes);
  MPI_Finalize();
  return 0;
}
