#!/usr/bin/env bats
# Security invariants 3 and 4 (file-system part): a hostile rootfs tries to make the runtime mount,
# mask or create device nodes outside of it through symlinks, or to hide a /proc, /sys or /dev of
# its own. Every escape is checked from the host: the host's files and mounts are untouched.

# run-tests: alone (it checks that no mount appeared on the host outside its tmp dir)
load helpers

setup() {
  requires_root
  requires_fsrun_command run
  setup_bundle
  update_config '.root.readonly = false'
  # a host directory the container must never reach; its name is unique to this test
  HOSTDIR=$BATS_TEST_TMPDIR/host-$$-$BATS_TEST_NUMBER
  mkdir -p "$HOSTDIR" "$ROOTFS/mnt"
  echo original >"$HOSTDIR/file"
  MOUNTS_BEFORE=$(host_mounts)
}

teardown() {
  teardown_bundle
}

# The host's mount points, sorted (what an escape through a mount would change).
host_mounts() {
  awk '{ print $5 }' /proc/self/mountinfo | sort
}

# others_removed: the mount points on stdin less the test's own and other test runs' (a shared
# machine runs several at once)
others_removed() {
  grep -v -e "^$BATS_TEST_TMPDIR" -e '^/tmp/fsrun-' -e '^/run/fsrun-tests' -e '^/run/netns/' || true
}

# The host is as it was: HOSTDIR holds only its file, unchanged; no mount appeared or vanished
# outside the test's tmp dir and other test runs' own places (their tmp dirs and state roots, the
# network namespaces of sandbox-net.bats); nothing of the container is left.
assert_host_untouched() {
  [ "$(ls -A "$HOSTDIR")" = file ]
  [ "$(cat "$HOSTDIR/file")" = original ]
  ! mountpoint -q "$HOSTDIR" || false
  ! mountpoint -q "$HOSTDIR/file" || false
  diff <(others_removed <<<"$MOUNTS_BEFORE") <(host_mounts | others_removed)
  [ -z "${CONTAINER_ID:-}" ] || assert_no_leftovers "$CONTAINER_ID"
}

@test "security-rootfs: a mount through an absolute symlink to a host directory stays inside" {
  ln -s "$HOSTDIR" "$ROOTFS/mnt/escape"
  update_config '.mounts += [{"destination": "/mnt/escape/t", "type": "tmpfs", "source": "tmpfs"}]'
  run_in_container sh -c 'grep " /mnt/escape/t \| '"$HOSTDIR"'/t " /proc/self/mountinfo; touch /mnt/escape/t/inside && echo ok'
  [ "$status" -eq 0 ]
  [[ "$output" == *ok* ]]
  # the tmpfs went on the symlink's target inside the rootfs
  [[ "$output" == *" $HOSTDIR/t "* ]]
  [ -d "$ROOTFS/$HOSTDIR/t" ]
  assert_host_untouched
}

@test "security-rootfs: a bind onto /etc through mnt -> /etc never touches the host's /etc" {
  ln -s /etc "$ROOTFS/mnt/etc"
  name=fsrun-escape-$$-$RANDOM$RANDOM
  echo evil >"$BATS_TEST_TMPDIR/evil"
  update_config ".mounts += [{\"destination\": \"/mnt/etc/$name\", \"type\": \"bind\", \"source\": \"$BATS_TEST_TMPDIR/evil\", \"options\": [\"bind\"]}]"
  run_in_container cat "/etc/$name"
  [ "$status" -eq 0 ]
  [ "$output" = evil ]
  [ -f "$ROOTFS/etc/$name" ]
  [ ! -e "/etc/$name" ]
  assert_host_untouched
}

@test "security-rootfs: a relative symlink climbing with ../../.. stops at the rootfs" {
  ln -s ../../../../../../../../../.. "$ROOTFS/mnt/up"
  update_config ".mounts += [{\"destination\": \"/mnt/up$HOSTDIR/t\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"},
    {\"destination\": \"/mnt/up$HOSTDIR/file\", \"type\": \"bind\", \"source\": \"/dev/null\", \"options\": [\"bind\"]}]"
  run_in_container sh -c "ls -d $HOSTDIR/t && wc -c <$HOSTDIR/file"
  [ "$status" -eq 0 ]
  [ "${lines[1]}" = 0 ]
  [ -d "$ROOTFS/$HOSTDIR/t" ]
  assert_host_untouched
}

