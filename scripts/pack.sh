#!/usr/bin/env bash
# `npm run pack -- DIR`: the two npm tarballs a Linux machine installs, from what is built
# here: the root package, and this machine's platform package (`npm/linux-<arch>-gnu`) with
# the built addon and the session agent copied into it. Tarballs go to DIR (default
# `target/pack`); their paths are printed, root first.
# The addon is whatever `napi build` last produced (debug or release); a copy of it with
# debug sections stripped goes into the package. The agent must have been built
# (`scripts/build-agent.sh`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "[pack] no platform package for $(uname -m)" >&2; exit 1 ;;
esac
platform="linux-$arch-gnu"
addon="container-isolation.$platform.node"
agent="container-isolation-agent.linux-$arch"
out="${1:-target/pack}"
mkdir -p "$out"
out=$(cd "$out" && pwd)

for built in "$addon" "$agent"; do
  if [ ! -f "$built" ]; then
    echo "[pack] $built is missing: build it first (npx napi build --platform; scripts/build-agent.sh)" >&2
    exit 1
  fi
done

# Copied in by temporary name and renamed, so an interrupted run leaves no half file.
pkg="npm/$platform"
strip --strip-debug -o "$pkg/.$addon.tmp" "$addon"
mv -f "$pkg/.$addon.tmp" "$pkg/$addon"
cp "$agent" "$pkg/.$agent.tmp"
chmod 755 "$pkg/.$agent.tmp"
mv -f "$pkg/.$agent.tmp" "$pkg/$agent"

pack() {
  (cd "$1" && npm pack --silent --pack-destination "$out" 2>/dev/null | tail -n 1)
}
root_tgz=$(pack "$root")
platform_tgz=$(pack "$root/$pkg")
echo "$out/$root_tgz"
echo "$out/$platform_tgz"
