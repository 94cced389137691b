#!/usr/bin/env bats
# Who may own fsrun's state root (review20 K): another local user who made `/tmp/fsrun-UID` (the
# default without XDG_RUNTIME_DIR) or the `--root` given would decide what the caller's `kill` and
# `delete --force` signal. Such a root is refused, one line naming it, nothing made inside.
# The ordinary user is a numeric uid no account has (VICTIM); ATTACKER another. Every test runs in
# a private mount namespace with a tmpfs on /tmp, so no real user's /tmp/fsrun-UID is touched.

load helpers

VICTIM=4242
ATTACKER=4343

setup() {
  requires_root
  requires_host_command setpriv
  requires_host_command unshare
  D=$BATS_TEST_TMPDIR
}

teardown() {
  [ -z "${BUNDLE:-}" ] || teardown_bundle
}

# in_private_tmp SCRIPT: bash SCRIPT as root with a fresh tmpfs on /tmp (this test's only) and
# $BIN, a copy of fsrun on it; `as_victim CMD...` there runs CMD as VICTIM, XDG_RUNTIME_DIR unset
in_private_tmp() {
  unshare -m --propagation private env -u XDG_RUNTIME_DIR VICTIM=$VICTIM ATTACKER=$ATTACKER bash -c '
    set -e
    exec 9<"$FSRUN"
    mount -t tmpfs -o mode=1777 fsrun-test-tmp /tmp
    mkdir -m 755 /tmp/.bin
    BIN=/tmp/.bin/fsrun
    cp /proc/self/fd/9 "$BIN"
    exec 9<&-
    chmod 755 "$BIN"
    as_victim() { setpriv --reuid="$VICTIM" --regid="$VICTIM" --clear-groups -- "$@"; }
    '"$1"
}

# LINE is the refusal of ROOT for WHY, whole
is_refusal() {
  local line=$1 root=$2 why=$3
  [[ $line == "fsrun: state root \`$root\` $why: "* ]] && [[ $line == *"of your own (mode 0700)" ]]
}

# the one line a refusal of ROOT for WHY prints, and nothing else
assert_refused() {
  [ "${#lines[@]}" -eq 1 ]
  is_refusal "${lines[0]}" "$1" "$2"
}

@test "state root: /tmp/fsrun-UID made by another user (1777) is refused to kill, delete, list, sandbox; nothing made in it" {
  run in_private_tmp '
    mkdir -m 1777 /tmp/fsrun-$VICTIM
    chown $ATTACKER:$ATTACKER /tmp/fsrun-$VICTIM
    for cmd in "kill evil KILL" "delete --force evil" "list"; do
      rc=0
      as_victim "$BIN" $cmd 2>&1 || rc=$?
      echo "rc=$rc"
    done
    rc=0
    as_victim "$BIN" sandbox --worktree /tmp -- true 2>&1 || rc=$?
    echo "rc=$rc"
    echo "left: $(ls -A /tmp/fsrun-$VICTIM)"'
  echo "$output"
  [ "$status" -eq 0 ]
  local why="is owned by uid $ATTACKER, not by this user (uid $VICTIM)"
  for i in 0 2 4; do
    is_refusal "${lines[i]}" "/tmp/fsrun-$VICTIM" "$why"
    [ "${lines[i + 1]}" = rc=1 ]
  done
  is_refusal "${lines[6]}" "/tmp/fsrun-$VICTIM" "$why"
  [ "${lines[7]}" = rc=125 ]
  [ "${lines[8]}" = "left: " ]
  [ "${#lines[@]}" -eq 9 ]
}

@test "state root: a --root another uid owns is refused to root and to an ordinary user; nothing made in it" {
  mkdir -m 700 "$D/theirs"
  chown "$ATTACKER:$ATTACKER" "$D/theirs"
  make_traversable "$D"
  run "$FSRUN" --root "$D/theirs" delete --force evil
  echo "$output"
  [ "$status" -eq 1 ]
  assert_refused "$D/theirs" "is owned by uid $ATTACKER, not by this user (uid 0)"
  chmod 755 "$D/theirs"
  run setpriv --reuid="$VICTIM" --regid="$VICTIM" --clear-groups -- "$FSRUN" --root "$D/theirs" kill evil KILL
  echo "$output"
  [ "$status" -eq 1 ]
  assert_refused "$D/theirs" "is owned by uid $ATTACKER, not by this user (uid $VICTIM)"
  [ -z "$(ls -A "$D/theirs")" ]
}

@test "state root: the caller's own root writable by its group or by others is refused (root and ordinary user)" {
  mkdir -m 770 "$D/group"
  mkdir -m 1777 "$D/sticky"
  run "$FSRUN" --root "$D/group" list
  echo "$output"
  [ "$status" -eq 1 ]
  assert_refused "$D/group" "is writable by its group (mode 0770)"
  run "$FSRUN" --root "$D/sticky" list
  [ "$status" -eq 1 ]
  assert_refused "$D/sticky" "is writable by others (mode 1777)"
  chown "$VICTIM:$VICTIM" "$D/group"
  make_traversable "$D"
  run setpriv --reuid="$VICTIM" --regid="$VICTIM" --clear-groups -- "$FSRUN" --root "$D/group" state evil
  echo "$output"
  [ "$status" -eq 1 ]
  assert_refused "$D/group" "is writable by its group (mode 0770)"
  [ -z "$(ls -A "$D/group")" ]
  [ -z "$(ls -A "$D/sticky")" ]
}

