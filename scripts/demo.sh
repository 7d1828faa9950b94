#!/usr/bin/env bash
# `npm run demo`: set this machine up (engine, offline images, dependencies, addon) and run
# the main job with the CLI: a session for a small project, a command in it, clean-up.
# examples/main-job.mjs does the same through the JavaScript API.
set -euo pipefail
cd "$(dirname "$0")/.."
PROVISION_PODMAN="${PROVISION_PODMAN:-0}" bash scripts/provision.sh
if [ ! -x node_modules/.bin/napi ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm install --no-audit --no-fund
fi
# The session agent runs each session's tools and its network relay (sessions have no
# network of their own: without the agent, `up` refuses with EGRESS_UNAVAILABLE).
bash scripts/build-agent.sh >&2
npx napi build --platform --no-const-enum >&2

export CONTAINER_ISOLATION_HOME="${CONTAINER_ISOLATION_HOME:-$(mktemp -d)}"
export CONTAINER_ISOLATION_IMAGE="${CONTAINER_ISOLATION_IMAGE:-container-isolation-test:debian}"
project=$(mktemp -d)
trap 'rm -rf "$project"' EXIT
printf 'hello from the host\n' >"$project/hello.txt"

cli() { printf '\n$ container-isolation %s\n' "$*"; node bin/container-isolation.js "$@"; }
cli doctor
cli up "$project" --session demo
cli exec demo -- sh -c 'cat hello.txt; uname -sr; echo "written in the container" > reply.txt; git status --short'
printf '\nthe project itself has: %s(no reply.txt: the session wrote to its clone)\n' "$(ls "$project" | tr '\n' ' ')"
cli ls
cli down demo
cli reap --dry-run
