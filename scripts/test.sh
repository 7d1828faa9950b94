#!/usr/bin/env bash
# `npm test`: provision the engines and offline images (idempotent), build the addon,
# then run the Rust tests, the type tests and the vitest suites against the real engine.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n[test] %s\n' "$*" >&2; }

step "provisioning engines and test images"
bash scripts/provision.sh
bash scripts/sweep-test-containers.sh

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

# The engine-parameterised suites again, against Podman's Docker-compatible service.
ENGINE_SUITES=(__test__/engine.spec.ts __test__/runtime.spec.ts __test__/shell.spec.ts
  __test__/fileio.spec.ts __test__/workspaces.spec.ts __test__/lifecycle.spec.ts __test__/load.spec.ts)
if curl -sf --max-time 2 --unix-socket /run/podman/podman.sock http://engine/_ping >/dev/null 2>&1; then
  step "vitest on podman"
  TEST_ENGINE_SOCKET=/run/podman/podman.sock npx vitest run "${ENGINE_SUITES[@]}"
elif [ "${CI:-}" = true ]; then
  echo "[test] podman's service does not answer: the podman pass cannot run" >&2
  exit 1
fi

step "vitest, serial suites (restart the engine)"
npx vitest run -c vitest.serial.config.ts
