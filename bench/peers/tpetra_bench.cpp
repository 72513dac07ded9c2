// Trilinos Tpetra peer for the standard workloads W1 (scatter-add) and W3 (gather),
// the counterpart of petsc_sf.c (same sizes, indices, values, options and output).
//
//   mpirun -n R tpetra_bench [--rows N] [--updates M] [--repeats 7] [--warmup 2] [--seed S] [--json FILE]
//                            [--check 0|1]
//
// Data: Debian's Tpetra (Trilinos 13.2) is instantiated for double only (no float), so a row is
// a Tpetra::MultiVector<double> row of 8 columns = 64 bytes, the same bytes as shardops' 16
// float32. A MultiVector is column-major (LayoutLeft): row i is element i of each of the 8
// columns, and the host-side arrays below are column-major too (column c of the M/np update
// rows is contiguous), so every local loop runs one column at a time.
//
// Maps (balanced blocks, as petsc_sf.c and shardops):
//   target map: the N output/params rows, uniquely owned, contiguous (Tpetra's uniform map:
//               the first N % np ranks get one more row, like block_count below);
//   index map:  the distinct global rows this rank's M/np index rows name (sorted). A Tpetra
//               Map may list a global row on several ranks (an overlapping map) but only once
//               per rank, so the rank's duplicate targets share one row of it, and the M/np
//               update rows are first summed into it (W1) or expanded from it (W3) locally.
//
//   W1 scatter_nd(sum): zero the index-map rows, add each update row into its row there,
//       zero the target, target.doExport(index-map rows, Export(index map -> target map),
//       ADD_ASSIGN): rows owned elsewhere travel and are added, local ones are added in place.
//   W3 gather_nd: index-map rows.doImport(target, Import(target map -> index map), INSERT),
//       then output row i = index-map row of index i (M/np rows, column by column).
//
// Set-up, timed on its own and added to each op's time (shardops builds its plan per call):
// computing the targets, the index map (distinct rows, Tpetra::Map construction) and its
// MultiVector (each step's time is printed too), then Tpetra::Export (W1) or Tpetra::Import
// (W3) construction, which finds the owners through the target map's directory (arithmetic
// for a uniform contiguous map) and sets up the Distributor. Times: max over ranks per
// repeat, median of the repeats after warm-up. Indices and update values use the same hash
// as shardops_bench and petsc_sf.c, so all three move exactly the same rows. --check 1
// compares both results with a serial computation on every rank (small sizes: each rank
// recomputes all M updates).
#include <Tpetra_Core.hpp>
#include <Tpetra_Export.hpp>
#include <Tpetra_Import.hpp>
#include <Tpetra_Map.hpp>
#include <Tpetra_MultiVector.hpp>

#include <Trilinos_version.h>
#include <mpi.h>
#include <sys/resource.h>

#include "../common/input_hash.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kCols = 8;  // doubles per row: 64 bytes

using map_type = Tpetra::Map<>;
using GO = map_type::global_ordinal_type;
using LO = map_type::local_ordinal_type;
using mv_type = Tpetra::MultiVector<double, LO, GO>;
using export_type = Tpetra::Export<LO, GO>;
using import_type = Tpetra::Import<LO, GO>;

// Balanced blocks: the first total % np ranks get one more row (Tpetra's uniform map too).
long long block_count(long long total, int np, int r) { return total / np + (r < total % np ? 1 : 0); }
long long block_offset(long long total, int np, int r) {
  const long long q = total / np, rem = total % np;
  return r * q + (r < rem ? r : rem);
}

struct Options {
  long long rows = 1LL << 20, updates = 1LL << 21;
  int repeats = 7, warmup = 2;
  unsigned long long seed = 7;
  const char* json = nullptr;
  bool check = false;
};

// Same style as petsc_sf.c: every option takes a value.
bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    if (!std::strcmp(a, "--json")) {
      o.json = v;
      continue;
    }
    char* end = nullptr;
    const long long x = std::strtoll(v, &end, 0);
    if (*end || x < 0) return false;
    if (!std::strcmp(a, "--rows") && x > 0)
      o.rows = x;
    else if (!std::strcmp(a, "--updates") && x > 0)
      o.updates = x;
    else if (!std::strcmp(a, "--repeats") && x > 0)
      o.repeats = static_cast<int>(x);
    else if (!std::strcmp(a, "--warmup"))
      o.warmup = static_cast<int>(x);
    else if (!std::strcmp(a, "--seed"))
      o.seed = static_cast<unsigned long long>(x);
    else if (!std::strcmp(a, "--check") && x <= 1)
      o.check = x == 1;
    else
      return false;
  }
  return true;
}

