/* PETSc PetscSF peer for the standard workloads W1 (scatter-add) and W3 (gather).
 *
 *   mpirun -n R petsc_sf_bench [--rows N] [--updates M] [--repeats 7] [--warmup 2] [--seed S] [--json FILE]
 *
 * Star forest: leaves = this rank's update/index rows (contiguous, ilocal = NULL),
 * roots = output/params rows in balanced blocks, leaf i -> root idx[i] given as
 * (owner rank, local row), computed arithmetically as shardops does. PETSc reduces
 * only on its own scalar type (PetscScalar = double in libpetsc-real-dev), so a row
 * is 8 doubles = 64 bytes, the same bytes as shardops' 16 float32; the unit is an
 * MPI contiguous type of 8 MPIU_SCALAR, which PetscSF packs as a block.
 *
 *   W1 scatter_nd(sum): zero the roots, PetscSFReduce(leaf updates -> roots, MPI_SUM)
 *   W3 gather_nd:       PetscSFBcast(root params -> leaves, MPI_REPLACE)
 *
 * Set-up (computing the owners, PetscSFCreate + SetGraph + SetUp, destroy) is timed
 * on its own and added to each op's time, since shardops builds its plan per call.
 * Times: max over ranks per repeat, median of the repeats after warm-up. Indices use
 * the same hash as shardops_bench, so both move exactly the same rows. */
#include <petscsf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../common/input_hash.h"

#define ROW_SCALARS 8

/* Balanced blocks: the first total % np ranks get one more row. */
static PetscInt block_count(PetscInt total, int np, int r) { return total / np + (r < total % np ? 1 : 0); }
static PetscInt block_offset(PetscInt total, int np, int r) {
  const PetscInt q = total / np, rem = total % np;
  return (PetscInt)r * q + (r < rem ? r : rem);
}
static int block_owner(PetscInt total, int np, PetscInt row) {
  const PetscInt q = total / np, rem = total % np, big = rem * (q + 1);
  return (int)(row < big ? row / (q + 1) : rem + (row - big) / q);
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}
static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static double max_over_ranks(double v) {
  double m = 0;
  MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return m;
}
static long long peak_rss(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (long long)u.ru_maxrss * 1024;
}

typedef struct {
  PetscInt rows, updates;
  int repeats, warmup;
  unsigned long long seed;
  const char* json;
} Options;

static int parse(int argc, char** argv, Options* o) {
  o->rows = (PetscInt)1 << 20;
  o->updates = (PetscInt)1 << 21;
  o->repeats = 7;
  o->warmup = 2;
  o->seed = 7;
  o->json = NULL;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (i + 1 >= argc) return 1;
    const char* v = argv[++i];
    char* end = NULL;
    const long long x = strtoll(v, &end, 0);
    if (!strcmp(a, "--json")) {
      o->json = v;
      continue;
    }
    if (*end || x < 0) return 1;
    if (!strcmp(a, "--rows") && x > 0)
      o->rows = (PetscInt)x;
    else if (!strcmp(a, "--updates") && x > 0)
      o->updates = (PetscInt)x;
    else if (!strcmp(a, "--repeats") && x > 0)
      o->repeats = (int)x;
    else if (!strcmp(a, "--warmup"))
      o->warmup = (int)x;
    else if (!strcmp(a, "--seed"))
      o->seed = (unsigned long long)x;
    else
      return 1;
  }
  return 0;
}

/* Builds the star forest of this rank's leaves (timed as set-up). */
static PetscErrorCode build_sf(const Options* o, int np, PetscInt nroots, PetscInt nleaves, PetscInt first_leaf,
                               PetscSF* sf) {
  PetscSFNode* remote;
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nleaves, &remote));
  for (PetscInt i = 0; i < nleaves; ++i) {
    const PetscInt t = (PetscInt)(bench_hash(o->seed, 1, (uint64_t)(first_leaf + i)) % (uint64_t)o->rows);
    const int r = block_owner(o->rows, np, t);
    remote[i].rank = r;
    remote[i].index = t - block_offset(o->rows, np, r);
  }
  PetscCall(PetscSFCreate(PETSC_COMM_WORLD, sf));
  PetscCall(PetscSFSetFromOptions(*sf));
  PetscCall(PetscSFSetGraph(*sf, nroots, nleaves, NULL, PETSC_COPY_VALUES, remote, PETSC_OWN_POINTER));
  PetscCall(PetscSFSetUp(*sf));
  PetscFunctionReturn(0);
}

