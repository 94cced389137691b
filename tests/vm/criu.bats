#!/usr/bin/env bats
# bats file_tags=cgroupv2
# fsrun checkpoint and restore with CRIU. Only in the VM (tests/vm/run.sh): criu cannot run on the
# development host's kernel. Every criu call takes tens of seconds under emulation, so the file
# is two tests that do several things each.

load ../integration/helpers
load criu-helpers

setup() {
  criu_setup
}

teardown() {
  teardown_bundle
}

@test "vm criu: --pre-dump, then --leave-running with --parent-path: the container runs on" {
  local before
  start_counter pre
  fsrun checkpoint --pre-dump --image-path "$IMAGES/parent" pre
  [ -f "$IMAGES/parent/inventory.img" ]
  [ "$(fsrun state pre | jq -r .status)" = running ]
  # paused first, as containerd's client does before `ctr task checkpoint`: it stays paused
  fsrun pause pre
  fsrun checkpoint --leave-running --image-path "$IMAGES/final" --parent-path ../parent pre
  [ -f "$IMAGES/final/inventory.img" ]
  [ "$(fsrun state pre | jq -r .status)" = paused ]
  fsrun resume pre
  # the dump's memory refers to the pre-dump's pages
  [ "$(readlink "$IMAGES/final/parent")" = ../parent ]
  [ "$(fsrun state pre | jq -r .status)" = running ]
  before=$(count pre)
  wait_for_count pre $((before + 2))
  fsrun delete --force pre
  assert_no_leftovers pre
}

@test "vm criu: checkpoint stops and deletes the container; restore into a new id continues it" {
  local at_dump n pid
  start_counter one
  run fsrun features
  [ "$status" -eq 0 ]
  [ "$(jq -r '.annotations["org.fsrun.checkpoint"]' <<<"$output")" = "$(command -v criu)" ]

  # read in the container, not from one.out (once that file had no line yet at this point)
  at_dump=$(count one)
  fsrun pause one
  # the command lines of containerd's runc shim (go-runc) for `ctr task checkpoint --exit` and a
  # restore from it: --log in the bundle, its own criu work dir, `-no-subreaper` with one dash
  fsrun --log "$BUNDLE/log.json" --log-format json checkpoint --image-path "$IMAGES/one" \
    --work-path "$BATS_TEST_TMPDIR/criu-work" one
  run fsrun state one
  [ "$status" -eq 1 ]
  [[ "$output" == *"does not exist"* ]]
  assert_no_leftovers one

  # the bind's source replaced since its run.fsrun.mounts annotation was written: refused before
  # criu runs, nothing made; the real one back, the restore below binds it from its checked fd
  mv "$BATS_TEST_TMPDIR/shared" "$BATS_TEST_TMPDIR/shared.real"
  mkdir "$BATS_TEST_TMPDIR/shared"
  run fsrun restore --image-path "$IMAGES/one" --bundle "$BUNDLE" -d two
  [ "$status" -eq 1 ]
  [[ "$output" == *"bind source \`$BATS_TEST_TMPDIR/shared\` was replaced after the config was built: Stale file handle" ]]
  assert_no_leftovers two
  rmdir "$BATS_TEST_TMPDIR/shared"
  mv "$BATS_TEST_TMPDIR/shared.real" "$BATS_TEST_TMPDIR/shared"

  # with a relative --root (criu runs in its work dir: its pid file must not be relative)
  (cd "${FSRUN_ROOT%/*}" && "$FSRUN" --root "./${FSRUN_ROOT##*/}" --log "$BUNDLE/log.json" \
    --log-format json restore --image-path "$IMAGES/one" --work-path "$BATS_TEST_TMPDIR/criu-work" \
    --detach --pid-file "$BATS_TEST_TMPDIR/pid" -no-subreaper --bundle "$BUNDLE" two) \
    </dev/null > >(exec cat >"$BATS_TEST_TMPDIR/two.out" 3>&-) 2>&1
  run fsrun state two
  [ "$status" -eq 0 ]
  [ "$(jq -r .status <<<"$output")" = running ]
  pid=$(jq -r .pid <<<"$output")
  [ "$(cat "$BATS_TEST_TMPDIR/pid")" = "$pid" ]
  # the counter goes on from where it stopped: the open file holds 1, 2, 3, ... without a restart
  wait_for_count two $((at_dump + 3))
  run fsrun exec two cat /t/open
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -ge $((at_dump + 3)) ]
  [ -z "$(awk 'NR != $1 { print NR ": " $0; exit }' <<<"$output")" ]
  # the restored process writes to restore's stdout (its old pipe died with the checkpoint)
  wait_until has_line "$BATS_TEST_TMPDIR/two.out" '^out' || :
  n=$(grep -m1 '^out' "$BATS_TEST_TMPDIR/two.out")
  [ "${n#out}" -gt "$at_dump" ]
  # namespaces, mounts (the bind, a masked path), cgroup and seccomp filter survived
  [ "$(readlink /proc/$pid/ns/pid)" != "$(readlink /proc/self/ns/pid)" ]
  [ "$(fsrun exec two cat /shared/hello)" = from-the-host ]
  # criu's stage of the checked source is gone from the state dir
  [ -z "$(find "$FSRUN_ROOT/two" -mindepth 1 -name 'bind-*')" ]
  [ "$(fsrun exec two wc -c /proc/kcore | awk '{print $1}')" = 0 ]
  [ "$(cat /proc/$pid/cgroup)" = "0::/fsrun/two" ]
  grep -q '^Seccomp:[[:space:]]*2' /proc/$pid/status
  # managed like any other container
  fsrun kill two KILL
  wait_for_status two stopped
  fsrun delete two
  assert_no_leftovers two
}

