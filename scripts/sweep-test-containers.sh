#!/usr/bin/env bash
# Removes containers that an interrupted earlier test run left behind: ours
# (managed label) with a base directory under the tests' temporary prefix that
# no longer exists. A run in progress still has its directories, so its
# containers are kept; nothing outside the tests' prefix is looked at.
set -euo pipefail

PREFIX="${TMPDIR:-/tmp}"
PREFIX="${PREFIX%/}/ci-"
LABEL=dev.container-isolation

sweep() {
  local cli=$1 format=$2 id base removed=0
  command -v "$cli" >/dev/null 2>&1 || return 0
  while read -r id base; do
    [ -n "$id" ] || continue
    case "$base" in
      "$PREFIX"*) ;;
      *) continue ;;
    esac
    [ -e "$base" ] && continue
    "$cli" rm -f -v "$id" >/dev/null 2>&1 && removed=$((removed + 1))
  done < <(timeout 20 "$cli" ps -a --filter "label=$LABEL.managed=true" --format "$format" 2>/dev/null || true)
  if [ "$removed" -gt 0 ]; then
    echo "[sweep] $cli: removed $removed container(s) left by an interrupted test run" >&2
  fi
}

# An engine that does not answer lists nothing (each listing is bounded by `timeout`).
sweep docker "{{.ID}} {{.Label \"$LABEL.base-dir\"}}"
sweep podman "{{.ID}} {{index .Labels \"$LABEL.base-dir\"}}"

# Remote-engine rigs (scripts/remote-engine.mjs) whose test process is gone: their private
# dockerd and sshd, network namespace, veth pair and directory. Live rigs are kept.
if command -v node >/dev/null 2>&1 && command -v ip >/dev/null 2>&1; then
  node "$(dirname "$0")/remote-engine.mjs" sweep || echo "[sweep] warning: the remote-engine rig sweep failed" >&2
fi

# The egress suites' test internets (__test__/egress-net.ts) whose test process is gone: the
# network namespace `ci-egress-<pid>` and its veth `cie<pid % 100000>h` on the host, whose
# addresses would otherwise keep their ranges routed here for good.
if command -v ip >/dev/null 2>&1; then
  for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^ci-egress-[0-9]+$/ {print $1}'); do
    pid=${ns#ci-egress-}
    [ -d "/proc/$pid" ] && continue
    ip netns delete "$ns" 2>/dev/null || true
    ip link delete "cie$((pid % 100000))h" 2>/dev/null || true
    echo "[sweep] removed the egress test net $ns, left by an interrupted test run" >&2
  done
fi
