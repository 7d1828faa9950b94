#!/usr/bin/env bash
# `npm test`: provision the engines and offline images (idempotent), build the test cluster's
# binaries (in the background, from the start), the agent and the addon; then, side by side,
# the vitest passes (dockerd, Podman, a remote engine over TLS and ssh, the MCP clients, the
# Kubernetes cluster), the Rust tests, the type tests and the darwin checks
# (scripts/darwin-check.sh), the pack and consumer tests; last, alone, the serial suites.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says how far into the run it starts (bash's SECONDS) and how busy the machine's
# cores were since the run began (from /proc/stat): a run near 100% is bound by CPU, and only
# less work makes it shorter; one well below waits on something.
cpu_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9, $5+$6; exit}' /proc/stat; }
read -r cpu_busy0 cpu_idle0 < <(cpu_ticks)
step() {
  local busy idle
  read -r busy idle < <(cpu_ticks)
  busy=$((busy - cpu_busy0)) idle=$((idle - cpu_idle0))
  printf '\n[test] %s (at %d:%02d; cores busy %d%% so far)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)) \
    $((100 * busy / (busy + idle + 1))) >&2
}

# A CI run builds once from nothing: cargo's incremental state would only cost time to write.
[ "${CI:-}" != true ] || export CARGO_INCREMENTAL=0

step "provisioning engines and test images"
bash scripts/provision.sh
bash scripts/sweep-test-containers.sh

# The test cluster's binaries (scripts/kube-build.sh): built from the Go modules once per
# version (the longest step of a fresh machine's run, so it starts first and goes on beside
# everything else; a session of its own shares the cores evenly with the others, as the
# kubernetes pass waits for it: `nice` orders only its own compilers), 0.3 s when cached. The kubernetes pass waits for it (its status file).
mkdir -p target
kube_build_log=target/kube-build.log
step "the test cluster's binaries, in the background (log: $kube_build_log)"
kube_build_status=target/kube-build.status
rm -f "$kube_build_status"
setsid nice -n 10 bash -c 'bash scripts/kube-build.sh; echo $? >"$0"' "$kube_build_status" >"$kube_build_log" 2>&1 &
kube_build_pid=$!

# What runs in the background, each in a process group of its own (so that a failed run stops
# all of it); the darwin checks at the lowest priority.
python_mcp_pid=""
darwin_pid=""
darwin_log=target/darwin-check.log
clients_pid=""
podman_pid=""
checks_pid=""
remote_pid=""
kube_pid=""
dockerd_pid=""
package_pid=""
stop_darwin_checks() {
  for pid in "$python_mcp_pid" "$darwin_pid" "$clients_pid" "$podman_pid" "$checks_pid" "$remote_pid" "$kube_build_pid" "$kube_pid" "$dockerd_pid" "$package_pid"; do
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM -- "-$pid" 2>/dev/null || true; fi
  done
}

# No test may stop or restart the machine's dockerd (the restart suite runs a private one): its
# pid, from its pidfile (`pidof dockerd` also lists private daemons), must not change.
machine_dockerd_pid=$(cat /var/run/docker.pid) || { echo "[test] no /var/run/docker.pid after provisioning" >&2; exit 1; }
check_machine_dockerd() {
  local status=$? now
  stop_darwin_checks
  now=$(cat /var/run/docker.pid 2>/dev/null) || now=""
  if [ "$now" != "$machine_dockerd_pid" ] || [ ! -d "/proc/$machine_dockerd_pid" ]; then
    echo "[test] FAIL: the machine's dockerd changed during the tests" \
      "(pid $machine_dockerd_pid before, ${now:-none} now): a test stopped or restarted it" >&2
    exit 1
  fi
  exit "$status"
}
trap check_machine_dockerd EXIT