@test "vm criu: a foreground restore forwards its signals to the restored process" {
  local rpid i status=0
  # the container's init traps USR1 (an init ignores a signal it has no handler for)
  set_process_args /bin/sh -c 'exec </dev/null; trap "echo usr1 >/t/sig; exit 7" USR1
    i=0; while :; do i=$((i+1)); echo $i >/t/c; sleep 0.2; done'
  start_counter sig
  fsrun checkpoint --image-path "$IMAGES/sig" sig
  "$FSRUN" --root "$FSRUN_ROOT" restore --image-path "$IMAGES/sig" --bundle "$BUNDLE" sig2 \
    </dev/null >"$BATS_TEST_TMPDIR/sig2.out" 2>&1 3>&- &
  rpid=$!
  for ((i = 0; i < 300; i++)); do
    [ "$(fsrun state sig2 2>/dev/null | jq -r .status)" = running ] && break
    sleep 0.2
  done
  [ "$(fsrun state sig2 | jq -r .status)" = running ]
  kill -USR1 "$rpid"
  wait "$rpid" || status=$?
  cat "$BATS_TEST_TMPDIR/sig2.out"
  # the process's trap ran and its status is restore's; restore deleted the container
  [ "$status" -eq 7 ]
  run fsrun state sig2
  [ "$status" -eq 1 ]
  assert_no_leftovers sig2
}

@test "vm criu: without iptables-restore a dump of a container with its own netns is refused" {
  local bin=$BATS_TEST_TMPDIR/bin
  mkdir -p "$bin"
  ln -s "$(command -v criu)" "$bin/criu"
  fsrun run -d --bundle "$BUNDLE" noipt </dev/null >/dev/null 2>&1
  # criu finds iptables-restore through PATH as fsrun does: a PATH without it is a machine without
  run env PATH="$bin" "$FSRUN" --root "$FSRUN_ROOT" checkpoint --image-path "$IMAGES/noipt" noipt
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: checkpoint: criu locks the container's network namespace with iptables-restore, which is not in PATH (install the iptables package)" ]
  [ "$(fsrun state noipt | jq -r .status)" = running ]
  [ ! -e "$IMAGES/noipt" ]
  fsrun delete --force noipt
  assert_no_leftovers noipt
}

# start_recvtty NAME [ARGS...]: a console-socket receiver on /tmp/NAME.sock (a tmpfs: no sockets
# on the 9p share), the pty's output in $BATS_TEST_TMPDIR/NAME.out; its pid in RECVTTY_PID.
# Bounded by its own alarm (criu calls take a minute here); it ends when the pty's last slave closes.
start_recvtty() {
  local name=$1
  shift
  rm -f "/tmp/$name.sock"
  "$RECVTTY" "/tmp/$name.sock" --timeout 600 "$@" >"$BATS_TEST_TMPDIR/$name.out" 2>/dev/null 3>&- &
  RECVTTY_PID=$!
  wait_until test -S "/tmp/$name.sock"
}

