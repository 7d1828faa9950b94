#!/usr/bin/env bash
# Starts, stops or describes the test cluster (scripts/kube-cluster.mjs), building its
# binaries first when the cache lacks them (scripts/kube-build.sh).
#   scripts/kube-cluster.sh up|down|status|sweep [--name NAME]
set -euo pipefail
exec node "$(dirname "$0")/kube-cluster.mjs" "$@"
