#!/bin/sh
# Builds the libFuzzer targets in their own build directory and runs each for SECONDS seconds.
# Exits non-zero when a target crashes (the crashing input is kept under the work directory).
#   tests/fuzz/run-fuzzers.sh [SECONDS]   (default 60; needs clang with libFuzzer)
set -eu

seconds=${1:-60}
case $seconds in '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;; esac

srcdir=$(cd "$(dirname "$0")/../.." && pwd)
build=${FSRUN_FUZZ_BUILD:-/tmp/fsrun-fuzz-build}
work=${FSRUN_FUZZ_WORK:-/tmp/fsrun-fuzz-work}
targets="fuzz-config fuzz-policy fuzz-state fuzz-git-config"

command -v clang > /dev/null || { echo "run-fuzzers: clang is not installed" >&2; exit 2; }
[ -x "$srcdir/configure" ] || (cd "$srcdir" && ./autogen.sh)

mkdir -p "$build"
if [ ! -f "$build/Makefile" ] || [ "$srcdir/configure" -nt "$build/Makefile" ]; then
  (cd "$build" && "$srcdir/configure" --enable-fuzzers CC=clang > configure.log 2>&1) || {
    echo "run-fuzzers: configure failed, see $build/configure.log" >&2
    exit 2
  }
fi
(cd "$build" && make -j"$(nproc)" $(for t in $targets; do printf 'tests/fuzz/%s ' "$t"; done)) > "$build/make.log" 2>&1 || {
  tail -30 "$build/make.log" >&2
  echo "run-fuzzers: build failed, see $build/make.log" >&2
  exit 2
}

status=0
for t in $targets; do
  case $t in
  fuzz-config) seeds=config ;;
  fuzz-policy) seeds=policy ;;
  fuzz-state) seeds=state ;;
  fuzz-git-config) seeds=git-config ;;
  esac
  # a scratch corpus, so that new inputs never land in the source tree
  corpus="$work/$t/corpus"
  artifacts="$work/$t/artifacts"
  mkdir -p "$corpus" "$artifacts"
  cp "$srcdir/tests/fuzz/corpus/$seeds/"* "$corpus/"
  echo "run-fuzzers: $t for ${seconds}s"
  if ! "$build/tests/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -dict="$srcdir/tests/fuzz/oci.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
      "$corpus" > "$work/$t/log" 2>&1; then
    tail -40 "$work/$t/log" >&2
    echo "run-fuzzers: $t FAILED; inputs in $artifacts" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units|^Done' "$work/$t/log" || true
    echo "run-fuzzers: $t ok"
  fi
done
exit $status
