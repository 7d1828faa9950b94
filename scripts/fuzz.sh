#!/usr/bin/env bash
# npm run fuzz -- <target> [seconds]: runs one libFuzzer target (fuzz/fuzz_targets/, its
# check in src/fuzzing/) for that long (60 s unless given), on the nightly toolchain, in one
# process at low priority. It starts from the committed corpus (fuzz/corpus/<target>/, read
# only) and keeps what it finds in fuzz/target/found/<target>/; a crash is saved in
# fuzz/artifacts/<target>/. `npm run fuzz -- <target> merge` folds what was found into the
# committed corpus, minimised (only inputs that reach new coverage).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

targets=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^container-isolation-fuzz$')
target="${1:-}"
if [ -z "$target" ] || ! grep -qx "$target" <<<"$targets"; then
  echo "usage: npm run fuzz -- <target> [seconds|merge]; targets:" $targets >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz is missing: cargo install cargo-fuzz (and rustup toolchain install nightly)" >&2
  exit 1
fi
# No sanitizer: the parsers are safe Rust, and the run is twice as fast without one;
# debug assertions on, so that an overflow is a crash as it is in a debug build.
build=(--sanitizer none --debug-assertions)
found="target/found/$target"
mkdir -p "$found"
if [ "${2:-}" = merge ]; then
  merged="target/merged/$target"
  rm -rf "$merged" && mkdir -p "$merged"
  nice -n 10 cargo +nightly fuzz run "${build[@]}" "$target" "$merged" "corpus/$target" "$found" -- -merge=1
  rm -rf "corpus/$target" && mv "$merged" "corpus/$target"
  exit 0
fi
seconds="${2:-60}"
# tar_extract makes and removes a directory per input: on tmpfs it runs five times as fast.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi
exec nice -n 10 cargo +nightly fuzz run "${build[@]}" "$target" "$found" "corpus/$target" -- \
  -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048
