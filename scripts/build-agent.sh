#!/usr/bin/env bash
# Builds the session agent as a static executable for this machine's architecture and puts
# it beside the addon (`container-isolation-agent.linux-<arch>`), where the addon looks
# for it; `--release-dir DIR` copies it there too (a per-platform npm package).
set -euo pipefail
cd "$(dirname "$0")/.."

case "$(uname -m)" in
  x86_64) target=x86_64-unknown-linux-gnu; arch=x64 ;;
  aarch64) target=aarch64-unknown-linux-gnu; arch=arm64 ;;
  *) echo "[agent] no agent build for $(uname -m)" >&2; exit 0 ;;
esac
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -q \
  -p container-isolation-agent --target "$target" --target-dir target/agent
built="target/agent/$target/release/container-isolation-agent"
name="container-isolation-agent.linux-$arch"
# Replaced by rename, so a running container's bind mount keeps the old file.
cp "$built" ".$name.tmp" && mv -f ".$name.tmp" "$name"
if [ "${1:-}" = --release-dir ] && [ -n "${2:-}" ]; then
  cp "$built" "$2/.$name.tmp" && mv -f "$2/.$name.tmp" "$2/$name"
fi
