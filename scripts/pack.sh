#!/usr/bin/env bash
# `npm run pack -- DIR`: the two npm tarballs a Linux machine installs, from what is built
# here: the root package, and this machine's platform package (`npm/linux-<arch>-gnu`) with
# the built addon and every session agent built here copied into it. Tarballs go to DIR
# (default `target/pack`); their paths are printed, root first.
# The addon is whatever `napi build` last produced (debug or release); a copy of it with
# debug sections stripped goes into the package. This machine's agent must have been built
# (`scripts/build-agent.sh`); the other architecture's can only be built on that
# architecture, so a package packed here usually lacks it (said on stderr): the released
# packages carry both (`node scripts/check-packages.mjs` checks that).
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
agents=() absent=()
for name in container-isolation-agent.linux-x64 container-isolation-agent.linux-arm64; do
  if [ -f "$name" ]; then agents+=("$name"); else absent+=("$name"); fi
done
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

# The platform tarball is made again only when the addon, an agent or its package.json
# changed since, or an agent no longer built here is to leave it (compressing 32 MB is most of
# the time this script takes).
pkg="npm/$platform"
version=$(node -p "require('./$pkg/package.json').version")
platform_tgz="container-isolation-$platform-$version.tgz"
repack=false
[ -f "$out/$platform_tgz" ] || repack=true
for input in "$addon" "${agents[@]}" "$pkg/package.json"; do
  if [ "$input" -nt "$out/$platform_tgz" ]; then repack=true; fi
done
for name in "${absent[@]}"; do
  if [ -e "$pkg/$name" ]; then rm -f "$pkg/$name"; repack=true; fi
  echo "[pack] $name is not built here (it is built on its own architecture): $platform_tgz lacks it," \
    "as a package packed on one machine does; the released packages carry both agents" >&2
done
if [ "$repack" = true ]; then
  # Copied in by temporary name and renamed, so an interrupted run leaves no half file.
  strip --strip-debug -o "$pkg/.$addon.tmp" "$addon"
  mv -f "$pkg/.$addon.tmp" "$pkg/$addon"
  for name in "${agents[@]}"; do
    cp "$name" "$pkg/.$name.tmp"
    chmod 755 "$pkg/.$name.tmp"
    mv -f "$pkg/.$name.tmp" "$pkg/$name"
  done
  [ "$(pack "$root/$pkg")" = "$platform_tgz" ] || { echo "[pack] npm pack named its tarball otherwise" >&2; exit 1; }
fi
echo "$out/$root_tgz"
echo "$out/$platform_tgz"
