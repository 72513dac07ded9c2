#!/usr/bin/env bash
# The GPU checks of issue 8, on PREBUILT binaries: it builds nothing (neither Kokkos nor
# shardops). Give it a build directory configured against a Kokkos 4 CUDA install
# (docs/building.md, "Your own Kokkos 4"), with tests and benchmarks built. It
#   1. records the machine (nvidia-smi, nvcc, MPI, Kokkos devices of the build),
#   2. runs that build's ctest suite (optionally the MPI tests again with
#      SHARDOPS_MPI_STAGING=host, for the staging path when MPI is GPU-aware),
#   3. runs bench/shardops_bench (W1-W5 of docs/performance.md, scaled up) at the given rank
#      counts; its memcpy floor (Kokkos::deep_copy in the default memory space) is the
#      device-to-device copy, timed in the same run,
#   4. runs scripts/gpu/gpu_peers.py (PyTorch, JAX, CuPy, each skipped if it does not
#      import) at the same sizes,
#   5. writes OUT/results.md (scripts/gpu/gpu_report.py) and the raw logs and JSON.
#
# Usage: scripts/gpu/run-gpu-checks.sh --build DIR [options]
#   --build DIR         the prebuilt CUDA build directory (required)
#   --out DIR           results folder (default: results/gpu-<date>-<time>)
#   --rows N            output rows N (default 2^26 = 67108864)
#   --updates M         index rows M (default 2 N)
#   --cols D            float32 columns per row (default 16)
#   --partitions P      (default 16)
#   --repeats R         timed repeats (default 7); --warmup W (default 2)
#   --ranks "1 2"       rank counts for shardops_bench (default "1": one GPU)
#   --python PY         the python with torch/jax/cupy (default: python3 on PATH)
#   --ctest-args "..."  extra ctest arguments, split at spaces, no quoting inside
#                       (e.g. "-R test_mpi -j 4", "-L unit|mpi")
#   --staged-mpi-pass   run `ctest -L mpi` a second time with SHARDOPS_MPI_STAGING=host
#   --skip-ctest | --skip-bench | --skip-peers
#   --report-only       only write OUT/results.md from what an earlier run left in OUT (one
#                       cut off by a time limit); give it the same --build, --out, --python
#   --host-check        plumbing check on an ordinary host build (no GPU): allows a
#                       non-CUDA Kokkos, tiny sizes, peers on --device cpu, and runs only
#                       the ctest tests matching test_mpi_staging unless --ctest-args says
#                       otherwise. Its numbers mean nothing.
#
# Environment: MPIEXEC_FLAGS (default --oversubscribe, for Open MPI), PYTHON (as --python).
# Exit status: 0 when every step that ran passed; 1 otherwise (the report is still written).
# Not run by CI: it needs a GPU.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=""
OUT=""
ROWS=""
UPDATES=""
COLS=16
PARTS=16
REPEATS=""
WARMUP=""
RANKS="1"
PY=${PYTHON:-python3}
CTEST_ARGS=""
CTEST_ARGS_SET=0
STAGED_PASS=0
DO_CTEST=1
DO_BENCH=1
DO_PEERS=1
HOST_CHECK=0
REPORT_ONLY=0

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d'; }
need() { [[ $# -ge 2 && -n $2 ]] || { echo "run-gpu-checks.sh: $1 needs a value" >&2; exit 2; }; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) need "$@"; BUILD=$2; shift ;;
    --out) need "$@"; OUT=$2; shift ;;
    --rows) need "$@"; ROWS=$2; shift ;;
    --updates) need "$@"; UPDATES=$2; shift ;;
    --cols) need "$@"; COLS=$2; shift ;;
    --partitions) need "$@"; PARTS=$2; shift ;;
    --repeats) need "$@"; REPEATS=$2; shift ;;
    --warmup) need "$@"; WARMUP=$2; shift ;;
    --ranks) need "$@"; RANKS=$2; shift ;;
    --python) need "$@"; PY=$2; shift ;;
    --ctest-args) need "$@"; CTEST_ARGS=$2; CTEST_ARGS_SET=1; shift ;;
    --staged-mpi-pass) STAGED_PASS=1 ;;
    --skip-ctest) DO_CTEST=0 ;;
    --skip-bench) DO_BENCH=0 ;;
    --skip-peers) DO_PEERS=0 ;;
    --host-check) HOST_CHECK=1 ;;
    --report-only) REPORT_ONLY=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-gpu-checks.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ -n $BUILD ]] || { echo "run-gpu-checks.sh: --build DIR is required (see --help)" >&2; exit 2; }
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "run-gpu-checks.sh: no such directory: $BUILD" >&2; exit 2; }
[[ -f $BUILD/CMakeCache.txt ]] || { echo "run-gpu-checks.sh: $BUILD is not a CMake build directory" >&2; exit 2; }

