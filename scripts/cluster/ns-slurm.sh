#!/usr/bin/env bash
# A Slurm cluster on the namespace hosts of $SHARDOPS_CLUSTER_DIR (netns-cluster.sh up):
# slurmctld on h1, one slurmd per host (h1..hN, each in its own namespace, with its own
# address, node name, spool directory and PID file), and a munged of its own.
#
#   ns-slurm.sh up      start them; wait until every node is idle
#   ns-slurm.sh env     print the environment a shell needs to use this Slurm (SLURM_CONF=...)
# They live in the hosts' namespaces: netns-cluster.sh down ends them with everything else.
#
# Nothing is shared with a Slurm of the machine: the configuration is
# $SHARDOPS_CLUSTER_DIR/slurm/slurm.conf (SLURM_CONF, never /etc/slurm), state, spool, logs
# and PID files are under $SHARDOPS_CLUSTER_DIR/slurm, munged listens on its own socket there
# (with the machine's /etc/munge/munge.key), and the daemons' ports are those of the hosts'
# own addresses. Run the Slurm commands on a host: ns-exec.sh h1 env SLURM_CONF=... sbatch ...
#
# Exit 77 when Slurm or munge is not installed (scripts/setup.sh installs both).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DIR=${SHARDOPS_CLUSTER_DIR:?set SHARDOPS_CLUSTER_DIR to the directory given to netns-cluster.sh up}
S=$DIR/slurm
CONF=$S/slurm.conf
MUNGE_SOCKET=$S/munge/munge.socket.2

skip() {
  echo "SKIPPED: $*" >&2
  exit 77
}
fail() {
  echo "ns-slurm: FAILED: $*" >&2
  exit 1
}
on() { "$HERE/ns-exec.sh" "$@"; } # on HOST COMMAND...
slurm_on() { on "$1" env SLURM_CONF="$CONF" "${@:2}"; }

write_conf() {
  local cpus=$1 nodes
  nodes=$(awk '{printf "%s%s", sep, $1; sep=","}' "$DIR/hosts")
  {
    echo "# Written by shardops scripts/cluster/ns-slurm.sh for the namespace cluster in $DIR"
    echo "ClusterName=nscluster"
    echo "SlurmctldHost=$(awk 'NR==1{print $1 "(" $3 ")"}' "$DIR/hosts")"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=$MUNGE_SOCKET"
    echo "MpiDefault=pmix"
    # As scripts/slurm/start-local-slurm.sh (and why): no cgroups, no accounting database.
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/filetxt"
    echo "JobCompLoc=$S/log/jobcomp.log"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "SchedulerParameters=batch_sched_delay=0"
    echo "SlurmdParameters=config_overrides"
    echo "ReturnToService=2"
    echo "EnforcePartLimits=ALL"
    echo "MinJobAge=4"
    echo "MailProg=/bin/true"
    # A node that stops answering is marked DOWN after this, and its jobs are ended.
    echo "SlurmdTimeout=30"
    echo "StateSaveLocation=$S/state"
    # %n: each slurmd (one per host, all on this machine's file system) has its own.
    echo "SlurmdSpoolDir=$S/spool/%n"
    # A node's own temporary directory: srun --mpi=pmix makes /TmpFS/spmix_appdir_UID_JOB.STEP
    # on every node of a step, which collides when the nodes share one /tmp.
    echo "TmpFS=$S/tmp/%n"
    echo "SlurmctldPidFile=$S/run/slurmctld.pid"
    echo "SlurmdPidFile=$S/run/slurmd.%n.pid"
    echo "SlurmctldLogFile=$S/log/slurmctld.log"
    echo "SlurmdLogFile=$S/log/slurmd.%n.log"
    while read -r name _ addr; do
      echo "NodeName=$name NodeAddr=$addr NodeHostname=$name CPUs=$cpus Boards=1 SocketsPerBoard=1" \
        "CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN"
    done <"$DIR/hosts"
    echo "PartitionName=cluster Nodes=$nodes Default=YES MaxTime=INFINITE State=UP"
  } >"$CONF"
}

up() {
  [ "$(id -u)" = 0 ] || skip "Slurm's daemons need root here (this is uid $(id -u))"
  for c in slurmctld slurmd sbatch munged; do
    command -v "$c" >/dev/null || skip "$c is not installed (apt-get install slurm-wlm munge; scripts/setup.sh)"
  done
  [ -r /etc/munge/munge.key ] || skip "no /etc/munge/munge.key (mungekey --create)"
  rm -rf "$S" # an earlier cluster's state, logs and job IDs
  mkdir -p "$S"/{state,spool,run,log}
  # munged refuses a socket directory that others may write (or not enter), and must not run as root.
  install -d -o munge -g munge -m 0711 "$S/munge"
  on h1 runuser -u munge -- munged --socket="$MUNGE_SOCKET" --pid-file="$S/munge/munged.pid" \
    --log-file="$S/munge/munged.log" --seed-file="$S/munge/munged.seed" ||
    fail "munged did not start (see $S/munge/munged.log)"
  for _ in $(seq 50); do
    munge -S "$MUNGE_SOCKET" -n 2>/dev/null | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1 && break
    sleep 0.1
  done
  munge -S "$MUNGE_SOCKET" -n | unmunge -S "$MUNGE_SOCKET" >/dev/null || fail "munge does not work on $MUNGE_SOCKET"
  # Two CPUs per node, whatever the machine has: every host shares this machine's cores.
  write_conf 2
  slurm_on h1 slurmctld -i -c || fail "slurmctld did not start (see $S/log/slurmctld.log)"
  for _ in $(seq 100); do
    slurm_on h1 scontrol ping 2>/dev/null | grep -q 'is UP' && break
    sleep 0.1
  done
  slurm_on h1 scontrol ping | grep -q 'is UP' || fail "slurmctld does not answer (see $S/log/slurmctld.log)"
  while read -r name _ _; do
    mkdir -p "$S/spool/$name" "$S/tmp/$name"
    slurm_on "$name" slurmd -N "$name" || fail "slurmd on $name did not start (see $S/log/slurmd.$name.log)"
  done <"$DIR/hosts"
  local n idle
  n=$(wc -l <"$DIR/hosts")
  for _ in $(seq 300); do
    idle=$(slurm_on h1 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
    [ "$idle" = "$n" ] && break
    sleep 0.1
  done
  [ "$idle" = "$n" ] || fail "$idle of $n nodes idle after 30 s: $(slurm_on h1 sinfo -N 2>&1 | tr '\n' ';')"
  echo "ns-slurm: slurmctld on h1, $n slurmd idle; use: $("$0" env)"
}

case ${1:-} in
  up) up ;;
  env) echo "SLURM_CONF=$CONF" ;;
  *)
    echo "usage: $0 up | env" >&2
    exit 1
    ;;
esac
