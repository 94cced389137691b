# Shared by the CRIU files of the VM suite (criu.bats, criu-lazy-pages.bats): their bundle and the
# counter their containers run.

# criu_setup: root and criu or skip; a bundle whose container counts through a pipe into a tmpfs
# (/t), with a read-only bind (/shared, with a run.fsrun.mounts annotation) and a seccomp filter;
# checkpoint images go to $IMAGES
criu_setup() {
  requires_root
  command -v criu >/dev/null || skip "needs criu"
  setup_bundle
  IMAGES=$BATS_TEST_TMPDIR/images
  mkdir -p "$BATS_TEST_TMPDIR/shared"
  echo from-the-host >"$BATS_TEST_TMPDIR/shared/hello"
  # a counter through a pipe (the shell's loop | the reader), an open file on a tmpfs (fd 3 of the
  # reader) and the stdout fsrun gave it; mkdir is refused by its seccomp filter (EPERM)
  set_process_args /bin/sh -c 'exec </dev/null
    i=0; while :; do i=$((i+1)); echo $i; sleep 0.2; done |
    { exec 3>>/t/open; while read n; do echo $n >&3; echo $n >/t/c; echo out$n; done; }'
  # /shared carries the checks of a task container's bind (bind-identity.h): its source's identity
  # and a destination through no link, which create and restore both apply
  update_config '.mounts += [{"destination": "/t", "type": "tmpfs", "source": "tmpfs"},
    {"destination": "/shared", "type": "bind", "source": $s, "options": ["rbind", "ro"]}]
    | .annotations["run.fsrun.mounts.\(.mounts | length - 1)"] = ({destination: "/shared",
        sourceId: $id, destinationNoSymlinks: true} | tojson)
    | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}' \
    --arg s "$BATS_TEST_TMPDIR/shared" --arg id "$(stat -c %d:%i "$BATS_TEST_TMPDIR/shared")"
}

# start_counter ID: `run -d` with its stdout a pipe to $BATS_TEST_TMPDIR/ID.out; waits for count 3
start_counter() {
  fsrun run -d --bundle "$BUNDLE" "$1" </dev/null > >(exec cat >"$BATS_TEST_TMPDIR/$1.out" 3>&-) 2>&1
  wait_for_count "$1" 3
}

# count ID: the counter's last value, read inside the container
count() {
  fsrun exec "$1" cat /t/c
}

# wait_for_count ID N: until the counter is at least N (bounded: 300 polls)
wait_for_count() {
  local i n
  for ((i = 0; i < 300; i++)); do
    n=$(count "$1" 2>/dev/null) && [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.2
  done
  echo "container $1: the counter did not reach $2 (last: ${n:-none})"
  return 1
}