if [[ $HOST_CHECK == 1 ]]; then
  ROWS=${ROWS:-4096}
  REPEATS=${REPEATS:-1}
  WARMUP=${WARMUP:-0}
  DEVICE=cpu
  [[ $CTEST_ARGS_SET == 1 ]] || CTEST_ARGS="-R test_mpi_staging"
else
  ROWS=${ROWS:-67108864}
  REPEATS=${REPEATS:-7}
  WARMUP=${WARMUP:-2}
  DEVICE=cuda
fi
UPDATES=${UPDATES:-$((2 * ROWS))}
OUT=${OUT:-$REPO/results/gpu-$(date +%Y-%m-%d-%H%M%S)}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)

cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt" | head -n 1; }
note() { echo "== $(date +%T) $*" | tee -a "$OUT/steps.txt" >&2; }
failed=()

# The report, from whatever the steps left in OUT: at the end, or alone (--report-only) for a
# run that was cut off, e.g. by a time limit on a lent machine.
write_report() {  # write_report TITLE_PREFIX
  local title args=() f
  title="shardops on $(command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || echo 'this machine')"
  [[ $HOST_CHECK == 1 ]] && title="HOST CHECK (plumbing only, no GPU): $title"
  title=$1$title
  for f in "$OUT"/bench-np*.json; do [[ -s $f ]] && args+=(--bench "$f"); done
  [[ -s $OUT/peers.json ]] && args+=(--peers "$OUT/peers.json")
  [[ -s $OUT/ctest-summary.txt ]] && args+=(--ctest "$OUT/ctest-summary.txt")
  "$PY" "$REPO/scripts/gpu/gpu_report.py" --title "$title" "${args[@]}" --env "$OUT/env.txt" > "$OUT/results.md"
}
if [[ $REPORT_ONLY == 1 ]]; then
  write_report "PARTIAL (cut off): "
  exit
fi

# --- 1. the machine and the build --------------------------------------------------
KOKKOS_DIR=$(cache Kokkos_DIR)
KOKKOS_DEVICES=""
if [[ -n $KOKKOS_DIR && -d $KOKKOS_DIR ]]; then  # KokkosConfigCommon.cmake (4.x) or KokkosConfig.cmake (3.x)
  KOKKOS_DEVICES=$(cat "$KOKKOS_DIR"/KokkosConfig*.cmake 2>/dev/null |
    sed -n 's/^ *[sS][eE][tT](Kokkos_DEVICES "*\([^")]*\)"*).*/\1/p' | head -n 1)
fi
MPIEXEC=$(cache MPIEXEC_EXECUTABLE)
MPIEXEC=${MPIEXEC:-mpiexec}
BENCH=$BUILD/bench/shardops_bench
{
  echo "date: $(date -Is)"
  echo "host: $(hostname)"
  if rev=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null); then
    echo "repository: $rev$(git -C "$REPO" diff --quiet 2>/dev/null || echo ' (dirty tree)')"
  else
    echo "repository: ? (not a git checkout)"
  fi
  echo "build: $BUILD"
  echo "compiler: $(cache CMAKE_CXX_COMPILER)"
  echo "Kokkos_DIR: ${KOKKOS_DIR:-?}"
  echo "Kokkos devices: ${KOKKOS_DEVICES:-?}"
  echo "GPU-aware MPI option: $(cache SHARDOPS_ENABLE_GPU_AWARE_MPI)"
  echo "SHARDOPS_GPU_AWARE_MPI=${SHARDOPS_GPU_AWARE_MPI-<unset>} SHARDOPS_MPI_STAGING=${SHARDOPS_MPI_STAGING-<unset>}"
  echo "mpiexec: $MPIEXEC ($("$MPIEXEC" --version 2>/dev/null | head -n 1))"
  if command -v ompi_info > /dev/null; then
    echo "Open MPI CUDA support: $(ompi_info --parsable --all 2>/dev/null | sed -n 's/^mca:mpi:base:param:mpi_built_with_cuda_support:value://p' | head -n 1)"
  fi
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.memory --format=csv 2>&1
  else
    echo "nvidia-smi: not found"
  fi
  if command -v nvcc > /dev/null; then nvcc --version | tail -n 2; fi
  echo "python: $PY ($("$PY" --version 2>&1))"
} > "$OUT/env.txt"
cat "$OUT/env.txt" >&2

