/// \file
/// \brief The standard workloads (docs/performance.md) through the distributed ops, with
/// the floors that say how good each time is, measured in the same run.
///
///   mpirun -n R shardops_bench [--rows N] [--updates M] [--cols D] [--partitions P]
///                              [--repeats 7] [--warmup 2] [--schedule auto|sequential|parallel]
///                              [--ops w1,w2,w3,w4,w5] [--seed S] [--inputs library|numpy]
///                              [--json FILE]
///
/// Per workload it prints: time (max over ranks per repeat, median over repeats after
/// warm-up), effective bandwidth (each input read once, each output written once: the
/// same byte formulas as run_all.sh's one-process peers), the split into local work (phases
/// validate + apply) and exchange (phase route) from PhaseClock, the bytes sent
/// between ranks, the floors timed in the same run — a Kokkos deep_copy moving the
/// rank's share of the op's bytes (ceiling for local work), a raw MPI_Alltoallv of
/// exactly the bytes the op sent to each peer (floor for routing) and the same after
/// grouping those bytes by peer from rows in random peer order (the floor for routing
/// rows whose destinations are random) — and the peak resident memory of each rank
/// against its share of inputs + outputs.
///
/// Inputs are made in memory from a counter-based hash of the global position, so
/// every rank count sees the same global tensors (float32 rows, int64 scatter/gather
/// indices, int32 partition ids, balanced row blocks). They lie in the library's memory
/// (64-byte aligned, pages as core/HostMemory.hpp chooses), or with --inputs numpy where
/// NumPy puts an array's data: from malloc (16-byte aligned) and, from 4 MiB up, advised
/// to huge pages, so that the C++ op can be timed on inputs laid out as a Python caller's
/// (scripts/bench/python_bench.py).

#include <mpi.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/input_hash.h"
#include "common/timing.hpp"
#include "shardops/core/HostMemory.hpp"
#include "shardops/core/KokkosArgs.hpp"
#include "shardops/core/Phases.hpp"
#include "shardops/ops/DistOps.hpp"

namespace {

using shardops::Comm;
using shardops::DistTensor;
using shardops::DType;
using shardops::RowLayout;
using shardops::Shape;
using shardops::Tensor;

// ------------------------------------------------------------------ options

struct Options {
  std::int64_t rows = std::int64_t(1) << 20;
  std::int64_t updates = std::int64_t(1) << 21;
  std::int64_t cols = 16;
  std::int64_t partitions = 16;
  int repeats = 7;
  int warmup = 2;
  shardops::Schedule schedule = shardops::Schedule::Auto;
  std::string schedule_name = "auto";
  std::vector<std::string> ops = {"w1", "w2", "w3", "w4", "w5"};
  std::uint64_t seed = 7;
  std::string json;
  bool numpy_inputs = false;  ///< --inputs numpy: inputs placed as NumPy places arrays
  bool help = false;          ///< -h/--help: print the usage and run nothing
};

constexpr const char* kUsage =
    "usage: shardops_bench [--rows N] [--updates M] [--cols D] [--partitions P] [--repeats R] [--warmup W]"
    " [--schedule auto|sequential|parallel] [--ops w1,w2,w3,w4,w5] [--seed S] [--inputs library|numpy]"
    " [--json FILE]"
    " [--kokkos-... (to Kokkos)]";

[[noreturn]] void usage(const std::string& problem) { throw std::invalid_argument(problem + "\n" + kUsage); }

std::int64_t parse_int(const std::string& flag, const std::string& text, std::int64_t lo) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used, 0);
  } catch (const std::exception&) {
    usage(flag + " needs an integer, got '" + text + "'");
  }
  if (used != text.size() || v < lo)
    usage(flag + " needs an integer >= " + std::to_string(lo) + ", got '" + text + "'");
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--rows")
      o.rows = parse_int(a, value(), 1);
    else if (a == "--updates")
      o.updates = parse_int(a, value(), 1);
    else if (a == "--cols")
      o.cols = parse_int(a, value(), 1);
    else if (a == "--partitions")
      o.partitions = parse_int(a, value(), 1);
    else if (a == "--repeats")
      o.repeats = static_cast<int>(parse_int(a, value(), 1));
    else if (a == "--warmup")
      o.warmup = static_cast<int>(parse_int(a, value(), 0));
    else if (a == "--seed")
      o.seed = static_cast<std::uint64_t>(parse_int(a, value(), 0));
    else if (a == "--json")
      o.json = value();
    else if (a == "--inputs") {
      const std::string where = value();
      if (where != "library" && where != "numpy") usage("--inputs must be library or numpy");
      o.numpy_inputs = where == "numpy";
    } else if (a == "--schedule") {
      o.schedule_name = value();
      if (o.schedule_name == "auto")
        o.schedule = shardops::Schedule::Auto;
      else if (o.schedule_name == "sequential")
        o.schedule = shardops::Schedule::Sequential;
      else if (o.schedule_name == "parallel")
        o.schedule = shardops::Schedule::Parallel;
      else
        usage("--schedule must be auto, sequential or parallel");
    } else if (a == "--ops") {
      o.ops.clear();
      std::stringstream ss(value());
      for (std::string op; std::getline(ss, op, ',');) {
        if (op != "w1" && op != "w2" && op != "w3" && op != "w4" && op != "w5") usage("unknown workload '" + op + "'");
        o.ops.push_back(op);
      }
    } else if (a == "-h" || a == "--help") {
      o.help = true;
    } else {
      usage("unknown option '" + a + "'");
    }
  }
  if (o.rows > INT32_MAX) usage("--rows must fit in int32 (DynamicStitch indices are int32)");
  if (o.partitions > INT32_MAX) usage("--partitions must fit in int32");
  return o;
}

