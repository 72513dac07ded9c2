#!/usr/bin/env bash
# Sets up the machine, builds, and runs every test: ctest (unit, MPI at 1-4 ranks, and the
# "install" test that builds tests/consumer against an installed shardops), then the format check.
# Exits non-zero if any step fails.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SHARDOPS_BUILD_DIR:-$REPO/build}
export SHARDOPS_BUILD_DIR=$BUILD
cd "$REPO"

bash scripts/setup.sh || { echo "FAILED: setup"; exit 1; }
bash scripts/build.sh || { echo "FAILED: build"; exit 1; }

# Open MPI on a single machine, possibly as root: allow root, and use ob1 (shared memory and
# TCP): no other transport starts up, UCX or an MTL; a cluster run should keep its default.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1

failed=()
log=$BUILD/ctest.log
if ! (cd "$BUILD" && ctest --output-on-failure --parallel "$(nproc)") 2>&1 | tee "$log"; then
  failed+=(ctest)
fi
if ! cmake --build "$BUILD" --target format-check; then
  failed+=(format-check)
fi

echo
echo "== test.sh summary"
grep -E 'tests passed|tests failed' "$log" | tail -n 1 || echo "ctest printed no summary (see $log)"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all passed (ctest, format-check)"
