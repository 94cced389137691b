#!/usr/bin/env bats
# The cache of compiled seccomp programs (seccomp-cache.h): `run` reads a profile's program from
# the state root's .seccomp-cache after the first run, and the container sees the profile's errno
# either way, as root and as an ordinary user (rootless); a changed profile is compiled afresh; an
# entry that is another user's, linked, group-writable, short or another key's is ignored. The
# forged entries are checked to be well-formed first: the same bytes, put there the way the caller
# itself would, are used (the cache trusts what the caller's own state root holds, no more).

load helpers
load user-dir

setup_file() {
  file_test_user_add fsrscc
}

teardown_file() {
  file_test_user_remove
}

setup() {
  requires_root
  requires_fsrun_command run
  requires_host_command python3
  setup_bundle
  update_config '.root.readonly = false'
  # a state root of the test's own, there before the first run (a root create makes has no cache)
  FSRUN_ROOT=$BATS_TEST_TMPDIR/state
  mkdir -m 700 "$FSRUN_ROOT"
  CACHE=$FSRUN_ROOT/.seccomp-cache
  LOG=$BATS_TEST_TMPDIR/log
}

teardown() {
  local reports=0
  user_dir_remove || reports=1
  teardown_bundle
  [ "$reports" = 0 ]
}

# deny_mkdir ERRNO: a profile that answers mkdir with ERRNO, for the root bundle or (FILE) another
deny_mkdir() {
  local cfg=${2:-$BUNDLE/config.json}
  jq --argjson e "$1" '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
    syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO", errnoRet: $e}]}
    | .process.args = ["sh", "-c", "mkdir /tmp/d-$$ && echo made"]' "$cfg" >"$cfg.new"
  mv "$cfg.new" "$cfg"
}

# root_run: the bundle run as root with the debug log in $LOG
root_run() {
  : >"$LOG"
  run "$FSRUN" --root "$FSRUN_ROOT" --debug --log "$LOG" run --bundle "$BUNDLE" "scc-$$-$RANDOM$RANDOM"
}

# the one entry of the cache DIR
only_entry() {
  local names
  names=$(ls -A "$1")
  [ "$(wc -l <<<"$names")" = 1 ] || { echo "cache entries: $names" >&2; return 1; }
  echo "$names"
}

# forge DIR NAME [KEY_NAME]: an entry NAME of a program allowing every syscall, with the digest an
# entry of key KEY_NAME (default NAME) ends with: the program, then SHA-256(key || program). Put
# in place with a rename, mode 0600, owned by whoever runs this.
forge() {
  python3 - "$@" <<'EOF'
import hashlib, os, sys
d, name = sys.argv[1], sys.argv[2]
key = bytes.fromhex(sys.argv[3] if len(sys.argv) > 3 else name)
prog = bytes.fromhex("060000000000ff7f")  # BPF_RET|BPF_K SECCOMP_RET_ALLOW
tmp = os.path.join(d, "forged.tmp")
with open(tmp, "wb") as f:
    f.write(prog + hashlib.sha256(key + prog).digest())
os.chmod(tmp, 0o600)
os.rename(tmp, os.path.join(d, name))
EOF
}

@test "seccomp cache: root: the second run reads the program from the cache, with the profile's errno" {
  local name
  deny_mkdir 38
  root_run
  [ "$status" -eq 1 ]
  [[ "$output" == *"Function not implemented"* ]]
  ! grep -q "from the cache" "$LOG" || false
  name=$(only_entry "$CACHE")
  [ "$(stat -c %a:%u:%F "$CACHE")" = "700:0:directory" ]
  [ "$(stat -c %a:%u:%h "$CACHE/$name")" = "600:0:1" ]
  root_run
  [ "$status" -eq 1 ]
  [[ "$output" == *"Function not implemented"* ]]
  grep -q "seccomp: the compiled filter (.* instructions) from the cache" "$LOG"
}

@test "seccomp cache: root: a changed errnoRet is compiled afresh, not served the old program" {
  deny_mkdir 38
  root_run
  [[ "$output" == *"Function not implemented"* ]]
  deny_mkdir 13
  root_run
  [ "$status" -eq 1 ]
  [[ "$output" == *"Permission denied"* ]]
  ! grep -q "from the cache" "$LOG" || false
  [ "$(ls -A "$CACHE" | wc -l)" = 2 ]
  # and FSRUN_NO_SECCOMP_CACHE: compiled, nothing read or written
  deny_mkdir 1
  FSRUN_NO_SECCOMP_CACHE=1 root_run
  [[ "$output" == *"Operation not permitted"* ]]
  [ "$(ls -A "$CACHE" | wc -l)" = 2 ]
}