// ------------------------------------------------------------------ inputs

float uniform(std::uint64_t h) { return static_cast<float>(h >> 40) * (2.0f / 16777216.0f) - 1.0f; }

enum Stream : std::uint64_t { kIndex = 1, kUpdate = 2, kBase = 3, kPart = 4 };

/// Rows [first, first + count) of a global [*, cols] float32 tensor from stream s.
Tensor float_rows(std::uint64_t seed, Stream s, std::int64_t first, std::int64_t count, std::int64_t cols) {
  std::vector<float> v(static_cast<std::size_t>(count * cols));
  for (std::int64_t i = 0; i < count * cols; ++i)
    v[static_cast<std::size_t>(i)] = uniform(bench_hash(seed, s, static_cast<std::uint64_t>(first * cols + i)));
  return Tensor::from_vector(DType::Float32, Shape{count, cols}, v);
}

/// \brief A copy of \p t where NumPy (1.22 and later) puts an array's data: a malloc'ed
/// buffer (glibc: 16 bytes past a page boundary for large ones), its whole 2 MiB blocks
/// advised to huge pages when it is 4 MiB or more (NumPy's default_malloc). The row reads
/// of the ops cost more on such buffers (a 64-byte row spans two cache lines) and the
/// huge pages save TLB misses: the C++ op on these is what a Python call on NumPy's
/// arrays runs, less the binding.
Tensor placed_as_numpy(const Tensor& t) {
  const std::size_t n = t.nbytes();
  auto* p = static_cast<unsigned char*>(std::malloc(n == 0 ? 1 : n));
  if (p == nullptr) throw std::bad_alloc();
  std::shared_ptr<unsigned char> owner(p, [](unsigned char* q) { std::free(q); });
  constexpr std::uintptr_t kPage = 4096, kHuge = std::uintptr_t(2) << 20;
  if (n >= (std::size_t(4) << 20)) {
    const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(p), offset = kPage - begin % kPage;
    std::uintptr_t length = n - offset;
    length -= length % kHuge;
    if (length > 0) madvise(reinterpret_cast<void*>(begin + offset), length, MADV_HUGEPAGE);
  }
  std::memcpy(p, t.data(), n);
  return Tensor::adopt_host(t.dtype(), t.shape(), owner, p);
}

/// Global index rows [first, first + count) of M uniformly random targets in [0, n).
std::vector<std::int64_t> index_values(std::uint64_t seed, std::int64_t first, std::int64_t count, std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    v[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(
        bench_hash(seed, kIndex, static_cast<std::uint64_t>(first + i)) % static_cast<std::uint64_t>(n));
  return v;
}

std::vector<std::int32_t> partition_values(std::uint64_t seed, std::int64_t first, std::int64_t count, std::int64_t p) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    v[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(
        bench_hash(seed, kPart, static_cast<std::uint64_t>(first + i)) % static_cast<std::uint64_t>(p));
  return v;
}

// ------------------------------------------------------------------ measuring

/// Peak resident set of this process, in bytes (getrusage ru_maxrss is in KiB on Linux).
std::int64_t peak_rss() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::int64_t>(u.ru_maxrss) * 1024;
}

