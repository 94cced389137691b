#!/usr/bin/env bats
# The bash completion (contrib/completion/fsrun), in a real bash (--norc, the file sourced as
# bash-completion would): `complete -p`, then the completion function over COMP_WORDS as bash
# fills them for a TAB. As root and as an ordinary user made for this file.

load helpers

COMPLETION=$BATS_TEST_DIRNAME/../../contrib/completion/fsrun

setup_file() {
  [ "$EUID" = 0 ] || return 0
  command -v useradd >/dev/null && command -v setpriv >/dev/null || return 0
  export TEST_USER=fsrcomp$$
  useradd -M -d /nonexistent -s /usr/sbin/nologin "$TEST_USER"
}

teardown_file() {
  if [ -n "${TEST_USER:-}" ] && id "$TEST_USER" >/dev/null 2>&1; then
    userdel "$TEST_USER" >/dev/null 2>&1 || true
  fi
}

teardown() {
  teardown_bundle
}

# complete WORD... : what a TAB after the words offers (the last word is the one being completed),
# one per line, sorted; `fsrun` is the binary under test, found in PATH
complete_words() {
  bash --norc -c '
    source "$1" || exit 1
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    _fsrun
    printf "%s\n" "${COMPREPLY[@]}"' bash "$COMPLETION" "$@" | sed '/^$/d' | sort
}

# in_path: a PATH whose first entry holds `fsrun`, the binary under test
in_path() {
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  ln -sf "$FSRUN" "$BATS_TEST_TMPDIR/bin/fsrun"
  chmod 755 "$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/bin"
  export PATH="$BATS_TEST_TMPDIR/bin:$PATH"
}

# the commands `fsrun --help` lists, sorted
help_commands() {
  "$FSRUN" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' | sort
}

@test "complete -p: sourcing the file registers _fsrun for fsrun" {
  run bash --norc -c 'source "$1" && complete -p fsrun' bash "$COMPLETION"
  [ "$status" -eq 0 ]
  [ "$output" = "complete -F _fsrun fsrun" ]
}

@test "commands: all of fsrun --help's at the first word, the matching ones for a prefix" {
  in_path
  [ "$(complete_words fsrun '')" = "$(help_commands)" ]
  [ "$(complete_words fsrun sa)" = sandbox ]
  [ "$(complete_words fsrun s | tr '\n' ' ')" = "sandbox spec start state " ]
  # after global options and their arguments, still the command
  [ "$(complete_words fsrun --root /tmp --debug bu)" = bundle ]
}

@test "options: the global ones before the command, the command's own after it, as --help has them" {
  in_path
  run complete_words fsrun --log
  [ "$output" = "$(printf '%s\n' --log --log-format --log-level)" ]
  run complete_words fsrun sandbox --
  [ "$status" -eq 0 ]
  local want
  for want in --policy --worktree --task-id --run-id --timeout-ms --json --max-buffer --audit-log \
    --failure-mode --help; do
    grep -qxF -- "$want" <<<"$output" || { echo "no $want in: $output"; return 1; }
  done
  [[ $'\n'$output$'\n' != *$'\n'--bundle$'\n'* ]]
  run complete_words fsrun exec --t
  [ "$output" = --tty ]
  run complete_words fsrun exec --st
  [ "$output" = --status-json ]
}

@test "option arguments: choices from --help, directories for DIR, files for FILE" {
  in_path
  [ "$(complete_words fsrun --log-format '' | tr '\n' ' ')" = "json text " ]
  mkdir -p "$BATS_TEST_TMPDIR/bundles/one" "$BATS_TEST_TMPDIR/bundles/two"
  : >"$BATS_TEST_TMPDIR/bundles/policy.json"
  run complete_words fsrun create --bundle "$BATS_TEST_TMPDIR/bundles/"
  [ "$output" = "$(printf '%s\n' "$BATS_TEST_TMPDIR/bundles/one" "$BATS_TEST_TMPDIR/bundles/two")" ]
  run complete_words fsrun sandbox --policy "$BATS_TEST_TMPDIR/bundles/p"
  [ "$output" = "$BATS_TEST_TMPDIR/bundles/policy.json" ]
  run complete_words fsrun exec --status-json "$BATS_TEST_TMPDIR/bundles/p"
  [ "$output" = "$BATS_TEST_TMPDIR/bundles/policy.json" ]
  # after --, a command name
  run complete_words fsrun sandbox --json -- bas
  grep -qx bash <<<"$output"
}

@test "container ids from list -q of the --root given, for commands on an existing container" {
  in_path
  setup_bundle
  local one=comp-one-$UNIQ two=comp-two-$UNIQ
  fsrun create --bundle "$BUNDLE" "$one"
  fsrun create --bundle "$BUNDLE" "$two"
  [ "$(complete_words fsrun --root "$FSRUN_ROOT" kill '' | tr '\n' ' ')" = "$one $two " ]
  [ "$(complete_words fsrun --root "$FSRUN_ROOT" state comp-t)" = "$two" ]
  [ "$(complete_words fsrun --root "$FSRUN_ROOT" exec --tty comp-o)" = "$one" ]
  # not after the id, and never for create or run, whose id is a new one
  [ -z "$(complete_words fsrun --root "$FSRUN_ROOT" kill "$one" '')" ]
  [ -z "$(complete_words fsrun --root "$FSRUN_ROOT" create '')" ]
  # another state root has other containers
  mkdir -p "$BATS_TEST_TMPDIR/other-root"
  [ -z "$(complete_words fsrun --root "$BATS_TEST_TMPDIR/other-root" kill '')" ]
}

@test "as an ordinary user: commands and options complete, and root's state root offers nothing" {
  requires_root
  [ -n "${TEST_USER:-}" ] || skip "needs useradd and setpriv"
  setup_bundle # (it also makes bats' run directory traversable for the user)
  in_path
  fsrun create --bundle "$BUNDLE" "comp-root-$UNIQ"
  local uid gid
  uid=$(id -u "$TEST_USER") gid=$(id -g "$TEST_USER")
  as_test_user() {
    setpriv --reuid="$uid" --regid="$gid" --init-groups env -i PATH="$PATH" HOME=/nonexistent COMPLETION="$COMPLETION" \
      bash -c "$(declare -f complete_words); complete_words \"\$@\"" bash "$@"
  }
  run as_test_user fsrun ''
  [ "$status" -eq 0 ]
  [ "$output" = "$(help_commands)" ]
  run as_test_user fsrun bundle --o
  [ "$output" = --out ]
  # the state root is root's (0700): no ids, and no error text among the completions
  run as_test_user fsrun --root "$FSRUN_ROOT" kill ''
  [ "$status" -eq 0 ]
  [ -z "$output" ]
}
