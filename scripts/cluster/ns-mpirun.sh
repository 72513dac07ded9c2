#!/usr/bin/env bash
# ns-mpirun.sh [MPIRUN ARGS...]: mpirun on the namespace cluster in $SHARDOPS_CLUSTER_DIR
# (netns-cluster.sh up). mpirun itself runs on the first host (as on a cluster's first node
# of the allocation); the daemons on the others are started through ns-rsh-agent.sh.
#
# Without --host or --hostfile, `-n N` ranks go to the hosts in blocks of ceil(N / hosts)
# (ranks 0,1 on h1, 2,3 on h2, ... for 6 ranks on 3 hosts), the hosts named by address, so
# that Open MPI tells its own host from the others without any name service.
#
# What it sets, and why (a cluster with TCP between nodes would set the same):
#   btl self,vader,tcp            shared memory inside a host, TCP between hosts
#   btl/oob_tcp_if_include        only the cluster's subnet carries MPI and launcher traffic
#   plm_rsh_no_tree_spawn 1       mpirun starts every daemon itself (no daemon starts others)
#   oob_tcp_keepalive_*           a daemon whose host is unreachable is noticed after about
#                                 SHARDOPS_CLUSTER_KEEPALIVE + 3 x 1 s (default 5 + 3 s), and
#                                 mpirun then ends the job (Open MPI's default: 300 + 9 x 20 s)
#   -x for SHARDOPS_*, OMP_*, KOKKOS_* variables: like ssh, the agent gives remote daemons a
#                                 clean environment, and mpirun passes on only OMPI_* and -x ones
# A job-level bound (a stopped host answers keepalives) is mpirun's own --timeout or
# MPIEXEC_TIMEOUT, set by the caller; see docs/clusters.md.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DIR=${SHARDOPS_CLUSTER_DIR:?set SHARDOPS_CLUSTER_DIR to the directory given to netns-cluster.sh up}
MPIRUN=${SHARDOPS_CLUSTER_MPIRUN:-mpirun}
KEEPALIVE=${SHARDOPS_CLUSTER_KEEPALIVE:-5}
mapfile -t addrs < <(awk '{print $3}' "$DIR/hosts")
[ ${#addrs[@]} -gt 0 ] || {
  echo "ns-mpirun: no hosts in $DIR/hosts" >&2
  exit 1
}
subnet=${addrs[0]%.*}.0/24

np="" placed=0
args=("$@")
# The first -n/-np with a number is mpirun's (the program's own arguments come later).
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    -n | -np | --np) [ -z "$np" ] && [[ ${args[i + 1]:-} =~ ^[0-9]+$ ]] && np=${args[i + 1]} ;;
    --host | -host | -H | --hostfile | -hostfile | --machinefile | -machinefile) placed=1 ;;
  esac
done
hosts=()
if [ "$placed" = 0 ] && [ -n "$np" ]; then
  per=$(((np + ${#addrs[@]} - 1) / ${#addrs[@]}))
  list=""
  for a in "${addrs[@]}"; do list+="${list:+,}$a:$per"; done
  hosts=(--host "$list")
fi

forward=()
while IFS='=' read -r name _; do
  forward+=(-x "$name")
done < <(env | grep -E '^(SHARDOPS_|OMP_|KOKKOS_)[A-Za-z0-9_]*=' | grep -v '^SHARDOPS_CLUSTER_')

exec "$HERE/ns-exec.sh" "${addrs[0]}" "$MPIRUN" \
  --mca plm_rsh_agent "$HERE/ns-rsh-agent.sh" --mca plm_rsh_no_tree_spawn 1 \
  --mca pml ob1 --mca btl self,vader,tcp \
  --mca btl_tcp_if_include "$subnet" --mca oob_tcp_if_include "$subnet" \
  --mca oob_tcp_keepalive_time "$KEEPALIVE" --mca oob_tcp_keepalive_intvl 1 \
  --mca oob_tcp_keepalive_probes 3 \
  "${forward[@]}" "${hosts[@]}" "$@"