@test "seccomp cache: root: a forged entry is used only where the caller could have written it itself" {
  local name other
  deny_mkdir 38
  root_run
  name=$(only_entry "$CACHE")
  # the control: a well-formed entry of the caller's, in its place, is the caller's choice
  forge "$CACHE" "$name"
  root_run
  [ "$status" -eq 0 ]
  [[ "$output" == *made* ]]

  # another user's
  forge "$CACHE" "$name"
  chown 1000 "$CACHE/$name"
  root_run
  [ "$status" -eq 1 ]
  [[ "$output" == *"Function not implemented"* ]]
  grep -q "entry $name ignored: another user's" "$LOG"
  # a symbolic link to a well-formed entry beside it
  forge "$CACHE" forged "$name"
  rm -f "$CACHE/$name"
  ln -s forged "$CACHE/$name"
  root_run
  [[ "$output" == *"Function not implemented"* ]]
  # a second hard link
  rm -f "$CACHE/$name"
  ln "$CACHE/forged" "$CACHE/$name"
  root_run
  [[ "$output" == *"Function not implemented"* ]]
  grep -q "entry $name ignored: linked elsewhere" "$LOG"
  rm -f "$CACHE/forged"
  # writable by the group
  forge "$CACHE" "$name"
  chmod 620 "$CACHE/$name"
  root_run
  [[ "$output" == *"Function not implemented"* ]]
  grep -q "entry $name ignored: writable by group or others" "$LOG"
  # another key's entry (its digest says so)
  other=$(printf '%064x' 7)
  forge "$CACHE" "$name" "$other"
  root_run
  [[ "$output" == *"Function not implemented"* ]]
  grep -q "entry $name ignored: its digest does not match" "$LOG"
  # short: the digest cut
  forge "$CACHE" "$name"
  truncate -s 16 "$CACHE/$name"
  root_run
  [[ "$output" == *"Function not implemented"* ]]
  # the cache directory itself: another user's
  forge "$CACHE" "$name"
  chown 1000 "$CACHE"
  root_run
  [[ "$output" == *"Function not implemented"* ]]
  grep -q "seccomp cache: .seccomp-cache ignored: another user's" "$LOG"
}

# --- an ordinary user, rootless -------------------------------------------------------------------

user_setup() {
  requires_host_command setpriv
  [ -n "${TEST_USER:-}" ] || skip "needs useradd and setpriv"
  user_dir_make fsrun-scc
  # the user's default state root, there before its first run
  as_user mkdir -m 700 "$UDIR/run/fsrun"
  jq '.process.terminal = false | .root.readonly = false' "$UDIR/bundle/config.json" >"$UDIR/c.json"
  chown "$TEST_UID:$TEST_GID" "$UDIR/c.json"
  mv "$UDIR/c.json" "$UDIR/bundle/config.json"
  UCACHE=$UDIR/run/fsrun/.seccomp-cache
}

# user_run_seccomp: the user's bundle run (its default state root) with the debug log in $UDIR/log
user_run_seccomp() {
  as_user sh -c ': >"$1"' sh "$UDIR/log"
  run as_user /bin/sh -c 'cd "$1" && exec "$2" --debug --log "$1/../log" run "$3"' sh \
    "$UDIR/bundle" "$FSRUN" "sccu-$$-$RANDOM$RANDOM"
}

@test "seccomp cache: an ordinary user, rootless: its own cache, the profile's errno from it; another user's entry ignored" {
  local name
  user_setup
  deny_mkdir 38 "$UDIR/bundle/config.json"
  chown "$TEST_UID:$TEST_GID" "$UDIR/bundle/config.json"
  user_run_seccomp
  [ "$status" -eq 1 ]
  [[ "$output" == *"Function not implemented"* ]]
  name=$(only_entry "$UCACHE")
  [ "$(stat -c %a:%u "$UCACHE" "$UCACHE/$name" | tr '\n' ' ')" = "700:$TEST_UID 600:$TEST_UID " ]
  user_run_seccomp
  [ "$status" -eq 1 ]
  [[ "$output" == *"Function not implemented"* ]]
  grep -q "from the cache" "$UDIR/log"
  # the control: a well-formed entry the user put there itself is the user's choice
  forge "$UCACHE" "$name"
  chown "$TEST_UID:$TEST_GID" "$UCACHE/$name"
  user_run_seccomp
  [ "$status" -eq 0 ]
  [[ "$output" == *made* ]]
  # the same, root's (readable by the user: the owner is what refuses it)
  forge "$UCACHE" "$name"
  chmod 644 "$UCACHE/$name"
  user_run_seccomp
  [ "$status" -eq 1 ]
  [[ "$output" == *"Function not implemented"* ]]
  grep -q "entry $name ignored: another user's" "$UDIR/log"
  # a changed profile
  deny_mkdir 13 "$UDIR/bundle/config.json"
  chown "$TEST_UID:$TEST_GID" "$UDIR/bundle/config.json"
  user_run_seccomp
  [[ "$output" == *"Permission denied"* ]]
}
