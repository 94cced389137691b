#!/usr/bin/env bats
# The man pages (docs/*.8) against the binary: one page per command that `fsrun --help` lists,
# and each page's OPTIONS the same set as `fsrun COMMAND --help` (GLOBAL OPTIONS and
# `fsrun --help` for fsrun.8). tests/integration/man-options.sh extracts both lists.

load helpers

setup_file() {
  command -v man >/dev/null && command -v col >/dev/null ||
    skip "needs man and col (Debian packages man-db, bsdextrautils)"
}

# the commands `fsrun --help` lists
commands() {
  "$FSRUN" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'
}

# compare_options PAGE HELP_ARGS...: the options of PAGE and of `fsrun HELP_ARGS... --help`
compare_options() {
  local page=$FSRUN_SRCDIR/docs/$1
  shift
  [ -f "$page" ] || { echo "no man page $page"; return 1; }
  "$FSRUN" "$@" --help >"$BATS_TEST_TMPDIR/help" 2>&1
  "$FSRUN_TESTS_DIR/man-options.sh" help "$BATS_TEST_TMPDIR/help" >"$BATS_TEST_TMPDIR/help.opts"
  "$FSRUN_TESTS_DIR/man-options.sh" man "$page" >"$BATS_TEST_TMPDIR/man.opts"
  diff -u --label "fsrun $* --help" --label "${page##*/}" "$BATS_TEST_TMPDIR/help.opts" "$BATS_TEST_TMPDIR/man.opts"
}

@test "every command fsrun --help lists has a man page, and fsrun.8 lists them all" {
  local cmd missing=()
  for cmd in $(commands); do
    [ -f "$FSRUN_SRCDIR/docs/fsrun-$cmd.8" ] || missing+=("fsrun-$cmd.8")
    grep -qF "fsrun\\-$cmd (8)" "$FSRUN_SRCDIR/docs/fsrun.8" || missing+=("fsrun-$cmd(8) in fsrun.8")
  done
  [ ${#missing[@]} -eq 0 ] || { echo "missing: ${missing[*]}"; return 1; }
  [ -n "$(commands)" ]
}

@test "fsrun.8's GLOBAL OPTIONS are fsrun --help's" {
  compare_options fsrun.8
  # the extraction found options at all
  [ "$(wc -l <"$BATS_TEST_TMPDIR/man.opts")" -gt 5 ]
}

@test "each fsrun-COMMAND.8's OPTIONS are fsrun COMMAND --help's" {
  local cmd failed=()
  for cmd in $(commands); do
    compare_options "fsrun-$cmd.8" "$cmd" || failed+=("$cmd")
  done
  [ ${#failed[@]} -eq 0 ] || { echo "differ: ${failed[*]}"; return 1; }
}

@test "the sandbox page documents the exit statuses, the JSON fields and the audit events" {
  local text
  text=$(MANWIDTH=200 man -l -E ascii -P cat "$FSRUN_SRCDIR/docs/fsrun-sandbox.8" 2>/dev/null | col -b)
  local want
  for want in "EXIT STATUS" 124 125 "JSON RESULT" exitCode signal timedOut truncated durationMs \
    backend limits oomKilled limitsNotEnforced tamper "AUDIT EVENTS" sandbox:prepare sandbox:run \
    sandbox:failure sandbox:fallback sandbox:tamper policyHash POLICY allowNetwork allowedPaths \
    writablePaths envAllowlist cpuLimit.maxCores cpuLimit.maxMs memoryLimitMb allowedTcpPorts \
    pidsLimit seccomp network EXAMPLES; do
    [[ $text == *"$want"* ]] || { echo "fsrun-sandbox.8 does not mention $want"; return 1; }
  done
}
