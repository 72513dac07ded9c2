#!/usr/bin/env bash
# Starts a real single-node Slurm cluster on this machine, on loopback (127.0.0.1), for CI and
# for trying the sbatch scripts without a cluster. Debian 12, root, no systemd needed, no
# cgroups. Safe to run again: what is already running and configured is reused.
#
#   1. installs slurm-wlm and munge if they are missing (apt-get; needs root and a mirror)
#   2. starts munged as user munge (not root: Debian's munge directories belong to munge)
#   3. writes /etc/slurm/slurm.conf for this host (see write_conf below for the why of
#      each setting), starts slurmctld and slurmd, and waits until the node is idle
#   4. runs a one-task health-check job
#
# The daemons this script starts are recorded in $LOCAL_SLURM_RUNDIR/pids (name, PID, start
# time); scripts/slurm/stop-local-slurm.sh stops those and nothing else.
#
# Environment:
#   LOCAL_SLURM_CPUS         CPUs the node advertises (default max(4, nproc): 4-rank jobs must
#                            fit on a 2-core CI machine, or they pend forever)
#   LOCAL_SLURM_PARTITION    partition name (default debug)
#   LOCAL_SLURM_NODE         node name (default: the short hostname)
#   LOCAL_SLURM_INSTALL      1 (default): apt-get install missing packages; 0: never
#   LOCAL_SLURM_HEALTH       basic (default): run `srun -n 1 true`; none: skip
#   LOCAL_SLURM_FRESH        1 (default): start slurmctld with -c (forget old jobs)
#   LOCAL_SLURM_MIN_JOB_AGE  seconds a finished job stays visible (default 4; keeps
#                            `sbatch --wait` polling every 2 s instead of up to every 32 s)
#   LOCAL_SLURM_FORCE        1: overwrite a slurm.conf this script did not write
#   LOCAL_SLURM_RUNDIR       where the PID record lives (default /run/local-slurm)
#
# Exit codes: 0 running; 10 Slurm is not available here and this script cannot make it so
# (packages missing and not installable, not root, or a site's own slurm.conf present);
# 1 anything else (the daemons were installed but did not come up: see the logs it names).
set -euo pipefail

CPUS_DEFAULT=$(nproc)
if [ "$CPUS_DEFAULT" -lt 4 ]; then CPUS_DEFAULT=4; fi
CPUS=${LOCAL_SLURM_CPUS:-$CPUS_DEFAULT}
PARTITION=${LOCAL_SLURM_PARTITION:-debug}
NODE=${LOCAL_SLURM_NODE:-$(hostname -s 2>/dev/null || uname -n | cut -d. -f1)}
INSTALL=${LOCAL_SLURM_INSTALL:-1}
HEALTH=${LOCAL_SLURM_HEALTH:-basic}
FRESH=${LOCAL_SLURM_FRESH:-1}
MIN_JOB_AGE=${LOCAL_SLURM_MIN_JOB_AGE:-4}
FORCE=${LOCAL_SLURM_FORCE:-0}
RUNDIR=${LOCAL_SLURM_RUNDIR:-/run/local-slurm}

CONF=/etc/slurm/slurm.conf
MARKER="# Written by shardops scripts/slurm/start-local-slurm.sh"
LOGDIR=/var/log/slurm
PIDS=$RUNDIR/pids

say() { echo "start-local-slurm: $*"; }
unavailable() {
  echo "start-local-slurm: Slurm unavailable: $*" >&2
  exit 10
}
fail() {
  echo "start-local-slurm: FAILED: $*" >&2
  exit 1
}

if [ "$(id -u)" -ne 0 ]; then
  unavailable "must run as root (it installs packages and starts daemons); try sudo"
fi

