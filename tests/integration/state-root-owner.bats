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
  local pid
  for pid in ${SWAPPER:-} ${WITNESS:-}; do
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
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
  [[ $line == "fsrun: state root \`$root\` $why: "* ]]
  [[ $line == *"of your own (mode 0700)" ]]
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

# ---- the root's parents (review21 L1) -------------------------------------------------------------
# Whoever can rename in a parent of the root can swap a directory of theirs in after the check by
# path. fsrun holds the root it checked (by fd), and refuses a root reached through a directory
# another uid owns or that its group or others may write without the sticky bit.

GROUP=4444

# as UID CMD...: CMD as UID (0: root itself), both test uids also in GROUP
as() {
  local uid=$1
  shift
  if [ "$uid" = 0 ]; then
    "$@"
  else
    setpriv --reuid="$uid" --regid="$uid" --groups="$GROUP" -- "$@"
  fi
}

# the one line refusing ROOT reached through PARENT (a real path) for WHY, and nothing else
assert_parent_refused() {
  local root=$1 parent=$2 why=$3
  [ "${#lines[@]}" -eq 1 ]
  [[ ${lines[0]} == "fsrun: state root \`$root\` is reached through \`$parent\`, $why: "* ]]
  [[ ${lines[0]} == *"name a directory whose parents only this user and root can write" ]]
}

@test "state root: a parent another uid owns or its group may write (not sticky) is refused, also through a link; a sticky one is not (root and ordinary user)" {
  local uid real
  mkdir -m 2775 "$D/pub" "$D/theirs"
  chgrp "$GROUP" "$D/pub"
  chown "$ATTACKER" "$D/theirs"
  chmod 755 "$D/theirs"
  mkdir -m 1777 "$D/sticky"
  ln -s "$D/pub" "$D/lnk"
  make_traversable "$D"
  real=$(realpath "$D")
  for uid in 0 "$VICTIM"; do
    mkdir -m 700 "$D/pub/r$uid" "$D/theirs/r$uid" "$D/sticky/r$uid"
    chown "$uid:$uid" "$D/pub/r$uid" "$D/theirs/r$uid" "$D/sticky/r$uid"
    run as "$uid" "$FSRUN" --root "$D/pub/r$uid" kill evil KILL
    echo "$output"
    [ "$status" -eq 1 ]
    assert_parent_refused "$D/pub/r$uid" "$real/pub" "writable by its group without the sticky bit (mode 2775)"
    run as "$uid" "$FSRUN" --root "$D/lnk/r$uid" delete --force evil
    echo "$output"
    [ "$status" -eq 1 ]
    assert_parent_refused "$D/lnk/r$uid" "$real/pub" "writable by its group without the sticky bit (mode 2775)"
    run as "$uid" "$FSRUN" --root "$D/theirs/r$uid" list
    echo "$output"
    [ "$status" -eq 1 ]
    assert_parent_refused "$D/theirs/r$uid" "$real/theirs" "owned by uid $ATTACKER"
    run as "$uid" "$FSRUN" --root "$D/pub/r$uid" sandbox --worktree "$D" -- true
    echo "$output"
    [ "$status" -eq 125 ]
    assert_parent_refused "$D/pub/r$uid" "$real/pub" "writable by its group without the sticky bit (mode 2775)"
    run as "$uid" "$FSRUN" --root "$D/sticky/r$uid" list
    echo "$output"
    [ "$status" -eq 0 ]
    [[ ${lines[0]} == ID* ]]
    [ -z "$(ls -A "$D/pub/r$uid" "$D/theirs/r$uid" "$D/sticky/r$uid" | grep -v '^/\|^$')" ]
  done
}

