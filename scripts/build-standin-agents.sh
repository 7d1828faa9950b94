#!/usr/bin/env bash
# Builds the stand-in agents of the hostile-container suite: the `standin_agent` example of
# the agent crate (static, like the agent), copied once per misbehaviour with the name of
# that misbehaviour appended as its last line (`#misbehave=NAME`), into target/standin-agents/.
set -euo pipefail
cd "$(dirname "$0")/.."

case "$(uname -m)" in
  x86_64) target=x86_64-unknown-linux-gnu ;;
  aarch64) target=aarch64-unknown-linux-gnu ;;
  *) echo "[standin] no build for $(uname -m)" >&2; exit 0 ;;
esac
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -q \
  -p container-isolation-agent --example standin_agent --target "$target" --target-dir target/agent
built="target/agent/$target/release/examples/standin_agent"
out=target/standin-agents
mkdir -p "$out"
for name in huge-frame endless-output endless-read unsolicited field-overrun silent dies-on-request listing-count; do
  { cat "$built"; printf '\n#misbehave=%s\n' "$name"; } > "$out/.$name.tmp"
  chmod 755 "$out/.$name.tmp"
  mv -f "$out/.$name.tmp" "$out/$name"
done