@test "security-rootfs: a dangling symlink to a host path is created inside the rootfs" {
  ln -s "$HOSTDIR/newdir/deeper" "$ROOTFS/mnt/dangling"
  ln -s "$HOSTDIR/newfile" "$ROOTFS/etc/dangling-file"
  update_config ".mounts += [{\"destination\": \"/mnt/dangling\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"},
    {\"destination\": \"/etc/dangling-file\", \"type\": \"bind\", \"source\": \"$HOSTDIR/file\", \"options\": [\"bind\", \"ro\"]}]"
  run_in_container cat /etc/dangling-file
  [ "$status" -eq 0 ]
  [ "$output" = original ]
  [ -d "$ROOTFS/$HOSTDIR/newdir/deeper" ]
  [ -f "$ROOTFS/$HOSTDIR/newfile" ]
  assert_host_untouched
}

@test "security-rootfs: a symlink to /proc/self/... (magic links) cannot be used as a destination" {
  ln -s /proc/self/root/etc "$ROOTFS/mnt/magic"
  update_config '.mounts += [{"destination": "/mnt/magic/x", "type": "tmpfs", "source": "tmpfs"}]'
  run_in_container true
  # refused (RESOLVE_NO_MAGICLINKS): a magic link would lead to the runtime's own root
  [ "$status" -ne 0 ]
  [[ "$output" == *"/mnt/magic/x"*"symbolic links"* ]]
  [ ! -e /etc/x ] || [ "$(stat -c %Y /etc/x)" -lt "$(stat -c %Y "$BUNDLE/config.json")" ]
  assert_host_untouched
}

@test "security-rootfs: /proc as a symlink is refused" {
  rmdir "$ROOTFS/proc"
  ln -s "$HOSTDIR" "$ROOTFS/proc"
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *"mount destination /proc is not a directory"* ]]
  assert_host_untouched
}

@test "security-rootfs: /proc as a file and /sys as a symlink are refused" {
  rmdir "$ROOTFS/proc"
  touch "$ROOTFS/proc"
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *"mount destination /proc is not a directory"* ]]
  assert_host_untouched

  rm "$ROOTFS/proc"
  mkdir "$ROOTFS/proc"
  rmdir "$ROOTFS/sys"
  ln -s proc "$ROOTFS/sys"
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *"mount destination /sys is not a directory"* ]]
  assert_host_untouched
}

@test "security-rootfs: a rootfs whose /dev is a symlink is refused" {
  rmdir "$ROOTFS/dev"
  ln -s "$HOSTDIR" "$ROOTFS/dev"
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *"rootfs /dev is a symlink"* ]]
  assert_host_untouched

  # also when the config does not mount /dev itself
  update_config '.mounts |= map(select(.destination | startswith("/dev") | not))'
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *"rootfs /dev is a symlink"* ]]
  assert_host_untouched
}

@test "security-rootfs: device nodes through a symlinked directory are created inside the rootfs" {
  ln -s "$HOSTDIR" "$ROOTFS/devlink"
  update_config '.linux.devices = [{"path": "/devlink/null2", "type": "c", "major": 1, "minor": 3}]'
  run_in_container stat -c "%t:%T" "$HOSTDIR/null2"
  [ "$status" -eq 0 ]
  [ "$output" = "1:3" ]
  [ -c "$ROOTFS/$HOSTDIR/null2" ]
  assert_host_untouched
}

@test "security-rootfs: a rootfs /dev without a tmpfs gets real nodes, never its own files or links" {
  # the config mounts nothing on /dev: the rootfs's own /dev is populated, and what the image put
  # there (a regular file as /dev/null, a symlink as /dev/zero) is replaced, not followed
  update_config '.mounts |= map(select(.destination != "/dev"))'
  echo not-null >"$ROOTFS/dev/null"
  ln -s "$HOSTDIR/file" "$ROOTFS/dev/zero"
  run_in_container sh -c 'stat -c "%n %F %t:%T" /dev/null /dev/zero; echo "[$(cat /proc/keys)]"'
  [ "$status" -eq 0 ]
  [[ "$output" == *"/dev/null character special file 1:3"* ]]
  [[ "$output" == *"/dev/zero character special file 1:5"* ]]
  [[ "$output" == *"[]"* ]]
  assert_host_untouched
}

