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

pack() {
  (cd "$1" && npm pack --silent --pack-destination "$out" 2>/dev/null | tail -n 1)
}
root_tgz=$(pack "$root")

# The platform tarball is made again only when the addon, the agent or its package.json
# changed since (compressing 32 MB is most of the time this script takes).
pkg="npm/$platform"
version=$(node -p "require('./$pkg/package.json').version")
platform_tgz="container-isolation-$platform-$version.tgz"
if [ ! -f "$out/$platform_tgz" ] || [ "$addon" -nt "$out/$platform_tgz" ] \
  || [ "$agent" -nt "$out/$platform_tgz" ] || [ "$pkg/package.json" -nt "$out/$platform_tgz" ]; then
  # Copied in by temporary name and renamed, so an interrupted run leaves no half file.
  strip --strip-debug -o "$pkg/.$addon.tmp" "$addon"
  mv -f "$pkg/.$addon.tmp" "$pkg/$addon"
  cp "$agent" "$pkg/.$agent.tmp"
  chmod 755 "$pkg/.$agent.tmp"
  mv -f "$pkg/.$agent.tmp" "$pkg/$agent"
  [ "$(pack "$root/$pkg")" = "$platform_tgz" ] || { echo "[pack] npm pack named its tarball otherwise" >&2; exit 1; }
fi
echo "$out/$root_tgz"
echo "$out/$platform_tgz"
