#!/usr/bin/env bash
# `npm run bench`: a release build of the addon, then every benchmark against the real engine.
set -euo pipefail
cd "$(dirname "$0")/.."
PROVISION_PODMAN=0 bash scripts/provision.sh
[ -x node_modules/.bin/napi ] || npm install --no-audit --no-fund
bash scripts/build-agent.sh >&2
npx napi build --platform --release --no-const-enum >&2
for bench in bench/fileio.mjs bench/shell.mjs bench/line.mjs bench/clone.mjs bench/egress.mjs bench/delivery.mjs bench/remote.mjs bench/pool.mjs bench/compose.mjs bench/checkpoint.mjs bench/kubernetes.mjs; do
  echo "## $bench"
  node "$bench"
  echo
done
