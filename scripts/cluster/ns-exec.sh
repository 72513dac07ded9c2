#!/usr/bin/env bash
# ns-exec.sh HOST COMMAND [ARGS...]: runs COMMAND on HOST of the namespace cluster in
# $SHARDOPS_CLUSTER_DIR (made by netns-cluster.sh): inside HOST's network namespace and a new
# UTS namespace whose host name is HOST's name (h1, h2, ...), the way a login to that node
# would. HOST is a name (h2) or an address (10.251.77.12), as Open MPI passes it.
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
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
