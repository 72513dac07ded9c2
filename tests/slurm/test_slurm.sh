#!/usr/bin/env bash
# ctest slurm_sbatch: the example sbatch scripts under a real Slurm. Starts a single-node
# Slurm on loopback (scripts/slurm/start-local-slurm.sh), submits with `sbatch --wait`:
#   1. scripts/slurm/shardops-example.sbatch         4 ranks, srun --mpi=pmix
#   2. scripts/slurm/shardops-example-mpirun.sbatch  2 ranks, mpirun
#   3. a job whose shardops run must fail (a dataset that is not there): sbatch --wait must
#      return shardops' exit code, 2, and the error must be printed once
# and checks exit codes, the output files (check_example.py again, here), the --report files
# and Slurm's job-completion log. The daemons it started are stopped on exit; a Slurm that
# was already running (started by start-local-slurm.sh) is used and left running.
#
# Exit 77 (ctest: skipped) when Slurm is not available and cannot be made so: not root and no
# password-less sudo, slurm-wlm not installable (offline), or a site's own slurm.conf.
#
# Usage: test_slurm.sh --shardops BIN --repo DIR --workdir DIR [--rows N]
set -euo pipefail

BIN="" REPO="" WORK="" ROWS=20000
while [ $# -gt 0 ]; do
  case $1 in
    --shardops) BIN=$2 ;;
    --repo) REPO=$2 ;;
    --workdir) WORK=$2 ;;
    --rows) ROWS=$2 ;;
    *)
      echo "usage: $0 --shardops BIN --repo DIR --workdir DIR [--rows N]" >&2
      exit 1
      ;;
  esac
  shift 2
done
REPO=${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BIN=${BIN:-$REPO/build/apps/shardops/shardops}
WORK=${WORK:-$(mktemp -d /tmp/shardops-slurm.XXXXXX)}
SLURM_SCRIPTS=$REPO/scripts/slurm
T0=$SECONDS

say() { echo "[slurm_sbatch $((SECONDS - T0))s] $*"; }
skip() {
  echo "SKIPPED: $*" >&2
  exit 77
}
failures=0
check() { # check DESCRIPTION COMMAND...: runs the command, counts a failure
  local what=$1
  shift
  if "$@"; then
    say "ok: $what"
  else
    say "FAIL: $what"
    failures=$((failures + 1))
  fi
}

[ -x "$BIN" ] || {
  echo "no shardops binary at $BIN" >&2
  exit 1
}
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO=(sudo -n); else skip "needs root or password-less sudo to start Slurm"; fi
fi

# Two of these tests (two build directories, or two people) must not share the daemons: the
# first one's exit would stop them under the second one's jobs.
LOCK=/tmp/shardops-slurm-test.lock
exec 9>>"$LOCK"
flock -w 240 9 || {
  echo "another slurm_sbatch test holds $LOCK for over 240 s" >&2
  exit 1
}

started_here=0
stop_slurm() {
  if [ "$started_here" = 1 ]; then
    say "stopping the Slurm daemons this test started"
    "${SUDO[@]}" bash "$SLURM_SCRIPTS/stop-local-slurm.sh" 9>&- || true
  fi
}
trap stop_slurm EXIT

# Whatever start-local-slurm.sh starts now, it adds to its record: this test stops it on exit.
PIDS=/run/local-slurm/pids
before=$(cat "$PIDS" 2>/dev/null || true)
set +e
"${SUDO[@]}" bash "$SLURM_SCRIPTS/start-local-slurm.sh" 9>&-
rc=$?
set -e
if [ "$(cat "$PIDS" 2>/dev/null || true)" != "$before" ]; then
  started_here=1
elif [ "$rc" = 0 ]; then
  say "Slurm (from start-local-slurm.sh) was already running: using it, and leaving it running"
fi
case $rc in
  0) ;;
  10) skip "start-local-slurm.sh could not make Slurm available here (its message is above)" ;;
  *)
    echo "start-local-slurm.sh failed (exit $rc); logs:" >&2
    tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
    exit 1
    ;;
