#!/usr/bin/env bash
# Provisions this machine for the tests and the demo, idempotently: the engines (dockerd,
# and Podman's Docker-compatible service unless PROVISION_PODMAN=0) and five offline
# test images, built without any registry. Quick (well under a second) when everything
# is already there.
#
# Images carry a label with a hash of the recipe that built them (the build functions
# below, pause.c, the busybox binary), so editing a recipe rebuilds that image on the
# next run. The debootstrap rootfs is cached in $CACHE/debian-rootfs-<hash>.tar, the
# services rootfs (Debian plus PostgreSQL and Redis) beside it; delete them to rebuild.
#
# Environment:
#   PROVISION_PODMAN=0        skip Podman (package, service, images); default 1
#   PROVISION_IMAGE_REPO=...  image repository name; default container-isolation-test
#   PROVISION_CACHE=...       cache directory; default /var/cache/container-isolation
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
t0=$(date +%s%N)
log() { printf '[provision] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

PROVISION_PODMAN="${PROVISION_PODMAN:-1}"
REPO="${PROVISION_IMAGE_REPO:-container-isolation-test}"
CACHE="${PROVISION_CACHE:-/var/cache/container-isolation}"
DOCKER_SOCK=/var/run/docker.sock
PODMAN_SOCK=/run/podman/podman.sock
IMAGES=(debian busybox noshell postgres redis)
RECIPE_LABEL=org.container-isolation.recipe
image_name() { printf '%s:%s' "$REPO" "$1"; }

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts dockerd)"

# One provision at a time (parallel test runs share the engines and images). Background
# daemons are started with this descriptor closed, so they do not keep the lock.
mkdir -p "$CACHE"
exec 9>"$CACHE/.provision.lock"
if ! flock -n 9; then
  log "waiting for another provision run"
  flock 9
fi

# --- packages ---------------------------------------------------------------------------
missing=()
need() { dpkg -s "$1" >/dev/null 2>&1 || missing+=("$1"); }
need docker.io; need busybox-static; need bash-static; need debootstrap; need curl
need gcc; need libc6-dev; need ca-certificates
# The egress suite's "internet": a network namespace, veth pairs, a certificate it makes.
need iproute2; need openssl
# dnsmasq: the egress-dns suite's resolver on a loopback address, which counts the queries
# the host makes (its binary only: dnsmasq-base starts no service).
need dnsmasq-base
# docker-registry: the local OCI registry the features suite publishes to; python3 makes
# the bcrypt htpasswd of its authenticated instance.
need docker-registry; need python3
# openssh-server: the push suite's SSH git server (__test__/fixtures/git-sshd.sh) and the
# remote-engine rig's sshd (scripts/remote-engine.mjs); it brings the ssh client too.
need openssh-server
# catatonit: the init process Podman injects for `--init`.
if [ "$PROVISION_PODMAN" = 1 ]; then need podman; need catatonit; fi
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  # No service may start from a postinst (openssh-server's would start the system sshd):
  # only the tests' own sshds run. Without an init system docker.io's postinst only warns
  # that it cannot start the service; dockerd is started below.
  bash "$here/scripts/apt-install.sh" "${missing[@]}"
fi
[ -x /usr/sbin/dockerd ] || die "/usr/sbin/dockerd is missing after installing docker.io"
# The client that ships with the daemon, rather than whatever `docker` is first on PATH
# (/usr/local/bin/docker may be a client of another version).
DOCKER_CLI=/usr/bin/docker
[ -x "$DOCKER_CLI" ] || DOCKER_CLI="$(command -v docker)" || die "no docker client"

