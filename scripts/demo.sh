#!/usr/bin/env bash
# `npm run demo`: set this machine up (engine, offline images, dependencies, addon) and run
# the main job, a real session end to end (examples/main-job.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
PROVISION_PODMAN="${PROVISION_PODMAN:-0}" bash scripts/provision.sh
if [ ! -x node_modules/.bin/napi ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm install --no-audit --no-fund
fi
npx napi build --platform --no-const-enum >&2
node examples/main-job.mjs
