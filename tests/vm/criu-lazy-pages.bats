#!/usr/bin/env bats
# bats file_tags=cgroupv2
# Lazy migration with CRIU (checkpoint --lazy-pages --page-server --status-fd, restore
# --lazy-pages beside `criu lazy-pages`) and a plain dump to `criu page-server`. Only in the VM
# (tests/vm/run.sh), as criu.bats, and a file of its own: with criu.bats's tests one file went
# past the suite's 900 s limit per file on the loaded host.

load ../integration/helpers
load criu-helpers

setup() {
  criu_setup
}

teardown() {
  local pid child id
  # what a failed lazy-pages test left running: criu's page server (the dump, a child of
  # checkpoint) and its lazy-pages daemon, by pid
  for pid in ${LAZY_PIDS:-}; do
    for child in $(pgrep -P "$pid"); do kill -KILL "$child" 2>/dev/null; done
    kill -KILL "$pid" 2>/dev/null
  done
  for id in ${LAZY_IDS:-}; do fsrun delete --force "$id" >/dev/null 2>&1; done
  teardown_bundle
}

# wait_bounded PID SECONDS: waits for the child PID to exit, at most SECONDS; its exit status
wait_bounded() {
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    kill -0 "$1" 2>/dev/null || {
      wait "$1"
      return
    }
    sleep 0.2
  done
  echo "pid $1 still runs after $2 s"
  return 124
}