esac
say "Slurm is up: $(sinfo -h -o '%P %a %D %t %c' | head -n 1)"

# Jobs run as the submitting user; the work directory must be theirs to write.
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
IN=$WORK/example.h5
export SHARDOPS_BIN=$BIN SHARDOPS_REPO=$REPO ROWS IN PYTHON=/usr/bin/python3
# 4 ranks on this 2-core machine (Slurm advertises 4 CPUs): waiting ranks must yield their core.
export OMPI_MCA_mpi_yield_when_idle=1
unset SLURM_JOB_ID SLURM_NTASKS SLURM_CPUS_PER_TASK # (a test run inside an allocation)

# submit NAME EXPECTED_RC SBATCH_ARGS...: sbatch --wait, job output in $WORK/NAME.out;
# prints the job's output when its exit code is not the expected one.
submit() {
  local name=$1 want=$2 rc
  shift 2
  # ctest kills the test at 300 s, too late for the EXIT trap: keep every wait inside 270 s.
  local left=$((T0 + 270 - SECONDS))
  if [ "$left" -gt 150 ]; then left=150; fi
  if [ "$left" -lt 10 ]; then
    say "$name: not submitted, less than 10 s left of the test's time"
    return 1
  fi
  say "sbatch --wait $name ($*)"
  set +e
  timeout "$left" sbatch --wait --parsable --job-name="$name" --output="$WORK/$name.out" --time=5 "$@" \
    >"$WORK/$name.jobid" 2>"$WORK/$name.sbatch-err"
  rc=$?
  set -e
  say "$name: sbatch --wait returned $rc (job $(head -n 1 "$WORK/$name.jobid" 2>/dev/null))"
  if [ "$rc" != "$want" ]; then
    echo "---- sbatch stderr:" && cat "$WORK/$name.sbatch-err"
    echo "---- job output $WORK/$name.out:" && cat "$WORK/$name.out" 2>/dev/null
    echo "----"
    return 1
  fi
}

has_datasets() { # has_datasets FILE: the example's outputs are all there, with their shapes
  "$PYTHON" - "$1" "$ROWS" <<'EOF'
import sys, h5py
path, rows = sys.argv[1], int(sys.argv[2])
with h5py.File(path, "r") as f:
    want = {"restored": (rows, 16), "sums": (rows, 16), "gathered": (2 * rows, 16)}
    for name, shape in want.items():
        assert f[name].shape == shape, f"{name}: {f[name].shape} != {shape}"
    assert sorted(f["parts"].keys(), key=int) == [str(p) for p in range(16)], list(f["parts"])
    assert sum(f[f"parts/{p}"].shape[0] for p in range(16)) == rows
    assert len(f["positions"].keys()) == 16
EOF
}
reports_ok() { # reports_ok DIR JOBID NRANKS: five --report files with every phase
  "$PYTHON" - "$@" <<'EOF'
import glob, json, sys
d, job, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(glob.glob(f"{d}/report-{job}-*.json"))
assert len(files) == 5, files
for path in files:
    r = json.load(open(path))
    assert r["ranks"] == ranks, (path, r["ranks"])
    assert set(r["seconds"]) >= {"read", "validate", "route", "apply", "write", "total"}, r["seconds"]
EOF
}
# Job IDs start again at 1 when slurmctld starts fresh: read only what this test's jobs added.
JOBCOMP=/var/log/slurm/jobcomp.log
JOBCOMP_START=$(wc -l <"$JOBCOMP" 2>/dev/null || echo 0)
jobcomp() { # jobcomp JOBID STATE EXIT: Slurm's completion log has the job with that state and code
  local line
  for _ in $(seq 20); do # slurmctld writes it as the job ends, maybe just after sbatch returns
    line=$(tail -n +$((JOBCOMP_START + 1)) "$JOBCOMP" 2>/dev/null | grep "^JobId=$1 " | tail -n 1 || true)
    [ -n "$line" ] && break
    sleep 0.25
  done
  grep -q "JobState=$2 .*ExitCode=$3:0" <<<"$line" || {
    echo "jobcomp.log: ${line:-no line for job $1}"
    return 1
  }
}

