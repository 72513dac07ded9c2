#!/usr/bin/env bash
# with_cluster.sh --hosts N --workdir DIR [--limit SECONDS] -- COMMAND [ARGS...]
#
# Makes a namespace cluster of N hosts (scripts/cluster/netns-cluster.sh) in DIR/cluster,
# runs COMMAND with SHARDOPS_CLUSTER_DIR set (so scripts/cluster/ns-mpirun.sh runs on it) and
# removes the cluster again however COMMAND ends: every process left in its namespaces is
# killed and the namespaces (with their bridge and veths) are deleted, on success, failure,
# SIGINT/SIGTERM or when COMMAND runs past --limit (default 540 s, inside ctest's timeout so
# that this clean-up still runs). Exit: COMMAND's, 77 when namespaces cannot be made here
# (the reason is printed), 1 when the clean-up failed.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CLUSTER=$REPO/scripts/cluster/netns-cluster.sh
HOSTS=3 WORK="" LIMIT=540
while [ $# -gt 0 ]; do
  case $1 in
    --hosts) HOSTS=$2 && shift 2 ;;
    --workdir) WORK=$2 && shift 2 ;;
    --limit) LIMIT=$2 && shift 2 ;;
    --) shift && break ;;
    *)
      echo "usage: $0 --hosts N --workdir DIR [--limit SECONDS] -- COMMAND [ARGS...]" >&2
      exit 1
      ;;
  esac
done
[ -n "$WORK" ] && [ $# -gt 0 ] || {
  echo "usage: $0 --hosts N --workdir DIR [--limit SECONDS] -- COMMAND [ARGS...]" >&2
  exit 1
}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
export SHARDOPS_CLUSTER_DIR=$WORK/cluster

child=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    kill -TERM -- "-$child" 2>/dev/null || true # COMMAND's process group (setsid below)
    sleep 1
    kill -KILL -- "-$child" 2>/dev/null || true
  fi
  if ! bash "$CLUSTER" down "$SHARDOPS_CLUSTER_DIR"; then
    echo "with_cluster: the cluster in $SHARDOPS_CLUSTER_DIR could not be removed completely" >&2
    rc=1
  fi
  left=$(ip netns list 2>/dev/null | grep -c "^so-$(printf '%s' "$SHARDOPS_CLUSTER_DIR" | md5sum | cut -c1-6)-" || true)  # netns-cluster.sh's names
  if [ "$left" != 0 ]; then
    echo "with_cluster: $left namespace(s) of this cluster are still there" >&2
    rc=1
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

set +e
bash "$CLUSTER" up "$SHARDOPS_CLUSTER_DIR" "$HOSTS"
rc=$?
set -e
[ "$rc" = 0 ] || exit "$rc" # 77: cannot make namespaces here (the reason is printed)
echo "with_cluster: $HOSTS hosts up: $(awk '{printf "%s=%s ", $1, $3}' "$SHARDOPS_CLUSTER_DIR/hosts")"

# Its own process group, so that the clean-up can end COMMAND and whatever it started.
setsid timeout -k 5 "$LIMIT" "$@" &
child=$!
set +e
wait "$child"
rc=$?
set -e
child=""
[ "$rc" = 124 ] && echo "with_cluster: COMMAND ran past $LIMIT s and was stopped" >&2
exit "$rc"