# --- engines ----------------------------------------------------------------------------
pings() { curl -sf --max-time 2 --unix-socket "$1" http://engine/_ping >/dev/null 2>&1; }

wait_for() { # socket seconds
  local i
  for ((i = 0; i < $2 * 10; i++)); do pings "$1" && return 0; sleep 0.1; done
  return 1
}

if ! pings "$DOCKER_SOCK"; then
  if pgrep -x dockerd >/dev/null; then
    log "dockerd is running but does not answer yet; waiting"
  else
    log "starting dockerd (log: /var/log/dockerd.log)"
    # From /: a daemon keeps the directory it was started in, and this checkout may go.
    nohup setsid env -C / /usr/sbin/dockerd >/var/log/dockerd.log 2>&1 </dev/null 9>&- &
  fi
  wait_for "$DOCKER_SOCK" 30 || {
    tail -n 20 /var/log/dockerd.log >&2
    die "dockerd did not answer on $DOCKER_SOCK within 30 s (log: /var/log/dockerd.log)"
  }
fi

podman_ok=0
if [ "$PROVISION_PODMAN" = 1 ]; then
  # This sandboxed kernel refuses Podman's default rlimits ("error setting rlimit").
  conf=/etc/containers/containers.conf
  mkdir -p /etc/containers
  if [ ! -f "$conf" ]; then
    printf '[containers]\ndefault_ulimits = []\n' >"$conf"
  elif ! grep -qE '^[[:space:]]*default_ulimits[[:space:]]*=' "$conf"; then
    if grep -qE '^[[:space:]]*\[containers\]' "$conf"; then
      sed -i -E '0,/^[[:space:]]*\[containers\]/s//&\ndefault_ulimits = []/' "$conf"
    else
      printf '\n[containers]\ndefault_ulimits = []\n' >>"$conf"
    fi
  fi
  # A service an earlier provisioning started inside a checkout that has since been removed
  # answers pings but cannot start a container (conmon: "Failed to get working directory"):
  # it is ours, and broken, so it is started again, from /.
  for pid in $(pgrep -f "podman system service --time=0 unix://$PODMAN_SOCK$" || true); do
    if [[ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" == *" (deleted)" ]]; then
      log "restarting podman system service (its working directory was removed)"
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
      rm -f "$PODMAN_SOCK"
    fi
  done
  if ! pings "$PODMAN_SOCK"; then
    log "starting podman system service (log: /var/log/podman-service.log)"
    mkdir -p "$(dirname "$PODMAN_SOCK")"
    nohup setsid env -C / podman system service --time=0 "unix://$PODMAN_SOCK" \
      >/var/log/podman-service.log 2>&1 </dev/null 9>&- &
    if wait_for "$PODMAN_SOCK" 20; then podman_ok=1; else
      tail -n 5 /var/log/podman-service.log >&2 || true
      log "warning: podman service did not answer on $PODMAN_SOCK; continuing without podman"
    fi
  else
    podman_ok=1
  fi
fi

# The pull suite's registries listen on 127.0.0.1 and speak plain HTTP. dockerd treats
# 127.0.0.0/8 as insecure by itself; Podman is told by a registries.conf drop-in (the
# prefix covers every port). Its service caches registries.conf, so a changed drop-in is
# followed by a SIGHUP, on which it reloads its configuration files and nothing else.
if [ "$podman_ok" = 1 ]; then
  dropin=/etc/containers/registries.conf.d/50-container-isolation-loopback.conf
  wanted=$(printf '%s\n' "# Written by container-isolation's scripts/provision.sh: test registries on loopback." \
    '[[registry]]' 'location = "127.0.0.1"' 'insecure = true')
  if [ "$(cat "$dropin" 2>/dev/null)" != "$wanted" ]; then
    log "allowing plain-HTTP registries on 127.0.0.1 in podman ($dropin)"
    mkdir -p "$(dirname "$dropin")"
    printf '%s\n' "$wanted" >"$dropin.tmp" && mv -f "$dropin.tmp" "$dropin"
    for pid in $(pgrep -f "podman system service --time=0 unix://$PODMAN_SOCK$" || true); do
      kill -HUP "$pid" 2>/dev/null || true
    done
  fi
fi

# --- offline images ---------------------------------------------------------------------
apt_mirror() {
  # The first bookworm archive (not the security one) in the machine's apt sources,
  # one-line format first, then deb822 .sources files.
  local uri
  uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | sed -E 's/\[[^]]*\]//' \
    | awk '$1 == "deb" && $3 == "bookworm" && $2 !~ /security/ { print $2; exit }') || true
  if [ -z "$uri" ]; then
    uri=$(awk '
      function flush() {
        if (u != "" && s ~ /(^|[ \t])bookworm([ \t]|$)/ && u !~ /security/ && en !~ /^no/ && t ~ /(^|[ \t])deb([ \t]|$)/) { print u; found = 1; exit }
        u = ""; s = ""; en = ""; t = "deb"
      }
      BEGIN { t = "deb" }
      /^[ \t]*$/ { flush(); next }
      /^URIs:/ { u = $2 } /^Suites:/ { s = $0 } /^Enabled:/ { en = $2 } /^Types:/ { t = $0 }
      END { if (!found) flush() }
    ' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1) || true
  fi
  [ -n "$uri" ] || die "no bookworm mirror found in the apt sources"
  printf '%s' "$uri"
}

add_agent_user() { # rootfs shell
  local root=$1 sh=$2
  mkdir -p "$root/etc" "$root/root" "$root/tmp" "$root/home/agent"
  grep -qs '^root:' "$root/etc/passwd" || echo "root:x:0:0:root:/root:$sh" >>"$root/etc/passwd"
  grep -qs '^root:' "$root/etc/group" || echo 'root:x:0:' >>"$root/etc/group"
  grep -q '^agent:' "$root/etc/passwd" || echo "agent:x:1000:1000:agent:/home/agent:$sh" >>"$root/etc/passwd"
  grep -q '^agent:' "$root/etc/group" || echo 'agent:x:1000:' >>"$root/etc/group"
  if [ -f "$root/etc/shadow" ] && ! grep -q '^agent:' "$root/etc/shadow"; then
    echo 'agent:*:19000:0:99999:7:::' >>"$root/etc/shadow"
  fi
  if [ -f "$root/etc/gshadow" ] && ! grep -q '^agent:' "$root/etc/gshadow"; then
    echo 'agent:!::' >>"$root/etc/gshadow"
  fi
  chmod 700 "$root/root"
  chmod 1777 "$root/tmp"
  chown 1000:1000 "$root/home/agent"
}

import_rootfs() { # dir image cmd-json recipe
  tar -C "$1" --numeric-owner -c . | "$DOCKER_CLI" import \
    --change "CMD $3" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "LABEL $RECIPE_LABEL=$4" \
    - "$(image_name "$2")" >/dev/null
}

in_docker() { "$DOCKER_CLI" run --rm --network none "$@"; }

work=""
cleanup() {
  [ -n "$work" ] || return 0
  # debootstrap mounts /proc and /sys in its target; a failed run can leave them there.
  awk -v w="$work" 'index($2, w "/") == 1 { print $2 }' /proc/mounts | sort -r \
    | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  rm -rf --one-file-system "$work"
  work=""
}
trap cleanup EXIT
new_work() { cleanup; work=$(mktemp -d "${TMPDIR:-/var/tmp}/provision.XXXXXX"); }

# What the Debian test image holds beyond minbase; the rootfs cache is named by it.
DEBIAN_INCLUDE=bash,coreutils,git,procps,ca-certificates,curl
debian_rootfs_tar() { # cached: debootstrap runs once per machine (or per wiped cache)
  local tarball mirror
  tarball="$CACHE/debian-rootfs-$(printf '%s' "$DEBIAN_INCLUDE" | sha256sum | cut -c1-12).tar"
  [ -s "$tarball" ] && return 0
  new_work
  mirror=$(apt_mirror)
  log "debootstrap minbase bookworm from $mirror (a few minutes, once; log: /var/log/debootstrap-test-image.log)"
  debootstrap --variant=minbase --include="$DEBIAN_INCLUDE" \
    bookworm "$work/rootfs" "$mirror" >/var/log/debootstrap-test-image.log 2>&1 \
    || { tail -n 20 /var/log/debootstrap-test-image.log >&2; die "debootstrap failed"; }
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/cache/apt/"*.bin \
    "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/log/"*.log
  tar -C "$work/rootfs" --numeric-owner -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  cleanup
}

build_debian() { # recipe
  debian_rootfs_tar
  new_work
  mkdir "$work/rootfs"
  tar -C "$work/rootfs" --numeric-owner -xpf "$CACHE/debian-rootfs-$(printf '%s' "$DEBIAN_INCLUDE" | sha256sum | cut -c1-12).tar"
  add_agent_user "$work/rootfs" /bin/bash
  import_rootfs "$work/rootfs" debian '["/bin/bash"]' "$1"
  cleanup
  in_docker "$(image_name debian)" bash -c 'id agent && git --version && curl --version' >/dev/null \
    || die "$(image_name debian) does not run bash/git as built"
}

build_busybox() { # recipe
  new_work
  local root="$work/rootfs" applet
  mkdir -p "$root/bin"
  cp /bin/busybox "$root/bin/busybox"
  for applet in $("$root/bin/busybox" --list-full); do
    mkdir -p "$root/$(dirname "$applet")"
    [ -e "$root/$applet" ] || [ -L "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
  done
  add_agent_user "$root" /bin/sh
  import_rootfs "$root" busybox '["/bin/sh"]' "$1"
  cleanup
  in_docker "$(image_name busybox)" sh -c 'id agent && [ ! -e /bin/bash ]' >/dev/null \
    || die "$(image_name busybox) does not run sh as built"
}

build_noshell() { # recipe
  new_work
  local root="$work/rootfs"
  mkdir -p "$root"
  gcc -static -O2 -o "$root/pause" "$here/test-images/pause.c"
  strip "$root/pause" 2>/dev/null || true
  add_agent_user "$root" /sbin/nologin
  import_rootfs "$root" noshell '["/pause"]' "$1"
  cleanup
  in_docker "$(image_name noshell)" /pause --version >/dev/null \
    || die "$(image_name noshell): /pause does not run"
  if in_docker --entrypoint /bin/sh "$(image_name noshell)" -c true >/dev/null 2>&1; then
    die "$(image_name noshell) has a shell"
  fi
}

# The compose suites' services: the Debian rootfs plus PostgreSQL and Redis, made once (an
# apt-get install in a chroot of the cached rootfs, from the machine's own mirror) and
# cached like the rootfs. Both images are that one rootfs (one layer, stored once by each
# engine) with another command, and both carry the clients (psql, redis-cli), so either
# also serves as the application container of a compose session.
SERVICES_PACKAGES="postgresql redis-server redis-tools"
services_rootfs_tar() { # sets SERVICES_TAR to the cached tarball
  local tarball mirror root
  tarball="$CACHE/services-rootfs-$({
    echo "$DEBIAN_INCLUDE $SERVICES_PACKAGES"
    declare -f services_rootfs_tar add_agent_user
    cat "$here/test-images/postgres-entrypoint.sh"
  } | sha256sum | cut -c1-12).tar"
  if [ ! -s "$tarball" ]; then
    debian_rootfs_tar
    new_work
    root="$work/rootfs"
    mkdir "$root"
    tar -C "$root" --numeric-owner -xpf "$CACHE/debian-rootfs-$(printf '%s' "$DEBIAN_INCLUDE" | sha256sum | cut -c1-12).tar"
    mirror=$(apt_mirror)
    printf 'deb %s bookworm main\n' "$mirror" >"$root/etc/apt/sources.list"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    # No cluster from postgresql's postinst (the image's entrypoint makes its own), and no
    # service started in the chroot.
    mkdir -p "$root/etc/postgresql-common/createcluster.d"
    echo 'create_main_cluster = false' >"$root/etc/postgresql-common/createcluster.d/50-no-main.conf"
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod 755 "$root/usr/sbin/policy-rc.d"
    mount --bind /dev "$root/dev" && mount -t proc proc "$root/proc"
    log "installing $SERVICES_PACKAGES into a copy of the Debian rootfs (once; log: /var/log/services-test-image.log)"
    # shellcheck disable=SC2086 # the package list is ours, split on purpose
    chroot "$root" env DEBIAN_FRONTEND=noninteractive sh -c \
      'apt-get -o Acquire::Check-Valid-Until=false update -qq && apt-get install -y -qq --no-install-recommends "$@"' \
      sh $SERVICES_PACKAGES >/var/log/services-test-image.log 2>&1 \
      || { tail -n 20 /var/log/services-test-image.log >&2; die "apt-get install in the services rootfs failed"; }
    umount "$root/proc" "$root/dev"
    rm -f "$root/usr/sbin/policy-rc.d" "$root/etc/resolv.conf"
    rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/cache/apt/"*.bin \
      "$root/var/lib/apt/lists/"* "$root/var/log/"*.log
    install -m 755 "$here/test-images/postgres-entrypoint.sh" "$root/usr/local/bin/postgres-entrypoint"
    add_agent_user "$root" /bin/bash
    tar -C "$root" --numeric-owner -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    cleanup
  fi
  SERVICES_TAR=$tarball
}

import_services_image() { # image cmd-json recipe
  services_rootfs_tar
  "$DOCKER_CLI" import \
    --change "CMD $2" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change "LABEL $RECIPE_LABEL=$3" \
    - "$(image_name "$1")" <"$SERVICES_TAR" >/dev/null
}

build_postgres() { # recipe
  import_services_image postgres '["/usr/local/bin/postgres-entrypoint"]' "$1"
  in_docker "$(image_name postgres)" sh -c 'psql --version && redis-cli --version && pg_isready --version' >/dev/null \
    || die "$(image_name postgres) does not run psql/redis-cli as built"
}

build_redis() { # recipe
  import_services_image redis '["redis-server","--bind","127.0.0.1","--save",""]' "$1"
  in_docker "$(image_name redis)" sh -c 'redis-server --version && redis-cli --version && psql --version' >/dev/null \
    || die "$(image_name redis) does not run redis-server as built"
}

recipe() { # image -> short hash of everything that goes into it
  {
    declare -f "build_$1" add_agent_user import_rootfs
    case $1 in
      debian) echo "$DEBIAN_INCLUDE" ;;
      busybox) sha256sum </bin/busybox ;;
      noshell) cat "$here/test-images/pause.c"; gcc -dumpfullversion ;;
      postgres | redis)
        declare -f services_rootfs_tar import_services_image
        echo "$DEBIAN_INCLUDE $SERVICES_PACKAGES"
        cat "$here/test-images/postgres-entrypoint.sh" ;;
    esac
  } | sha256sum | cut -c1-16
}

