#!/usr/bin/env bash
# Installs Debian packages without starting any service (a package's postinst would start
# the machine's own sshd or containerd where an init system runs: only the tests' own
# daemons may run). invoke-rc.d asks policy-rc.d; 101 means "not allowed". Quiet, and
# again with the output shown when it fails.
#   scripts/apt-install.sh PACKAGE...
set -euo pipefail
[ $# -gt 0 ] || exit 0
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# apt-install.sh: no service starts during its apt-get install.\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 \
  || apt-get install -y --no-install-recommends "$@"