# exchange_race UID: UID's own root `pub/root` in pub (GROUP may write it, not sticky), UID's
# witness process, and in pub/fake the attacker's forged container `evil` naming the witness.
# The attacker exchanges pub/root and pub/fake (renameat2 RENAME_EXCHANGE) in a loop while UID
# runs `kill evil KILL` TRIES times: each kill is refused or finds no `evil` in UID's own root,
# and the witness lives (review21 L1: it was SIGKILLed within 8-150 tries).
exchange_race() {
  local uid=$1 tries=300 pub=$D/pub st ns boot i out pid swap_out refused=0 missing=0
  mkdir -m 2775 "$D/pub"
  chgrp "$GROUP" "$D/pub"
  make_traversable "$D"
  mkdir -m 700 "$pub/root" "$D/ctl"
  chown "$uid:$uid" "$pub/root" "$D/ctl"
  # started directly (not through `as`): $! is the witness itself
  if [ "$uid" = 0 ]; then
    sleep 1000 </dev/null >/dev/null 2>&1 3>&- &
  else
    setpriv --reuid="$uid" --regid="$uid" --clear-groups -- sleep 1000 </dev/null >/dev/null 2>&1 3>&- &
  fi
  WITNESS=$!
  st=$(awk '{print $22}' "/proc/$WITNESS/stat")
  ns=$(stat -L -c %i "/proc/$WITNESS/ns/pid")
  boot=$(cat /proc/sys/kernel/random/boot_id)
  as "$ATTACKER" mkdir -m 755 "$pub/fake" "$pub/fake/evil"
  printf '{"ociVersion":"1.3.0","id":"evil","status":"running","pid":%s,"bundle":"/","rootfs":"/","created":"2026-12-06T12:44:09Z","annotations":{},"fsrun":{"pidStartTime":%s,"pidNamespace":%s,"bootId":"%s","newPidNamespace":false,"poststart":[],"poststop":[]}}' \
    "$WITNESS" "$st" "$ns" "$boot" >"$D/state.json"
  as "$ATTACKER" cp "$D/state.json" "$pub/fake/evil/state.json"
  as "$ATTACKER" ln -s "$WITNESS $st $ns $boot" "$pub/fake/evil/init"
  # the control: in a root of UID's own the forgery is taken for a running container of the witness
  cp -a "$pub/fake/evil" "$D/ctl/evil"
  chown -R "$uid:$uid" "$D/ctl/evil"
  run as "$uid" "$FSRUN" --root "$D/ctl" state evil
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *'"status": "running"'* ]]
  [[ $output == *"\"pid\": $WITNESS,"* ]]
  # the swapper: prints its pid after its first exchange (or why none), killed by pid after
  exec {swap_out}< <(setpriv --reuid="$ATTACKER" --regid="$ATTACKER" --groups="$GROUP" -- \
    env PATH=/usr/local/bin:/usr/bin:/bin \
    python3 -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = (p.encode() for p in sys.argv[1:3])
def swap():
    return libc.renameat2(-100, a, -100, b, 2) == 0
print("swapping %d" % os.getpid() if swap() else "errno %d" % ctypes.get_errno(), flush=True)
while swap():
    pass' "$pub/root" "$pub/fake" </dev/null 2>&1 3>&-)
  read -r out pid <&"$swap_out" || :
  echo "swapper: $out $pid"
  [ "$out" = swapping ]
  SWAPPER=$pid
  for ((i = 0; i < tries; i++)); do
    if out=$(as "$uid" "$FSRUN" --root "$pub/root" kill evil KILL 2>&1); then
      echo "kill $i acted on the forged root: $out"
      return 1
    fi
    case $out in
    "fsrun: state root \`$pub/root\` "*) refused=$((refused + 1)) ;;
    *"container \`evil\` does not exist"*) missing=$((missing + 1)) ;;
    *)
      echo "kill $i: $out"
      return 1
      ;;
    esac
  done
  kill -KILL "$SWAPPER"
  exec {swap_out}<&-
  echo "refused $refused, no evil in the own root $missing"
  [ "$((refused + missing))" -eq "$tries" ]
  [ "$(awk '{print $3}' "/proc/$WITNESS/stat")" != Z ]
  kill -0 "$WITNESS"
}

@test "state root: another uid exchanging a forged root for the caller's in a parent both may write never has the caller's kill act on it (ordinary user)" {
  requires_host_command python3
  exchange_race "$VICTIM"
}

@test "state root: another uid exchanging a forged root for the caller's in a parent both may write never has the caller's kill act on it (root)" {
  requires_host_command python3
  exchange_race 0
}
