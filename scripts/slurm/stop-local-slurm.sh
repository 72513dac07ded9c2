#!/usr/bin/env bash
# Stops the single-node Slurm that scripts/slurm/start-local-slurm.sh started: cancels every
# job, then sends SIGTERM to the daemons recorded in $LOCAL_SLURM_RUNDIR/pids (and only to
# those, by PID, after checking that each PID is still the process that was recorded), waits,
# and sends SIGKILL to any still there after 15 s. The daemons are signalled together: each
# takes 1-2 s to exit. A munged or Slurm that this script's partner did not start (systemd,
# a site's cluster) is left alone. Safe to run again; does nothing when nothing is recorded.
set -euo pipefail

RUNDIR=${LOCAL_SLURM_RUNDIR:-/run/local-slurm}
PIDS=$RUNDIR/pids
say() { echo "stop-local-slurm: $*"; }

if [ ! -s "$PIDS" ]; then
  say "nothing recorded in $PIDS: nothing to stop"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "stop-local-slurm: must run as root" >&2
  exit 1
fi
exec 8>"$RUNDIR/start-stop.lock"
flock -w 120 8 || {
  echo "stop-local-slurm: another start/stop-local-slurm.sh holds $RUNDIR/start-stop.lock" >&2
  exit 1
}

# PIDs from the record that are still the processes that were recorded (same start time).
live=()
names=()
while read -r name pid start; do
  [ -n "${pid:-}" ] || continue
  if [ "$(awk '{print $22}' "/proc/$pid/stat" 2>/dev/null)" = "$start" ]; then
    live+=("$pid")
    names+=("$name")
  fi
done <"$PIDS"

# Jobs first: SIGTERM to slurmd does not end running jobs (their slurmstepd lives on).
if [[ " ${names[*]} " == *" slurmctld "* ]] && command -v squeue >/dev/null; then
  jobs=$(squeue -h -o %A 2>/dev/null || true)
  if [ -n "$jobs" ]; then
    say "cancelling jobs: $(echo "$jobs" | tr '\n' ' ')"
    # shellcheck disable=SC2086
    scancel $jobs 2>/dev/null || true
    for _ in $(seq 150); do
      [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break
      sleep 0.1
    done
    left=$(squeue -h -o '%A %T' 2>/dev/null || true)
    [ -z "$left" ] || say "still in the queue after 15 s (stopping anyway): $left"
  fi
fi

if [ ${#live[@]} -gt 0 ]; then
  say "SIGTERM to ${names[*]} (PIDs ${live[*]})"
  kill -TERM "${live[@]}" 2>/dev/null || true
  for _ in $(seq 150); do
    running=()
    for pid in "${live[@]}"; do
      if [ -e "/proc/$pid" ]; then running+=("$pid"); fi
    done
    [ ${#running[@]} -eq 0 ] && break
    sleep 0.1
  done
  if [ ${#running[@]} -gt 0 ]; then
    say "SIGKILL to PIDs ${running[*]} (still running 15 s after SIGTERM)"
    kill -KILL "${running[@]}" 2>/dev/null || true
  fi
fi
: >"$PIDS"

# Job steps that outlived their jobs leave sockets in slurmd's spool; report, do not guess.
steps=$(find /var/spool/slurmd -maxdepth 1 -type s 2>/dev/null || true)
[ -z "$steps" ] || say "WARNING: job-step sockets left in /var/spool/slurmd (a slurmstepd still running?): $steps"
say "stopped"