@test "state root: /tmp/fsrun-UID as a link to the user's own directory is refused" {
  run in_private_tmp '
    mkdir -m 700 /tmp/mine
    chown $VICTIM:$VICTIM /tmp/mine
    ln -s /tmp/mine /tmp/fsrun-$VICTIM
    rc=0
    as_victim "$BIN" list 2>&1 || rc=$?
    echo "rc=$rc"
    echo "left: $(ls -A /tmp/mine)"'
  echo "$output"
  [ "$status" -eq 0 ]
  is_refusal "${lines[0]}" "/tmp/fsrun-$VICTIM" "is a symbolic link"
  [ "${lines[1]}" = rc=1 ]
  [ "${lines[2]}" = "left: " ]
}

@test "state root: a missing root is made 0700 when state is kept; the caller's own and root's 0755 one are used (root and ordinary user)" {
  run in_private_tmp '
    as_victim "$BIN" list
    echo "missing: $(stat -c %u /tmp/fsrun-$VICTIM 2>&1 >/dev/null | grep -c "No such file")"
    mkdir -m 700 /tmp/fsrun-$VICTIM
    chown $VICTIM:$VICTIM /tmp/fsrun-$VICTIM
    as_victim "$BIN" list'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ ${lines[0]} == ID* ]]
  [ "${lines[1]}" = "missing: 1" ]
  [[ ${lines[2]} == ID* ]]
  [ "${#lines[@]}" -eq 3 ]
  setup_bundle
  run "$FSRUN" --root "$D/a/b" run --bundle "$BUNDLE" "made-$UNIQ"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(stat -c '%u %a' "$D/a/b")" = "0 700" ]
  mkdir -m 755 "$D/shared"
  run "$FSRUN" --root "$D/shared" list
  [ "$status" -eq 0 ]
  [[ ${lines[0]} == ID* ]]
}

# help and version touch no state: a refused root does not stop them. A command's -h/--help counts
# only as its first argument: later, `-h` may be another option's value (`exec --cwd -h`), and that
# command is still refused.
@test "state root: --help, --version and a command's --help print whatever the state root (root and ordinary user)" {
  run in_private_tmp '
    mkdir -m 1777 /tmp/fsrun-$VICTIM
    chown $ATTACKER:$ATTACKER /tmp/fsrun-$VICTIM
    for args in "--help" "-h" "--version" "list --help" "list -h" "help list" "delete --help" \
      "exec -h" "sandbox --help"; do
      rc=0
      out=$(as_victim "$BIN" $args 2>/dev/null) || rc=$?
      echo "$args: rc=$rc $(printf "%s\n" "$out" | head -1)"
    done
    rc=0
    as_victim "$BIN" exec --cwd -h evil true 2>&1 || rc=$?
    echo "rc=$rc"
    echo "left: $(ls -A /tmp/fsrun-$VICTIM)"'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "--help: rc=0 Usage: fsrun [GLOBAL OPTIONS] COMMAND [ARGS...]" ]
  [ "${lines[1]}" = "-h: rc=0 Usage: fsrun [GLOBAL OPTIONS] COMMAND [ARGS...]" ]
  [[ ${lines[2]} == "--version: rc=0 fsrun version "* ]]
  [[ ${lines[3]} == "list --help: rc=0 Usage: fsrun list "* ]]
  [[ ${lines[4]} == "list -h: rc=0 Usage: fsrun list "* ]]
  [[ ${lines[5]} == "help list: rc=0 Usage: fsrun list "* ]]
  [[ ${lines[6]} == "delete --help: rc=0 Usage: fsrun delete "* ]]
  [[ ${lines[7]} == "exec -h: rc=0 Usage: fsrun exec "* ]]
  [[ ${lines[8]} == "sandbox --help: rc=0 Usage: fsrun sandbox "* ]]
  is_refusal "${lines[9]}" "/tmp/fsrun-$VICTIM" "is owned by uid $ATTACKER, not by this user (uid $VICTIM)"
  [ "${lines[10]}" = rc=1 ]
  [ "${lines[11]}" = "left: " ]
  [ "${#lines[@]}" -eq 12 ]
  mkdir -m 700 "$D/theirs"
  chown "$ATTACKER:$ATTACKER" "$D/theirs"
  run "$FSRUN" --root "$D/theirs" list --help
  echo "$output"
  [ "$status" -eq 0 ]
  [[ ${lines[0]} == "Usage: fsrun list "* ]]
  run "$FSRUN" --root "$D/theirs" state --help
  [ "$status" -eq 0 ]
  [[ ${lines[0]} == "Usage: fsrun state "* ]]
  run "$FSRUN" --root "$D/theirs" list
  [ "$status" -eq 1 ]
  assert_refused "$D/theirs" "is owned by uid $ATTACKER, not by this user (uid 0)"
  [ -z "$(ls -A "$D/theirs")" ]
}
