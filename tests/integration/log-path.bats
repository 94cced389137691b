#!/usr/bin/env bats
# Where `fsrun --log FILE` appends (caller-output.h, fsrun(8) "--log"). Clients pass a file in a
# directory of their own (containerd BUNDLE/log.json, podman's userdata/oci-log), people
# /dev/stderr or /dev/null. fsrun (often root) must not append to a file the path's owner did not
# mean: a link or a directory on the way that another uid could change, another uid's link, FIFO or
# file in a directory others may write, a second hard link. Those are refused: one line naming
# --log, exit 1, the command not run (`spec` makes no config.json), nothing made or changed.
# As root and as an ordinary user (VICTIM, a numeric uid no account has); ATTACKER another uid.

load helpers

VICTIM=4242
ATTACKER=4343

setup() {
  requires_root
  requires_host_command setpriv
  D=$BATS_TEST_TMPDIR
  make_traversable "$D"
  mkdir -m 1777 "$D/sticky"
  mkdir -m 755 "$D/theirs"
  mkdir -m 775 "$D/group"
  chown "$ATTACKER:$ATTACKER" "$D/theirs"
  chown "0:$VICTIM" "$D/group"
}

# as UID CMD...: CMD as UID (0: root itself)
as() {
  local uid=$1
  shift
  if [ "$uid" = 0 ]; then
    "$@"
  else
    setpriv --reuid="$uid" --regid="$uid" --clear-groups -- "$@"
  fi
}

# log_spec UID LOG: `fsrun --log LOG spec` as UID in UID's own $D/uUID/work (a guard, not a measure:
# an open of a FIFO with no reader blocks for ever)
log_spec() {
  run as "$1" timeout -s KILL 60 sh -c 'cd "$1" && shift && exec "$@"' sh "$D/u$1/work" \
    "$FSRUN" --log "$2" spec
  echo "$output"
}

# refused UID LOG WHY: LOG refused for WHY (the whole reason, after "--log LOG: "), in one line,
# spec not run
refused() {
  log_spec "$1" "$2"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ ${lines[0]} == "fsrun: --log $2: $3"* ]]
  [ ! -e "$D/u$1/work/config.json" ]
}

# check_log_paths UID: the refusals and what still works, for UID
check_log_paths() {
  local uid=$1 u=$D/u$1 real
  real=$(realpath "$D")
  mkdir -m 700 "$u" "$u/work" "$u/own"
  echo precious >"$u/target"
  chown -R "$uid:$uid" "$u"
  # a link at the name, of another uid, in a directory others may write (the kernel's
  # protected_symlinks refuses it too)
  ln -s "$u/target" "$D/sticky/l$uid.log"
  chown -h "$ATTACKER" "$D/sticky/l$uid.log"
  refused "$uid" "$D/sticky/l$uid.log" "reached through \`$real/sticky/l$uid.log\`, owned by uid $ATTACKER: "
  # a link of another uid in a parent: the file would be made where that uid says
  ln -s "$u/own" "$D/lnk$uid"
  chown -h "$ATTACKER" "$D/lnk$uid"
  refused "$uid" "$D/lnk$uid/log" "reached through \`$real/lnk$uid\`, owned by uid $ATTACKER: "
  [ -z "$(ls -A "$u/own")" ]
  # a parent another uid owns, or its group may write without the sticky bit
  refused "$uid" "$D/theirs/log" "reached through \`$real/theirs\`, owned by uid $ATTACKER: "
  refused "$uid" "$D/group/log" "reached through \`$real/group\`, writable by its group without the sticky bit (mode 0775): "
  [ -z "$(ls -A "$D/theirs" "$D/group" | grep -v :)" ]
  # another uid's FIFO or file in a directory others may write
  mkfifo "$D/sticky/f$uid"
  echo theirs >"$D/sticky/t$uid"
  chown "$ATTACKER" "$D/sticky/f$uid" "$D/sticky/t$uid"
  refused "$uid" "$D/sticky/f$uid" "owned by uid $ATTACKER in a directory others may write"
  refused "$uid" "$D/sticky/t$uid" "owned by uid $ATTACKER in a directory others may write"
  [ "$(cat "$D/sticky/t$uid")" = theirs ]
  # a second hard link; a directory
  ln "$u/target" "$u/hard"
  refused "$uid" "$u/hard" "a file with another hard link"
  refused "$uid" "$u/own" "not a regular file, FIFO or character device"
  [ "$(cat "$u/target")" = precious ]
  rm "$u/hard"

  # what works: a new file (0644), appended; the caller's own link (runc follows links); the
  # caller's own file in the sticky dir; /dev/null, /dev/stderr (a link into /proc/self/fd)
  log_spec "$uid" "$u/new.log"
  [ "$status" -eq 0 ]
  [ "$(stat -c %u:%a "$u/new.log")" = "$uid:644" ]
  rm "$u/work/config.json"
  as "$uid" "$FSRUN" --log "$u/new.log" no-such-command || true
  as "$uid" "$FSRUN" --log "$u/new.log" no-such-command || true
  [ "$(grep -c 'unknown command' "$u/new.log")" -eq 2 ]
  as "$uid" ln -s target "$u/mine.log"
  as "$uid" "$FSRUN" --log "$u/mine.log" no-such-command || true
  grep -q 'unknown command' "$u/target"
  as "$uid" sh -c 'echo x >"$1"' sh "$D/sticky/m$uid"
  as "$uid" "$FSRUN" --log "$D/sticky/m$uid" no-such-command || true
  grep -q 'unknown command' "$D/sticky/m$uid"
  log_spec "$uid" /dev/null
  [ "$status" -eq 0 ]
  rm "$u/work/config.json"
  # (a pipe of the caller's own: /proc/self/fd/2 reopens it as the caller)
  run as "$uid" sh -c '"$@" 2>&1 | cat' sh "$FSRUN" --log /dev/stderr --log-format json no-such-command
  [[ $output == *'"level":"error"'* ]]
}

@test "--log: a link, FIFO or file another uid could place, a parent another uid could change, a second hard link: refused, nothing run or written (root)" {
  check_log_paths 0
}

@test "--log: a link, FIFO or file another uid could place, a parent another uid could change, a second hard link: refused, nothing run or written (ordinary user)" {
  check_log_paths "$VICTIM"
}
