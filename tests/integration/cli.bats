#!/usr/bin/env bats
# The command-line contract: --version, --help, usage errors, and the one-line error (stderr and the
# --log file) that conmon and the containerd shim read.

load helpers

bats_require_minimum_version 1.5.0

setup() {
  LOG=$BATS_TEST_TMPDIR/log
}

teardown() {
  if [ -n "${BUNDLE:-}" ]; then
    teardown_bundle
  fi
}

# exactly one line on stderr, starting "fsrun: ", and nothing on stdout
assert_one_error_line() {
  [ "${#stderr_lines[@]}" -eq 1 ] || {
    echo "expected one stderr line, got ${#stderr_lines[@]}: $stderr" >&2
    return 1
  }
  [[ "${stderr_lines[0]}" == "fsrun: "* ]]
  [ -z "$output" ]
}

@test "cli: --version prints the version, commit, spec and libseccomp lines" {
  run --separate-stderr "$FSRUN" --version
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" =~ ^fsrun\ version\ [0-9]+\.[0-9]+\.[0-9]+ ]]
  [[ "${lines[1]}" =~ ^commit:\ [^[:space:]]+$ ]]
  [ "${lines[2]}" = "spec: 1.3.0" ]
  [[ "${lines[3]}" =~ ^libseccomp:\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
  [ "${#lines[@]}" -eq 4 ]
  [ -z "$stderr" ]
  # -v is the same
  run "$FSRUN" -v
  [ "$status" -eq 0 ]
  [[ "${lines[0]}" == "fsrun version "* ]]
}

@test "cli: --help, -h and help list every command with a summary" {
  for flag in --help -h help; do
    run --separate-stderr "$FSRUN" "$flag"
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
    for cmd in spec validate features; do
      echo "$output" | grep -qE "^  $cmd +[a-z].+"
    done
  done
}

@test "cli: every listed command answers COMMAND --help with its own usage" {
  local commands
  commands=$("$FSRUN" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
  [ -n "$commands" ]
  for cmd in $commands; do
    run --separate-stderr "$FSRUN" "$cmd" --help
    [ "$status" -eq 0 ] || {
      echo "$cmd --help: status $status: $stderr" >&2
      return 1
    }
    [[ "$output" == "Usage: fsrun $cmd"* ]] || {
      echo "$cmd --help printed: $output" >&2
      return 1
    }
  done
  # `help COMMAND` is the same as `COMMAND --help`
  run "$FSRUN" help spec
  [ "$status" -eq 0 ]
  [[ "$output" == "Usage: fsrun spec"* ]]
}

@test "cli: no command prints the usage on stderr and exits 1" {
  run --separate-stderr "$FSRUN"
  [ "$status" -eq 1 ]
  [ -z "$output" ]
  [[ "$stderr" == *"Usage: fsrun"* ]]
}

@test "cli: an unknown command is one usage line on stderr, exit 1" {
  run --separate-stderr fsrun no-such-command
  [ "$status" -eq 1 ]
  assert_one_error_line
  [[ "$stderr" == *"unknown command"*"no-such-command"* ]]
}

@test "cli: an unknown global option is one usage line on stderr, exit 1" {
  run --separate-stderr "$FSRUN" --no-such-option spec
  [ "$status" -eq 1 ]
  assert_one_error_line
  [[ "$stderr" == *"unknown option"*"--no-such-option"* ]]

  run --separate-stderr "$FSRUN" -Z spec
  [ "$status" -eq 1 ]
  assert_one_error_line
  [[ "$stderr" == *"-Z"* ]]

  # a missing argument
  run --separate-stderr "$FSRUN" --root
  [ "$status" -eq 1 ]
  assert_one_error_line
  [[ "$stderr" == *"--root"*"needs an argument"* ]]
}

@test "cli: bad values of --rootless, --log-format and --log-level are refused" {
  run --separate-stderr "$FSRUN" --rootless maybe features
  [ "$status" -eq 1 ]
  assert_one_error_line
  [[ "$stderr" == *"--rootless"* ]]

  run --separate-stderr "$FSRUN" --log-format xml features
  [ "$status" -eq 1 ]
  assert_one_error_line
  [[ "$stderr" == *"xml"* ]]

  run --separate-stderr "$FSRUN" --log-level chatty features
  [ "$status" -eq 1 ]
  assert_one_error_line
  [[ "$stderr" == *"chatty"* ]]

  for value in true false auto; do
    run "$FSRUN" --rootless "$value" features
    [ "$status" -eq 0 ]
  done
}

@test "cli: an unknown option of a command is one line naming the command, exit 1" {
  run --separate-stderr fsrun spec --no-such-option
  [ "$status" -eq 1 ]
  assert_one_error_line
  [[ "$stderr" == *"spec: unknown option"*"--no-such-option"* ]]

  run --separate-stderr fsrun validate --bundle
  [ "$status" -eq 1 ]
  assert_one_error_line
  [[ "$stderr" == *"validate"*"--bundle"*"needs an argument"* ]]
}

# cli_callers_setup: root and setpriv (else skip); USER_ROOT, uid 1000's empty state root; the
# test's cwd an empty directory anyone may write (no bundle there, and what a refusal that failed
# would write, spec's config.json, shows there)
cli_callers_setup() {
  requires_root
  requires_host_command setpriv
  USER_ROOT=$BATS_TEST_TMPDIR/user-root
  make_traversable "$BATS_TEST_TMPDIR"
  mkdir -m 0700 "$USER_ROOT"
  chown 1000:1000 "$USER_ROOT"
  mkdir -m 0777 "$BATS_TEST_TMPDIR/cwd"
  cd "$BATS_TEST_TMPDIR/cwd"
}

# cli_as CALLER ARG...: fsrun as root (the suite's state root) or as uid 1000 (its own state root)
cli_as() {
  if [ "$1" = root ]; then
    shift
    fsrun "$@"
  else
    shift
    setpriv --reuid=1000 --regid=1000 --clear-groups "$FSRUN" --root "$USER_ROOT" "$@"
  fi
}

@test "cli: a command taking one container ID refuses none or two: one line naming it (root and ordinary user)" {
  local caller cmd args
  cli_callers_setup
  for caller in root user; do
    for cmd in create run restore delete events pause update checkpoint start state resume; do
      for args in "" "id-$$ other-$$"; do
        # shellcheck disable=SC2086 # args: none or two words
        run --separate-stderr cli_as "$caller" "$cmd" $args
        [ "$status" -eq 1 ] || {
          echo "$caller: $cmd $args: status $status: $stderr" >&2
          return 1
        }
        assert_one_error_line
        [ "$stderr" = "fsrun: $cmd: expected exactly one container ID (see fsrun $cmd --help)" ]
      done
    done
  done
  # nothing was made for either caller
  run fsrun list -q
  [ "$status" -eq 0 ]
  [[ "$output" != *"-$$"* ]]
  [ -z "$(ls -A "$BATS_TEST_TMPDIR/cwd")" ]
  [ -z "$(ls -A "$USER_ROOT")" ]
}

@test "cli: a command taking no operand refuses one: one line naming it and the word (root and ordinary user)" {
  local caller cmd
  cli_callers_setup
  for caller in root user; do
    for cmd in spec validate list features; do
      run --separate-stderr cli_as "$caller" "$cmd" "stray-$$"
      [ "$status" -eq 1 ] || {
        echo "$caller: $cmd stray-$$: status $status: $stderr" >&2
        return 1
      }
      assert_one_error_line
      [ "$stderr" = "fsrun: $cmd: unexpected argument \`stray-$$\` (see fsrun $cmd --help)" ]
    done
  done
  [ -z "$(ls -A "$BATS_TEST_TMPDIR/cwd")" ]
  [ -z "$(ls -A "$USER_ROOT")" ]
}

@test "cli: --log-format json writes the bare error message as a JSON line, appended" {
  run --separate-stderr fsrun --log "$LOG" --log-format json no-such-command
  [ "$status" -eq 1 ]
  assert_one_error_line
  [ "$(wc -l <"$LOG")" -eq 1 ]
  jq -e . "$LOG" >/dev/null
  [ "$(jq -r .level "$LOG")" = error ]
  # conmon shows msg as is: no "fsrun: " prefix, same text as stderr
  [ "fsrun: $(jq -r .msg "$LOG")" = "${stderr_lines[0]}" ]
  [[ "$(jq -r .time "$LOG")" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$ ]]

  # a second failure appends, and the log may be named after the command too
  run fsrun --log-format=json --log="$LOG" validate --bundle "$BATS_TEST_TMPDIR/missing"
  [ "$status" -eq 1 ]
  [ "$(wc -l <"$LOG")" -eq 2 ]
  [ "$(jq -s 'map(select(.level == "error")) | length' "$LOG")" -eq 2 ]
  [[ "$(tail -n 1 "$LOG" | jq -r .msg)" == *"config.json"* ]]
}

@test "cli: JSON log messages with quotes, backslashes and newlines stay valid JSON" {
  local bundle=$BATS_TEST_TMPDIR/b
  mkdir -p "$bundle/rootfs"
  # a cwd that the validator quotes back in its message
  printf '%s' '{"ociVersion":"1.2.0","root":{"path":"rootfs"},"process":{"args":["sh"],"cwd":"re\"l\\a\ntive"}}' \
    >"$bundle/config.json"
  run --separate-stderr fsrun --log "$LOG" --log-format json validate --bundle "$bundle"
  [ "$status" -eq 1 ]
  assert_one_error_line
  [ "$(wc -l <"$LOG")" -eq 1 ]
  [[ "$(jq -r .msg "$LOG")" == *"process.cwd"* ]]
}

@test "cli: text --log gets a timestamped error line; stderr still gets the error once" {
  run --separate-stderr fsrun --log "$LOG" no-such-command
  [ "$status" -eq 1 ]
  assert_one_error_line
  [ "$(wc -l <"$LOG")" -eq 1 ]
  grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z error: unknown command' "$LOG"
}

@test "cli: --debug records debug messages in the log, not on stderr" {
  run --separate-stderr fsrun --debug --log "$LOG" --log-format json features
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  jq -e . <<<"$output" >/dev/null
  [ "$(jq -s 'map(select(.level == "debug")) | length' "$LOG")" -ge 1 ]

  # without --debug nothing below warning is written
  rm -f "$LOG"
  run fsrun --log "$LOG" --log-format json features
  [ "$status" -eq 0 ]
  [ ! -s "$LOG" ]
}

@test "cli: an unwritable --log is an error on stderr" {
  run --separate-stderr "$FSRUN" --log "$BATS_TEST_TMPDIR/no/such/dir/log" features
  [ "$status" -eq 1 ]
  assert_one_error_line
  [[ "$stderr" == *"log"* ]]
}

@test "cli: global options stop at the command name" {
  # --help after the command belongs to the command, not to fsrun
  run "$FSRUN" features --help
  [ "$status" -eq 0 ]
  [[ "$output" == "Usage: fsrun features"* ]]
}

@test "cli: the default state root follows the caller: root, a user, root in a user namespace" {
  requires_root
  requires_host_command setpriv
  requires_host_command unshare
  # the debug record names the state root the command was given
  run --separate-stderr env -u XDG_RUNTIME_DIR "$FSRUN" --debug features
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"state root \`/run/fsrun\`"* ]]

  run --separate-stderr setpriv --reuid=1000 --regid=1000 --clear-groups env XDG_RUNTIME_DIR=/run/user/1000 "$FSRUN" --debug features
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"state root \`/run/user/1000/fsrun\`"* ]]

  run --separate-stderr setpriv --reuid=1000 --regid=1000 --clear-groups env -u XDG_RUNTIME_DIR "$FSRUN" --debug features
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"state root \`/tmp/fsrun-1000\`"* ]]

  # rootless podman runs the runtime as uid 0 of its own user namespace
  run --separate-stderr setpriv --reuid=1000 --regid=1000 --clear-groups \
    unshare --user --map-root-user env XDG_RUNTIME_DIR=/run/user/1000 "$FSRUN" --debug features
  [ "$status" -eq 0 ]
  [[ "$stderr" == *"state root \`/run/user/1000/fsrun\`"* ]]

  # --root wins
  run --separate-stderr "$FSRUN" --root "$BATS_TEST_TMPDIR/r" --debug features
  [[ "$stderr" == *"state root \`$BATS_TEST_TMPDIR/r\`"* ]]
}

@test "cli: a command's exit status becomes fsrun's (run exits with the process's status)" {
  requires_root
  requires_fsrun_command run
  setup_bundle
  run_in_container /bin/sh -c 'exit 3'
  [ "$status" -eq 3 ]
}