/// Resident set of this process now, in bytes (proc(5) statm); 0 where unknown.
std::int64_t current_rss() {
  std::ifstream f("/proc/self/statm");
  std::int64_t size = 0, resident = 0;
  if (!(f >> size >> resident)) return 0;
  return resident * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

/// Lowers the peak-RSS mark to the current RSS (Linux >= 4.0, proc(5) clear_refs "5"),
/// so each workload's peak is its own. Returns false where that is not possible.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

struct Sample {
  double total = 0, validate = 0, route = 0, apply = 0;
  double mpi = 0;        ///< inside the exchanges' MPI calls (part of route)
  double cpu = 0;        ///< user + system CPU time of the rank (max over ranks): near `total` on an idle machine
  double new_bytes = 0;  ///< large allocations made anew per call (max over ranks): what the OS zeroes
};

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/// Runs \p op warmup + repeats times (repeated calls reuse the memory the previous
/// ones freed: core/HostMemory.hpp); each time is the max over ranks (and so is
/// each phase), the result the median of the repeats.
/// \p cold: every call starts with no memory kept for reuse (shardops::release_kept_memory),
/// as the first call of a process does.
Sample time_op(const Comm& comm, const Options& o, const std::function<void()>& op, bool cold = false) {
  std::vector<double> total, validate, route, apply, mpi, cpu, fresh;
  for (int rep = 0; rep < o.warmup + o.repeats; ++rep) {
    if (cold) shardops::release_kept_memory();
    const std::size_t new0 = shardops::new_allocation_bytes();
    shardops::PhaseClock::reset();
    comm.barrier();
    const double c0 = cpu_seconds();
    const double t0 = MPI_Wtime();
    op();
    Kokkos::fence();
    const double t = MPI_Wtime() - t0;
    const double c = max_over_ranks(comm.get(), cpu_seconds() - c0);
    const double nb = max_over_ranks(comm.get(), static_cast<double>(shardops::new_allocation_bytes() - new0));
    auto phases = shardops::PhaseClock::totals();
    const double v = max_over_ranks(comm.get(), t);
    const double pv = max_over_ranks(comm.get(), phases["validate"]);
    const double pr = max_over_ranks(comm.get(), phases["route"]);
    const double pa = max_over_ranks(comm.get(), phases["apply"]);
    const double pm = max_over_ranks(comm.get(), phases["mpi"]);
    if (rep < o.warmup) continue;
    total.push_back(v);
    validate.push_back(pv);
    route.push_back(pr);
    apply.push_back(pa);
    mpi.push_back(pm);
    cpu.push_back(c);
    fresh.push_back(nb);
  }
  return Sample{median(total), median(validate), median(route), median(apply), median(mpi), median(cpu), median(fresh)};
}

/// Ceiling for local work: each rank deep_copies half of its share of the op's bytes
/// (a copy reads and writes, so it moves the whole share), all ranks at once, into a
/// buffer allocated and touched beforehand.
double time_memcpy(const Comm& comm, const Options& o, std::int64_t rank_bytes) {
  const std::size_t n = static_cast<std::size_t>(std::max<std::int64_t>(rank_bytes / 2, 1));
  // Memory of the kind the ops get (huge pages where the system grants them, see
  // core/HostMemory.hpp): a ceiling on small pages would be slower than the memory the
  // op works in (SHARDOPS_HUGE_PAGES=0 shows the floors on small pages).
  const auto src =
      shardops::allocate_uninitialized<Kokkos::View<unsigned char*, shardops::MemSpace>>("bench::memcpy::src", n);
  const auto dst =
      shardops::allocate_uninitialized<Kokkos::View<unsigned char*, shardops::MemSpace>>("bench::memcpy::dst", n);
  Kokkos::deep_copy(src, 1);
  Kokkos::deep_copy(dst, 0);
  std::vector<double> times;
  for (int rep = 0; rep < o.warmup + o.repeats; ++rep) {
    comm.barrier();
    const double t0 = MPI_Wtime();
    Kokkos::deep_copy(dst, src);
    Kokkos::fence();
    const double t = max_over_ranks(comm.get(), MPI_Wtime() - t0);
    if (rep >= o.warmup) times.push_back(t);
  }
  return median(times);
}

/// Floor for what a first call adds: each rank maps \p rank_bytes of fresh pages (huge
/// pages where the op's memory gets them) and faults them all in, all ranks at once;
/// max over ranks, median of 3. The OS zeroes every fresh page; no first call can
/// skip that.
double time_fresh_pages(const Comm& comm, std::int64_t rank_bytes) {
  std::vector<double> ts;
  const std::size_t n = static_cast<std::size_t>(rank_bytes);
  for (int rep = 0; rep < 3; ++rep) {
    comm.barrier();
    const double t0 = MPI_Wtime();
    void* p = n > 0 ? mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
    if (p != MAP_FAILED) {
      shardops::advise_huge_pages(p, n);
      shardops::prefault_pages(p, n);
    }
    const double t = MPI_Wtime() - t0;
    if (p != MAP_FAILED) munmap(p, n);
    ts.push_back(max_over_ranks(comm.get(), t));
  }
  return median(ts);
}

using HostWords = Kokkos::View<std::uint64_t*, Kokkos::HostSpace>;

/// \p n words of \p fill in host memory of the kind the ops' large buffers get (huge
/// pages where the system grants them).
HostWords host_words(std::size_t n, std::uint64_t fill) {
  const auto v = shardops::allocate_uninitialized<HostWords>("bench::floor", n);
  Kokkos::deep_copy(v, fill);
  return v;
}

/// The two floors of the exchange phase, timed in the same loop.
struct ExchangeFloors {
  double alltoallv_s = 0;  ///< the raw MPI_Alltoallv alone
  double grouped_s = 0;    ///< grouping the sent rows by peer, then the same MPI_Alltoallv
};

/// Copies each peer's rows of \p src, listed in \p rows_of_peer (row numbers, in
/// order; a peer's last row may be short: \p tail_bytes[peer], its row in \p tail_row)
/// into the peer's part of \p out, starting at byte \p first[peer]: the copy into
/// per-peer order that every op with random destinations must make before an
/// Alltoallv, without even the work of finding each row's peer.
template <std::size_t RowBytes>
void group_rows(const unsigned char* src, const std::vector<std::vector<std::int64_t>>& rows_of_peer,
                const std::vector<std::int64_t>& tail_row, const std::vector<std::size_t>& tail_bytes,
                const std::vector<std::int64_t>& first, unsigned char* out) {
  for (std::size_t r = 0; r < rows_of_peer.size(); ++r) {
    unsigned char* dst = out + first[r];
    for (const std::int64_t i : rows_of_peer[r]) {
      std::memcpy(dst, src + i * static_cast<std::int64_t>(RowBytes), RowBytes);
      dst += RowBytes;
    }
    if (tail_bytes[r] > 0) std::memcpy(dst, src + tail_row[r] * static_cast<std::int64_t>(RowBytes), tail_bytes[r]);
  }
}

/// Floors for routing, with the counts of the op: exactly \p send_bytes[r] to each peer
/// r (nothing to self). The raw floor is one MPI_Alltoallv of ready buffers. The grouped
/// floor adds what no op with random destinations can skip: copying each sent row once
/// from where it lies into its peer's part of the send buffer (rows of \p row_bytes
/// among rows whose peers, this rank included, alternate at random; which row goes
/// where is worked out before the clock starts). Counts
/// are in 8-byte words (every wire format here is a multiple of 8 bytes), so they fit an int.
ExchangeFloors time_exchange_floors(const Comm& comm, const Options& o, const std::vector<std::int64_t>& send_bytes,
                                    std::int64_t row_bytes) {
  const int n = comm.size(), me = comm.rank();
  std::vector<std::int64_t> recv_bytes(static_cast<std::size_t>(n));
  MPI_Alltoall(send_bytes.data(), 1, MPI_INT64_T, recv_bytes.data(), 1, MPI_INT64_T, comm.get());
  std::vector<int> sc(n), sd(n), rc(n), rd(n);
  std::int64_t stot = 0, rtot = 0;
  for (int r = 0; r < n; ++r) {
    const std::size_t u = static_cast<std::size_t>(r);
    if (send_bytes[u] % 8 || recv_bytes[u] % 8)
      throw std::logic_error("alltoallv floor: byte count not a multiple of 8");
    sc[u] = r == me ? 0 : static_cast<int>(send_bytes[u] / 8);
    rc[u] = r == me ? 0 : static_cast<int>(recv_bytes[u] / 8);
    sd[u] = static_cast<int>(stot);
    rd[u] = static_cast<int>(rtot);
    stot += sc[u];
    rtot += rc[u];
  }
  const std::int64_t any = comm.sum(stot);
  if (any == 0) return {};
  // Buffers of the kind the ops' exchanges use (huge pages where the system grants them,
  // see core/HostMemory.hpp): an Alltoallv between small-page buffers is slower, a floor
  // the op would beat by its allocator alone (compare with SHARDOPS_HUGE_PAGES=0).
  const HostWords sbuf = host_words(static_cast<std::size_t>(std::max<std::int64_t>(stot, 1)), 1),
                  rbuf = host_words(static_cast<std::size_t>(std::max<std::int64_t>(rtot, 1)), 0);
  // The rows to group: each peer's bytes (this rank's own too) cut into 64-byte rows
  // (a peer's last row may be short) in random peer order, fixed seed; then, untimed,
  // the rows of each other peer in order.
  if (row_bytes != 64) throw std::logic_error("grouped floor: rows of 64 bytes only (16 float32)");
  std::vector<int> peer_of_row;
  std::vector<std::size_t> tail_bytes(static_cast<std::size_t>(n), 0);
  for (int r = 0; r < n; ++r) {
    const std::int64_t bytes = r == me ? 0 : send_bytes[static_cast<std::size_t>(r)];
    const std::int64_t kept = r == me ? send_bytes[static_cast<std::size_t>(r)] : 0;
    peer_of_row.insert(peer_of_row.end(), static_cast<std::size_t>((bytes + kept + row_bytes - 1) / row_bytes), r);
    tail_bytes[static_cast<std::size_t>(r)] = static_cast<std::size_t>(bytes % row_bytes);
  }
  std::mt19937_64 rng(0x5eed + static_cast<std::uint64_t>(me));
  std::shuffle(peer_of_row.begin(), peer_of_row.end(), rng);
  std::vector<std::vector<std::int64_t>> rows_of_peer(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < peer_of_row.size(); ++i)
    if (peer_of_row[i] != me) rows_of_peer[static_cast<std::size_t>(peer_of_row[i])].push_back(std::int64_t(i));
  std::vector<std::int64_t> tail_row(static_cast<std::size_t>(n), 0), first(static_cast<std::size_t>(n), 0);
  for (int r = 0; r < n; ++r) {
    auto& list = rows_of_peer[static_cast<std::size_t>(r)];
    if (tail_bytes[static_cast<std::size_t>(r)] > 0) {  // its last row is the short one
      tail_row[static_cast<std::size_t>(r)] = list.back();
      list.pop_back();
    }
    first[static_cast<std::size_t>(r)] = std::int64_t(sd[static_cast<std::size_t>(r)]) * 8;
  }
  const HostWords rows =
      host_words((peer_of_row.size() * static_cast<std::size_t>(row_bytes) + 7) / 8, 0x0101010101010101);
  std::vector<double> raw, grouped;
  for (int rep = 0; rep < o.warmup + o.repeats; ++rep) {
    comm.barrier();
    const double t0 = MPI_Wtime();
    MPI_Alltoallv(sbuf.data(), sc.data(), sd.data(), MPI_UINT64_T, rbuf.data(), rc.data(), rd.data(), MPI_UINT64_T,
                  comm.get());
    const double t_raw = max_over_ranks(comm.get(), MPI_Wtime() - t0);
    comm.barrier();
    const double t1 = MPI_Wtime();
    group_rows<64>(reinterpret_cast<const unsigned char*>(rows.data()), rows_of_peer, tail_row, tail_bytes, first,
                   reinterpret_cast<unsigned char*>(sbuf.data()));
    MPI_Alltoallv(sbuf.data(), sc.data(), sd.data(), MPI_UINT64_T, rbuf.data(), rc.data(), rd.data(), MPI_UINT64_T,
                  comm.get());
    const double t_grouped = max_over_ranks(comm.get(), MPI_Wtime() - t1);
    if (rep >= o.warmup) {
      raw.push_back(t_raw);
      grouped.push_back(t_grouped);
    }
  }
  return {median(raw), median(grouped)};
}

// ------------------------------------------------------------------ workloads

struct Result {
  std::string id, op;
  std::int64_t bytes_moved = 0;  ///< effective bytes (peers.py formula), whole op
  Sample time;
  double cold_s = 0;          ///< median of 3 calls that each start with no memory kept for reuse
  double cold_new_bytes = 0;  ///< large allocations a cold call makes anew (max over ranks)
  double fresh_pages_s = 0;   ///< time_fresh_pages() of those bytes
  double memcpy_s = 0, alltoallv_s = 0, grouped_s = 0;
  std::int64_t bytes_exchanged = 0;    ///< sum over ranks of bytes sent to other ranks
  std::int64_t expected_exchange = 0;  ///< the same, predicted from the inputs (a check)
  std::int64_t peak_rss = 0;           ///< max over ranks
  std::int64_t rss_share = 0;          ///< that rank's share of inputs + outputs
  double rss_ratio = 0;                ///< max over ranks of peak / share
  double rss_op_ratio = 0;             ///< max over ranks of (peak - RSS before the inputs were made) / share
  bool rss_reset = true;
};

/// A workload: makes its inputs (untimed), runs the op, and says what it sends
/// to each peer and what its inputs+outputs weigh on this rank.
struct Workload {
  std::string id, op;
  std::int64_t bytes_moved;
  std::function<void()> setup;
  std::function<void()> run;
  std::function<std::vector<std::int64_t>()> send_bytes;  ///< per peer, this rank
  std::function<std::int64_t()> local_io_bytes;           ///< inputs + outputs on this rank
  std::function<void()> teardown;
};

struct Context {
  Comm comm;
  Options o;
  std::int64_t row_bytes;
  shardops::OpOptions op_options;
  shardops::OpStats op_stats;  ///< what the last op reported (op_options.stats points here)
  std::int64_t base_rss = 0;   ///< resident memory before any workload (MPI, Kokkos, the libraries)
};

/// Rows this rank sends to each owner when row i goes to the owner of target[i].
std::vector<std::int64_t> rows_per_owner(const std::vector<std::int64_t>& target, const RowLayout& owners, int nranks) {
  std::vector<std::int64_t> c(static_cast<std::size_t>(nranks), 0);
  for (std::int64_t t : target) c[static_cast<std::size_t>(owners.owner(t))]++;
  return c;
}

/// Returns what earlier work freed to the system: the blocks shardops keeps for reuse,
/// and the free memory malloc's heap still holds (glibc keeps freed blocks of a few MB
/// resident), so that a workload's peak RSS starts from its own inputs.
void release_all_freed_memory() {
  shardops::release_kept_memory();
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

Result run_workload(Context& ctx, Workload& w) {
  const Comm& comm = ctx.comm;
  Result r;
  r.id = w.id;
  r.op = w.op;
  r.bytes_moved = w.bytes_moved;
  w.setup();
  Kokkos::fence();
  // Memory kept from the previous workload's calls is not this one's, nor is what the
  // set-up freed (W5's set-up runs a partition).
  release_all_freed_memory();
  comm.barrier();
  r.rss_reset = comm.min(reset_peak_rss() ? 1 : 0) == 1;
  const std::int64_t rss_before = peak_rss();
  r.time = time_op(comm, ctx.o, w.run);
  const std::int64_t peak = std::max(peak_rss(), rss_before);
  r.bytes_exchanged = comm.sum(ctx.op_stats.bytes_sent);
  const std::vector<std::int64_t> send = w.send_bytes();
  std::int64_t to_others = 0;
  for (int p = 0; p < comm.size(); ++p) to_others += p == comm.rank() ? 0 : send[static_cast<std::size_t>(p)];
  r.expected_exchange = comm.sum(to_others);
  const std::int64_t share = w.local_io_bytes();
  const double ratio = share > 0 ? static_cast<double>(peak) / static_cast<double>(share) : 0.0;
  r.rss_ratio = max_over_ranks(comm.get(), ratio);
  r.rss_op_ratio = max_over_ranks(
      comm.get(), share > 0 ? static_cast<double>(peak - ctx.base_rss) / static_cast<double>(share) : 0.0);
  // Report the rank with the largest ratio.
  struct {
    double ratio;
    int rank;
  } mine{ratio, comm.rank()}, worst{};
  MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm.get());
  std::int64_t pair[2] = {peak, share};
  MPI_Bcast(pair, 2, MPI_INT64_T, worst.rank, comm.get());
  r.peak_rss = pair[0];
  r.rss_share = pair[1];
  Options cold = ctx.o;
  cold.warmup = 0;
  cold.repeats = 3;
  const Sample cold_sample = time_op(comm, cold, w.run, true);
  r.cold_s = cold_sample.total;
  r.cold_new_bytes = cold_sample.new_bytes;
  w.teardown();
  r.fresh_pages_s = time_fresh_pages(comm, static_cast<std::int64_t>(r.cold_new_bytes));
  // Floors after the op (their buffers must not count in its peak).
  r.memcpy_s = time_memcpy(comm, ctx.o, (w.bytes_moved + comm.size() - 1) / comm.size());
  const ExchangeFloors floors = time_exchange_floors(comm, ctx.o, send, ctx.row_bytes);
  r.alltoallv_s = floors.alltoallv_s;
  r.grouped_s = floors.grouped_s;
  return r;
}

std::vector<Workload> make_workloads(Context& ctx) {
  const Options& o = ctx.o;
  const Comm& comm = ctx.comm;
  const int me = comm.rank(), np = comm.size();
  const std::int64_t N = o.rows, M = o.updates, D = o.cols, P = o.partitions, row = ctx.row_bytes;
  const RowLayout out_rows = RowLayout::balanced(N, np);
  const RowLayout upd_rows = RowLayout::balanced(M, np);

  // Shared state of the scatter/gather workloads (made once, used by W1-W3).
  struct ScatterInputs {
    std::vector<std::int64_t> idx;
    DistTensor indices, updates, base;
  };
  auto sc = std::make_shared<ScatterInputs>();
  const bool numpy = o.numpy_inputs;
  auto placed = [numpy](const Tensor& t) { return numpy ? placed_as_numpy(t) : t; };
  auto make_indices = [=]() {
    sc->idx = index_values(o.seed, upd_rows.offset(me), upd_rows.count(me), N);
    sc->indices = DistTensor(placed(Tensor::from_vector(DType::Int64, Shape{upd_rows.count(me), 1}, sc->idx)),
                             Shape{M, 1}, upd_rows, me);
  };
  auto make_updates = [=]() {
    sc->updates = DistTensor(placed(float_rows(o.seed, kUpdate, upd_rows.offset(me), upd_rows.count(me), D)),
                             Shape{M, D}, upd_rows, me);
  };
  auto make_base = [=]() {
    sc->base = DistTensor(placed(float_rows(o.seed, kBase, out_rows.offset(me), out_rows.count(me), D)), Shape{N, D},
                          out_rows, me);
  };
  auto drop = [=]() { *sc = ScatterInputs(); };
  // Rows sent per owner, times the bytes each routed row carries.
  auto per_owner = [=](std::int64_t bytes_per_row) {
    std::vector<std::int64_t> c = rows_per_owner(sc->idx, out_rows, np);
    for (auto& x : c) x *= bytes_per_row;
    return c;
  };
  const std::int64_t idx_bytes = upd_rows.count(me) * 8;
  const std::int64_t upd_bytes = upd_rows.count(me) * row;
  const std::int64_t out_bytes = out_rows.count(me) * row;

  std::vector<Workload> ws;
  for (const std::string& id : o.ops) {
    if (id == "w1") {
      ws.push_back(Workload{"W1", "scatter_nd(sum)", M * (row + 8) + N * row,
                            [=]() {
                              make_indices();
                              make_updates();
                            },
                            [=, &ctx]() {
                              shardops::scatter_nd(ctx.comm, sc->indices, sc->updates, {N, D}, ctx.op_options);
                            },
                            // Each update travels with its int64 target row: 8 + row bytes.
                            [=]() { return per_owner(8 + row); }, [=]() { return idx_bytes + upd_bytes + out_bytes; },
                            drop});
    } else if (id == "w2") {
      ws.push_back(Workload{"W2", "tensor_scatter_update", M * (row + 8) + 2 * N * row,
                            [=]() {
                              make_indices();
                              make_updates();
                              make_base();
                            },
                            [=, &ctx]() {
                              shardops::tensor_scatter(ctx.comm, shardops::ScatterOp::Update, sc->base, sc->indices,
                                                       sc->updates, ctx.op_options);
                            },
                            [=]() { return per_owner(8 + row); },
                            [=]() { return idx_bytes + upd_bytes + 2 * out_bytes; }, drop});
    } else if (id == "w3") {
      ws.push_back(Workload{"W3", "gather_nd", M * 8 + 2 * M * row,
                            [=]() {
                              make_indices();
                              make_base();
                            },
                            [=, &ctx]() { shardops::gather_nd(ctx.comm, sc->base, sc->indices, ctx.op_options); },
                            [=, &comm, &ctx]() {
                              // GatherParams::Auto replicates params when they are no larger than a
                              // rank's share of the output (ops/Ops.hpp): each rank's block goes to
                              // every other rank. (The bytes the op sent are checked against these.)
                              const shardops::GatherParams how = ctx.op_options.gather_params;
                              if (np > 1 && (how == shardops::GatherParams::Replicate ||
                                             (how == shardops::GatherParams::Auto && N * np <= M))) {
                                std::vector<std::int64_t> block(static_cast<std::size_t>(np), out_rows.count(me) * row);
                                block[static_cast<std::size_t>(me)] = 0;
                                return block;
                              }
                              // Else an 8-byte request goes to each owner, which answers with the row.
                              std::vector<std::int64_t> ask = rows_per_owner(sc->idx, out_rows, np);
                              std::vector<std::int64_t> asked(static_cast<std::size_t>(np));
                              MPI_Alltoall(ask.data(), 1, MPI_INT64_T, asked.data(), 1, MPI_INT64_T, comm.get());
                              for (int p = 0; p < np; ++p)
                                ask[static_cast<std::size_t>(p)] =
                                    8 * ask[static_cast<std::size_t>(p)] + row * asked[static_cast<std::size_t>(p)];
                              return ask;
                            },
                            [=]() { return idx_bytes + out_bytes + upd_rows.count(me) * row; }, drop});
    } else if (id == "w4" || id == "w5") {
      struct PartInputs {
        std::vector<std::int32_t> ids;
        DistTensor data, parts;
        std::vector<DistTensor> pieces, positions;
      };
      auto pi = std::make_shared<PartInputs>();
      auto setup_part = [=]() {
        pi->ids = partition_values(o.seed, out_rows.offset(me), out_rows.count(me), P);
        pi->data = DistTensor(placed(float_rows(o.seed, kBase, out_rows.offset(me), out_rows.count(me), D)),
                              Shape{N, D}, out_rows, me);
        pi->parts = DistTensor(placed(Tensor::from_vector(DType::Int32, Shape{out_rows.count(me)}, pi->ids)), Shape{N},
                               out_rows, me);
      };
      auto drop_part = [=]() { *pi = PartInputs(); };
      if (id == "w4") {
        ws.push_back(
            Workload{"W4", "dynamic_partition", N * (row + 4) + N * row, setup_part,
                     [=, &ctx]() { shardops::dynamic_partition(ctx.comm, pi->data, pi->parts, P, ctx.op_options); },
                     [=]() { return std::vector<std::int64_t>(static_cast<std::size_t>(np), 0); },  // rows stay put
                     [=]() { return out_bytes + out_rows.count(me) * 4 + out_bytes; }, drop_part});
      } else {
        // The inverse of W4: stitch W4's outputs back with the positions they came from.
        auto setup_stitch = [=, &ctx]() {
          setup_part();
          pi->pieces = shardops::dynamic_partition(ctx.comm, pi->data, pi->parts, P);
          std::vector<std::vector<std::int32_t>> pos(static_cast<std::size_t>(P));
          for (std::int64_t i = 0; i < out_rows.count(me); ++i) {
            pos[static_cast<std::size_t>(pi->ids[static_cast<std::size_t>(i)])].push_back(
                static_cast<std::int32_t>(out_rows.offset(me) + i));
          }
          for (std::int64_t p = 0; p < P; ++p) {
            const auto& v = pos[static_cast<std::size_t>(p)];
            const DistTensor& piece = pi->pieces[static_cast<std::size_t>(p)];
            pi->positions.emplace_back(
                placed(Tensor::from_vector(DType::Int32, Shape{static_cast<std::int64_t>(v.size())}, v)),
                Shape{piece.shape().dim(0)}, piece.layout(), me);
          }
          pi->data = DistTensor();
          pi->parts = DistTensor();
        };
        ws.push_back(
            Workload{"W5", "dynamic_stitch", N * (row + 8) + N * row, setup_stitch,
                     [=, &ctx]() { shardops::dynamic_stitch(ctx.comm, pi->positions, pi->pieces, ctx.op_options); },
                     // Each row travels with its int64 target row and int64 order key.
                     [=]() {
                       std::vector<std::int64_t> c(static_cast<std::size_t>(np), 0);
                       for (std::int64_t i = 0; i < out_rows.count(me); ++i)
                         c[static_cast<std::size_t>(out_rows.owner(out_rows.offset(me) + i))] += 16 + row;
                       return c;
                     },
                     [=]() { return out_rows.count(me) * (4 + row) + out_bytes; }, drop_part});
      }
    }
  }
  return ws;
}

// ------------------------------------------------------------------ output

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void print_table(const std::vector<Result>& rs, const Options& o, int np) {
  std::printf(
      "\nshardops_bench: %d rank(s), N=%lld rows, M=%lld updates, D=%lld float32 cols, P=%lld partitions, "
      "median of %d after %d warm-up, schedule %s, %s pages, inputs in %s memory\n\n",
      np, static_cast<long long>(o.rows), static_cast<long long>(o.updates), static_cast<long long>(o.cols),
      static_cast<long long>(o.partitions), o.repeats, o.warmup, o.schedule_name.c_str(),
      shardops::huge_pages_in_use() ? "huge" : "small", o.numpy_inputs ? "NumPy-like" : "the library's");
  std::printf(
      "| workload | op | time ms | cold ms | cold new MB | zeroing ms | cold / (time + zeroing) | cpu ms | GB/s | "
      "local ms | exchange ms | exchanged MB | memcpy ms | local "
      "vs memcpy "
      "| "
      "Alltoallv ms | exchange / Alltoallv | its MPI ms | MPI / Alltoallv | grouped + Alltoallv ms | exchange / "
      "grouped | peak RSS MB | share MB | RSS / share | above base / share |\n");
  std::printf(
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---"
      ":|---:|\n");
  for (const Result& r : rs) {
    const double local = r.time.validate + r.time.apply;
    std::printf(
        "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
        "| "
        "%s | %s |\n",
        r.id.c_str(), r.op.c_str(), fmt("%.1f", r.time.total * 1e3).c_str(), fmt("%.1f", r.cold_s * 1e3).c_str(),
        fmt("%.0f", r.cold_new_bytes / 1048576.0).c_str(), fmt("%.1f", r.fresh_pages_s * 1e3).c_str(),
        fmt("%.2f", r.cold_s / (r.time.total + r.fresh_pages_s)).c_str(), fmt("%.1f", r.time.cpu * 1e3).c_str(),
        fmt("%.2f", r.bytes_moved / r.time.total / 1e9).c_str(), fmt("%.1f", local * 1e3).c_str(),
        fmt("%.1f", r.time.route * 1e3).c_str(), fmt("%.1f", r.bytes_exchanged / 1e6).c_str(),
        fmt("%.1f", r.memcpy_s * 1e3).c_str(), local > 0 ? fmt("%.0f%%", 100.0 * r.memcpy_s / local).c_str() : "-",
        r.alltoallv_s > 0 ? fmt("%.1f", r.alltoallv_s * 1e3).c_str() : "-",
        r.alltoallv_s > 0 ? fmt("%.2fx", r.time.route / r.alltoallv_s).c_str() : "-",
        fmt("%.1f", r.time.mpi * 1e3).c_str(),
        r.alltoallv_s > 0 ? fmt("%.2fx", r.time.mpi / r.alltoallv_s).c_str() : "-",
        r.grouped_s > 0 ? fmt("%.1f", r.grouped_s * 1e3).c_str() : "-",
        r.grouped_s > 0 ? fmt("%.2fx", r.time.route / r.grouped_s).c_str() : "-",
        fmt("%.0f", r.peak_rss / 1048576.0).c_str(), fmt("%.0f", r.rss_share / 1048576.0).c_str(),
        (fmt("%.2f", r.rss_ratio) + (r.rss_reset ? "" : "*")).c_str(), fmt("%.2f", r.rss_op_ratio).c_str());
  }
  std::printf(
      "\ncold = median of 3 calls that each start with no memory kept from earlier calls (a process's first "
      "call); time = repeated calls, which reuse the memory earlier ones freed (core/HostMemory.hpp); cold new MB = "
      "the large allocations a cold call makes anew (max over ranks), zeroing = faulting in that many fresh pages, "
      "all ranks at once: the OS zeroes each, so a first call cannot cost less than time + zeroing. "
      "cpu = user + system CPU time of the rank (max over ranks; MPI waits spin, so it counts them): well "
      "below `time` means the cores were shared with other work. local = phases validate + apply, exchange = phase "
      "route (both max over ranks), of which MPI = time inside its MPI calls (waits for the slowest rank included); "
      "memcpy = Kokkos::deep_copy "
      "moving each rank's share of the op's bytes, all ranks at once; Alltoallv = one raw MPI_Alltoallv of the "
      "bytes the op sent to each peer; grouped + Alltoallv = the same after copying the sent bytes from 64-byte rows "
      "whose peers (this rank's too) alternate at random into per-peer order, which row goes where worked out "
      "beforehand: the copy alone, the least an op with random destinations must add. RSS: peak resident memory of the "
      "rank over the calls; above base = the "
      "peak less the resident memory before the first workload (MPI, Kokkos and the libraries).\n");
  for (const Result& r : rs) {
    if (r.bytes_exchanged != r.expected_exchange) {
      std::printf("note: %s sent %lld bytes between ranks; the floor assumed %lld\n", r.id.c_str(),
                  static_cast<long long>(r.bytes_exchanged), static_cast<long long>(r.expected_exchange));
    }
    if (!r.rss_reset)
      std::printf("note (*): peak RSS of %s could not be reset; it includes earlier workloads\n", r.id.c_str());
  }
  std::fflush(stdout);
}

void write_json(const std::string& path, const std::vector<Result>& rs, const Options& o, int np) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << "{\n  \"ranks\": " << np << ", \"rows\": " << o.rows << ", \"updates\": " << o.updates
    << ", \"cols\": " << o.cols << ", \"partitions\": " << o.partitions << ", \"repeats\": " << o.repeats
    << ", \"warmup\": " << o.warmup << ", \"schedule\": \"" << o.schedule_name << "\",\n  \"workloads\": [\n";
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const Result& r = rs[i];
    f << "    {\"id\": \"" << r.id << "\", \"op\": \"" << r.op << "\", \"bytes_moved\": " << r.bytes_moved
      << ", \"time_s\": " << r.time.total << ", \"cold_s\": " << r.cold_s
      << ", \"cold_new_bytes\": " << r.cold_new_bytes << ", \"zeroing_s\": " << r.fresh_pages_s
      << ", \"cpu_s\": " << r.time.cpu << ", \"gb_per_s\": " << r.bytes_moved / r.time.total / 1e9
      << ", \"validate_s\": " << r.time.validate << ", \"route_s\": " << r.time.route << ", \"mpi_s\": " << r.time.mpi
      << ", \"apply_s\": " << r.time.apply << ", \"local_s\": " << r.time.validate + r.time.apply
      << ", \"bytes_exchanged\": " << r.bytes_exchanged << ", \"memcpy_s\": " << r.memcpy_s
      << ", \"alltoallv_s\": " << r.alltoallv_s << ", \"grouped_s\": " << r.grouped_s
      << ", \"peak_rss_bytes\": " << r.peak_rss << ", \"rss_share_bytes\": " << r.rss_share
      << ", \"rss_ratio\": " << r.rss_ratio << ", \"rss_op_ratio\": " << r.rss_op_ratio
      << ", \"rss_reset\": " << (r.rss_reset ? "true" : "false") << "}" << (i + 1 < rs.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
}

int bench_main(int argc, char** argv) {
  Context ctx{Comm(MPI_COMM_WORLD), parse(argc, argv), 0, {}, {}};
  if (ctx.o.help) {
    if (ctx.comm.rank() == 0) std::printf("%s\n", kUsage);
    return 0;
  }
  ctx.row_bytes = ctx.o.cols * 4;
  ctx.op_options.schedule = ctx.o.schedule;
  ctx.op_options.stats = &ctx.op_stats;
  ctx.base_rss = current_rss();
  std::vector<Workload> ws = make_workloads(ctx);
  std::vector<Result> results;
  for (Workload& w : ws) {
    results.push_back(run_workload(ctx, w));
    if (ctx.comm.rank() == 0) {
      std::fprintf(stderr, "shardops_bench: %s done (%.1f ms)\n", w.id.c_str(), results.back().time.total * 1e3);
    }
  }
  if (ctx.comm.rank() == 0) {
    print_table(results, ctx.o, ctx.comm.size());
    if (!ctx.o.json.empty()) write_json(ctx.o.json, results, ctx.o, ctx.comm.size());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    // Kokkos gets its --kokkos-* arguments only: a plain --help is ours.
    std::vector<char*> kokkos_args = shardops::split_kokkos_args(argc, argv, true);
    std::vector<char*> args = shardops::split_kokkos_args(argc, argv, false);
    int kokkos_argc = static_cast<int>(kokkos_args.size());
    Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_args.data());
    try {
      rc = bench_main(static_cast<int>(args.size()), args.data());
    } catch (const std::invalid_argument& e) {  // usage: every rank parsed the same arguments
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      if (rank == 0) std::fprintf(stderr, "shardops_bench: %s\n", e.what());
      rc = 2;
    } catch (const std::exception& e) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      std::fprintf(stderr, "shardops_bench (rank %d): %s\n", rank, e.what());
      MPI_Abort(MPI_COMM_WORLD, 1);  // a failure on one rank must not leave the others waiting
    }
  }
  MPI_Finalize();
  return rc;
}
