#!/usr/bin/env bash
# Builds the test cluster's binaries from Go modules at pinned versions and caches them
# outside the checkout; quick (well under a second) when the cache already holds them.
#
#   $KUBE_CACHE/<kubernetes version>/bin/  kube-apiserver kube-controller-manager
#                                          kube-scheduler kubelet kubectl etcd
#   $KUBE_CACHE/<kubernetes version>/cni/  tap dummy loopback host-local
#
# Each component (kubernetes, etcd, cni) is built on its own and recorded in a stamp file
# beside its binaries (its version and a hash of its build function), so changing a pin or
# a recipe rebuilds only that component. The packages the cluster needs at run time (containerd,
# runc, iproute2, openssl, util-linux) are installed with apt-get when absent.
#
# k8s.io/kubernetes cannot be `go install`ed: its go.mod points its staging modules
# (k8s.io/api, client-go, ...) at ./staging. A wrapper module requires it and replaces each
# staging module, read from that go.mod, with its published v0.<minor>.<patch> twin.
#
# Environment:
#   KUBE_CACHE=...            cache directory; default /var/cache/container-isolation/kube
#   KUBE_VERSION=...          default v1.34.4
#   ETCD_VERSION=...          default v3.6.16 (go.etcd.io/etcd/server/v3)
#   CNI_PLUGINS_VERSION=...   default v1.10.0 (github.com/containernetworking/plugins)
#   KUBE_BUILD_JOBS=...       go build -p; default 2
#   GO=...                    the go command; default go on PATH, else /usr/local/go/bin/go
# Prints the bin directory on stdout.
set -euo pipefail

KUBE_CACHE="${KUBE_CACHE:-/var/cache/container-isolation/kube}"
KUBE_VERSION="${KUBE_VERSION:-v1.34.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
CNI_PLUGINS_VERSION="${CNI_PLUGINS_VERSION:-v1.10.0}"
KUBE_BUILD_JOBS="${KUBE_BUILD_JOBS:-2}"

log() { printf '[kube-build] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
now() { date +%s; }

GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
[ -x "$GO" ] || die "no go command (set GO=...)"
[[ "$KUBE_VERSION" =~ ^v1\.([0-9]+)\.([0-9]+)$ ]] || die "KUBE_VERSION must look like v1.34.4, not $KUBE_VERSION"
STAGING_VERSION="v0.${BASH_REMATCH[1]}.${BASH_REMATCH[2]}"
KUBE_MINOR="${BASH_REMATCH[1]}"

DEST="$KUBE_CACHE/$KUBE_VERSION"
BIN="$DEST/bin"
CNI="$DEST/cni"

mkdir -p "$KUBE_CACHE"
exec 9>"$KUBE_CACHE/.build.lock"
flock -n 9 || { log "waiting for another kube-build run"; flock 9; }

# --- packages the cluster needs at run time ----------------------------------------------
missing=()
need() { dpkg -s "$1" >/dev/null 2>&1 || missing+=("$1"); }
need containerd; need runc; need iproute2; need openssl; need util-linux; need mount
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]}"
  # containerd's postinst would start the machine's containerd where an init system runs.
  bash "$(dirname "$0")/apt-install.sh" "${missing[@]}"
fi

# --- building ------------------------------------------------------------------------------
# Reproducible, small, static binaries; every module from the proxy the go command is set up
# with, checked against the checksum database as usual.
export CGO_ENABLED=0 GOFLAGS="-p=$KUBE_BUILD_JOBS -mod=mod -trimpath -buildvcs=false" GOWORK=off
# The flags above are part of each recipe. These are not, as they do not change what the
# binaries do: no DWARF at compile time (the link strips it with -w anyway), ~10% less CPU
# for a cold build.
RECIPE_FLAGS="$GOFLAGS"
GOFLAGS+=" -gcflags=all=-dwarf=false"

work=""
cleanup_work() { [ -z "$work" ] || rm -rf "$work"; work=""; }
trap cleanup_work EXIT
new_work() { cleanup_work; work="$(mktemp -d "${TMPDIR:-/tmp}/kube-build.XXXXXX")"; }

# A component's recipe: its build function and the helpers it uses, hashed.
recipe() { { declare -f "build_$1" wrapper install_out; echo "$RECIPE_FLAGS"; } | sha256sum | cut -c1-16; }

stamp_ok() { # dir component version
  [ "$(cat "$1/.$2.stamp" 2>/dev/null)" = "$3 $(recipe "$2")" ]
}

