#!/usr/bin/env bash
# Open MPI's launcher agent for the namespace cluster, in ssh's place:
#   mpirun --mca plm_rsh_agent ns-rsh-agent.sh ...
# Open MPI calls it as `AGENT HOST COMMAND-STRING...` and, as with ssh, the command string is
# run by a shell on HOST. Like an ssh login, the command starts with a clean environment
# (PATH and HOME only): what the daemon needs comes on its command line, and what the ranks
# need, mpirun sends them.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 2 ] || {
  echo "usage: $0 HOST COMMAND..." >&2
  exit 1
}
host=$1
shift
exec env -i PATH="$PATH" HOME="${HOME:-/root}" SHARDOPS_CLUSTER_DIR="$SHARDOPS_CLUSTER_DIR" \
  "$HERE/ns-exec.sh" "$host" sh -c "$*"