@test "security-rootfs: masking verifies /dev/null is the null device" {
  update_config '.linux.devices = [{"path": "/dev/null", "type": "c", "major": 1, "minor": 5}]'
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *"/dev/null"*"not the null device"* ]]
  assert_host_untouched
}

@test "security-rootfs: masked and read-only paths through symlinks stay inside the rootfs" {
  ln -s "$HOSTDIR/file" "$ROOTFS/etc/masklink"
  echo inside >"$ROOTFS/$HOSTDIR/file" 2>/dev/null || {
    mkdir -p "$ROOTFS/$HOSTDIR"
    echo inside >"$ROOTFS/$HOSTDIR/file"
  }
  ln -s "$HOSTDIR" "$ROOTFS/etc/rolink"
  update_config '.linux.maskedPaths += ["/etc/masklink"] | .linux.readonlyPaths += ["/etc/rolink"]'
  run_in_container sh -c "echo \"[\$(cat $HOSTDIR/file)]\"; touch $HOSTDIR/new 2>/dev/null || echo readonly"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "[]" ]
  [ "${lines[1]}" = readonly ]
  [ "$(cat "$ROOTFS/$HOSTDIR/file")" = inside ]
  assert_host_untouched
}

@test "security-rootfs: sysctls outside the container's namespaces are refused, the host keeps its values" {
  host_forward=$(cat /proc/sys/net/ipv4/ip_forward)
  host_shmmax=$(cat /proc/sys/kernel/shmmax)
  host_panic=$(cat /proc/sys/kernel/panic)

  update_config '.linux.namespaces |= map(select(.type != "network")) | .linux.sysctl = {"net.ipv4.ip_forward": "1"}'
  run_in_container true
  [ "$status" -ne 0 ]
  grep -qi 'net.ipv4.ip_forward.*network namespace' <<<"$output"

  setup_bundle
  update_config '.linux.namespaces |= map(select(.type != "ipc")) | .linux.sysctl = {"kernel.shmmax": "4096"}'
  run_in_container true
  [ "$status" -ne 0 ]
  grep -qi 'kernel.shmmax.*ipc namespace' <<<"$output"

  setup_bundle
  update_config '.linux.sysctl = {"kernel.panic": "7"}'
  run_in_container true
  [ "$status" -ne 0 ]
  grep -qi 'kernel.panic.*not namespaced' <<<"$output"

  # a key that tries to climb out of /proc/sys
  setup_bundle
  update_config '.linux.sysctl = {"net/../../1/oom_score_adj": "1000"}'
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *"not a valid sysctl name"* ]]

  [ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$host_forward" ]
  [ "$(cat /proc/sys/kernel/shmmax)" = "$host_shmmax" ]
  [ "$(cat /proc/sys/kernel/panic)" = "$host_panic" ]
  [ "$(cat /proc/1/oom_score_adj)" != 1000 ]
  assert_host_untouched
}

@test "security-rootfs: /dev holds only the default devices and the config's" {
  update_config '.linux.devices = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229}]'
  run_in_container sh -c 'find /dev -path /dev/pts -prune -o \( -type c -o -type b \) -print | sort'
  [ "$status" -eq 0 ]
  [ "$(tr '\n' ' ' <<<"$output")" = "/dev/full /dev/fuse /dev/null /dev/random /dev/tty /dev/urandom /dev/zero " ]
  # none of the host's disks, memory or kmsg
  [[ "$output" != *vda* && "$output" != *mem* && "$output" != *kmsg* ]]
}