# A wrapper module in $work requiring $1@$2, with the extra go.mod lines on stdin.
wrapper() { # module version
  { printf 'module container-isolation.test/kube-build\n\ngo 1.24.0\n\nrequire %s %s\n' "$1" "$2"; cat; } >"$work/go.mod"
}

# Installs the binaries of $work/out into $1 (file by file, each replaced atomically).
install_out() { # dir component version
  mkdir -p "$1"
  local f
  for f in "$work/out"/*; do
    cp "$f" "$1/.$(basename "$f").new"
    mv -f "$1/.$(basename "$f").new" "$1/$(basename "$f")"
  done
  printf '%s %s\n' "$3" "$(recipe "$2")" >"$1/.$2.stamp"
}

build_kubernetes() {
  new_work
  local t0 gomod info date pkgs=()
  t0=$(now)
  log "kubernetes $KUBE_VERSION: fetching the module"
  gomod="$(cd "$work" && "$GO" mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')"
  info="${gomod%.mod}.info"
  [ -f "$gomod" ] || die "no go.mod for k8s.io/kubernetes@$KUBE_VERSION"
  # The staging modules: every k8s.io/* the module requires at v0.0.0.
  local staging
  staging="$(sed -n 's#^\t\(k8s\.io/[a-z0-9-]*\) v0\.0\.0$#\1#p' "$gomod" | sort -u)"
  [ "$(wc -l <<<"$staging")" -ge 20 ] || die "found only $(wc -l <<<"$staging") staging modules in $gomod"
  {
    printf '\ngodebug default=go1.24\n\nreplace (\n'
    local m
    for m in $staging; do printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"; done
    printf ')\n'
  } | wrapper k8s.io/kubernetes "$KUBE_VERSION"
  date="$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$info")"
  local v ldflags="-s -w"
  for v in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$KUBE_MINOR"
    ldflags+=" -X $v.gitTreeState=archive -X $v.buildDate=${date:-1970-01-01T00:00:00Z}"
  done
  for v in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do pkgs+=("k8s.io/kubernetes/cmd/$v"); done
  log "kubernetes $KUBE_VERSION: building ${pkgs[*]##*/} (go build -p $KUBE_BUILD_JOBS)"
  mkdir "$work/out"
  (cd "$work" && "$GO" build -tags providerless -ldflags "$ldflags" -o "$work/out/" "${pkgs[@]}")
  "$work/out/kube-apiserver" --version | grep -qx "Kubernetes $KUBE_VERSION" \
    || die "kube-apiserver reports $("$work/out/kube-apiserver" --version), not $KUBE_VERSION"
  install_out "$BIN" kubernetes "$KUBE_VERSION"
  log "kubernetes $KUBE_VERSION: built in $(( $(now) - t0 )) s"
}

build_etcd() {
  new_work
  local t0
  t0=$(now)
  log "etcd $ETCD_VERSION: building"
  wrapper go.etcd.io/etcd/server/v3 "$ETCD_VERSION" </dev/null
  mkdir "$work/out"
  (cd "$work" && "$GO" build -ldflags "-s -w" -o "$work/out/etcd" go.etcd.io/etcd/server/v3)
  "$work/out/etcd" --version | grep -q "^etcd Version: ${ETCD_VERSION#v}$" \
    || die "etcd reports $("$work/out/etcd" --version | head -1), not $ETCD_VERSION"
  install_out "$BIN" etcd "$ETCD_VERSION"
  log "etcd $ETCD_VERSION: built in $(( $(now) - t0 )) s"
}

build_cni() {
  new_work
  local t0 p="github.com/containernetworking/plugins/plugins"
  t0=$(now)
  log "CNI plugins $CNI_PLUGINS_VERSION: building"
  wrapper github.com/containernetworking/plugins "$CNI_PLUGINS_VERSION" </dev/null
  mkdir "$work/out"
  (cd "$work" && "$GO" build -ldflags "-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION" \
    -o "$work/out/" "$p/main/tap" "$p/main/dummy" "$p/main/loopback" "$p/ipam/host-local")
  install_out "$CNI" cni "$CNI_PLUGINS_VERSION"
  log "CNI plugins $CNI_PLUGINS_VERSION: built in $(( $(now) - t0 )) s"
}

stamp_ok "$BIN" kubernetes "$KUBE_VERSION" || build_kubernetes
stamp_ok "$BIN" etcd "$ETCD_VERSION" || build_etcd
stamp_ok "$CNI" cni "$CNI_PLUGINS_VERSION" || build_cni
cleanup_work
printf '%s\n' "$BIN"