// Global index row j: its target row and its update values (petsc_sf.c's leaf values, row-major numbering).
GO target_of(const Options& o, long long j) { return static_cast<GO>(bench_hash(o.seed, 1, j) % o.rows); }
double value_of(const Options& o, long long j, int c) {
  return static_cast<double>(bench_hash(o.seed, 2, static_cast<std::uint64_t>(j * kCols + c)) >> 11) * 0x1.0p-53;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
double max_over_ranks(double v) {
  double m = 0;
  MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}
long long peak_rss() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<long long>(u.ru_maxrss) * 1024;
}

// The per-call, index-dependent part of the set-up shared by W1 and W3: the index map (this
// rank's distinct target rows, sorted), the local row of every index row in it, and the
// MultiVector on it.
struct IndexMap {
  Teuchos::RCP<const map_type> map;
  Teuchos::RCP<mv_type> rows;
  std::vector<LO> local_row;                   // index row i -> row of `map`
  double distinct_s = 0, map_s = 0, mv_s = 0;  // this rank's time in the three steps
};

IndexMap build_index_map(const Options& o, long long first, long long count, std::vector<LO>& row_of_global,
                         const Teuchos::RCP<const Teuchos::Comm<int>>& comm) {
  IndexMap m;
  double t = MPI_Wtime();
  m.local_row.resize(static_cast<size_t>(count));
  // Mark the targets in a dense table over the N global rows (kept between calls, all -1),
  // then number the marked rows in global order: sorted distinct rows, O(M/np + N).
  std::vector<GO> targets(static_cast<size_t>(count));
  for (long long i = 0; i < count; ++i) {
    targets[i] = target_of(o, first + i);
    row_of_global[targets[i]] = 0;
  }
  std::vector<GO> distinct;
  distinct.reserve(static_cast<size_t>(std::min<long long>(count, o.rows)));
  for (GO g = 0; g < o.rows; ++g)
    if (row_of_global[g] == 0) {
      row_of_global[g] = static_cast<LO>(distinct.size());
      distinct.push_back(g);
    }
  for (long long i = 0; i < count; ++i) m.local_row[i] = row_of_global[targets[i]];
  for (GO g : distinct) row_of_global[g] = -1;
  m.distinct_s = MPI_Wtime() - t;
  t = MPI_Wtime();
  const auto any_total = Teuchos::OrdinalTraits<Tpetra::global_size_t>::invalid();  // Tpetra sums the counts
  m.map = Teuchos::rcp(new map_type(any_total, distinct.data(), static_cast<LO>(distinct.size()), 0, comm));
  m.map_s = MPI_Wtime() - t;
  t = MPI_Wtime();
  m.rows = Teuchos::rcp(new mv_type(m.map, kCols));  // zeroed: its pages are touched here, not in the op
  m.mv_s = MPI_Wtime() - t;
  return m;
}

// Serial reference on every rank: all M updates summed into all N rows (row-major).
std::vector<double> reference_sum(const Options& o) {
  std::vector<double> ref(static_cast<size_t>(o.rows) * kCols, 0.0);
  for (long long j = 0; j < o.updates; ++j) {
    const GO t = target_of(o, j);
    for (int c = 0; c < kCols; ++c) ref[t * kCols + c] += value_of(o, j, c);
  }
  return ref;
}

}  // namespace