# wait_for_tty_line NAME REGEX: until the pty's output in NAME.out has a line matching REGEX
wait_for_tty_line() {
  local i
  for ((i = 0; i < 300; i++)); do
    tr -d '\r' <"$BATS_TEST_TMPDIR/$1.out" | grep -qE "$2" && return 0
    sleep 0.2
  done
  echo "$1: no line matching $2 on the pty:"
  cat "$BATS_TEST_TMPDIR/$1.out"
  return 1
}

@test "vm criu: a container with a terminal is restored with a new pty (console socket, then foreground)" {
  local at_dump pid r1 r2 status=0 rpid i
  RECVTTY=${FSRUN%/*}/tests/recvtty
  [ -x "$RECVTTY" ] || skip "tests/recvtty is not built next to $FSRUN"
  # the init counts to the pty and to /t/all; its child copies what is typed on the pty to /t/in
  # (fd 3: an explicit redirection, or sh gives a background job /dev/null)
  set_process_args /bin/sh -c 'exec 3<&0; cat <&3 >>/t/in & exec 3<&-
    i=0; while :; do i=$((i+1)); echo $i >>/t/all; echo $i >/t/c; echo tick$i; sleep 0.2; done'
  update_config '.process.terminal = true'
  start_recvtty tty1
  r1=$RECVTTY_PID
  fsrun run -d --console-socket /tmp/tty1.sock --bundle "$BUNDLE" tty1 </dev/null
  wait_for_count tty1 3
  wait_for_tty_line tty1 '^tick[0-9]+$'

  at_dump=$(count tty1)
  fsrun checkpoint --image-path "$IMAGES/tty1" tty1
  assert_no_leftovers tty1
  # the old pty's slave died with the container: its receiver saw the end
  wait "$r1"

  # detached, the new pty's master to a new console socket; what is typed there reaches the process
  start_recvtty tty2 --input $'typed-after-restore\n'
  r2=$RECVTTY_PID
  fsrun restore -d --console-socket /tmp/tty2.sock --image-path "$IMAGES/tty1" \
    --bundle "$BUNDLE" tty2 </dev/null
  pid=$(fsrun state tty2 | jq -r .pid)
  [ "$(fsrun state tty2 | jq -r .status)" = running ]
  wait_for_count tty2 $((at_dump + 3))
  # the counter went on without a restart (1, 2, 3, ... in order) and prints to the new pty
  run fsrun exec tty2 cat /t/all
  [ -z "$(awk 'NR != $1 { print NR ": " $0; exit }' <<<"$output")" ]
  # the value restored from memory was printed to the old pty; the next is printed to the new one
  wait_for_tty_line tty2 "^tick$(($(count tty2) + 1))\$"
  for ((i = 0; i < WAIT_MAX_S * 5; i++)); do
    [ "$(fsrun exec tty2 cat /t/in)" = typed-after-restore ] && break
    sleep 0.2
  done
  [ "$(fsrun exec tty2 cat /t/in)" = typed-after-restore ]
  # from the host: its stdio is a pty slave (major 136) and its controlling terminal
  [ "$(stat -L -c %t /proc/$pid/fd/1)" = 88 ]
  [ "$(awk '{ print $7 }' /proc/$pid/stat)" != 0 ]
  [ "$(readlink /proc/$pid/fd/0)" = "$(readlink /proc/$pid/fd/1)" ]

  # again, restored in the foreground without a console socket: restore relays the pty to its
  # stdout, as runc does
  at_dump=$(count tty2)
  fsrun checkpoint --image-path "$IMAGES/tty2" tty2
  wait "$r2"
  assert_no_leftovers tty2
  "$FSRUN" --root "$FSRUN_ROOT" restore --image-path "$IMAGES/tty2" --bundle "$BUNDLE" tty3 \
    </dev/null >"$BATS_TEST_TMPDIR/tty3.out" 2>&1 3>&- &
  rpid=$!
  wait_for_count tty3 $((at_dump + 3))
  wait_for_tty_line tty3 "^tick$(($(count tty3) + 1))\$"
  run fsrun exec tty3 cat /t/all
  [ -z "$(awk 'NR != $1 { print NR ": " $0; exit }' <<<"$output")" ]
  fsrun kill tty3 KILL
  status=0
  wait "$rpid" || status=$?
  [ "$status" -eq 137 ]
  run fsrun state tty3
  [ "$status" -eq 1 ]
  assert_no_leftovers tty3
}