# ---- 1. packages
have_all() { command -v slurmctld && command -v slurmd && command -v sbatch && command -v munged; } >/dev/null 2>&1
if ! have_all; then
  if [ "$INSTALL" != 1 ]; then
    unavailable "slurm-wlm/munge are not installed and LOCAL_SLURM_INSTALL=$INSTALL"
  fi
  say "installing slurm-wlm munge"
  export DEBIAN_FRONTEND=noninteractive
  apt=(apt-get -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends)
  log=$(mktemp /tmp/local-slurm-apt.XXXXXX.log)
  # Try from the package lists already on the machine first; update them only if that fails.
  if ! "${apt[@]}" install slurm-wlm munge >"$log" 2>&1; then
    if ! { apt-get -qq -o DPkg::Lock::Timeout=600 update && "${apt[@]}" install slurm-wlm munge; } >>"$log" 2>&1; then
      tail -n 15 "$log" >&2
      unavailable "apt-get install slurm-wlm munge failed (offline? full log: $log)"
    fi
  fi
  rm -f "$log"
  have_all || unavailable "slurm-wlm installed, but slurmctld/slurmd/sbatch/munged are not on PATH"
fi

# A real cluster's configuration is never overwritten (checked before anything starts).
if [ -e "$CONF" ] && ! grep -qF "$MARKER" "$CONF" && [ "$FORCE" != 1 ]; then
  unavailable "$CONF exists and was not written by this script (a site's Slurm?); not touching it" \
    "(LOCAL_SLURM_FORCE=1 overwrites it)"
fi

# Only one copy of this script (or of stop-local-slurm.sh) at a time.
mkdir -p "$RUNDIR"
exec 8>"$RUNDIR/start-stop.lock"
flock -w 120 8 || fail "another start/stop-local-slurm.sh holds $RUNDIR/start-stop.lock"
touch "$PIDS"

# Records a daemon this script started: name, PID, and its start time (field 22 of
# /proc/PID/stat), so that the stop script never signals a recycled PID.
record_pid() {
  local name=$1 pidfile=$2 pid=""
  for _ in $(seq 50); do
    pid=$(cat "$pidfile" 2>/dev/null || true)
    if [ -n "$pid" ] && [ -e "/proc/$pid" ]; then break; fi
    pid=""
    sleep 0.1
  done
  [ -n "$pid" ] || return 1
  local start
  start=$(awk '{print $22}' "/proc/$pid/stat")
  grep -v "^$name " "$PIDS" >"$PIDS.new" || true
  echo "$name $pid $start" >>"$PIDS.new"
  mv "$PIDS.new" "$PIDS"
}

