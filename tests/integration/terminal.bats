#!/usr/bin/env bats
# process.terminal (terminal.c): the pty master handed over --console-socket with SCM_RIGHTS (as
# conmon and the containerd shim expect), consoleSize, /dev/console, and `run`'s own relay.

load helpers

setup() {
  requires_root
  requires_fsrun_command create
  setup_bundle
  RECVTTY=${FSRUN%/*}/tests/recvtty
  [ -x "$RECVTTY" ] || skip "tests/recvtty is not built next to $FSRUN"
  SOCK=$BATS_TEST_TMPDIR/console.sock
  update_config '.process.terminal = true'
}

teardown() {
  [ -n "${RECV_PID:-}" ] && kill "$RECV_PID" 2>/dev/null
  teardown_bundle
}

@test "terminal: --console-socket hands over a working pty (output, input, size, controlling tty)" {
  update_config '.process.consoleSize = {"height": 33, "width": 111}'
  set_process_args /bin/sh -c 'tty; stty size; read line; echo "got:$line"'
  start_recvtty --input $'typed-input\n'
  fsrun create --bundle "$BUNDLE" --console-socket "$SOCK" term1-$UNIQ
  fsrun start term1-$UNIQ
  # a pty translates \n into \r\n
  recvtty_output
  [[ $output == *"/dev/pts/"* ]]
  [[ $output == *"33 111"* ]]
  [[ $output == *"got:typed-input"* ]]
  wait_for_status term1-$UNIQ stopped
  fsrun delete term1-$UNIQ
  assert_no_leftovers term1-$UNIQ
}

@test "terminal: the pty is the controlling terminal of a new session and /dev/console" {
  set_process_args /bin/sh -c 'echo "stat $(cut -d" " -f6,7 /proc/self/stat)"; echo "console $(stat -c %t:%T /dev/console)"; echo "tty $(stat -c %t:%T "$(tty)")"'
  start_recvtty
  fsrun run --detach --bundle "$BUNDLE" --console-socket "$SOCK" term2-$UNIQ
  recvtty_output
  # session 1 (the init's own, made by setsid) and a tty_nr that is not 0: a controlling terminal
  [[ $output =~ stat\ 1\ [1-9][0-9]* ]]
  console=$(grep '^console ' <<<"$output")
  tty=$(grep '^tty ' <<<"$output")
  [ -n "${tty#tty }" ]
  [ "${console#console }" = "${tty#tty }" ]
  fsrun delete --force term2-$UNIQ
}

@test "terminal: terminal without a console socket (create) or a socket without terminal is refused" {
  run fsrun create --bundle "$BUNDLE" term3-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *"console-socket"* ]]
  assert_no_leftovers term3-$UNIQ

  update_config '.process.terminal = false'
  start_recvtty
  run fsrun create --bundle "$BUNDLE" --console-socket "$SOCK" term4-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *"console-socket"* ]]
  assert_no_leftovers term4-$UNIQ
}

@test "terminal: foreground run without a console socket relays the pty" {
  set_process_args /bin/sh -c 'tty; read line; echo "got:$line"; exit 6'
  run bash -c 'echo relayed-input | "$FSRUN" --root "$FSRUN_ROOT" run --bundle "$BUNDLE" term5-$UNIQ'
  [ "$status" -eq 6 ]
  output=${output//$'\r'/}
  [[ $output == *"/dev/pts/"* ]]
  [[ $output == *"got:relayed-input"* ]]
  assert_no_leftovers term5-$UNIQ
}