int main(int argc, char** argv) {
  Options o;
  int me, np;
  PetscCall(PetscInitialize(NULL, NULL, NULL, NULL)); /* our flags are not PETSc options */
  MPI_Comm_rank(PETSC_COMM_WORLD, &me);
  MPI_Comm_size(PETSC_COMM_WORLD, &np);
  if (parse(argc, argv, &o)) {
    if (!me)
      fprintf(stderr,
              "usage: petsc_sf_bench [--rows N] [--updates M] [--repeats R] [--warmup W] [--seed S] [--json FILE]\n");
    PetscCall(PetscFinalize());
    return 2;
  }
  const PetscInt nroots = block_count(o.rows, np, me), nleaves = block_count(o.updates, np, me);
  const PetscInt first_leaf = block_offset(o.updates, np, me);
  MPI_Datatype unit;
  MPI_Type_contiguous(ROW_SCALARS, MPIU_SCALAR, &unit);
  MPI_Type_commit(&unit);
  PetscScalar *leaf, *root;
  PetscCall(PetscMalloc1((size_t)nleaves * ROW_SCALARS, &leaf));
  PetscCall(PetscMalloc1((size_t)nroots * ROW_SCALARS, &root));
  for (PetscInt i = 0; i < nleaves * ROW_SCALARS; ++i)
    leaf[i] = (PetscScalar)((bench_hash(o.seed, 2, (uint64_t)(first_leaf * ROW_SCALARS + i)) >> 11) * 0x1.0p-53);
  for (PetscInt i = 0; i < nroots * ROW_SCALARS; ++i) root[i] = 0;

  const int total_reps = o.warmup + o.repeats;
  double *t_setup = malloc(sizeof(double) * (size_t)total_reps),
         *t_reduce = malloc(sizeof(double) * (size_t)total_reps),
         *t_bcast = malloc(sizeof(double) * (size_t)total_reps);
  int kept = 0;
  for (int rep = 0; rep < total_reps; ++rep) {
    PetscSF sf;
    MPI_Barrier(PETSC_COMM_WORLD);
    double t0 = MPI_Wtime();
    PetscCall(build_sf(&o, np, nroots, nleaves, first_leaf, &sf));
    const double setup = max_over_ranks(MPI_Wtime() - t0);

    /* W1: scatter_nd(sum) = zeros, then reduce the leaves into their roots. */
    MPI_Barrier(PETSC_COMM_WORLD);
    t0 = MPI_Wtime();
    PetscCall(PetscArrayzero(root, (size_t)nroots * ROW_SCALARS));
    PetscCall(PetscSFReduceBegin(sf, unit, leaf, root, MPI_SUM));
    PetscCall(PetscSFReduceEnd(sf, unit, leaf, root, MPI_SUM));
    const double reduce = max_over_ranks(MPI_Wtime() - t0);

    /* W3: gather_nd = each leaf gets its root's row (root holds the params). */
    MPI_Barrier(PETSC_COMM_WORLD);
    t0 = MPI_Wtime();
    PetscCall(PetscSFBcastBegin(sf, unit, root, leaf, MPI_REPLACE));
    PetscCall(PetscSFBcastEnd(sf, unit, root, leaf, MPI_REPLACE));
    const double bcast = max_over_ranks(MPI_Wtime() - t0);
    PetscCall(PetscSFDestroy(&sf));
    if (rep < o.warmup) continue;
    t_setup[kept] = setup;
    t_reduce[kept] = reduce;
    t_bcast[kept] = bcast;
    ++kept;
  }
  const double setup = median(t_setup, kept), reduce = median(t_reduce, kept), bcast = median(t_bcast, kept);
  const long long row = ROW_SCALARS * (long long)sizeof(PetscScalar);
  const long long w1_bytes = (long long)o.updates * (row + 8) + (long long)o.rows * row;
  const long long w3_bytes = (long long)o.updates * 8 + 2LL * o.updates * row;
  /* Peak RSS against the rank's share of inputs + outputs (leaves, roots, indices). */
  const double share = (double)nleaves * (row + 8) + (double)nroots * row;
  const double ratio = max_over_ranks((double)peak_rss() / share);
  const double rss_mb = max_over_ranks((double)peak_rss() / 1048576.0);
  if (!me) {
    printf(
        "\npetsc_sf_bench: PETSc %d.%d.%d PetscSF (type from -sf_type, default basic), %d rank(s), N=%lld roots, "
        "M=%lld leaves, rows of %d doubles (%lld B), median of %d after %d warm-up\n\n",
        PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, np, (long long)o.rows, (long long)o.updates,
        ROW_SCALARS, row, o.repeats, o.warmup);
    printf("| workload | op | time ms (set-up + op) | GB/s | set-up ms | op ms | peak RSS MB | RSS / share |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
    printf("| W1 | PetscSFReduce(MPI_SUM) | %.1f | %.2f | %.1f | %.1f | %.0f | %.2f |\n", (setup + reduce) * 1e3,
           w1_bytes / (setup + reduce) / 1e9, setup * 1e3, reduce * 1e3, rss_mb, ratio);
    printf("| W3 | PetscSFBcast(MPI_REPLACE) | %.1f | %.2f | %.1f | %.1f | %.0f | %.2f |\n", (setup + bcast) * 1e3,
           w3_bytes / (setup + bcast) / 1e9, setup * 1e3, bcast * 1e3, rss_mb, ratio);
    fflush(stdout);
    if (o.json) {
      FILE* f = fopen(o.json, "w");
      if (f) {
        fprintf(
            f,
            "{\n  \"peer\": \"PetscSF\", \"petsc\": \"%d.%d.%d\", \"ranks\": %d, \"rows\": %lld, \"updates\": %lld, "
            "\"row_bytes\": %lld, \"repeats\": %d, \"warmup\": %d,\n  \"setup_s\": %g, \"peak_rss_mb\": %g, "
            "\"rss_ratio\": %g,\n"
            "  \"workloads\": [\n    {\"id\": \"W1\", \"op\": \"PetscSFReduce(MPI_SUM)\", \"op_s\": %g, \"time_s\": "
            "%g, \"bytes_moved\": %lld},\n"
            "    {\"id\": \"W3\", \"op\": \"PetscSFBcast(MPI_REPLACE)\", \"op_s\": %g, \"time_s\": %g, "
            "\"bytes_moved\": %lld}\n  ]\n}\n",
            PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, np, (long long)o.rows,
            (long long)o.updates, row, o.repeats, o.warmup, setup, rss_mb, ratio, reduce, setup + reduce, w1_bytes,
            bcast, setup + bcast, w3_bytes);
        fclose(f);
      } else {
        fprintf(stderr, "petsc_sf_bench: cannot write %s\n", o.json);
      }
    }
  }
  free(t_setup);
  free(t_reduce);
  free(t_bcast);
  PetscCall(PetscFree(leaf));
  PetscCall(PetscFree(root));
  MPI_Type_free(&unit);
  PetscCall(PetscFinalize());
  return 0;
}