# Starts a daemon with no inherited descriptors: a daemon holding our caller's pipe (ctest
# reads the test's output until EOF) or lock file would outlive both.
launch() {
  (
    for fd in "/proc/$BASHPID/fd"/*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
    done
    exec "$@"
  ) </dev/null >>"$LOGDIR/daemon-stdio.log" 2>&1
}
install -d "$LOGDIR"

# ---- 2. munge
munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }
if ! munge_ok; then
  # No systemd: nobody creates the runtime directory.
  install -d -o munge -g munge -m 0755 /run/munge
  key=/etc/munge/munge.key
  if [ ! -s "$key" ]; then
    say "creating $key"
    mungekey --create --keyfile="$key"
  fi
  chown munge:munge "$key"
  chmod 0400 "$key"
  rm -f /run/munge/munged.pid
  launch runuser -u munge -- /usr/sbin/munged || fail "munged did not start (see /var/log/munge/munged.log)"
  for _ in $(seq 50); do
    munge_ok && break
    sleep 0.1
  done
  munge_ok || fail "munged started but munge -n | unmunge fails (see /var/log/munge/munged.log)"
  record_pid munged /run/munge/munged.pid || fail "munged wrote no PID file"
  say "munged started"
fi

# ---- 3. slurm.conf
mem=$(slurmd -C 2>/dev/null | grep -o 'RealMemory=[0-9]*' | cut -d= -f2 || true)
mem=${mem:-1000}
new=$(mktemp)
cat >"$new" <<EOF
$MARKER; it rewrites this file on every run.
ClusterName=local
# The controller is this host, reached on loopback: Slurm never needs DNS.
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# Debian's Open MPI only talks PMIx to srun (no s1/s2 PMI components): srun --mpi=pmix.
MpiDefault=pmix
# No cgroups (containers, CI): track processes by parent, bind nothing, collect nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# No accounting database: one line per finished job (state, exit code, times) here instead.
JobCompType=jobcomp/filetxt
JobCompLoc=$LOGDIR/jobcomp.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# Batch jobs start ~0.1 s after submit instead of up to 3 s.
SchedulerParameters=batch_sched_delay=0
# Advertise CPUS=$CPUS even on fewer real cores (otherwise the node drains).
SlurmdParameters=config_overrides
ReturnToService=2
# An impossible request fails at submit time instead of pending forever.
EnforcePartLimits=ALL
# Finished jobs vanish after ${MIN_JOB_AGE} s; sbatch --wait then polls every 2 s.
MinJobAge=$MIN_JOB_AGE
MailProg=/bin/true
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOGDIR/slurmctld.log
SlurmdLogFile=$LOGDIR/slurmd.log
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$NODE CPUs=$CPUS Boards=1 SocketsPerBoard=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=$mem State=UNKNOWN
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
changed=1
if [ -e "$CONF" ] && cmp -s "$new" "$CONF"; then changed=0; fi
install -d /etc/slurm "$LOGDIR" /var/spool/slurmctld /var/spool/slurmd
if [ "$changed" = 1 ]; then
  install -m 0644 "$new" "$CONF"
  say "wrote $CONF (node $NODE, $CPUS CPUs, partition $PARTITION)"
fi
rm -f "$new"

# ---- 4. daemons
# alive NAME PIDFILE: the daemon's PID file names a live process of that name.
alive() {
  local pid
  pid=$(cat "$2" 2>/dev/null || true)
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$1" ]
}
ours() { grep -q "^$1 $(cat "$2" 2>/dev/null) " "$PIDS"; }
ctld_up() { scontrol ping 2>/dev/null | grep -q 'is UP'; }

if [ "$changed" = 1 ]; then
  for d in slurmd slurmctld; do
    if alive "$d" "/run/$d.pid"; then
      ours "$d" "/run/$d.pid" || fail "$CONF changed, but the running $d was not started by this script"
      say "configuration changed: restarting $d (running jobs are lost)"
      pid=$(cat "/run/$d.pid")
      kill -TERM "$pid"
      for _ in $(seq 150); do
        [ -e "/proc/$pid" ] || break
        sleep 0.1
      done
      [ -e "/proc/$pid" ] && kill -KILL "$pid"
    fi
  done
fi

if ! alive slurmctld /run/slurmctld.pid; then
  flags=(-i) # -i: ignore unreadable state files (first start)
  if [ "$FRESH" = 1 ]; then flags+=(-c); fi
  launch slurmctld "${flags[@]}" || fail "slurmctld did not start (see $LOGDIR/slurmctld.log)"
  record_pid slurmctld /run/slurmctld.pid || fail "slurmctld exited at once (see $LOGDIR/slurmctld.log)"
  say "slurmctld started"
fi
for _ in $(seq 100); do
  ctld_up && break
  sleep 0.1
done
ctld_up || fail "slurmctld does not answer scontrol ping (see $LOGDIR/slurmctld.log)"

if ! alive slurmd /run/slurmd.pid; then
  launch slurmd -N "$NODE" || fail "slurmd did not start (see $LOGDIR/slurmd.log)"
  record_pid slurmd /run/slurmd.pid || fail "slurmd exited at once (see $LOGDIR/slurmd.log)"
  say "slurmd started"
fi

state=""
for _ in $(seq 300); do
  state=$(sinfo -h -n "$NODE" -o %t 2>/dev/null | head -n 1)
  case $state in
    idle | mix | alloc) break ;;
    drain* | drng | down*)
      # Left over from an earlier configuration: ReturnToService=2 brings it back once
      # slurmd registers, but a drained node needs an explicit resume.
      scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true
      ;;
  esac
  sleep 0.1
done
case $state in
  idle | mix | alloc) ;;
  *) fail "node $NODE is '${state:-unknown}', not idle, after 30 s (see $LOGDIR/slurmd.log, sinfo -R)" ;;
esac
say "node $NODE is $state in partition $PARTITION"

if [ "$HEALTH" = basic ]; then
  if ! out=$(timeout 60 srun --mpi=none -n 1 -t 1 -J local-slurm-health true 2>&1); then
    echo "$out" >&2
    fail "health-check job (srun -n 1 true) failed"
  fi
  say "health-check job ran"
fi
say "ready: sinfo / sbatch / srun work; stop with scripts/slurm/stop-local-slurm.sh"