# Where the Kokkos install is not on this machine (a build carried here), the build's own
# compiler says it: only a CUDA Kokkos installs nvcc_wrapper.
if [[ -z $KOKKOS_DEVICES && $(cache CMAKE_CXX_COMPILER) == *nvcc_wrapper ]]; then KOKKOS_DEVICES=CUDA; fi
if [[ $HOST_CHECK == 0 && $KOKKOS_DEVICES != *CUDA* ]]; then
  echo "run-gpu-checks.sh: $BUILD is not built against a CUDA Kokkos (devices: ${KOKKOS_DEVICES:-unknown})." >&2
  echo "  Configure it as docs/building.md says (Your own Kokkos 4), or pass --host-check for a plumbing check." >&2
  exit 2
fi
if [[ $HOST_CHECK == 1 ]]; then
  echo "HOST CHECK: plumbing only, on a host build (Kokkos devices: ${KOKKOS_DEVICES:-?}); the numbers mean nothing." \
    | tee -a "$OUT/env.txt" >&2
fi

# Open MPI on one node, possibly as root; keep a pml the user chose.
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}

# --- 2. the test suite -----------------------------------------------------------------
: > "$OUT/ctest-summary.txt"
run_ctest() {  # run_ctest NAME [ENV=VALUE...] -- CTEST_ARGS...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  note "ctest $name: ${envs[*]} ctest $*"
  # shellcheck disable=SC2068
  (cd "$BUILD" && env ${envs[@]+"${envs[@]}"} ctest --output-on-failure "$@") > "$OUT/ctest-$name.log" 2>&1
  local rc=$?
  {
    echo "ctest $name (${envs[*]:-default environment}) $*: exit $rc"
    grep -E 'tests passed|tests failed|No tests were found' "$OUT/ctest-$name.log" | tail -n 1
    sed -n '/The following tests FAILED/,$p' "$OUT/ctest-$name.log" | grep -E '^\s+[0-9]+ - ' || true
  } >> "$OUT/ctest-summary.txt"
  if [[ $rc != 0 ]] || grep -q 'No tests were found' "$OUT/ctest-$name.log"; then failed+=("ctest-$name"); fi
}
if [[ $DO_CTEST == 1 ]]; then
  read -ra ctest_args <<<"$CTEST_ARGS"
  run_ctest suite -- ${ctest_args[@]+"${ctest_args[@]}"}
  if [[ $STAGED_PASS == 1 ]]; then
    run_ctest staged SHARDOPS_MPI_STAGING=host -- -L mpi ${ctest_args[@]+"${ctest_args[@]}"}
  fi
  cat "$OUT/ctest-summary.txt" >&2
fi

# --- 3. shardops_bench ---------------------------------------------------------------------
if [[ $DO_BENCH == 1 ]]; then
  if [[ ! -x $BENCH ]]; then
    echo "run-gpu-checks.sh: $BENCH is missing: build the target shardops_bench in $BUILD" >&2
    failed+=(bench)
  else
    for np in $RANKS; do
      note "shardops_bench np=$np N=$ROWS M=$UPDATES D=$COLS P=$PARTS"
      rm -f "$OUT/bench-np$np.json"  # the report takes every bench JSON it finds
      # shellcheck disable=SC2086
      if ! "$MPIEXEC" -n "$np" ${MPIEXEC_FLAGS---oversubscribe} "$BENCH" --rows "$ROWS" --updates "$UPDATES" --cols "$COLS" \
        --partitions "$PARTS" --repeats "$REPEATS" --warmup "$WARMUP" --json "$OUT/bench-np$np.json" \
        > "$OUT/bench-np$np.md" 2> "$OUT/bench-np$np.err"; then
        echo "run-gpu-checks.sh: shardops_bench np=$np failed: see $OUT/bench-np$np.err" >&2
        failed+=("bench-np$np")
      fi
    done
  fi
fi

# --- 4. the GPU peers ----------------------------------------------------------------------
if [[ $DO_PEERS == 1 ]]; then
  note "gpu_peers.py --device $DEVICE"
  rm -f "$OUT/peers.json"
  if ! "$PY" "$REPO/scripts/gpu/gpu_peers.py" --device "$DEVICE" --rows "$ROWS" --updates "$UPDATES" --cols "$COLS" \
    --partitions "$PARTS" --repeats "$REPEATS" --warmup "$WARMUP" --json "$OUT/peers.json" \
    --markdown "$OUT/peers.md" 2> "$OUT/peers.err"; then
    echo "run-gpu-checks.sh: gpu_peers.py failed: see $OUT/peers.err" >&2
    failed+=(peers)
  fi
fi

# --- 5. the report -------------------------------------------------------------------------
note "report"
write_report "" || failed+=(report)
echo "run-gpu-checks.sh: wrote $OUT/results.md" >&2
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run-gpu-checks.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "run-gpu-checks.sh: all steps passed" >&2
