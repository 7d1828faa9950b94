#!/usr/bin/env bash
# The package as another project gets it: the two tarballs of `scripts/pack.sh` installed
# into a fresh TypeScript project (strict), type-checked with `tsc --noEmit`, and vitest
# tests (`scripts/consumer/`) that import the package by name and use a workspace, and
# start `npx container-isolation mcp` with the MCP SDK's client.
# Needs the addon and the agent built. A second run is quick: an unchanged platform tarball
# is reused and the npm cache has the rest. KEEP_CONSUMER=1 keeps the temporary project.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

now() { echo "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
started=$(now)

work=$(mktemp -d "${TMPDIR:-/tmp}/container-isolation-consumer.XXXXXX")
trap '[ -n "${KEEP_CONSUMER:-}" ] || rm -rf "$work"' EXIT

t=$(now)
# Packed under target/, where an unchanged platform tarball is reused on the next run.
mapfile -t tarballs < <(bash scripts/pack.sh target/consumer-pack)
[ "${#tarballs[@]}" -eq 2 ] || { echo "[consumer] scripts/pack.sh gave no tarballs" >&2; exit 1; }
pack_s=$(since "$t")

# The same tool versions this repository tests with, so the npm cache has them; the MCP
# SDK as a user writing a client installs it (for scripts/consumer/mcp.test.ts).
version() { node -p "require('./node_modules/$1/package.json').version"; }
tools=("typescript@$(version typescript)" "vitest@$(version vitest)" "@types/node@$(version @types/node)"
  "@modelcontextprotocol/sdk@$(version @modelcontextprotocol/sdk)")

project="$work/project"
mkdir "$project"
cp scripts/consumer/consumer.test.ts scripts/consumer/mcp.test.ts scripts/consumer/tsconfig.json \
  scripts/consumer/vitest.config.ts "$project/"
printf '{ "name": "consumer", "private": true, "type": "module" }\n' >"$project/package.json"
cd "$project"

t=$(now)
npm install --prefer-offline --no-audit --no-fund --loglevel=error "${tarballs[@]}" "${tools[@]}"
install_s=$(since "$t")

t=$(now)
npx tsc --noEmit -p .
tsc_s=$(since "$t")

# The agent must come from the installed platform package, not from this checkout.
t=$(now)
env -u CONTAINER_ISOLATION_AGENT npx vitest run
test_s=$(since "$t")

cd "$repo"
echo "[consumer] passed in $(since "$started") s: pack $pack_s s, npm install $install_s s," \
  "tsc $tsc_s s, vitest $test_s s"
