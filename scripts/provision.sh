#!/usr/bin/env bash
# Provisions this machine for the tests and the demo, idempotently: the engines (dockerd,
# and Podman's Docker-compatible service unless PROVISION_PODMAN=0) and three offline
# test images, built without any registry. Quick when everything is already there.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
started=$SECONDS
log() { printf '[provision] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

PROVISION_PODMAN="${PROVISION_PODMAN:-1}"
DOCKER_SOCK=/var/run/docker.sock
PODMAN_SOCK=/run/podman/podman.sock
CACHE=/var/cache/container-isolation
IMAGES=(debian busybox noshell)
image_name() { printf 'container-isolation-test:%s' "$1"; }

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts dockerd)"

# --- packages ---------------------------------------------------------------------------
missing=()
need() { dpkg -s "$1" >/dev/null 2>&1 || missing+=("$1"); }
need docker.io; need busybox-static; need bash-static; need debootstrap; need curl
need gcc; need libc6-dev; need ca-certificates
if [ "$PROVISION_PODMAN" = 1 ]; then need podman; need catatonit; fi
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  # docker.io's postinst may fail to start a service without systemd: start it ourselves.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || apt-get install -y --no-install-recommends "${missing[@]}"
fi
# Prefer the client that ships with the daemon over any other `docker` on PATH.
DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || DOCKER="$(command -v docker)"