@test "security-rootfs: a destination that resolves into /proc through a symlink is refused" {
  # a rootfs that points an innocent-looking destination at the init's LSM attributes or at sysctls
  ln -s /proc/self/attr/exec "$ROOTFS/etc/evil"
  update_config ".mounts += [{\"destination\": \"/etc/evil\", \"type\": \"bind\", \"source\": \"$HOSTDIR/file\", \"options\": [\"bind\"]}]"
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *"mount destination /etc/evil is inside /proc"* ]]
  assert_host_untouched

  setup_bundle
  mkdir -p "$ROOTFS/mnt"
  ln -s /proc/sys/kernel "$ROOTFS/mnt/p"
  update_config '.mounts += [{"destination": "/mnt/p", "type": "tmpfs", "source": "tmpfs"}]'
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *"mount destination /mnt/p is inside /proc"* ]]
  assert_host_untouched
}

@test "security-rootfs: the files lxcfs overrides in /proc may still be bound over" {
  echo "12345.00 1.00" >"$HOSTDIR/uptime"
  update_config ".mounts += [{\"destination\": \"/proc/uptime\", \"type\": \"bind\", \"source\": \"$HOSTDIR/uptime\", \"options\": [\"bind\", \"ro\"]}]"
  run_in_container cat /proc/uptime
  [ "$status" -eq 0 ]
  [ "$output" = "12345.00 1.00" ]
  rm "$HOSTDIR/uptime"
  assert_host_untouched
}

@test "security-rootfs: in a user namespace as root, the default devices are the host's nodes bound nosuid,noexec" {
  # a user namespace may not mknod: the host's nodes are bound in, never as a way to a setuid or
  # executable file (rootless.bats checks the same for an ordinary user)
  update_config '.linux.namespaces += [{"type": "user"}] |
    .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}] |
    .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]'
  run_in_container /bin/sh -c 'for d in null zero full random urandom tty; do
    grep " /dev/$d " /proc/self/mountinfo; done'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${#lines[@]}" -eq 6 ]
  for line in "${lines[@]}"; do
    read -r _ _ _ _ _ opts _ <<<"$line"
    [[ ",$opts," == *,nosuid,* ]]
    [[ ",$opts," == *,noexec,* ]]
  done
}

@test "security-rootfs: in a user namespace as root, a linux.devices node the host lacks is made by the runtime, off the host" {
  # mknod is impossible in the user namespace and there is no host node to bind: the runtime
  # makes it on a tmpfs it never attaches (crun's behaviour). Uid and gid 1234:1500 are mapped to
  # 201234:201500 on the host, and must read back as the config's inside; mode 0606 (not narrowed by a
  # umask) lets the container's root, an "other" without CAP_DAC_OVERRIDE, write and read it.
  local node=/dev/fsrun-test-null-$$
  [ ! -e "$node" ]
  update_config '.linux.namespaces += [{"type": "user"}] |
    .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 1000}, {"containerID": 1000, "hostID": 201000, "size": 1000}] |
    .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 1000}, {"containerID": 1000, "hostID": 201000, "size": 1000}] |
    .linux.devices = [{"path": $p, "type": "c", "major": 1, "minor": 3, "fileMode": 390, "uid": 1234, "gid": 1500},
                      {"path": "/dev/full", "type": "c", "major": 1, "minor": 7}]' --arg p "$node"
  run_in_container sh -c 'stat -c "%t:%T %F %a %u:%g" "$1" /dev/full; echo x >"$1" && echo written;
    wc -c <"$1"; head -c 3 /dev/full | wc -c; grep -c " $1 " /proc/self/mountinfo;
    grep " $1 " /proc/self/mountinfo' sh "$node"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "1:3 character special file 606 1234:1500" ]
  [ "${lines[1]}" = "1:7 character special file 666 0:0" ]
  [ "${lines[2]}" = written ]
  [ "${lines[3]}" = 0 ]
  [ "${lines[4]}" = 3 ]
  [ "${lines[5]}" = 1 ]
  read -r _ _ _ _ _ opts _ <<<"${lines[6]}"
  [[ ",$opts," == *,nosuid,* ]]
  [[ ",$opts," == *,noexec,* ]]
  # nothing on the host: no node in its /dev, no tmpfs mounted (assert_host_untouched diffs them)
  [ ! -e "$node" ]
  ! grep -q "fsrun-test-null" /proc/self/mountinfo || false
  assert_host_untouched
}
