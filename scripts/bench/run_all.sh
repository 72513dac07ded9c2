#!/usr/bin/env bash
# Runs every benchmark of the standard workloads (docs/performance.md) on this machine and writes
# results/bench-<date>/results.md (tables) and *.png (plots):
#   - the one-process peers script PEERS_PY (NumPy, PyTorch, TensorFlow, memcpy; it is not in
#     this repository: the default is a peers.py beside the checkout) at 1 and 2 threads, with
#     Debian's python3 (NumPy + PyTorch) and with TensorFlow's python
#   - shardops_bench at 1, 2 and 4 ranks (4 is oversubscribed on a 2-core machine)
#   - petsc_sf_bench (PETSc PetscSF) at 1, 2 and 4 ranks, if it was built
#   - tpetra_bench (Trilinos Tpetra Export/Import) at 1, 2 and 4 ranks, if it was built
#   - shardops_bench at smaller sizes (1 and 2 ranks) for the scaling plot
# On a fresh machine, scripts/bench/setup-peers.sh installs all of them first.
#
# Usage: scripts/bench/run_all.sh [--quick] [--no-build] [--thp] [--out DIR]
#   --quick     smaller sizes and fewer repeats: checks the pipeline, numbers mean little
#   --no-build  use the existing build (default: configure + build BUILD_DIR first)
#   --thp       every program (peers too) with GLIBC_TUNABLES=glibc.malloc.hugetlb=1: large
#               allocations get transparent huge pages, so fresh buffers fault in fewer pages
# Environment: BUILD_DIR (default build-bench), PEERS_PY (default ../shared/bench/peers.py),
#   TF_PYTHON (default /opt/tfvenv/bin/python, else .venv-tf/bin/python), DEBIAN_PYTHON (/usr/bin/python3).
#
# Timings on a shared machine are noisy: the script logs `uptime` before every step
# into env.txt, and results.md quotes the worst load seen. Measure when load < 1.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$REPO/build-bench}
OUT=$REPO/results/bench-$(date +%Y-%m-%d)
QUICK=0
BUILD=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) QUICK=1 ;;
    --no-build) BUILD=0 ;;
    --thp) export GLIBC_TUNABLES=glibc.malloc.hugetlb=1 ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "run_all.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

PEERS_PY=${PEERS_PY:-$REPO/../shared/bench/peers.py}
DEBIAN_PYTHON=${DEBIAN_PYTHON:-/usr/bin/python3}
if [[ -z ${TF_PYTHON:-} ]]; then
  for p in /opt/tfvenv/bin/python "$REPO/.venv-tf/bin/python"; do
    if [[ -x $p ]]; then TF_PYTHON=$p; break; fi
  done
fi

# Open MPI on one machine, as root: ob1 only (no other transport starts up), and more ranks
# than cores for np=4.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
export OMP_NUM_THREADS=1
export GLIBC_TUNABLES=${GLIBC_TUNABLES:-}

mkdir -p "$OUT"
ENV_LOG=$OUT/env.txt
: > "$ENV_LOG"
note() { echo "$(date +%T) $* | $(uptime | sed 's/.*load average: /load /')" | tee -a "$ENV_LOG" >&2; }

{
  echo "# machine"
  lscpu | grep -E 'Model name|^CPU\(s\)|Thread|L2|L3' || true
  free -g | head -2
  echo "# git $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$REPO" diff --quiet 2>/dev/null || echo ' (dirty tree)')"
  echo "# mode $([[ $QUICK == 1 ]] && echo quick || echo full)"
  echo "# GLIBC_TUNABLES=${GLIBC_TUNABLES:-}"
} >> "$ENV_LOG"

if [[ $BUILD == 1 ]]; then
  note "build $BUILD_DIR"
  cmake -S "$REPO" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DSHARDOPS_ENABLE_TESTS=OFF -DSHARDOPS_ENABLE_APP=OFF \
    -DSHARDOPS_ENABLE_BENCHMARKS=ON > "$OUT/build.log"
  cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target shardops_bench >> "$OUT/build.log"
  cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target petsc_sf_bench >> "$OUT/build.log" 2>&1 || true
  cmake --build "$BUILD_DIR" --parallel "$(nproc)" --target tpetra_bench >> "$OUT/build.log" 2>&1 || true
