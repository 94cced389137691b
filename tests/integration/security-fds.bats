#!/usr/bin/env bats
# Invariant 2 (CVE-2024-21626): no file descriptor of the runtime reaches the container. Everything
# above stdio is close-on-exec before execve (except --preserve-fds), and process.cwd is resolved
# inside the new root, so a cwd through /proc/self/fd/N cannot lead to a runtime fd's directory.

load helpers

setup() {
  requires_root
  requires_fsrun_command create
  setup_bundle
}

teardown() {
  teardown_bundle
}

@test "security-fds: every fd above stdio of a waiting init is close-on-exec" {
  set_process_args /bin/true
  fsrun create --bundle "$BUNDLE" sec-fds-$UNIQ 5</dev/null 9</dev/null
  pid=$(fsrun state sec-fds-$UNIQ | jq -r .pid)
  n=0
  for fdinfo in /proc/$pid/fdinfo/*; do
    fd=${fdinfo##*/}
    [ "$fd" -gt 2 ] || continue
    flags=$(awk '$1 == "flags:" { print $2 }' "$fdinfo")
    n=$((n + 1))
    # O_CLOEXEC is 02000000 in the octal flags
    if [ $(((8#$flags >> 19) & 1)) != 1 ]; then
      echo "fd $fd ($(readlink /proc/$pid/fd/$fd)) of the init is not close-on-exec: flags $flags" >&2
      false
    fi
  done
  # the caller's fds 5 and 9 were among them, so the check above saw real fds
  [ "$n" -ge 2 ]
  fsrun delete --force sec-fds-$UNIQ
}

@test "security-fds: the process sees only stdio (and its own) fds, none pointing at the host" {
  set_process_args /bin/sh -c 'for f in /proc/self/fd/*; do echo "${f##*/} $(readlink $f)"; done'
  run fsrun run --bundle "$BUNDLE" sec-fds2-$UNIQ 4</etc/hostname 8>"$BATS_TEST_TMPDIR/out"
  [ "$status" -eq 0 ]
  for line in "${lines[@]}"; do
    fd=${line%% *}
    # 0-2 and the glob's own directory fd of the shell (if any)
    [ "$fd" -le 3 ] || { echo "unexpected fd: $line" >&2; false; }
    [[ $line != *hostname* && $line != *"$BATS_TEST_TMPDIR"* && $line != *"$FSRUN_ROOT"* ]]
  done
}

@test "security-fds: process.cwd through /proc/self/fd/N never leads outside the container" {
  update_config '.root.readonly = false'
  touch "$ROOTFS/inside-marker"
  set_process_args /bin/sh -c 'echo "pwd=$(pwd -P)"; ls -a .'
  for n in $(seq 3 24); do
    update_config '.process.cwd = $c' --arg c "/proc/self/fd/$n"
    run fsrun run --bundle "$BUNDLE" "sec-cwd-$n-$UNIQ"
    if [ "$status" -eq 0 ]; then
      # it could only have been a directory of the container itself
      [[ ${lines[0]} == pwd=/* ]]
      [[ $output != *unreachable* ]]
      [[ $output != *state.json* && $output != *exec.fifo* && $output != *uid_map* && $output != *cgroup.procs* ]]
    else
      [[ $output == *"process.cwd"* ]]
    fi
    assert_no_leftovers "sec-cwd-$n-$UNIQ"
  done
}

@test "security-fds: an image symlink through /proc/self/fd/N cannot make the init execve a host file" {
  # execve resolves its path before CLOEXEC fds close, so the init must really close them first
  hostdir=$(mktemp -d /tmp/fsrun-escape.XXXXXX)
  # a host ELF binary (a script's interpreter would be resolved later, after the fds are gone):
  # busybox run as `esc` says "applet not found", which only the host copy can print
  cp "$(fsrun_static_busybox 2>/dev/null || echo /bin/busybox)" "$hostdir/esc"
  ln -s /proc/self/fd/9/esc "$BUNDLE/rootfs/bin/esc"
  set_process_args /bin/esc
  status=0
  output=$(fsrun run --bundle "$BUNDLE" sec-fds-exe-$UNIQ 9<"$hostdir" 2>&1) || status=$?
  rm -rf "$hostdir"
  echo "status=$status output=$output"
  [[ $output != *"applet not found"* ]]
  [[ $output == *"o such file or directory"* ]]
}
