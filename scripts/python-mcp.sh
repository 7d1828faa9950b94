#!/usr/bin/env bash
# Makes .venv-mcp/, the virtualenv with the official Python MCP SDK (pinned in
# __test__/mcp-drivers/requirements.txt) that the MCP client suite's Python driver runs in.
# Idempotent and quick when it is there: a stamp holds the requirements' hash and the
# Python version, and the virtualenv is made anew (beside, then renamed over) when either
# changes. `--check` only says whether it is current (exit 1 with the reason if not).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[python-mcp] %s\n' "$*" >&2; }
venv=.venv-mcp
requirements=__test__/mcp-drivers/requirements.txt
python=${PYTHON_MCP_PYTHON:-python3}

want="$(sha256sum "$requirements" | cut -d' ' -f1) $("$python" -c 'import sys; print(sys.version.split()[0])')"
current() { [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.stamp" 2>/dev/null)" = "$want" ]; }

if [ "${1:-}" = --check ]; then
  current && exit 0
  log "$venv is missing or out of date (wanted: $(grep -v '^#' "$requirements" | xargs)): run bash scripts/python-mcp.sh"
  exit 1
fi

# One maker at a time: parallel test runs share the folder.
exec 9>".venv-mcp.lock"
flock 9
current && exit 0

t0=$(date +%s%N)
if ! "$python" -c 'import ensurepip, venv' 2>/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  log "installing python3-venv"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
fi
building="$venv.building"
rm -rf "$building"
"$python" -m venv "$building"
# Moved to its place afterwards: only `bin/python -m ...` is used, which does not depend on
# the folder's name (the console scripts' shebangs would).
# A registry that does not answer for a while (seen: minutes) is waited for, three tries apart.
for attempt in 1 2 3; do
  "$building/bin/python" -m pip install -q --disable-pip-version-check --no-input --retries 8 \
    -r "$requirements" && break
  [ "$attempt" = 3 ] && exit 1
  log "pip install failed (try $attempt of 3); trying again in 30 s"
  sleep 30
done
printf '%s\n' "$want" >"$building/.stamp"
rm -rf "$venv"
mv "$building" "$venv"
log "made $venv ($(grep -v '^#' "$requirements" | xargs)) in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
