#!/usr/bin/env bash
# `npm test`: provision the engines and offline images (idempotent), build the addon,
# then run the Rust tests, the type tests and the vitest suites against the real engine.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n[test] %s\n' "$*" >&2; }

step "provisioning engines and test images"
bash scripts/provision.sh

if [ ! -x node_modules/.bin/vitest ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "installing node dev dependencies"
  npm install --no-audit --no-fund
fi

step "building the addon (debug)"
npx napi build --platform --no-const-enum

step "cargo test"
cargo test --all-targets

step "type tests (tsc --noEmit)"
npx tsc --noEmit -p .

step "vitest"
npx vitest run "$@"

step "vitest, serial suites (restart the engine)"
npx vitest run -c vitest.serial.config.ts