int main(int argc, char** argv) {
  // Initializes MPI and Kokkos (Serial: the build Debian ships); our flags are not Kokkos flags.
  Tpetra::ScopeGuard scope(&argc, &argv);
  const auto comm = Tpetra::getDefaultComm();
  const int me = comm->getRank(), np = comm->getSize();
  Options o;
  if (!parse(argc, argv, o)) {
    if (!me)
      std::fprintf(stderr,
                   "usage: tpetra_bench [--rows N] [--updates M] [--repeats R] [--warmup W] [--seed S] [--json FILE] "
                   "[--check 0|1]\n");
    return 2;
  }
  const long long nrows = block_count(o.rows, np, me), nidx = block_count(o.updates, np, me);
  const long long first = block_offset(o.updates, np, me);

  // The output/params tensor: built once, like petsc_sf.c's root array (not index-dependent).
  const auto target_map = Teuchos::rcp(new map_type(static_cast<Tpetra::global_size_t>(o.rows), 0, comm));
  if (static_cast<long long>(target_map->getNodeNumElements()) != nrows ||
      target_map->getMinGlobalIndex() != block_offset(o.rows, np, me)) {
    std::fprintf(stderr, "tpetra_bench: rank %d: Tpetra's uniform map is not the balanced block split\n", me);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  mv_type target(target_map, kCols);

  // This rank's M/np update rows (inputs of W1) and gathered rows (output of W3), column-major.
  std::vector<double> updates(static_cast<size_t>(nidx) * kCols), gathered(static_cast<size_t>(nidx) * kCols, 0.0);
  for (int c = 0; c < kCols; ++c)
    for (long long i = 0; i < nidx; ++i) updates[c * nidx + i] = value_of(o, first + i, c);
  std::vector<LO> row_of_global(static_cast<size_t>(o.rows), -1);

  const int total_reps = o.warmup + o.repeats;
  std::vector<double> t_maps, t_export, t_import, t_w1, t_w3, t_distinct, t_map, t_mv;
  IndexMap idx;
  for (int rep = 0; rep < total_reps; ++rep) {
    idx = IndexMap{};  // the previous call's plan and buffers go (untimed), as PetscSFDestroy
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    idx = build_index_map(o, first, nidx, row_of_global, comm);
    const double maps = max_over_ranks(MPI_Wtime() - t0);
    const double distinct = max_over_ranks(idx.distinct_s), map = max_over_ranks(idx.map_s),
                 mv = max_over_ranks(idx.mv_s);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    const auto exporter = Teuchos::rcp(new export_type(idx.map, target_map));
    const double exp_setup = max_over_ranks(MPI_Wtime() - t0);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    const auto importer = Teuchos::rcp(new import_type(target_map, idx.map));
    const double imp_setup = max_over_ranks(MPI_Wtime() - t0);

    // W1: scatter_nd(sum). Sum this rank's update rows into its distinct rows, then export-add.
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    {
      auto v = idx.rows->getLocalViewHost(Tpetra::Access::OverwriteAll);
      const size_t n = v.extent(0);
      for (int c = 0; c < kCols; ++c) {
        double* col = v.data() + c * v.stride(1);
        const double* u = &updates[c * nidx];
        std::fill(col, col + n, 0.0);
        for (long long i = 0; i < nidx; ++i) col[idx.local_row[i]] += u[i];
      }
    }
    target.putScalar(0.0);
    target.doExport(*idx.rows, *exporter, Tpetra::ADD_ASSIGN);
    const double w1 = max_over_ranks(MPI_Wtime() - t0);

    // W3: gather_nd. Import the distinct rows from their owners, then expand to the M/np rows.
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    idx.rows->doImport(target, *importer, Tpetra::INSERT);
    {
      auto v = idx.rows->getLocalViewHost(Tpetra::Access::ReadOnly);
      for (int c = 0; c < kCols; ++c) {
        const double* col = v.data() + c * v.stride(1);
        double* out = &gathered[c * nidx];
        for (long long i = 0; i < nidx; ++i) out[i] = col[idx.local_row[i]];
      }
    }
    const double w3 = max_over_ranks(MPI_Wtime() - t0);
    if (rep < o.warmup) continue;
    t_maps.push_back(maps);
    t_export.push_back(exp_setup);
    t_import.push_back(imp_setup);
    t_w1.push_back(w1);
    t_w3.push_back(w3);
    t_distinct.push_back(distinct);
    t_map.push_back(map);
    t_mv.push_back(mv);
  }

  int status = 0;
  if (o.check) {
    // W1: every owned row against the serial sum; W3: every gathered row against the serial
    // sum of its target row. Sums of the same values in another order: relative 1e-12.
    const std::vector<double> ref = reference_sum(o);
    const auto v = target.getLocalViewHost(Tpetra::Access::ReadOnly);
    const GO row0 = target_map->getMinGlobalIndex();
    double err1 = 0, err3 = 0, sum1 = 0;
    for (long long i = 0; i < nrows; ++i)
      for (int c = 0; c < kCols; ++c) {
        const double want = ref[(row0 + i) * kCols + c];
        err1 = std::max(err1, std::fabs(v(i, c) - want) / (1.0 + std::fabs(want)));
        sum1 += v(i, c);
      }
    for (long long i = 0; i < nidx; ++i)
      for (int c = 0; c < kCols; ++c) {
        const double want = ref[target_of(o, first + i) * kCols + c];
        err3 = std::max(err3, std::fabs(gathered[c * nidx + i] - want) / (1.0 + std::fabs(want)));
      }
    double total = 0, want_total = 0;
    MPI_Allreduce(&sum1, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (double x : ref) want_total += x;
    err1 = max_over_ranks(err1);
    err3 = max_over_ranks(err3);
    const bool ok = err1 <= 1e-12 && err3 <= 1e-12 && std::fabs(total - want_total) <= 1e-9 * want_total;
    if (!me)
      std::printf("check: W1 sum of all outputs %.9f (serial %.9f), max rel. error W1 %.2e, W3 %.2e: %s\n", total,
                  want_total, err1, err3, ok ? "ok" : "FAILED");
    status = ok ? 0 : 1;
  }

  const double maps = median(t_maps), exp_setup = median(t_export), imp_setup = median(t_import);
  const double w1 = median(t_w1), w3 = median(t_w3);
  const double setup1 = maps + exp_setup, setup3 = maps + imp_setup;
  const long long row = kCols * static_cast<long long>(sizeof(double));
  const long long w1_bytes = o.updates * (row + 8) + o.rows * row;  // as petsc_sf.c
  const long long w3_bytes = o.updates * 8 + 2LL * o.updates * row;
  // Peak RSS against the rank's share of inputs + outputs: update rows + indices, the N-row
  // output/params, and the M/np gathered rows (W3's output; petsc_sf.c reuses its update array).
  const double share = static_cast<double>(nidx) * (2 * row + 8) + static_cast<double>(nrows) * row;
  const double ratio = max_over_ranks(static_cast<double>(peak_rss()) / share);
  const double rss_mb = max_over_ranks(static_cast<double>(peak_rss()) / 1048576.0);
  if (!me) {
    std::printf(
        "\ntpetra_bench: Trilinos %s Tpetra Export/Import (Kokkos Serial, LO int, GO long long), %d rank(s), N=%lld "
        "target rows, M=%lld index rows, rows of %d doubles (%lld B, MultiVector of %d columns), median of %d after "
        "%d warm-up\n\n",
        TRILINOS_VERSION_STRING, np, o.rows, o.updates, kCols, row, kCols, o.repeats, o.warmup);
    std::printf("| workload | op | time ms (set-up + op) | GB/s | set-up ms | op ms | peak RSS MB | RSS / share |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
    std::printf("| W1 | Tpetra::Export(ADD_ASSIGN) | %.1f | %.2f | %.1f | %.1f | %.0f | %.2f |\n", (setup1 + w1) * 1e3,
                w1_bytes / (setup1 + w1) / 1e9, setup1 * 1e3, w1 * 1e3, rss_mb, ratio);
    std::printf("| W3 | Tpetra::Import(INSERT) | %.1f | %.2f | %.1f | %.1f | %.0f | %.2f |\n", (setup3 + w3) * 1e3,
                w3_bytes / (setup3 + w3) / 1e9, setup3 * 1e3, w3 * 1e3, rss_mb, ratio);
    std::printf(
        "\nset-up parts: index map %.1f ms (targets + distinct rows %.1f, Tpetra::Map %.1f, MultiVector %.1f), "
        "Export %.1f ms, Import %.1f ms\n",
        maps * 1e3, median(t_distinct) * 1e3, median(t_map) * 1e3, median(t_mv) * 1e3, exp_setup * 1e3,
        imp_setup * 1e3);
    std::fflush(stdout);
    if (o.json) {
      FILE* f = std::fopen(o.json, "w");
      if (f) {
        std::fprintf(
            f,
            "{\n  \"peer\": \"Tpetra\", \"trilinos\": \"%s\", \"ranks\": %d, \"rows\": %lld, \"updates\": %lld, "
            "\"row_bytes\": %lld, \"repeats\": %d, \"warmup\": %d,\n  \"index_map_s\": %g, \"export_setup_s\": %g, "
            "\"import_setup_s\": %g, \"peak_rss_mb\": %g, \"rss_ratio\": %g,\n"
            "  \"workloads\": [\n    {\"id\": \"W1\", \"op\": \"Tpetra::Export(ADD_ASSIGN)\", \"setup_s\": %g, "
            "\"op_s\": %g, \"time_s\": %g, \"bytes_moved\": %lld},\n"
            "    {\"id\": \"W3\", \"op\": \"Tpetra::Import(INSERT)\", \"setup_s\": %g, \"op_s\": %g, \"time_s\": %g, "
            "\"bytes_moved\": %lld}\n  ]\n}\n",
            TRILINOS_VERSION_STRING, np, o.rows, o.updates, row, o.repeats, o.warmup, maps, exp_setup, imp_setup,
            rss_mb, ratio, setup1, w1, setup1 + w1, w1_bytes, setup3, w3, setup3 + w3, w3_bytes);
        std::fclose(f);
      } else {
        std::fprintf(stderr, "tpetra_bench: cannot write %s\n", o.json);
      }
    }
  }
  return status;
}
