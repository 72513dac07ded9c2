#!/usr/bin/env bash
# ns-exec.sh HOST COMMAND [ARGS...]: runs COMMAND on HOST of the namespace cluster in
# $SHARDOPS_CLUSTER_DIR (made by netns-cluster.sh): inside HOST's network namespace and a new
# UTS namespace whose host name is HOST's name (h1, h2, ...), the way a login to that node
# would, with its own temporary directory (TMPDIR=$SHARDOPS_CLUSTER_DIR/tmp/HOST), as a node
# has its own /tmp: Open MPI keeps its session directory there (TMPDIR/ompi.HOSTNAME.UID), and
# two clusters with the same host names, or two hosts, must not share one (a job's clean-up
# would remove another's files under it). HOST is a name (h2) or an address (10.251.77.12), as Open MPI passes it.
set -euo pipefail
DIR=${SHARDOPS_CLUSTER_DIR:?set SHARDOPS_CLUSTER_DIR to the directory given to netns-cluster.sh up}
[ $# -ge 2 ] || {
  echo "usage: $0 HOST COMMAND [ARGS...]" >&2
  exit 1
}
host=$1
shift
line=$(awk -v h="$host" '$1 == h || $3 == h' "$DIR/hosts")
[ -n "$line" ] || {
  echo "ns-exec: no host '$host' in $DIR/hosts" >&2
  exit 1
}
read -r name ns _ <<<"$line"
export TMPDIR=$DIR/tmp/$name
# Open MPI's shared-memory segments too (default /dev/shm, named by host name and job ID,
# which repeat from one cluster to the next): a killed host's segments go with the cluster.
export OMPI_MCA_btl_vader_backing_directory=$TMPDIR
mkdir -p "$TMPDIR"
# nsenter, not `ip netns exec`: that also remounts /sys in a mount namespace of its own, which
# hides /sys/fs/cgroup (slurmd will not start without it); only the network changes here.
exec nsenter --net="/run/netns/$ns" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
