#!/usr/bin/env bash
# Zig's C compiler for a macOS target, as the `cc` crate calls a compiler: the first argument
# is Zig's target (`aarch64-macos`); the `--target=<llvm triple>` the crate adds is dropped,
# since Zig takes its own `-target` and refuses a second one.
set -euo pipefail
zig_target=$1
shift
args=()
for arg in "$@"; do
  case "$arg" in
    --target=*) ;;
    *) args+=("$arg") ;;
  esac
done
exec python3 -m ziglang cc -target "$zig_target" "${args[@]}"
