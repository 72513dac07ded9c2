// What a one-op job would save by never holding its output in fresh memory: GatherNd's
// kernel (kernels::gather_rows) over 64-byte rows, its output written to a new file, two
// ways (docs/performance-job.md):
//   whole     the output a Tensor of its own (fresh memory, faulted in at once, as the op
//             allocates it), gathered whole, then written
//   streamed  the output made 8 MiB at a time in one reused Tensor, each piece written as
//             soon as it is made
// Both write with the output layer's writer (io::write_all_then_sync), fsync once at the
// end and give their memory back to the OS; the table gives the median of --reps runs of
// each part.
//
//   streamed_output_probe [--params-rows 4194304] [--rows 8388608] [--dir /tmp] [--reps 3]
#include <fcntl.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "shardops/core/Dispatch.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/Tensor.hpp"
#include "shardops/hdf5/FileSystem.hpp"
#include "shardops/kernels/Gather.hpp"

namespace {

using shardops::DType;
using shardops::Init;
using shardops::Shape;
using shardops::Tensor;
using Word = shardops::Word16;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kCols = 16;  // float32: 64-byte rows, four words each
constexpr std::int64_t kWords = kCols * 4 / static_cast<std::int64_t>(sizeof(Word));
constexpr std::int64_t kPieceRows = (std::int64_t(8) << 20) / (kCols * 4);

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Parts {
  double fault = 0, gather = 0, write = 0, fsync = 0, free = 0;
  double total() const { return fault + gather + write + fsync + free; }
};

struct Inputs {
  Tensor params;
  Tensor idx;  // int64 [rows, 1]
};

// Rows [first, first + n) of the output gathered into \p out (n rows).
void gather(const Inputs& in, std::int64_t first, std::int64_t n, const Tensor& out) {
  const shardops::kernels::IndexRowTarget<std::int64_t, shardops::MemSpace> rows{
      reinterpret_cast<const std::int64_t*>(in.idx.data()) + first, 1,
      shardops::kernels::IndexBounds::from({in.params.rows()}), 0};
  const shardops::ExecSpace space;
  shardops::kernels::gather_rows<shardops::ExecSpace, Word>(
      space, n, rows, in.params.matrix<const Word>(in.params.rows(), kWords), out.matrix<Word>(n, kWords));
  space.fence();
}

// One way of making and writing the output; \p piece_rows rows at a time (all of them:
// the whole output at once).
Parts run(const Inputs& in, std::int64_t piece_rows, const std::string& path) {
  shardops::release_kept_memory();  // a one-op job has nothing kept from earlier calls
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
  const std::int64_t rows = in.idx.rows();
  const std::size_t row_bytes = static_cast<std::size_t>(kCols) * 4;
  Parts t;
  auto t0 = Clock::now();
  Tensor out(DType::Float32, Shape{std::min(piece_rows, rows), kCols}, Init::Uninitialized, "probe::output");
  t.fault = since(t0);
  for (std::int64_t first = 0; first < rows; first += piece_rows) {
    const std::int64_t n = std::min(piece_rows, rows - first);
    const Tensor piece = out.slice_rows(0, n);
    t0 = Clock::now();
    gather(in, first, n, piece);
    t.gather += since(t0);
    t0 = Clock::now();
    if (!shardops::io::write_all_then_sync(fd, piece.data(), static_cast<std::size_t>(n) * row_bytes,
                                           static_cast<long long>(first) * static_cast<long long>(row_bytes))) {
      std::perror("write");
      std::exit(1);
    }
    t.write += since(t0);
  }
  t0 = Clock::now();
  if (::fsync(fd) != 0) std::perror("fsync");
  t.fsync = since(t0);
  ::close(fd);
  ::unlink(path.c_str());
  t0 = Clock::now();
  out = Tensor();
  shardops::release_kept_memory();
  t.free = since(t0);
  return t;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void print_row(const char* what, const std::vector<Parts>& runs) {
  std::vector<double> parts[6];
  for (const Parts& p : runs) {
    const double values[6] = {p.fault, p.gather, p.write, p.fsync, p.free, p.total()};
    for (int k = 0; k < 6; ++k) parts[k].push_back(values[k]);
  }
  std::printf("| %s |", what);
  for (auto& v : parts) std::printf(" %.3f |", median_of(v));
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t params_rows = std::int64_t(1) << 22, rows = std::int64_t(1) << 23;
  std::string dir = "/tmp";
  int reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--params-rows") {
      params_rows = std::strtoll(argv[i + 1], nullptr, 10);
    } else if (a == "--rows") {
      rows = std::strtoll(argv[i + 1], nullptr, 10);
    } else if (a == "--dir") {
      dir = argv[i + 1];
    } else if (a == "--reps") {
      reps = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::fprintf(stderr,
                   "usage: streamed_output_probe [--params-rows 4194304] [--rows 8388608] [--dir /tmp] [--reps 3]\n");
      return 2;
    }
  }
  if (params_rows <= 0 || rows <= 0) {
    std::fprintf(stderr, "streamed_output_probe: --params-rows and --rows must be positive\n");
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  Inputs in{Tensor(DType::Float32, Shape{params_rows, kCols}, Init::Uninitialized, "probe::params"),
            Tensor(DType::Int64, Shape{rows, 1}, Init::Uninitialized, "probe::idx")};
  float* p = reinterpret_cast<float*>(in.params.data());
  for (std::int64_t e = 0; e < params_rows * kCols; ++e) p[e] = static_cast<float>(e);
  std::int64_t* idx = reinterpret_cast<std::int64_t*>(in.idx.data());
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  for (std::int64_t i = 0; i < rows; ++i) {  // xorshift: rows of params at random, fixed seed
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    idx[i] = static_cast<std::int64_t>(x % static_cast<std::uint64_t>(params_rows));
  }
  const std::string path = dir + "/.streamed_output_probe." + std::to_string(::getpid());
  std::vector<Parts> whole, streamed;
  for (int r = 0; r < reps; ++r) {  // interleaved, so both meet the machine in the same state
    whole.push_back(run(in, rows, path));
    streamed.push_back(run(in, kPieceRows, path));
  }
  std::printf("GatherNd's kernel, %lld rows of 64 bytes from %lld, written to a new file in %s; median of %d\n",
              static_cast<long long>(rows), static_cast<long long>(params_rows), dir.c_str(), reps);
  std::printf("| output | fault in s | gather s | write s | fsync s | free s | total s |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  print_row("whole, in fresh memory", whole);
  print_row("streamed, 8 MiB at a time", streamed);
  return 0;
}
