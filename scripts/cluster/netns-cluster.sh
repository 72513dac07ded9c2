#!/usr/bin/env bash
# A cluster of N "hosts" on this one machine, made from network namespaces, for trying
# multi-node MPI runs (TCP between hosts, shared memory inside one) without a cluster.
#
#   netns-cluster.sh up DIR N [SUBNET]   make hosts h1..hN; write DIR/hosts
#   netns-cluster.sh down DIR            end every process inside them, remove them
#
# Layout: a "switch" namespace holding a bridge, and one namespace per host whose eth0 is a
# veth plugged into that bridge, with address SUBNET.(10+i)/24 (SUBNET default 10.251.77).
# Everything is created inside these namespaces (ip -n): the machine's own network, routes
# and /etc/hosts are never touched, and nothing outside the subnet can be reached from them.
# The file system is shared, like a cluster's parallel file system. Host names (UTS) are
# given per process by scripts/cluster/ns-exec.sh, which every launcher here goes through.
#
# DIR/hosts has one line per host: NAME NAMESPACE ADDRESS. DIR/namespaces lists every
# namespace made (written before each is made, so `down` removes a half-made cluster too).
# Namespaces are named so-<tag>-h<i> and so-<tag>-sw with tag = a short hash of DIR, so two
# clusters in different DIRs never collide.
#
# Exit 77 (ctest: skipped) with the reason when namespaces cannot be made here (not root, no
# iproute2, a kernel or container without veth/bridge/netns); other failures exit 1.
set -euo pipefail

usage() {
  echo "usage: $0 up DIR N [SUBNET] | down DIR" >&2
  exit 1
}
skip() {
  echo "SKIPPED: $*" >&2
  exit 77
}
[ $# -ge 2 ] || usage
CMD=$1
DIR=$2

tag_of() { printf '%s' "$(cd "$1" && pwd)" | md5sum | cut -c1-6; }

# kill_namespace_processes NS: SIGKILL every process whose network namespace is NS (the
# launcher agents, orteds, ranks, slurmds a test started in it), then wait until none is left.
kill_namespace_processes() {
  local ns=$1 pids
  for _ in $(seq 50); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] && return 0
    # shellcheck disable=SC2086  # one PID per word
    kill -KILL $pids 2>/dev/null || true
    # A SIGSTOPped process dies of SIGKILL too; a zombie goes when its parent reaps it.
    sleep 0.1
  done
  echo "netns-cluster: processes still in $ns: $(ip netns pids "$ns" | tr '\n' ' ')" >&2
  return 1
}

down() {
  local ok=0 ns
  [ -f "$DIR/namespaces" ] || return 0
  while read -r ns; do
    [ -n "$ns" ] || continue
    if ip netns list | grep -qw -- "$ns"; then
      kill_namespace_processes "$ns" || ok=1
      # Removing a namespace removes its interfaces (the veth pair goes with either end).
      ip netns del "$ns" || ok=1
    fi
  done <"$DIR/namespaces"
  # The hosts' temporary directories (ns-exec.sh's TMPDIR) go with them.
  [ "$ok" = 0 ] && rm -rf "$DIR/namespaces" "$DIR/hosts" "$DIR/tmp"
  return "$ok"
}

up() {
  local n=$1 subnet=$2 tag sw i ns addr
  [ "$(id -u)" = 0 ] || skip "network namespaces need root (this is uid $(id -u))"
  command -v ip >/dev/null || skip "no ip command (apt-get install iproute2)"
  command -v unshare >/dev/null || skip "no unshare command (util-linux)"
  mkdir -p "$DIR"
  down || true # a cluster left in DIR by an earlier run that was killed
  tag=$(tag_of "$DIR")
  sw=so-$tag-sw
  : >"$DIR/namespaces"
  : >"$DIR/hosts.new"
  echo "$sw" >>"$DIR/namespaces"
  if ! ip netns add "$sw" 2>"$DIR/netns.err"; then
    skip "cannot make a network namespace here: $(cat "$DIR/netns.err")"
  fi
  if ! ip -n "$sw" link add br0 type bridge 2>"$DIR/netns.err"; then
    down || true
    skip "cannot make a bridge inside a network namespace: $(cat "$DIR/netns.err")"
  fi
  ip -n "$sw" link set br0 up
  for i in $(seq "$n"); do
    ns=so-$tag-h$i
    addr=$subnet.$((10 + i))
    echo "$ns" >>"$DIR/namespaces"
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # The veth is made in the switch namespace and its peer moved into the host at once.
    if ! ip -n "$sw" link add "p$i" type veth peer name eth0 netns "$ns" 2>"$DIR/netns.err"; then
      down || true
      skip "cannot make a veth pair inside a network namespace: $(cat "$DIR/netns.err")"
    fi
    ip -n "$sw" link set "p$i" master br0 up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    echo "h$i $ns $addr" >>"$DIR/hosts.new"
  done
  rm -f "$DIR/netns.err"
  mv "$DIR/hosts.new" "$DIR/hosts"
  # Every host answers before anyone relies on it (the bridge's ports take a moment to
  # forward): a reachable host refuses a TCP connection to a closed port at once.
  local first
  first=$(awk 'NR==1{print $2}' "$DIR/hosts")
  for addr in $(awk '{print $3}' "$DIR/hosts"); do
    if ! ip netns exec "$first" /usr/bin/python3 -c '
import socket, sys, time
for _ in range(50):
    try:
        socket.create_connection((sys.argv[1], 9), timeout=0.5).close()
        sys.exit(0)
    except ConnectionRefusedError:
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit(1)' "$addr"; then
      echo "netns-cluster: $addr does not answer from $first" >&2
      down || true
      exit 1
    fi
  done
}

case $CMD in
  up)
    [ $# -ge 3 ] || usage
    up "$3" "${4:-10.251.77}"
    ;;
  down) down ;;
  *) usage ;;
esac