# start_memory_counter ID: a counter whose init keeps 4 MiB of random bytes (base64, 5.6 MB in a
# shell variable: anonymous memory) with their md5 in /t/sum0; for /t/check it writes their md5
# and length again to /t/sum1 (renamed into place: complete once it is there)
start_memory_counter() {
  set_process_args /bin/sh -c 'exec </dev/null
    x=$(head -c 4194304 /dev/urandom | base64 -w 0); printf %s "$x" | md5sum >/t/sum0
    i=0; while :; do i=$((i+1)); echo $i >>/t/all; echo $i >/t/c
      if [ -e /t/check ]; then
        { printf %s "$x" | md5sum; echo ${#x}; } >/t/sum1.new; mv /t/sum1.new /t/sum1; rm /t/check
      fi
      sleep 0.2; done'
  start_counter "$1"
}

# assert_memory_intact ID SUM0: the counter went on without a restart, and the memory it kept is
# the one that was dumped (its md5 is SUM0)
assert_memory_intact() {
  local i
  run fsrun exec "$1" cat /t/all
  [ "$status" -eq 0 ]
  [ -z "$(awk 'NR != $1 { print NR ": " $0; exit }' <<<"$output")" ]
  fsrun exec "$1" touch /t/check
  for ((i = 0; i < 300; i++)); do
    fsrun exec "$1" test -e /t/sum1 && break
    sleep 0.2
  done
  run fsrun exec "$1" cat /t/sum1
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$2" ]
  [ "${lines[1]}" -gt 5000000 ]
}

# status_byte FIFO: what `--status-fd` wrote into FIFO, as hex (" 00"), once it wrote or every
# writer closed it (criu failed); bounded
status_byte() {
  timeout 600 head -c 1 "$1" | od -An -tx1
}

@test "vm criu: --lazy-pages: checkpoint serves the memory from its page server, restore faults it in from criu lazy-pages" {
  local images=$IMAGES/lazy work=$BATS_TEST_TMPDIR/lazy-work port=27277 at_dump sum0 pid1 reader
  local dump rc=0 daemon
  LAZY_IDS="lazy1 lazy2"
  run fsrun features
  [ "$status" -eq 0 ]
  [ "$(jq -r '.annotations["org.fsrun.checkpoint.lazy-pages"]' <<<"$output")" = true ]
  start_memory_counter lazy1
  sum0=$(fsrun exec lazy1 cat /t/sum0)
  pid1=$(fsrun state lazy1 | jq -r .pid)
  at_dump=$(count lazy1)

  # the dump: everything but the memory; then it serves the pages on 127.0.0.1:PORT and says so
  # on the status fd
  mkfifo "$BATS_TEST_TMPDIR/dump-status" "$BATS_TEST_TMPDIR/daemon-status"
  status_byte "$BATS_TEST_TMPDIR/dump-status" >"$BATS_TEST_TMPDIR/dump-status.hex" &
  reader=$!
  "$FSRUN" --root "$FSRUN_ROOT" checkpoint --lazy-pages --page-server "127.0.0.1:$port" \
    --status-fd 5 --image-path "$images" --work-path "$BATS_TEST_TMPDIR/dump-work" lazy1 \
    5>"$BATS_TEST_TMPDIR/dump-status" </dev/null >"$BATS_TEST_TMPDIR/dump.out" 2>&1 3>&- &
  dump=$!
  LAZY_PIDS=$dump
  wait "$reader"
  [ "$(cat "$BATS_TEST_TMPDIR/dump-status.hex")" = " 00" ] || {
    cat "$BATS_TEST_TMPDIR/dump.out"
    grep -B3 Error "$BATS_TEST_TMPDIR/dump-work/dump.log" 2>/dev/null
    false
  }
  # still serving: the checkpoint has not returned, the container is still there, and the
  # images hold next to none of its memory
  kill -0 "$dump"
  fsrun state lazy1 >/dev/null
  [ -f "$images/inventory.img" ]
  [ "$(cat "$images"/pages-*.img 2>/dev/null | wc -c)" -lt 1048576 ]

  # the restore side: criu's lazy-pages daemon (ready when its status fd says so), then restore
  mkdir "$work"
  status_byte "$BATS_TEST_TMPDIR/daemon-status" >"$BATS_TEST_TMPDIR/daemon-status.hex" &
  reader=$!
  criu lazy-pages --page-server --address 127.0.0.1 --port "$port" --images-dir "$images" \
    --work-dir "$work" -o lazy-pages.log -v4 --status-fd 5 5>"$BATS_TEST_TMPDIR/daemon-status" \
    </dev/null >/dev/null 2>&1 3>&- &
  daemon=$!
  LAZY_PIDS="$dump $daemon"
  wait "$reader"
  [ "$(cat "$BATS_TEST_TMPDIR/daemon-status.hex")" = " 00" ] || {
    tail "$work/lazy-pages.log"
    false
  }
  fsrun restore --lazy-pages --image-path "$images" --work-path "$work" -d --bundle "$BUNDLE" \
    lazy2 </dev/null >"$BATS_TEST_TMPDIR/lazy2.out" 2>&1
  [ "$(fsrun state lazy2 | jq -r .status)" = running ]

  # the counter goes on without a restart, and the memory is the one that was dumped
  wait_for_count lazy2 $((at_dump + 3))
  assert_memory_intact lazy2 "$sum0"

  # every page pulled: the daemon ends, then the dump, and checkpoint deleted the old container
  wait_bounded "$daemon" 300 || rc=$?
  [ "$rc" -eq 0 ] || { tail "$work/lazy-pages.log"; false; }
  wait_bounded "$dump" 300 || rc=$?
  [ "$rc" -eq 0 ] || { cat "$BATS_TEST_TMPDIR/dump.out"; false; }
  LAZY_PIDS=""
  run fsrun state lazy1
  [ "$status" -eq 1 ]
  [[ "$output" == *"does not exist"* ]]
  run kill -0 "$pid1"
  [ "$status" -ne 0 ]
  [ ! -e /sys/fs/cgroup/fsrun/lazy1 ]
  [ "$(fsrun state lazy2 | jq -r .status)" = running ]
  fsrun kill lazy2 KILL
  wait_for_status lazy2 stopped
  fsrun delete lazy2
  assert_no_leftovers lazy2
  assert_no_leftovers lazy1
}

@test "vm criu: --page-server without --lazy-pages: the dump's pages go to a criu page-server" {
  local images=$IMAGES/ps pages=$IMAGES/ps-pages port=27278 at_dump sum0 reader server rc=0
  LAZY_IDS="ps1 ps2"
  start_memory_counter ps1
  sum0=$(fsrun exec ps1 cat /t/sum0)
  at_dump=$(count ps1)
  # the other side: criu's page server, ready when its status fd says so
  mkdir -p "$pages"
  mkfifo "$BATS_TEST_TMPDIR/ps-status"
  status_byte "$BATS_TEST_TMPDIR/ps-status" >"$BATS_TEST_TMPDIR/ps-status.hex" &
  reader=$!
  criu page-server --images-dir "$pages" --address 127.0.0.1 --port "$port" -o page-server.log \
    -v4 --status-fd 5 5>"$BATS_TEST_TMPDIR/ps-status" </dev/null >/dev/null 2>&1 3>&- &
  server=$!
  LAZY_PIDS=$server
  wait "$reader"
  [ "$(cat "$BATS_TEST_TMPDIR/ps-status.hex")" = " 00" ]

  fsrun checkpoint --page-server "127.0.0.1:$port" --image-path "$images" ps1
  wait_bounded "$server" 300 || rc=$?
  [ "$rc" -eq 0 ] || { tail "$pages/page-server.log"; false; }
  LAZY_PIDS=""
  run fsrun state ps1
  [ "$status" -eq 1 ]
  # the memory went to the page server, not to the images
  [ "$(cat "$pages"/pages-*.img | wc -c)" -gt 5000000 ]
  [ "$(cat "$images"/pages-*.img 2>/dev/null | wc -c)" -lt 1048576 ]

  # both halves together restore it
  cp "$pages"/pagemap-*.img "$pages"/pages-*.img "$images/"
  fsrun restore --image-path "$images" -d --bundle "$BUNDLE" ps2 </dev/null \
    >"$BATS_TEST_TMPDIR/ps2.out" 2>&1
  wait_for_count ps2 $((at_dump + 3))
  assert_memory_intact ps2 "$sum0"
  fsrun kill ps2 KILL
  wait_for_status ps2 stopped
  fsrun delete ps2
  assert_no_leftovers ps2
  assert_no_leftovers ps1
}
