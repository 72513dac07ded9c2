#!/usr/bin/env bash
# Sets up the machine, builds shardops, and runs the example job at 2 ranks: the deck
# inputs/pipeline.yaml (every op on 2^20 generated rows of 16 float32: partition into
# 16 and stitch back, scatter-sum, scatter-add and replace 2^20 rows at random targets,
# gather them), then checks every output against NumPy.
# Size: EXAMPLE_ROWS (default 1048576); ranks: EXAMPLE_RANKS (default 2).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
SHARDOPS_WITH_TF=0 bash scripts/setup.sh  # the example needs no TensorFlow
bash scripts/build.sh >/dev/null
# A single machine: allow root, and only ob1 starts (no UCX or MTL; keep the default on a cluster).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
BIN=${SHARDOPS_BUILD_DIR:-$REPO/build}/apps/shardops/shardops
NP=${EXAMPLE_RANKS:-2}
ROWS=${EXAMPLE_ROWS:-1048576}
mkdir -p out  # the report's folder (git keeps no out/: a fresh clone has none)
mpirun -n "$NP" --oversubscribe "$BIN" run inputs/pipeline.yaml --set rows="$ROWS" --set updates="$ROWS" \
  --overwrite --report out/pipeline-report.json
/usr/bin/python3 scripts/check_pipeline.py inputs/out/pipeline.h5
echo "outputs: inputs/out/pipeline.h5 (data, ids, restored, idx, upd, sums, added, updated, gathered);" \
  "per-phase times and bytes moved: out/pipeline-report.json"