# --- engines ----------------------------------------------------------------------------
pings() { curl -sf --max-time 2 --unix-socket "$1" http://engine/_ping >/dev/null 2>&1; }

wait_for() { # socket seconds
  local i
  for ((i = 0; i < $2 * 10; i++)); do pings "$1" && return 0; sleep 0.1; done
  return 1
}

if ! pings "$DOCKER_SOCK"; then
  # --live-restore keeps containers running while the daemon restarts (the restart test).
  log "starting dockerd (log: /var/log/dockerd.log)"
  nohup setsid /usr/sbin/dockerd --live-restore >/var/log/dockerd.log 2>&1 </dev/null &
  wait_for "$DOCKER_SOCK" 30 || { tail -n 20 /var/log/dockerd.log >&2; die "dockerd did not answer on $DOCKER_SOCK"; }
fi

podman_ok=0
if [ "$PROVISION_PODMAN" = 1 ]; then
  # This sandboxed kernel refuses Podman's default rlimits.
  conf=/etc/containers/containers.conf
  mkdir -p /etc/containers
  if [ ! -f "$conf" ]; then
    printf '[containers]\ndefault_ulimits = []\n' >"$conf"
  elif ! grep -q '^default_ulimits' "$conf"; then
    if grep -q '^\[containers\]' "$conf"; then
      sed -i '/^\[containers\]/a default_ulimits = []' "$conf"
    else
      printf '\n[containers]\ndefault_ulimits = []\n' >>"$conf"
    fi
  fi
  if ! pings "$PODMAN_SOCK"; then
    log "starting podman system service (log: /var/log/podman-service.log)"
    mkdir -p "$(dirname "$PODMAN_SOCK")"
    nohup setsid podman system service --time=0 "unix://$PODMAN_SOCK" >/var/log/podman-service.log 2>&1 </dev/null &
  fi
  if wait_for "$PODMAN_SOCK" 20; then podman_ok=1; else log "warning: podman service did not answer; see /var/log/podman-service.log"; fi
fi

# --- offline images ---------------------------------------------------------------------
have_image() { "$DOCKER" image inspect "$(image_name "$1")" >/dev/null 2>&1; }

apt_mirror() {
  # The first bookworm archive in the machine's apt sources (one-line or deb822 format).
  local uri
  uri=$(grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | grep -v security | awk '$3 == "bookworm" { print $2; exit }') || true
  if [ -z "$uri" ]; then
    uri=$(awk '
      /^URIs:/ { u = $2 } /^Suites:/ { s = $0 }
      /^$/ { if (u != "" && s ~ /bookworm( |$)/ && u !~ /security/) { print u; exit } u = ""; s = "" }
      END { if (u != "" && s ~ /bookworm( |$)/ && u !~ /security/) print u }
    ' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1) || true
  fi
  [ -n "$uri" ] || die "no bookworm mirror found in the apt sources"
  printf '%s' "$uri"
}

add_agent_user() { # rootfs shell
  local root=$1 sh=$2
  mkdir -p "$root/etc" "$root/home/agent"
  grep -q '^root:' "$root/etc/passwd" 2>/dev/null || echo "root:x:0:0:root:/root:$sh" >>"$root/etc/passwd"
  grep -q '^root:' "$root/etc/group" 2>/dev/null || echo 'root:x:0:' >>"$root/etc/group"
  grep -q '^agent:' "$root/etc/passwd" || echo "agent:x:1000:1000:agent:/home/agent:$sh" >>"$root/etc/passwd"
  grep -q '^agent:' "$root/etc/group" || echo 'agent:x:1000:' >>"$root/etc/group"
  if [ -f "$root/etc/shadow" ] && ! grep -q '^agent:' "$root/etc/shadow"; then
    echo 'agent:*:19000:0:99999:7:::' >>"$root/etc/shadow"
  fi
  mkdir -p "$root/root" "$root/tmp"
  chmod 1777 "$root/tmp"
  chown 1000:1000 "$root/home/agent"
}

import_rootfs() { # dir name cmd
  tar -C "$1" --numeric-owner -c . | "$DOCKER" import \
    --change "CMD $3" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    - "$(image_name "$2")" >/dev/null
}

work=""
cleanup() { [ -n "$work" ] && rm -rf "$work"; return 0; }
trap cleanup EXIT

build_debian() {
  mkdir -p "$CACHE"
  local tarball="$CACHE/debian-rootfs.tar"
  if [ ! -s "$tarball" ]; then
    work=$(mktemp -d)
    local mirror
    mirror=$(apt_mirror)
    log "debootstrap minbase bookworm from the apt sources' mirror (a few minutes, once)"
    debootstrap --variant=minbase --include=bash,coreutils,git,procps,ca-certificates \
      bookworm "$work/rootfs" "$mirror" >/var/log/debootstrap-test-image.log 2>&1 \
      || { tail -n 20 /var/log/debootstrap-test-image.log >&2; die "debootstrap failed"; }
    add_agent_user "$work/rootfs" /bin/bash
    rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
    tar -C "$work/rootfs" --numeric-owner -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    rm -rf "$work"; work=""
  fi
  "$DOCKER" import \
    --change 'CMD ["/bin/bash"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$tarball" "$(image_name debian)" >/dev/null
}

build_busybox() {
  work=$(mktemp -d)
  local root="$work/rootfs" applet
  mkdir -p "$root/bin"
  cp /bin/busybox "$root/bin/busybox"
  for applet in $("$root/bin/busybox" --list-full); do
    mkdir -p "$root/$(dirname "$applet")"
    [ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
  done
  add_agent_user "$root" /bin/sh
  import_rootfs "$root" busybox '["/bin/sh"]'
  rm -rf "$work"; work=""
}

build_noshell() {
  work=$(mktemp -d)
  local root="$work/rootfs"
  mkdir -p "$root"
  gcc -static -O2 -o "$root/pause" "$here/test-images/pause.c"
  add_agent_user "$root" /pause
  import_rootfs "$root" noshell '["/pause"]'
  rm -rf "$work"; work=""
}

for image in "${IMAGES[@]}"; do
  if ! have_image "$image"; then
    log "building $(image_name "$image")"
    "build_$image"
  fi
done

if [ "$podman_ok" = 1 ]; then
  for image in "${IMAGES[@]}"; do
    name=$(image_name "$image")
    if ! podman image exists "$name" 2>/dev/null; then
      log "loading $name into podman"
      "$DOCKER" save "$name" | podman load -q >/dev/null
      # `podman load` of a docker archive keeps the name as localhost/<name>; tag the plain one.
      podman image exists "$name" 2>/dev/null || podman tag "localhost/$name" "$name"
    fi
  done
fi

docker_version=$("$DOCKER" version --format '{{.Server.Version}}' 2>/dev/null || echo '?')
podman_version=unavailable
[ "$podman_ok" = 1 ] && podman_version=$(podman version --format '{{.Server.Version}}' 2>/dev/null || podman --version | awk '{print $3}')
log "ready in $((SECONDS - started)) s: docker $docker_version, podman $podman_version, images: ${IMAGES[*]}"
