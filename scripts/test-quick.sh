#!/usr/bin/env bash
# `npm run test:quick`: the inner loop. The engines and images made sure of (idempotent),
# the agent and the addon built (debug), then the Rust unit tests, the type tests and the
# vitest suites against dockerd. Not run here (`npm test` runs them): the integration and
# in-container agent tests, the Podman and remote-engine passes, the MCP client suite, the
# serial suites, the darwin checks, the pack and consumer tests. Extra arguments go to
# vitest (a suite's path, `-t <name>`).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n[test:quick] %s\n' "$*" >&2; }

step "provisioning engines and test images"
PROVISION_PODMAN=0 bash scripts/provision.sh
[ -x node_modules/.bin/vitest ] || npm install --no-audit --no-fund

step "building the session agent and the addon (debug)"
bash scripts/build-agent.sh
bash scripts/build-standin-agents.sh
npx napi build --platform --no-const-enum

# For the host's triple, sharing the dependencies `napi build --platform` compiled.
step "cargo test --lib"
CONTAINER_ISOLATION_AGENT="$PWD/container-isolation-agent.linux-x64" cargo test --target "$(rustc -vV | sed -n 's/^host: //p')" --lib

step "type tests (tsc --noEmit)"
npx tsc --noEmit -p .
npx tsc --noEmit -p __test__/types/tsconfig.json

step "vitest on dockerd"
npx vitest run --exclude __test__/mcp-clients.spec.ts "$@"
