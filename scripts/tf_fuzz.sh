#!/usr/bin/env bash
# Long differential fuzz of shardops against TensorFlow's raw ops (tests/e2e/tf_fuzz.py),
# over several seeds. Needs a build (scripts/build.sh) and the TensorFlow venv
# (SHARDOPS_TF_VENV, default <repo>/.venv-tf). Failing cases are appended to
# tests/e2e/tf_regressions.json (--record), where test_tf_oracle.py runs them from then on.
#   scripts/tf_fuzz.sh [--seed FIRST] [--seeds K] [--cases N] [--np-list 1,2,3,4]
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${SHARDOPS_BUILD_DIR:-$REPO/build}
seed=1 seeds=3 cases=1000 np_list=1,2,3,4
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) seed=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --np-list) np_list=$2; shift 2 ;;
    *) echo "usage: $0 [--seed FIRST] [--seeds K] [--cases N] [--np-list 1,2,3,4]" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
status=0
for ((s = seed; s < seed + seeds; ++s)); do
  /usr/bin/python3 "$REPO/tests/e2e/tf_fuzz.py" --shardops "$BUILD/apps/shardops/shardops" --mpiexec mpiexec \
    --mpiexec-flags=--oversubscribe --repo "$REPO" --seed "$s" --cases "$cases" --np-list "$np_list" \
    --record "$REPO/tests/e2e/tf_regressions.json" || status=$?
done
exit "$status"
