#!/usr/bin/env bash
# ctest cluster_slurm: the example sbatch scripts of scripts/slurm on a three-node Slurm
# (scripts/cluster/ns-slurm.sh: slurmctld on h1, one slurmd per namespace host), with
# --nodes=3, run under tests/cluster/with_cluster.sh (which removes the hosts and with them
# every daemon afterwards):
#   1. shardops-example.sbatch         6 ranks, 2 per node, srun --mpi=pmix
#   2. shardops-example-mpirun.sbatch  3 ranks, 1 per node, mpirun (its daemons started by srun)
#   3. a job that must fail (a dataset that is not there): sbatch --wait returns 2
# Every job is submitted on h1 (a login there) and checked: exit code, the outputs against
# NumPy (check_example.py), ranks on every node, Slurm's completion log.
#
# Usage: test_slurm_cluster.sh SHARDOPS_BIN REPO WORKDIR [ROWS]
# Exit 77 when Slurm or munge is not installed (ns-slurm.sh's reason is printed).
set -euo pipefail

[ $# -ge 3 ] || {
  echo "usage: $0 SHARDOPS_BIN REPO WORKDIR [ROWS]" >&2
  exit 1
}
BIN=$1 REPO=$2 WORK=$3 ROWS=${4:-20000}
: "${SHARDOPS_CLUSTER_DIR:?run this under tests/cluster/with_cluster.sh}"
T0=$SECONDS
say() { echo "[cluster_slurm $((SECONDS - T0))s] $*"; }
failures=0
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then say "ok: $what"; else
    say "FAIL: $what"
    failures=$((failures + 1))
  fi
}

set +e
bash "$REPO/scripts/cluster/ns-slurm.sh" up
rc=$?
set -e
[ "$rc" = 0 ] || exit "$rc"
CONF=$(bash "$REPO/scripts/cluster/ns-slurm.sh" env)
SLURM_DIR=$SHARDOPS_CLUSTER_DIR/slurm

rm -rf "$WORK/jobs"
mkdir -p "$WORK/jobs"
cd "$WORK/jobs"
IN=$WORK/jobs/example.h5
# What the jobs get (sbatch passes the submitting environment on): UCX over TCP between the
# nodes, on the cluster's subnet only (a site with InfiniBand keeps UCX over it). Not ob1's TCP
# transport: under srun --mpi=pmix, Open MPI 4.1.4's ob1/tcp crashes rank 0 inside MPI_Init
# in a few steps in a hundred (docs/clusters.md, "srun and TCP"), with any MPI program.
read -ra transport <<<"$(bash "$REPO/scripts/cluster/transport-env.sh" ucx)"
on_h1() {
  "$REPO/scripts/cluster/ns-exec.sh" h1 env "$CONF" SHARDOPS_BIN="$BIN" SHARDOPS_REPO="$REPO" ROWS="$ROWS" \
    IN="$IN" PYTHON=/usr/bin/python3 "${transport[@]}" \
    OMPI_MCA_mpi_yield_when_idle=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$@"
}

submit() { # submit NAME EXPECTED_RC SBATCH_ARGS...
  local name=$1 want=$2 rc
  shift 2
  say "sbatch --wait $name ($*)"
  set +e
  on_h1 timeout 150 sbatch --wait --parsable --job-name="$name" --output="$WORK/jobs/$name.out" --time=5 "$@" \
    >"$name.jobid" 2>"$name.sbatch-err"
  rc=$?
  set -e
  say "$name: sbatch --wait returned $rc (job $(head -n 1 "$name.jobid" 2>/dev/null))"
  if [ "$rc" != "$want" ]; then
    echo "---- sbatch stderr:" && cat "$name.sbatch-err"
    echo "---- job output:" && cat "$name.out" 2>/dev/null
    tail -n 20 "$SLURM_DIR"/log/slurmd.h*.log
    return 1
  fi
}
jobcomp() { # jobcomp JOBID STATE EXIT NODES
  local line=""
  for _ in $(seq 20); do
    line=$(grep "^JobId=$1 " "$SLURM_DIR/log/jobcomp.log" 2>/dev/null | tail -n 1 || true)
    [ -n "$line" ] && break
    sleep 0.25
  done
  grep -q "JobState=$2 .*ExitCode=$3:0" <<<"$line" && grep -q "NodeCnt=$4 " <<<"$line" || {
    echo "jobcomp.log: ${line:-no line for job $1}"
    return 1
  }
}
# The example job's first line: "job J: N ranks on 3 node(s) (h[1-3]), ...".
ran_on() { grep -q "$2 ranks on 3 node(s) (h\[1-3\])" "$1"; }

# example_job NAME RANKS PER_NODE SCRIPT: submits the example job on 3 nodes and checks it.
example_job() {
  local name=$1 ranks=$2 per_node=$3 script=$4 out=$WORK/jobs/$1/result.h5 job
  if submit "$name" 0 --nodes=3 --ntasks="$ranks" --ntasks-per-node="$per_node" --export=ALL,OUT="$out" \
    "$REPO/scripts/slurm/$script"; then
    job=$(head -n 1 "$name.jobid")
    check "$name: $ranks ranks on h1..h3" ran_on "$name.out" "$ranks"
    check "$name: outputs match NumPy" /usr/bin/python3 "$REPO/scripts/check_example.py" "$IN" "$out" 16
    check "$name: jobcomp.log says COMPLETED on 3 nodes" jobcomp "$job" COMPLETED 0 3
  else
    check "$name ($script, --nodes=3) exits 0" false
  fi
}
example_job srun6 6 2 shardops-example.sbatch          # srun --mpi=pmix
example_job mpirun3 3 1 shardops-example-mpirun.sbatch # mpirun, its daemons started by srun

cat >fail.sbatch <<EOF
#!/bin/bash
set -euo pipefail
srun --mpi=pmix "$BIN" gather-nd --params "$IN:/no_such_dataset" --indices "$IN:/indices" --out "$WORK/jobs/fail.h5:/g"
echo "not reached: srun should have failed"
EOF
if submit fail 2 --nodes=3 --ntasks=3 fail.sbatch; then
  job=$(head -n 1 fail.jobid)
  check "failing job: error names the missing dataset, once" test "$(grep -c 'shardops: error.*no_such_dataset' fail.out)" = 1
  check "failing job: no output file" test ! -e "$WORK/jobs/fail.h5"
  check "failing job: jobcomp.log says FAILED, exit 2" jobcomp "$job" FAILED 2 3
else
  check "failing job: sbatch --wait returns the job's exit code 2" false
fi

say "done: $failures failure(s)"
[ "$failures" = 0 ]
