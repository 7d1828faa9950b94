#!/usr/bin/env bash
# PID 1 of one test-cluster node (scripts/kube/node.mjs): started in the node's network
# namespace, in a pid and mount namespace of its own (private propagation), so that
# everything it starts dies with it and every mount it or its daemons make goes with the
# namespace. It hides the machine's runtime state from the node, then runs the node's
# containerd and keeps its kubelet running (restarted a second after it exits) unless
# <dir>/kubelet.hold exists.
#
#   node-init.sh <node dir> <kubelet> <kubelet args...>
set -euo pipefail
dir="$1" kubelet="$2"
shift 2

# The machine's /run (its containerd's sockets and runc state, /run/netns, the engines'
# sockets) is not the node's: a fresh tmpfs. /var/log and /var/lib get the node's own
# writes (pod logs, the CNI result cache) in its directory.
mount -t tmpfs -o mode=755,size=64m tmpfs /run
mkdir -p /run/containerd /run/netns
ln -s "$dir/containerd.sock" /run/containerd/containerd.sock
mkdir -p "$dir/log" "$dir/varlib/upper" "$dir/varlib/work"
mount --bind "$dir/log" /var/log
mount -t overlay overlay -o "lowerdir=/var/lib,upperdir=$dir/varlib/upper,workdir=$dir/varlib/work" /var/lib

containerd --config "$dir/containerd.toml" >>"$dir/containerd.log" 2>&1 &
containerd_pid=$!
for _ in $(seq 1 200); do
  [ -S "$dir/containerd.sock" ] && break
  kill -0 "$containerd_pid" 2>/dev/null || { echo "containerd exited" >&2; exit 1; }
  sleep 0.05
done

while kill -0 "$containerd_pid" 2>/dev/null; do
  if [ -e "$dir/kubelet.hold" ]; then
    sleep 0.2
    continue
  fi
  echo "node-init: starting kubelet" >&2
  "$kubelet" "$@" >>"$dir/kubelet.log" 2>&1 &
  echo $! >"$dir/kubelet.nspid"
  wait $! || echo "node-init: kubelet exited ($?)" >&2
  sleep 1
done
echo "node-init: containerd exited" >&2
exit 1
