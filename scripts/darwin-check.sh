#!/usr/bin/env bash
# The darwin checks: `cargo clippy --workspace --all-targets -- -D warnings` (which type-checks
# all that `cargo check` does, and lints it) for aarch64-apple-darwin and x86_64-apple-darwin,
# the whole workspace (the agent crate too), in their own target directory (`target/darwin`).
# The C code of the build scripts (libgit2, zlib, aws-lc) is compiled by Zig (PyPI's `ziglang`)
# through `scripts/zig/`. What is missing is installed first: the Rust targets (`rustup target
# add`) and Zig (`pip install --target target/darwin/python`, outside any system Python).
# Anything that cannot be installed or fails stops the script with a non-zero status and says
# why: it never passes without having checked.
#
# DARWIN_TARGETS narrows the targets: `npm test` checks aarch64-apple-darwin alone (each target
# costs its dependencies' C and Rust compiled again, minutes of the run's two cores), which
# holds for both while the crates' code has no `target_arch` condition: the script refuses to
# check one target when it finds one.
#
# Nothing is linked: the `.node` for macOS needs Apple's SDK (the Security and
# CoreFoundation frameworks, libiconv), which no registry here serves (docs/development.md).
#
# `npm test` runs it in the background beside the engine passes (scripts/test.sh); by hand:
#   bash scripts/darwin-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

read -r -a TARGETS <<<"${DARWIN_TARGETS:-aarch64-apple-darwin x86_64-apple-darwin}"
TARGET_DIR=target/darwin
ZIG_PYTHONPATH="$PWD/$TARGET_DIR/python"

say() { printf '[darwin] %s\n' "$*"; }
fail() {
  say "FAIL: $*"
  exit 1
}

install_rust_targets() {
  command -v rustup >/dev/null || fail "no rustup: the darwin targets cannot be added"
  local installed missing=()
  installed=$(rustup target list --installed) || fail "rustup target list failed"
  for target in "${TARGETS[@]}"; do
    grep -qx "$target" <<<"$installed" || missing+=("$target")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "adding the Rust targets ${missing[*]}"
    rustup target add "${missing[@]}" || fail "rustup target add ${missing[*]} failed"
  fi
}

zig_works() { python3 -m ziglang version >/dev/null 2>&1; }

# Zig from an already importable `ziglang`, else from one installed under target/darwin.
install_zig() {
  command -v python3 >/dev/null || fail "no python3: Zig (PyPI's ziglang) cannot be installed"
  if zig_works; then
    return
  fi
  export PYTHONPATH="$ZIG_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}"
  if zig_works; then
    return
  fi
  python3 -m pip --version >/dev/null 2>&1 ||
    fail "python3 has no pip: install it (Debian: apt-get install python3-pip) for Zig"
  say "installing Zig (ziglang) into $ZIG_PYTHONPATH"
  python3 -m pip install --quiet --disable-pip-version-check --target "$ZIG_PYTHONPATH" ziglang ||
    fail "pip install ziglang failed"
  zig_works || fail "Zig was installed into $ZIG_PYTHONPATH but 'python3 -m ziglang' does not run"
}

# `cargo <command> … --target <target> [rest]` with the target's C compiler and archiver
# set to Zig's.
cargo_for() {
  local target=$1 command=$2
  shift 2
  local var=${target//-/_}
  env "CC_$var=$PWD/scripts/zig/cc-${target%%-*}-macos" "AR_$var=$PWD/scripts/zig/ar" \
    cargo "$command" --workspace --all-targets --target "$target" --target-dir "$TARGET_DIR" "$@"
}

timed() {
  local label=$1 started=$SECONDS
  shift
  "$@" || fail "$label"
  say "$label: ok ($((SECONDS - started)) s)"
}

# One darwin target stands for both only while no code of ours depends on the architecture.
if [ ${#TARGETS[@]} -eq 1 ]; then
  arch_code=$(grep -rln --include='*.rs' 'target_arch' src agent/src build.rs 2>/dev/null || true)
  [ -z "$arch_code" ] || fail "code depends on target_arch ($arch_code): check both darwin targets"
fi

install_rust_targets
install_zig
say "Zig $(python3 -m ziglang version), $(rustc --version)"
for target in "${TARGETS[@]}"; do
  timed "cargo clippy --workspace --all-targets --target $target -- -D warnings" \
    cargo_for "$target" clippy -- -D warnings
done
say "darwin targets pass: ${TARGETS[*]}"