# 1. srun --mpi=pmix, 4 ranks (makes the inputs)
OUT=$WORK/srun/result.h5
if OUT=$OUT submit srun4 0 --ntasks=4 "$SLURM_SCRIPTS/shardops-example.sbatch"; then
  job=$(head -n 1 srun4.jobid)
  check "srun job: output has every dataset" has_datasets "$OUT"
  check "srun job: outputs match NumPy (check_example.py)" "$PYTHON" "$REPO/scripts/check_example.py" "$IN" "$OUT" 16
  check "srun job: ran 4 ranks" grep -q "4 ranks" srun4.out
  check "srun job: --report files, every phase" reports_ok "$WORK/srun" "$job" 4
  check "srun job: where-time-goes table printed" grep -q "where time goes" srun4.out
  check "srun job: jobcomp.log says COMPLETED, exit 0" jobcomp "$job" COMPLETED 0
else
  check "srun job (shardops-example.sbatch, 4 ranks) exits 0" false
fi

# 2. mpirun, 2 ranks (reuses the inputs)
OUT=$WORK/mpirun/result.h5
if OUT=$OUT submit mpirun2 0 --ntasks=2 "$SLURM_SCRIPTS/shardops-example-mpirun.sbatch"; then
  job=$(head -n 1 mpirun2.jobid)
  check "mpirun job: output has every dataset" has_datasets "$OUT"
  check "mpirun job: outputs match NumPy (check_example.py)" "$PYTHON" "$REPO/scripts/check_example.py" "$IN" "$OUT" 16
  check "mpirun job: ran 2 ranks" grep -q "2 ranks" mpirun2.out
  check "mpirun job: --report files, every phase" reports_ok "$WORK/mpirun" "$job" 2
  check "mpirun job: jobcomp.log says COMPLETED, exit 0" jobcomp "$job" COMPLETED 0
else
  check "mpirun job (shardops-example-mpirun.sbatch, 2 ranks) exits 0" false
fi

# 2b. the mpirun job again with the same OUT: refused before any op (exit 2), the first
# job's output as it was (the scripts removed an existing OUT)
if [ -e "$OUT" ]; then
  before=$(md5sum <"$OUT")
  if OUT=$OUT submit again 2 --ntasks=1 "$SLURM_SCRIPTS/shardops-example-mpirun.sbatch"; then
    check "existing OUT: the script says so" grep -q "exists; give a new file" again.out
    check "existing OUT: left as it was" test "$(md5sum <"$OUT")" = "$before"
  else
    check "existing OUT: the script exits 2" false
  fi
fi

# 3. a job that must fail: a missing input dataset is exit code 2 on every rank
cat >fail.sbatch <<EOF
#!/bin/bash
set -euo pipefail
srun --mpi=pmix -n 2 "$BIN" gather-nd --params "$IN:/no_such_dataset" --indices "$IN:/indices" \
  --out "$WORK/fail.h5:/gathered"
echo "not reached: srun should have failed"
EOF
if submit fail 2 --ntasks=2 fail.sbatch; then
  job=$(head -n 1 fail.jobid)
  check "failing job: error names the missing dataset" grep -q "no_such_dataset" fail.out
  check "failing job: error printed once" test "$(grep -c 'shardops: error' fail.out)" = 1
  check "failing job: no output file" test ! -e "$WORK/fail.h5"
  check "failing job: the script stopped at the failure" bash -c "! grep -q 'not reached' fail.out"
  check "failing job: jobcomp.log says FAILED, exit 2" jobcomp "$job" FAILED 2
else
  check "failing job: sbatch --wait returns the job's exit code 2" false
fi

say "done: $failures failure(s)"
[ "$failures" = 0 ]