built=()
for image in "${IMAGES[@]}"; do
  name=$(image_name "$image")
  want=$(recipe "$image")
  have=$("$DOCKER_CLI" image inspect -f "{{index .Config.Labels \"$RECIPE_LABEL\"}}" "$name" 2>/dev/null) || have=""
  [ "$have" = "$want" ] && continue
  old=$("$DOCKER_CLI" image inspect -f '{{.Id}}' "$name" 2>/dev/null) || old=""
  log "building $name${old:+ (recipe changed)}"
  "build_$image" "$want"
  built+=("$image")
  # The replaced image, unless a container or another tag still uses it.
  [ -z "$old" ] || "$DOCKER_CLI" rmi "$old" >/dev/null 2>&1 || true
done

# --- the same images in Podman ----------------------------------------------------------
# `docker save | podman load` keeps the image ID, so an ID mismatch means a stale copy.
# Podman stores the name as localhost/<repo>:<tag>; the short name resolves to it, in the
# CLI and in the Docker-compatible API.
podman_images() {
  local image name id pid
  for image in "${IMAGES[@]}"; do
    name=$(image_name "$image")
    id=$("$DOCKER_CLI" image inspect -f '{{.Id}}' "$name") || return 1
    pid=$(podman image inspect -f '{{.Id}}' "$name" 2>/dev/null) || pid=""
    [ "sha256:$pid" = "$id" ] && continue
    log "loading $name into podman"
    "$DOCKER_CLI" save "$name" | podman load -q >/dev/null || return 1
    [ -z "$pid" ] || podman rmi "$pid" >/dev/null 2>&1 || true
    curl -sf --max-time 5 --unix-socket "$PODMAN_SOCK" \
      "http://engine/v1.41/images/$name/json" >/dev/null || {
      log "warning: podman's Docker-compatible API does not resolve $name"
      return 1
    }
  done
}
if [ "$podman_ok" = 1 ] && ! podman_images; then
  log "warning: the test images are not (all) in podman"
  podman_ok=0
fi

docker_version=$("$DOCKER_CLI" version --format '{{.Server.Version}}' 2>/dev/null) || docker_version='?'
podman_version=unavailable
if [ "$podman_ok" = 1 ]; then
  podman_version=$(podman version --format '{{.Server.Version}}' 2>/dev/null) \
    || podman_version=$(podman --version | awk '{ print $3 }')
fi
ms=$((($(date +%s%N) - t0) / 1000000))
log "ready: docker $docker_version, podman $podman_version, images: ${IMAGES[*]}" \
  "($(printf '%d.%01d' $((ms / 1000)) $((ms % 1000 / 100))) s${built[*]:+; built ${built[*]}})"
