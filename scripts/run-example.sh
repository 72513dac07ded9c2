#!/usr/bin/env bash
# Sets up the machine, builds shardops, and runs the example job at 2 ranks:
# partition 1M rows into 16 outputs, stitch them back, scatter-add 2M updates, gather
# 2M rows — then checks every output against NumPy. Rows: EXAMPLE_ROWS (default 2^20).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
SHARDOPS_WITH_TF=0 bash scripts/setup.sh  # the example needs no TensorFlow
bash scripts/build.sh >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
BIN=${SHARDOPS_BUILD_DIR:-$REPO/build}/apps/shardops/shardops
NP=${EXAMPLE_RANKS:-2}
ROWS=${EXAMPLE_ROWS:-1048576}
P=16
DIR=$REPO/out/example
mkdir -p "$DIR"
IN=$DIR/example.h5
OUT=$DIR/result.h5
rm -f "$OUT"
/usr/bin/python3 scripts/make_example.py "$IN" --rows "$ROWS" --partitions $P
run() { mpirun -n "$NP" --oversubscribe "$BIN" "$@"; }
run dynamic-partition --data "$IN:/data" --partitions "$IN:/partition" --num-partitions $P --out "$OUT:/parts"
run dynamic-partition --data "$IN:/positions" --partitions "$IN:/partition" --num-partitions $P --out "$OUT:/positions"
idx=() dat=()
for p in $(seq 0 $((P - 1))); do idx+=("$OUT:/positions/$p"); dat+=("$OUT:/parts/$p"); done
run dynamic-stitch --indices "${idx[@]}" --data "${dat[@]}" --out "$OUT:/restored"
run scatter-nd --indices "$IN:/indices" --updates "$IN:/updates" --shape "$ROWS,16" --out "$OUT:/sums" --report "$DIR/scatter-report.json"
run gather-nd --params "$IN:/data" --indices "$IN:/indices" --out "$OUT:/gathered"
/usr/bin/python3 scripts/check_example.py "$IN" "$OUT" $P
echo "outputs: $OUT (datasets /parts/0..$((P - 1)), /positions/*, /restored, /sums, /gathered); scatter report: $DIR/scatter-report.json"