# The MCP client suite drives the server from the official Python SDK too, in a virtualenv
# of its own, made beside the npm install (both mostly wait on their registries).
python_mcp_log=target/python-mcp.log
python_mcp_status=target/python-mcp.status
rm -f "$python_mcp_status"
step "the Python MCP SDK for the MCP client suite (.venv-mcp), in the background (log: $python_mcp_log)"
setsid bash -c 'bash scripts/python-mcp.sh; echo $? >"$0"' "$python_mcp_status" >"$python_mcp_log" 2>&1 &
python_mcp_pid=$!

if [ ! -x node_modules/.bin/vitest ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "installing node dev dependencies"
  npm install --no-audit --no-fund --prefer-offline
fi

# In CI a failure to make the virtualenv fails the run; elsewhere that suite fails alone,
# naming the script.
wait "$python_mcp_pid" || true
cat "$python_mcp_log" >&2
if [ "$(cat "$python_mcp_status" 2>/dev/null)" != 0 ]; then
  [ "${CI:-}" != true ] || { echo "[test] FAIL: scripts/python-mcp.sh could not make .venv-mcp" >&2; exit 1; }
  echo "[test] WARNING: scripts/python-mcp.sh could not make .venv-mcp: __test__/mcp-clients.spec.ts will fail" >&2
fi

step "building the session agent (static, release), and the hostile suite's stand-ins"
bash scripts/build-agent.sh
bash scripts/build-standin-agents.sh

step "building the addon (debug)"
npx napi build --platform --no-const-enum

step "darwin checks started in the background (aarch64-apple-darwin; log: $darwin_log)"
mkdir -p target
# A session of its own is a scheduling group of its own (the kernel's autogroups), which
# shares the cores evenly with each pass (`nice` orders only its own processes): so it ends
# within the passes. Niced as a group it waited for them and then added its minutes to the run.
DARWIN_TARGETS=aarch64-apple-darwin setsid nice -n 19 bash scripts/darwin-check.sh >"$darwin_log" 2>&1 &
darwin_pid=$!

# Node's checks run beside cargo test, which keeps both cores busy only part of the time:
# the devcontainer.json conformance run against the reference CLI's readings
# (tests/devcontainer-corpus), the type tests (the hosts' interfaces also under their
# strictest settings, exactOptionalPropertyTypes) and the doc comments on every export of
# index.d.ts and lib/index.d.ts. Their output is shown after cargo test's.
checks_log=target/node-checks.log
step "conformance, type tests (tsc --noEmit) and doc comments in the background (log: $checks_log)"
setsid bash -c 'set -e
  node scripts/conformance.mjs
  npx tsc --noEmit -p .
  npx tsc --noEmit -p __test__/types/tsconfig.json
  node scripts/check-doc-comments.mjs' >"$checks_log" 2>&1 &
checks_pid=$!

# The MCP client suite mostly waits (a 70 s command, read while it runs): it runs beside the
# other passes and is waited for before the serial suites. On dockerd only, as the MCP
# server's own suites: what it tests is the host's whatever the engine.
podman_answers() { curl -sf --max-time 2 --unix-socket /run/podman/podman.sock http://engine/_ping >/dev/null 2>&1; }
clients_log=target/mcp-clients.log
step "the MCP client suite (TypeScript and Python SDKs) in the background (log: $clients_log)"
# A process group of its own, stopped with the darwin checks when the run fails.
setsid npx vitest run __test__/mcp-clients.spec.ts >"$clients_log" 2>&1 &
clients_pid=$!

# The engine-parameterised suites again, against Podman's Docker-compatible service, in the
# background beside the dockerd pass: the engines share nothing but the machine (each pass's
# egress suites take address ranges of their own, __test__/egress-net.ts), and each pass mostly
# waits on its engine. Not here, as what they test is the host's whatever the engine: the MCP
# server's suites (the MCP client suite runs on Podman) and the delivery suites of the clone's
# objects, exports and pushes (delivery.spec.ts, which reads the session's writes, stays).
ENGINE_SUITES=(__test__/engine.spec.ts __test__/runtime.spec.ts __test__/shell.spec.ts
  __test__/fileio.spec.ts __test__/workspaces.spec.ts __test__/lifecycle.spec.ts __test__/load.spec.ts
  __test__/isolation.spec.ts __test__/agent.spec.ts __test__/host-interfaces.spec.ts
  __test__/environment.spec.ts __test__/egress.spec.ts __test__/egress-requests.spec.ts
  __test__/egress-dns.spec.ts __test__/hostile-writes.spec.ts __test__/delivery.spec.ts
  __test__/features.spec.ts __test__/pull.spec.ts __test__/pull-answers.spec.ts
  __test__/engine-silence.spec.ts __test__/cli-progress.spec.ts __test__/workspaces-volume.spec.ts
  __test__/warm-pool.spec.ts __test__/compose.spec.ts __test__/checkpoint.spec.ts
  __test__/terminal.spec.ts)
podman_log=target/vitest-podman.log
if podman_answers; then
  step "vitest on podman, in the background (log: $podman_log)"
  TEST_ENGINE_SOCKET=/run/podman/podman.sock setsid npx vitest run "${ENGINE_SUITES[@]}" >"$podman_log" 2>&1 &
  podman_pid=$!
elif [ "${CI:-}" = true ]; then
  echo "[test] podman's service does not answer: the podman pass cannot run" >&2
  exit 1
fi

# vitest.remote.config.ts starts the remote-engine rig (a private dockerd and sshd in a
# network namespace of their own, scripts/remote-engine.mjs) once, runs the suites over TLS
# and over ssh side by side against it, and removes it at the end.
remote_log=target/vitest-remote.log
step "vitest on a remote engine (tls and ssh), in the background (log: $remote_log)"
setsid npx vitest run -c vitest.remote.config.ts >"$remote_log" 2>&1 &
remote_pid=$!

# The Kubernetes pass beside the others once the cluster's binaries are there: a two-node
# cluster built from them (scripts/kube-cluster.mjs), started by the config's global set-up and
# removed after; the suites run as the namespaced Role only. Its nodes' addresses are a range
# of their own (10.160-199.x.x).
kube_log=target/vitest-kubernetes.log
step "the test cluster's binaries, then vitest on a Kubernetes cluster (two nodes), in the background (log: $kube_log)"
setsid bash -c 'while [ ! -s "$0" ]; do sleep 2; done
  if [ "$(cat "$0")" != 0 ]; then echo "scripts/kube-build.sh failed:"; cat "$1"; exit 1; fi
  grep -E "^\[kube-build\] .* in [0-9]" "$1" || true
  npx vitest run -c vitest.kubernetes.config.ts' "$kube_build_status" "$kube_build_log" >"$kube_log" 2>&1 &
kube_pid=$!

# The pack test (every platform package's tarball would hold its addon and both Linux agents,
# stand-ins) and the consumer test (the packed tarballs installed into a fresh TypeScript
# project, which uses a workspace), beside the passes.
package_log=target/package-tests.log
step "the pack and consumer tests, in the background (log: $package_log)"
setsid bash -c 'set -e
  node scripts/check-packages.mjs --standins
  bash scripts/consumer-test.sh' >"$package_log" 2>&1 &
package_pid=$!

# The dockerd pass, the longest, beside the others and cargo test (whose build it overlaps).
dockerd_log=target/vitest-dockerd.log
step "vitest on dockerd, in the background (log: $dockerd_log)"
setsid npx vitest run --exclude __test__/mcp-clients.spec.ts "$@" >"$dockerd_log" 2>&1 &
dockerd_pid=$!

# For the host's triple, as `napi build --platform` builds: the addon's dependencies, compiled
# there already, are shared instead of compiled a second time into target/debug.
host_triple=$(rustc -vV | sed -n 's/^host: //p')
step "cargo test ($host_triple)"
# Without backtraces: a failure's message stays at the end of the output, where a CI log shows it.
RUST_BACKTRACE=0 CONTAINER_ISOLATION_AGENT="$PWD/container-isolation-agent.linux-x64" cargo test --target "$host_triple" --workspace --all-targets
# The .gitignore property test against git, alone (src/clone/ignore_rules_props.rs says why).
RUST_BACKTRACE=0 CONTAINER_ISOLATION_AGENT="$PWD/container-isolation-agent.linux-x64" cargo test --target "$host_triple" --lib ignore_rules::props -- --ignored --test-threads=1

step "waiting for the conformance run, the type tests and the doc comments"
checks_status=0
wait "$checks_pid" || checks_status=$?
checks_pid=""
cat "$checks_log" >&2
if [ "$checks_status" -ne 0 ]; then
  echo "[test] FAIL: the conformance run, the type tests or the doc comments failed (status $checks_status; the log above)" >&2
  exit 1
fi


# Waits for a background pass; prints its summary, or its whole log when it failed.
wait_pass() {
  local name=$1 pid=$2 log=$3 status=0
  wait "$pid" || status=$?
  if [ "$status" -ne 0 ]; then
    cat "$log" >&2
    echo "[test] FAIL: the $name pass failed (status $status; its log above, whole in $log)" >&2
    exit 1
  fi
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '(Test Files|Tests|Duration) ' >&2 || true
}
step "waiting for the dockerd pass"
wait_pass dockerd "$dockerd_pid" "$dockerd_log"
dockerd_pid=""
if [ -n "$podman_pid" ]; then
  step "waiting for the podman pass"
  wait_pass podman "$podman_pid" "$podman_log"
  podman_pid=""
fi
step "waiting for the remote pass"
wait_pass remote "$remote_pid" "$remote_log"
remote_pid=""
step "waiting for the Kubernetes pass"
wait_pass kubernetes "$kube_pid" "$kube_log"
kube_pid=""
kube_build_pid=""

# Waited for before the serial suites, whose timing comparisons need a quiet machine.
step "waiting for the MCP client suite"
clients_status=0
wait "$clients_pid" || clients_status=$?
clients_pid=""
sed 's/\x1b\[[0-9;]*m//g' "$clients_log" | grep -E '(Test Files|Tests) ' >&2 || true
if [ "$clients_status" -ne 0 ]; then
  cat "$clients_log" >&2
  echo "[test] FAIL: the MCP client suite failed (status $clients_status; its log above, whole in $clients_log)" >&2
  exit 1
fi

step "waiting for the darwin checks"
darwin_status=0
wait "$darwin_pid" || darwin_status=$?
darwin_pid=""
if [ "$darwin_status" -ne 0 ]; then
  grep -v '^ *\(Compiling\|Checking\) ' "$darwin_log" >&2 || true
  echo "[test] FAIL: the darwin checks failed (status $darwin_status; their log above, whole in $darwin_log)" >&2
  exit 1
fi
grep '^\[darwin\]' "$darwin_log" >&2

step "waiting for the pack and consumer tests"
wait_pass package "$package_pid" "$package_log"
package_pid=""

step "vitest, serial suites (a private dockerd stopped and restarted; hostile containers, alone)"
npx vitest run -c vitest.serial.config.ts
if curl -sf --max-time 2 --unix-socket /run/podman/podman.sock http://engine/_ping >/dev/null 2>&1; then
  step "vitest on podman, the hostile-container suites alone"
  TEST_ENGINE_SOCKET=/run/podman/podman.sock npx vitest run -c vitest.serial.config.ts __test__/hostile.serial.ts __test__/hostile-limits.serial.ts __test__/egress-load.serial.ts
fi


printf '\n[test] all passed in %d:%02d\n' $((SECONDS / 60)) $((SECONDS % 60)) >&2
