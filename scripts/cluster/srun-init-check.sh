#!/usr/bin/env bash
# srun-init-check.sh MPI_INIT_ONLY [STEPS] [TRANSPORT...]: how often MPI_Init crashes under
# `srun --mpi=pmix` on the namespace cluster, per Open MPI transport (transport-env.sh: ucx,
# ob1; default both). Starts the cluster's Slurm (ns-slurm.sh up), then for each transport one
# batch job of STEPS (default 80) steps of `srun -K1 --mpi=pmix MPI_INIT_ONLY`, 6 ranks, 2 per
# host: bench/tools/mpi_init_only, whose MPI_Barrier right after MPI_Init is every rank's first
# message. Prints "TRANSPORT: K of STEPS steps failed" and the first lines of a failed step's
# output. Run it under tests/cluster/with_cluster.sh (which removes the cluster afterwards):
#   bash tests/cluster/with_cluster.sh --hosts 3 --workdir /tmp/sic --limit 1500 -- \
#     bash scripts/cluster/srun-init-check.sh build/bench/mpi_init_only 80
# Crashes come with load: docs/clusters.md's counts had 3 busy loops on the 2 cores beside.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${SHARDOPS_CLUSTER_DIR:?run this under tests/cluster/with_cluster.sh}"
[ $# -ge 1 ] || {
  echo "usage: $0 MPI_INIT_ONLY [STEPS] [TRANSPORT...]" >&2
  exit 1
}
PROG=$(readlink -f "$1")
STEPS=${2:-80}
shift $(($# >= 2 ? 2 : 1))
[ $# -gt 0 ] || set -- ucx ob1
bash "$HERE/ns-slurm.sh" up
CONF=$(bash "$HERE/ns-slurm.sh" env)
OUT=$SHARDOPS_CLUSTER_DIR/srun-init-check
mkdir -p "$OUT"
cat >"$OUT/steps.sbatch" <<EOS
#!/bin/bash
failed=0
for i in \$(seq $STEPS); do
  timeout 60 srun -K1 --mpi=pmix "$PROG" >"$OUT/\$SLURM_JOB_ID.\$i.log" 2>&1 || { failed=\$((failed + 1)); echo "step \$i failed"; }
done
echo "\$failed of $STEPS steps failed"
EOS
for t in "$@"; do
  read -ra transport <<<"$(bash "$HERE/transport-env.sh" "$t")"
  "$HERE/ns-exec.sh" h1 env "$CONF" "${transport[@]}" OMPI_MCA_mpi_yield_when_idle=1 \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    sbatch --wait --parsable --nodes=3 --ntasks=6 --ntasks-per-node=2 --time=30 \
    --output="$OUT/$t.out" "$OUT/steps.sbatch" >"$OUT/$t.jobid" || true
  echo "$t: $(tail -n 1 "$OUT/$t.out")"
  first=$(sed -n 's/^step \([0-9]*\) failed$/\1/p' "$OUT/$t.out" | head -n 1)
  [ -z "$first" ] || head -n 6 "$OUT/$(cat "$OUT/$t.jobid").$first.log" | sed "s/^/  $t step $first: /"
done