fi
BENCH=$BUILD_DIR/bench/shardops_bench
PETSC=$BUILD_DIR/bench/petsc_sf_bench
TPETRA=$BUILD_DIR/bench/tpetra_bench
[[ -x $BENCH ]] || { echo "run_all.sh: $BENCH is missing (build it, or drop --no-build)" >&2; exit 1; }

if [[ $QUICK == 1 ]]; then
  SIZE=(--rows 65536 --updates 131072 --repeats 3 --warmup 1)
  SCALING_ROWS=(16384 65536)
else
  SIZE=(--rows 1048576 --updates 2097152 --repeats 7 --warmup 2)
  SCALING_ROWS=(65536 262144 1048576 4194304)
fi
mpi() {  # mpi NP PROGRAM ARGS...
  local np=$1; shift
  local extra=()
  [[ $np -gt $(nproc) ]] && extra=(--oversubscribe)
  mpirun -n "$np" "${extra[@]}" -x GLIBC_TUNABLES "$@"
}

# 1. Single-process peers (peers.py has fixed sizes: the standard workloads).
if [[ -f $PEERS_PY ]]; then
  for threads in 1 2; do
    if "$DEBIAN_PYTHON" -c 'import numpy' 2>/dev/null; then
      note "peers.py debian python, $threads thread(s)"
      OMP_NUM_THREADS=$threads "$DEBIAN_PYTHON" "$PEERS_PY" "$threads" > "$OUT/peers-debian-t$threads.txt" 2> "$OUT/peers-debian-t$threads.err" \
        || echo "peers.py (debian) failed: see $OUT/peers-debian-t$threads.err" >&2
    fi
    if [[ -n ${TF_PYTHON:-} ]]; then
      note "peers.py $TF_PYTHON, $threads thread(s)"
      OMP_NUM_THREADS=$threads TF_CPP_MIN_LOG_LEVEL=2 "$TF_PYTHON" "$PEERS_PY" "$threads" > "$OUT/peers-tf-t$threads.txt" 2> "$OUT/peers-tf-t$threads.err" \
        || echo "peers.py (tf) failed: see $OUT/peers-tf-t$threads.err" >&2
    fi
  done
else
  echo "run_all.sh: $PEERS_PY not found: no single-process peers" >&2
fi

# 2. shardops at 1, 2, 4 ranks.
for np in 1 2 4; do
  note "shardops_bench np=$np"
  mpi "$np" "$BENCH" "${SIZE[@]}" --json "$OUT/shardops-np$np.json" > "$OUT/shardops-np$np.md"
done

# 3. The distributed peers at 1, 2, 4 ranks: PETSc PetscSF and Trilinos Tpetra Export/Import.
# run_peer NAME BINARY JSON_PREFIX WHAT_IT_NEEDS
run_peer() {
  if [[ -x $2 ]]; then
    for np in 1 2 4; do
      note "$1 np=$np"
      mpi "$np" "$2" "${SIZE[@]}" --json "$OUT/$3-np$np.json" > "$OUT/$3-np$np.md"
    done
  else
    echo "run_all.sh: $1 not built (needs $4): no $3 column" >&2
  fi
}
run_peer petsc_sf_bench "$PETSC" petsc "libpetsc-real-dev"
run_peer tpetra_bench "$TPETRA" tpetra "libtrilinos-tpetra-dev, see bench/CMakeLists.txt"

# 4. Scaling with size (M = 2N), 1 and 2 ranks.
for rows in "${SCALING_ROWS[@]}"; do
  for np in 1 2; do
    note "shardops_bench scaling rows=$rows np=$np"
    mpi "$np" "$BENCH" --rows "$rows" --updates $((2 * rows)) --repeats 5 --warmup 1 \
      --json "$OUT/scaling-n$rows-np$np.json" > "$OUT/scaling-n$rows-np$np.md"
  done
done
note "done"

"$DEBIAN_PYTHON" "$REPO/scripts/bench/report.py" "$OUT"
echo "run_all.sh: wrote $OUT/results.md; paste it into docs/performance.md with: python3 scripts/bench/update_readme.py $OUT/results.md docs/performance.md"
