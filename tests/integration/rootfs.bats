#!/usr/bin/env bats
# The container's filesystem (rootfs.c, mounts.c, devices.c): every kind of `mounts` entry with its
# options, /dev, maskedPaths, readonlyPaths, sysctl, a read-only root, propagation, --no-pivot.
# Assertions are made from inside the container (mountinfo, writes that must fail) and from the
# host (nothing left mounted after the container is gone).

load helpers

setup() {
  requires_root
  requires_fsrun_command run
  setup_bundle
  HOSTDIR=$BATS_TEST_TMPDIR/host
  mkdir -p "$HOSTDIR"
}

teardown() {
  if [ -n "${NETNS_PID:-}" ]; then
    kill "$NETNS_PID" 2>/dev/null
    wait "$NETNS_PID" 2>/dev/null || true
  fi
  if mountpoint -q "$HOSTDIR/priv/ro" 2>/dev/null; then
    umount -l "$HOSTDIR/priv/ro"
  fi
  teardown_bundle
}

# mount_field DEST FIELD: from the mountinfo in $output, field FIELD (6 = per-mount options) of the
# topmost mount at DEST.
mount_field() {
  awk -v d="$1" -v f="$2" '$5 == d { v = $f } END { print v }' <<<"$output"
}

# fstype DEST: the filesystem type of the topmost mount at DEST (the field after "-").
fstype() {
  awk -v d="$1" '$5 == d { for (i = 7; $i != "-"; i++) ; v = $(i + 1) } END { print v }' <<<"$output"
}

# mount_opts DEST: the per-mount options of the topmost mount at DEST, one per line, sorted.
mount_opts() {
  mount_field "$1" 6 | tr , '\n' | sort
}

# super_opts DEST: the super-block options (the last field) of the topmost mount at DEST.
super_opts() {
  awk -v d="$1" '$5 == d { v = $NF } END { print v }' <<<"$output"
}

# optional_fields DEST: the optional fields (shared:N, master:N, unbindable) of the mount at DEST.
optional_fields() {
  awk -v d="$1" '$5 == d { v = ""; for (i = 7; $i != "-"; i++) v = v " " $i } END { print v }' <<<"$output"
}

has_opt() { # has_opt DEST OPT
  mount_opts "$1" | grep -qx -- "$2"
}

add_mount() { # add_mount JSON
  update_config ".mounts += [$1]"
}

@test "rootfs: the default mounts appear with their types and flags" {
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  [ "$(fstype /proc)" = proc ]
  [ "$(fstype /dev)" = tmpfs ]
  has_opt /dev nosuid
  has_opt /dev rw
  [[ ",$(super_opts /dev)," == *,size=65536k,* ]]
  [[ ",$(super_opts /dev)," == *,mode=755,* ]]
  [ "$(fstype /dev/pts)" = devpts ]
  has_opt /dev/pts nosuid
  has_opt /dev/pts noexec
  [[ ",$(super_opts /dev/pts)," == *,ptmxmode=666,* ]]
  [[ ",$(super_opts /dev/pts)," == *,mode=620,* ]]
  [ "$(fstype /dev/shm)" = tmpfs ]
  has_opt /dev/shm nodev
  has_opt /dev/shm noexec
  [ "$(fstype /dev/mqueue)" = mqueue ]
  [ "$(fstype /sys)" = sysfs ]
  has_opt /sys ro
  has_opt /sys/fs/cgroup ro
  # a read-only root (root.readonly is true in the default config)
  has_opt / ro
}

@test "rootfs: a read-only root refuses writes, a writable one takes them" {
  run_in_container sh -c 'touch /newfile 2>&1; echo rc=$?'
  [ "$status" -eq 0 ]
  [[ "$output" == *"Read-only file system"* ]]
  [[ "$output" == *"rc=1"* ]]
  [ ! -e "$ROOTFS/newfile" ]

  update_config '.root.readonly = false'
  run_in_container sh -c 'touch /newfile && echo written'
  [ "$status" -eq 0 ]
  [ "$output" = written ]
  [ -f "$ROOTFS/newfile" ]
}

@test "rootfs: tmpfs options: flags, atime modes and unknown options as fs data" {
  add_mount '{"destination": "/mnt/t", "type": "tmpfs", "source": "tmpfs",
    "options": ["nosuid", "nodev", "noexec", "noatime", "nodiratime", "size=1m", "mode=700"]}'
  add_mount '{"destination": "/mnt/s", "type": "tmpfs", "source": "tmpfs",
    "options": ["ro", "strictatime", "sync", "dirsync"]}'
  run_in_container sh -c 'cat /proc/self/mountinfo; stat -c "mode=%a" /mnt/t; df -k /mnt/t | tail -n 1'
  [ "$status" -eq 0 ]
  for o in nosuid nodev noexec noatime nodiratime rw; do
    has_opt /mnt/t "$o"
  done
  [[ ",$(super_opts /mnt/t)," == *,size=1024k,* ]]
  [[ "$output" == *"mode=700"* ]]
  [[ "$output" =~ tmpfs\ +1024\  ]]
  has_opt /mnt/s ro
  ! has_opt /mnt/s relatime || false
  ! has_opt /mnt/s noatime || false
  [[ ",$(super_opts /mnt/s)," == *,sync,* ]]
  [[ ",$(super_opts /mnt/s)," == *,dirsync,* ]]
}

@test "rootfs: bind mounts: ro refuses writes (EROFS), rw writes reach the host" {
  echo hello >"$HOSTDIR/file"
  mkdir -p "$HOSTDIR/rw"
  add_mount "{\"destination\": \"/mnt/ro\", \"type\": \"bind\", \"source\": \"$HOSTDIR\", \"options\": [\"bind\", \"ro\"]}"
  add_mount "{\"destination\": \"/mnt/rw\", \"type\": \"none\", \"source\": \"$HOSTDIR/rw\", \"options\": [\"rbind\", \"rw\"]}"
  run_in_container sh -c 'cat /mnt/ro/file; echo x >/mnt/ro/new 2>&1; echo rc=$?; echo data >/mnt/rw/out && echo wrote; grep -E " /mnt/(ro|rw) " /proc/self/mountinfo'
  [ "$status" -eq 0 ]
  [[ "$output" == hello* ]]
  [[ "$output" == *"Read-only file system"* ]]
  [[ "$output" == *"rc=1"* ]]
  [[ "$output" == *wrote* ]]
  [ "$(cat "$HOSTDIR/rw/out")" = data ]
  [ ! -e "$HOSTDIR/new" ]
  has_opt /mnt/ro ro
  has_opt /mnt/rw rw
}

@test "rootfs: a bind source relative to the bundle, a file source makes a file target" {
  mkdir -p "$BUNDLE/data"
  echo inside >"$BUNDLE/data/f"
  echo single >"$HOSTDIR/one-file"
  add_mount '{"destination": "/mnt/rel", "type": "bind", "source": "data", "options": ["rbind"]}'
  add_mount "{\"destination\": \"/etc/one-file\", \"type\": \"bind\", \"source\": \"$HOSTDIR/one-file\", \"options\": [\"bind\", \"ro\"]}"
  run_in_container sh -c 'cat /mnt/rel/f; cat /etc/one-file; [ -f /etc/one-file ] && echo is-file'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = inside ]
  [ "${lines[1]}" = single ]
  [ "${lines[2]}" = is-file ]
  # the target was created in the rootfs as a regular file
  [ -f "$ROOTFS/etc/one-file" ]
}

@test "rootfs: a relative destination is relative to /" {
  add_mount '{"destination": "mnt/relative", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
  run_in_container sh -c 'grep " /mnt/relative " /proc/self/mountinfo'
  [ "$status" -eq 0 ]
  [[ "$output" == *" /mnt/relative "*tmpfs* ]]
}

@test "rootfs: rbind with ro makes only the top read-only, rro the whole tree" {
  mkdir -p "$HOSTDIR/top/sub"
  mount -t tmpfs -o size=1m fsrun-test-sub "$HOSTDIR/top/sub"
  add_mount "{\"destination\": \"/mnt/a\", \"type\": \"bind\", \"source\": \"$HOSTDIR/top\", \"options\": [\"rbind\", \"ro\"]}"
  add_mount "{\"destination\": \"/mnt/b\", \"type\": \"bind\", \"source\": \"$HOSTDIR/top\", \"options\": [\"rbind\", \"rro\", \"rnosuid\", \"rnodev\", \"rnoexec\", \"rnoatime\"]}"
  run_in_container sh -c 'cat /proc/self/mountinfo; touch /mnt/a/sub/x && echo a-sub-writable; touch /mnt/b/sub/x 2>/dev/null || echo b-sub-readonly'
  umount "$HOSTDIR/top/sub"
  [ "$status" -eq 0 ]
  has_opt /mnt/a ro
  has_opt /mnt/a/sub rw
  [[ "$output" == *a-sub-writable* ]]
  for d in /mnt/b /mnt/b/sub; do
    for o in ro nosuid nodev noexec noatime; do
      has_opt "$d" "$o"
    done
  done
  [[ "$output" == *b-sub-readonly* ]]
}

@test "rootfs: recursive options clear attributes throughout (rrw, rsuid, rexec, ratime)" {
  mkdir -p "$HOSTDIR/top/sub"
  mount -t tmpfs -o size=1m,ro,nosuid,noexec,noatime fsrun-test-sub "$HOSTDIR/top/sub"
  add_mount "{\"destination\": \"/mnt/c\", \"type\": \"bind\", \"source\": \"$HOSTDIR/top\", \"options\": [\"rbind\", \"rrw\", \"rsuid\", \"rexec\", \"ratime\", \"rnosymfollow\"]}"
  run_in_container cat /proc/self/mountinfo
  umount "$HOSTDIR/top/sub"
  [ "$status" -eq 0 ]
  has_opt /mnt/c/sub rw
  ! has_opt /mnt/c/sub nosuid || false
  ! has_opt /mnt/c/sub noexec || false
  ! has_opt /mnt/c/sub noatime || false
  has_opt /mnt/c/sub relatime
  has_opt /mnt/c/sub nosymfollow
  has_opt /mnt/c nosymfollow
}

@test "rootfs: nosymfollow on a bind refuses to follow symlinks in it" {
  mkdir -p "$HOSTDIR/links"
  echo target >"$HOSTDIR/links/t"
  ln -s t "$HOSTDIR/links/l"
  add_mount "{\"destination\": \"/mnt/l\", \"type\": \"bind\", \"source\": \"$HOSTDIR/links\", \"options\": [\"bind\", \"nosymfollow\"]}"
  run_in_container sh -c 'cat /mnt/l/t; cat /mnt/l/l 2>&1; grep " /mnt/l " /proc/self/mountinfo'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = target ]
  [[ "${lines[1]}" == *"Too many"* || "${lines[1]}" == *"symbolic links"* ]]
  [[ "$output" == *nosymfollow* ]]
}

@test "rootfs: propagation options show in mountinfo" {
  mkdir -p "$HOSTDIR/p1" "$HOSTDIR/p2" "$HOSTDIR/p3"
  add_mount "{\"destination\": \"/mnt/shared\", \"type\": \"bind\", \"source\": \"$HOSTDIR/p1\", \"options\": [\"bind\", \"shared\"]}"
  add_mount "{\"destination\": \"/mnt/private\", \"type\": \"bind\", \"source\": \"$HOSTDIR/p2\", \"options\": [\"rbind\", \"rprivate\"]}"
  add_mount "{\"destination\": \"/mnt/unbindable\", \"type\": \"bind\", \"source\": \"$HOSTDIR/p3\", \"options\": [\"bind\", \"unbindable\"]}"
  add_mount '{"destination": "/mnt/tshared", "type": "tmpfs", "source": "tmpfs", "options": ["rshared"]}'
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  [[ "$(optional_fields /mnt/shared)" == *shared:* ]]
  [ -z "$(optional_fields /mnt/private)" ]
  [[ "$(optional_fields /mnt/unbindable)" == *unbindable* ]]
  [[ "$(optional_fields /mnt/tshared)" == *shared:* ]]
}

@test "rootfs: rootfsPropagation is applied to / after pivot_root" {
  update_config '.linux.rootfsPropagation = "rshared"'
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  [[ "$(optional_fields /)" == *shared:* ]]

  update_config '.linux.rootfsPropagation = "rprivate"'
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  [ -z "$(optional_fields /)" ]

  update_config '.linux.rootfsPropagation = "sideways"'
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *"rootfsPropagation"*sideways* ]]
}

@test "rootfs: masked paths read empty, nonexistent ones are skipped" {
  echo secret >"$ROOTFS/etc/secret"
  mkdir -p "$ROOTFS/etc/secretdir"
  echo x >"$ROOTFS/etc/secretdir/file"
  update_config '.linux.maskedPaths += ["/etc/secret", "/etc/secretdir", "/does/not/exist"]'
  run_in_container sh -c 'echo "keys=[$(cat /proc/keys)]"; echo "timer=[$(cat /proc/timer_list)]"; echo "secret=[$(cat /etc/secret)]"; echo "dir=[$(ls -A /etc/secretdir)]"; echo "acpi=[$(ls -A /proc/acpi)]"; touch /etc/secretdir/y 2>/dev/null || echo dir-readonly; [ -e /does/not/exist ] || echo skipped; cat /proc/kcore 2>/dev/null | wc -c'
  [ "$status" -eq 0 ]
  [[ "$output" == *"keys=[]"* ]]
  [[ "$output" == *"timer=[]"* ]]
  [[ "$output" == *"secret=[]"* ]]
  [[ "$output" == *"dir=[]"* ]]
  [[ "$output" == *"acpi=[]"* ]]
  [[ "$output" == *dir-readonly* ]]
  [[ "$output" == *skipped* ]]
  [ "${lines[-1]}" = 0 ]
  # the rootfs itself is untouched
  [ "$(cat "$ROOTFS/etc/secret")" = secret ]
}

@test "rootfs: readonlyPaths refuse writes, nonexistent ones are skipped" {
  update_config '.root.readonly = false | .linux.readonlyPaths += ["/etc", "/no/such/path"]'
  run_in_container sh -c 'echo 1 >/proc/sys/kernel/domainname 2>&1; echo rc=$?; touch /etc/x 2>&1; echo rc=$?; touch /tmp/ok && echo tmp-writable; grep -E " /(proc/sys|etc) " /proc/self/mountinfo'
  [ "$status" -eq 0 ]
  [[ "$output" == *"Read-only file system"* ]]
  [ "$(grep -c 'rc=1' <<<"$output")" = 2 ]
  [[ "$output" == *tmp-writable* ]]
  has_opt /proc/sys ro
  has_opt /etc ro
  [ ! -e "$ROOTFS/etc/x" ]
}

@test "rootfs: a readonlyPaths entry that is a mount is read-only throughout, in place" {
  # a bind with a bind below it: both refuse writes, and no read-only copy is stacked on top (one
  # mount at each path: the writable one is not left underneath); the host's directory stays writable
  mkdir -p "$HOSTDIR/sub"
  add_mount "{\"destination\": \"/mnt/ro\", \"type\": \"bind\", \"source\": \"$HOSTDIR\", \"options\": [\"bind\"]}"
  add_mount "{\"destination\": \"/mnt/ro/sub\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"}"
  update_config '.root.readonly = false | .linux.readonlyPaths += ["/mnt/ro"]'
  run_in_container sh -c 'touch /mnt/ro/x 2>&1; echo rc=$?; touch /mnt/ro/sub/x 2>&1; echo rc=$?; cat /proc/self/mountinfo'
  [ "$status" -eq 0 ]
  [ "$(grep -c 'rc=1' <<<"$output")" = 2 ]
  [ "$(awk '$5 == "/mnt/ro"' <<<"$output" | wc -l)" = 1 ]
  [ "$(awk '$5 == "/mnt/ro/sub"' <<<"$output" | wc -l)" = 1 ]
  has_opt /mnt/ro ro
  has_opt /mnt/ro/sub ro
  touch "$HOSTDIR/host-writable"
  [ ! -e "$HOSTDIR/x" ]
}

@test "rootfs: /dev holds exactly the default nodes and links" {
  run_in_container sh -c 'ls -A /dev; for d in null zero full random urandom tty; do stat -c "%n %F %t:%T %a" /dev/$d; done; for l in fd stdin stdout stderr ptmx; do echo "$l -> $(readlink /dev/$l)"; done'
  [ "$status" -eq 0 ]
  expected="fd full mqueue null ptmx pts random shm stderr stdin stdout tty urandom zero"
  [ -e /proc/kcore ] && expected="core $expected"
  got=$(head -n 20 <<<"$output" | grep -v ' ' | sort | tr '\n' ' ')
  [ "$got" = "$(tr ' ' '\n' <<<"$expected" | sort | tr '\n' ' ')" ]
  [[ "$output" == *"/dev/null character special file 1:3 666"* ]]
  [[ "$output" == *"/dev/zero character special file 1:5 666"* ]]
  [[ "$output" == *"/dev/full character special file 1:7 666"* ]]
  [[ "$output" == *"/dev/random character special file 1:8 666"* ]]
  [[ "$output" == *"/dev/urandom character special file 1:9 666"* ]]
  [[ "$output" == *"/dev/tty character special file 5:0 666"* ]]
  [[ "$output" == *"fd -> /proc/self/fd"* ]]
  [[ "$output" == *"stdin -> /proc/self/fd/0"* ]]
  [[ "$output" == *"stdout -> /proc/self/fd/1"* ]]
  [[ "$output" == *"stderr -> /proc/self/fd/2"* ]]
  [[ "$output" == *"ptmx -> pts/ptmx"* ]]
}

@test "rootfs: linux.devices entries appear with their type, numbers, mode and owner" {
  update_config '.linux.devices = [
    {"path": "/dev/mydev", "type": "c", "major": 1, "minor": 7, "fileMode": 384, "uid": 1000, "gid": 1000},
    {"path": "/dev/net/tun", "type": "c", "major": 10, "minor": 200, "fileMode": 438},
    {"path": "/dev/myblk", "type": "b", "major": 7, "minor": 0},
    {"path": "/dev/myfifo", "type": "p", "fileMode": 420}]'
  run_in_container sh -c 'for d in mydev net/tun myblk myfifo; do stat -c "%n %F %t:%T %a %u:%g" /dev/$d; done; ls -A /dev | tr "\n" " "'
  [ "$status" -eq 0 ]
  [[ "$output" == *"/dev/mydev character special file 1:7 600 1000:1000"* ]]
  [[ "$output" == *"/dev/net/tun character special file a:c8 666 0:0"* ]]
  [[ "$output" == *"/dev/myblk block special file 7:0 666 0:0"* ]]
  [[ "$output" == *"/dev/myfifo fifo 0:0 644 0:0"* ]]
  [[ "$output" == *" mydev "* && "$output" == *" net "* ]]
}

@test "rootfs: a linux.devices entry replaces a default device of the same path" {
  update_config '.linux.devices = [{"path": "/dev/tty", "type": "c", "major": 1, "minor": 5, "fileMode": 432}]'
  run_in_container stat -c "%t:%T %a" /dev/tty
  [ "$status" -eq 0 ]
  [ "$output" = "1:5 660" ]
}

@test "rootfs: sysctl is applied in the container's namespaces only" {
  host_forward=$(cat /proc/sys/net/ipv4/ip_forward)
  host_shmmax=$(cat /proc/sys/kernel/shmmax)
  update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.shmmax": "123456789"}'
  run_in_container sh -c 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/shmmax'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1 ]
  [ "${lines[1]}" = 123456789 ]
  [ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$host_forward" ]
  [ "$(cat /proc/sys/kernel/shmmax)" = "$host_shmmax" ]
}

@test "rootfs: a bad sysctl fails with the key in the message" {
  update_config '.linux.sysctl = {"net.ipv4.no_such_knob": "1"}'
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *"net.ipv4.no_such_knob"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "rootfs: cgroup mount with a cgroup namespace shows the hierarchies read-only" {
  run_in_container sh -c 'ls /sys/fs/cgroup; cat /proc/self/mountinfo; touch /sys/fs/cgroup/x 2>/dev/null || echo tmpfs-readonly'
  [ "$status" -eq 0 ]
  [[ "$output" == *tmpfs-readonly* ]]
  if [ "$(cgroup_mode)" = unified ]; then
    [ "$(fstype /sys/fs/cgroup)" = cgroup2 ]
    has_opt /sys/fs/cgroup ro
    # the namespace's root, not the host's ("/../.." seen from inside)
    [ "$(mount_field /sys/fs/cgroup 4)" = / ]
  else
    [ "$(fstype /sys/fs/cgroup)" = tmpfs ]
    # one read-only mount per hierarchy the host mounts
    for dir in /sys/fs/cgroup/*/; do
      name=${dir%/}
      name=${name##*/}
      [ "$(stat -fc %T "$dir")" = cgroupfs ] || [ "$(stat -fc %T "$dir")" = cgroup2fs ] || continue
      [[ "$output" == *" /sys/fs/cgroup/$name "* ]]
      has_opt "/sys/fs/cgroup/$name" ro
      [ "$(mount_field "/sys/fs/cgroup/$name" 4)" = / ]
    done
  fi
}

@test "rootfs: cgroup mount without a cgroup namespace binds the container's own cgroup" {
  update_config '.linux.namespaces |= map(select(.type != "cgroup"))'
  if [ "$(cgroup_mode)" = unified ]; then
    run_in_container sh -c 'cat /sys/fs/cgroup/cgroup.procs'
  else
    requires_cgroup_v1
    run_in_container sh -c 'cat /sys/fs/cgroup/pids/cgroup.procs'
  fi
  [ "$status" -eq 0 ]
  # only the container's own processes are listed: it is the container's cgroup, not the host root
  [ "${#lines[@]}" -le 2 ]
}

@test "rootfs: remount changes an earlier mount of the same destination" {
  mkdir -p "$HOSTDIR/b"
  add_mount '{"destination": "/mnt/t", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
  add_mount '{"destination": "/mnt/t", "type": "tmpfs", "source": "tmpfs", "options": ["remount", "ro", "size=2m"]}'
  add_mount "{\"destination\": \"/mnt/b\", \"type\": \"bind\", \"source\": \"$HOSTDIR/b\", \"options\": [\"bind\"]}"
  add_mount "{\"destination\": \"/mnt/b\", \"type\": \"bind\", \"source\": \"$HOSTDIR/b\", \"options\": [\"bind\", \"remount\", \"ro\", \"nosuid\"]}"
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  [ "$(grep -c ' /mnt/t ' <<<"$output")" = 1 ]
  has_opt /mnt/t ro
  [[ ",$(super_opts /mnt/t)," == *,size=2048k,* ]]
  [ "$(grep -c ' /mnt/b ' <<<"$output")" = 1 ]
  has_opt /mnt/b ro
  has_opt /mnt/b nosuid
}

# A mount onto / replaces the root (what fsrun sandbox asks for: a fresh tmpfs, so no mount point is
# ever made in the bundle). The image is gone from the container's view; later mounts go into the
# new root, and nothing of it reaches the bundle's rootfs on the host.
@test "rootfs: a tmpfs mounted onto / becomes the root; later mounts and writes stay in it" {
  local before
  CONTAINER_ID=tmpfs-root-$$-$RANDOM$RANDOM
  before=$(find "$ROOTFS" | sort | md5sum)
  update_config '.root.readonly = false'
  update_config '.mounts = [{"destination": "/", "type": "tmpfs", "source": "tmpfs", "options": ["mode=755", "size=1m"]}] + .mounts'
  # (a bind source inside the old root would be looked up in the new one: this one is outside)
  cp -a "$ROOTFS/bin" "$HOSTDIR/bin"
  add_mount "{\"destination\": \"/bin\", \"type\": \"bind\", \"source\": \"$HOSTDIR/bin\", \"options\": [\"bind\", \"ro\"]}"
  add_mount '{"destination": "/deep/new/dir", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m"]}'
  set_process_args /bin/sh -c 'cat /proc/self/mountinfo; ls -A /; echo x >/written && echo wrote; ls /deep/new'
  run fsrun run --bundle "$BUNDLE" "$CONTAINER_ID"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(fstype /)" = tmpfs ]
  [ "$(fstype /deep/new/dir)" = tmpfs ]
  [ "$(fstype /proc)" = proc ]
  [[ $output == *wrote* ]]
  # the image's own files are not there: only what the config mounts
  ! grep -qx etc <<<"$output" || false
  grep -qx deep <<<"$output"
  [ "$(find "$ROOTFS" | sort | md5sum)" = "$before" ]
  assert_no_leftovers "$CONTAINER_ID"

  # the same with --no-pivot (the new root is moved onto /)
  run fsrun run --no-pivot --bundle "$BUNDLE" "$CONTAINER_ID-np"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(fstype /)" = tmpfs ]
  [[ $output == *wrote* ]]
  [ "$(find "$ROOTFS" | sort | md5sum)" = "$before" ]
  assert_no_leftovers "$CONTAINER_ID-np"
}

# run.fsrun.rootfs.symlinks (the sandbox's merged-/usr links): links made at the top of a tmpfs the
# config mounts onto /, read by the process; the image is untouched. Bad values, a config without
# that tmpfs, and a mount through a link are refused, one line naming the annotation.
tmpfs_root_with_usr() {
  update_config '.root.readonly = true'
  update_config '.mounts = [{"destination": "/", "type": "tmpfs", "source": "tmpfs", "options": ["mode=755", "size=1m"]}] + .mounts'
  mkdir -p "$HOSTDIR/usr"
  cp -a "$ROOTFS/bin" "$HOSTDIR/usr/bin"
  add_mount "{\"destination\": \"/usr\", \"type\": \"bind\", \"source\": \"$HOSTDIR/usr\", \"options\": [\"bind\", \"ro\"]}"
}

@test "rootfs: run.fsrun.rootfs.symlinks makes its links in the tmpfs root; the process runs through them" {
  local before
  before=$(find "$ROOTFS" | sort | md5sum)
  tmpfs_root_with_usr
  update_config '.annotations["run.fsrun.rootfs.symlinks"] = "bin=usr/bin,sbin=usr/bin"'
  run_in_container /bin/sh -c 'readlink /bin; readlink /sbin; /sbin/sh -c "echo ran"; cat /proc/self/mountinfo'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = usr/bin ]
  [ "${lines[1]}" = usr/bin ]
  [ "${lines[2]}" = ran ]
  [ "$(fstype /)" = tmpfs ]
  [ -z "$(fstype /bin)" ]
  [ "$(find "$ROOTFS" | sort | md5sum)" = "$before" ]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "rootfs: run.fsrun.rootfs.symlinks: a bad link, no tmpfs root, a mount through a link: refused, one line" {
  local bad
  # no tmpfs onto /: the links would land in the image
  update_config '.annotations["run.fsrun.rootfs.symlinks"] = "bin=usr/bin"'
  run_in_container /bin/true
  echo "$output"
  [ "$status" -eq 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == *'annotations["run.fsrun.rootfs.symlinks"]: the links are made only in a tmpfs'* ]]
  assert_no_leftovers "$CONTAINER_ID"
  tmpfs_root_with_usr
  for bad in "bin=/usr/bin" "bin=usr/../etc" "bin=usr//bin" "bin/x=usr/bin" "..=usr" "bin" \
    "bin=usr/bin,bin=usr/sbin" "usr=usr/bin" "proc=usr/bin"; do
    update_config '.annotations["run.fsrun.rootfs.symlinks"] = $v' --arg v "$bad"
    run_in_container /bin/true
    echo "$bad: $output"
    [ "$status" -eq 1 ]
    [ "${#lines[@]}" -eq 1 ]
    [[ $output == *'annotations["run.fsrun.rootfs.symlinks"]: '* ]]
    assert_no_leftovers "$CONTAINER_ID"
  done
}

@test "rootfs: a cgroup2 mount asked for by name is cgroup2 on any host" {
  add_mount '{"destination": "/mnt/c2", "type": "cgroup2", "source": "cgroup", "options": ["nosuid", "nodev", "noexec"]}'
  run_in_container sh -c 'cat /proc/self/mountinfo; ls /mnt/c2'
  [ "$status" -eq 0 ]
  [ "$(fstype /mnt/c2)" = cgroup2 ]
  has_opt /mnt/c2 nosuid
  [[ "$output" == *cgroup.procs* ]]
}

@test "rootfs: overlay mounts pass their options as data" {
  mkdir -p "$HOSTDIR/lower" "$HOSTDIR/upper" "$HOSTDIR/work"
  echo from-lower >"$HOSTDIR/lower/f"
  add_mount "{\"destination\": \"/mnt/ov\", \"type\": \"overlay\", \"source\": \"overlay\", \"options\": [\"lowerdir=$HOSTDIR/lower\", \"upperdir=$HOSTDIR/upper\", \"workdir=$HOSTDIR/work\"]}"
  run_in_container sh -c 'cat /mnt/ov/f; echo new >/mnt/ov/g && echo wrote'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = from-lower ]
  [ "${lines[1]}" = wrote ]
  [ "$(cat "$HOSTDIR/upper/g")" = new ]
}

@test "rootfs: an unknown filesystem type is a clear error naming it and the destination" {
  add_mount '{"destination": "/mnt/bad", "type": "nosuchfs", "source": "none"}'
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *nosuchfs* ]]
  [[ "$output" == */mnt/bad* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

# tmpcopyup (what podman --read-only and --tmpfs ask for): the tmpfs starts with a copy of the
# directory it covers, with owners, modes and symlinks, and writes stay in the tmpfs.
@test "rootfs: tmpcopyup copies the covered directory into the tmpfs" {
  mkdir -p "$ROOTFS/mnt/t/sub/deeper"
  echo from-image >"$ROOTFS/mnt/t/file"
  chown 1000:1001 "$ROOTFS/mnt/t/file"
  chmod 0604 "$ROOTFS/mnt/t/file"
  echo deep >"$ROOTFS/mnt/t/sub/deeper/f"
  chmod 1777 "$ROOTFS/mnt/t/sub"
  ln -s file "$ROOTFS/mnt/t/link"
  ln -s /etc/passwd "$ROOTFS/mnt/t/abs"
  add_mount '{"destination": "/mnt/t", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "tmpcopyup"]}'
  run_in_container sh -c 'cat /mnt/t/file /mnt/t/sub/deeper/f; stat -c "%u:%g %a" /mnt/t/file;
    stat -c %a /mnt/t/sub; readlink /mnt/t/link; readlink /mnt/t/abs; cat /mnt/t/link;
    echo new >/mnt/t/written && echo wrote; cat /proc/self/mountinfo'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = from-image ]
  [ "${lines[1]}" = deep ]
  [ "${lines[2]}" = "1000:1001 604" ]
  [ "${lines[3]}" = 1777 ]
  [ "${lines[4]}" = file ]
  [ "${lines[5]}" = /etc/passwd ]
  [ "${lines[6]}" = from-image ]
  [ "${lines[7]}" = wrote ]
  [ "$(fstype /mnt/t)" = tmpfs ]
  has_opt /mnt/t nosuid
  # the write went to the tmpfs, not to the image
  [ ! -e "$ROOTFS/mnt/t/written" ]
  [ "$(cat "$ROOTFS/mnt/t/file")" = from-image ]
}

@test "rootfs: tmpcopyup with ro is read-only after the copy; on a missing directory it is empty" {
  mkdir -p "$ROOTFS/mnt/ro"
  echo kept >"$ROOTFS/mnt/ro/f"
  add_mount '{"destination": "/mnt/ro", "type": "tmpfs", "source": "tmpfs", "options": ["ro", "tmpcopyup"]}'
  add_mount '{"destination": "/mnt/fresh", "type": "tmpfs", "source": "tmpfs", "options": ["tmpcopyup"]}'
  run_in_container sh -c 'cat /mnt/ro/f; touch /mnt/ro/g 2>/dev/null && echo writable; ls -A /mnt/fresh | wc -l'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = kept ]
  [ "${lines[1]}" = 0 ]
}

@test "rootfs: tmpcopyup on a filesystem other than tmpfs is a clear error" {
  add_mount '{"destination": "/mnt/t", "type": "proc", "source": "proc", "options": ["tmpcopyup"]}'
  run_in_container true
  [ "$status" -ne 0 ]
  [[ "$output" == *tmpcopyup*tmpfs* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "rootfs: --no-pivot moves the rootfs to / and chroots" {
  run fsrun run --no-pivot --bundle "$BUNDLE" nopivot-$$
  [ "$status" -eq 0 ]
  set_process_args sh -c 'grep " / " /proc/self/mountinfo; ls /dev/null'
  run fsrun run --no-pivot --bundle "$BUNDLE" nopivot2-$$
  [ "$status" -eq 0 ]
  [[ "$output" == *"/dev/null"* ]]
  assert_no_leftovers nopivot2-$$
}

@test "rootfs: /dev/console is the terminal's pty" {
  update_config '.process.terminal = true'
  set_process_args sh -c 'stat -c "%t %n" /dev/console; grep " /dev/console " /proc/self/mountinfo'
  CONTAINER_ID=console-$$
  run fsrun run --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
  [ "$status" -eq 0 ]
  # a unix98 pty slave (major 136 = 0x88) bound from the container's devpts
  [[ "$output" == *"88 /dev/console"* ]]
  [[ "$output" == *" /dev/console "*devpts* ]]
}

@test "rootfs: nothing stays mounted on the host after the container is gone" {
  add_mount "{\"destination\": \"/mnt/h\", \"type\": \"bind\", \"source\": \"$HOSTDIR\", \"options\": [\"rbind\"]}"
  run_in_container true
  [ "$status" -eq 0 ]
  assert_no_leftovers "$CONTAINER_ID"
  ! grep -qF " $ROOTFS" /proc/self/mountinfo || false
  ! grep -qF " $HOSTDIR " /proc/self/mountinfo || false

  # and create + delete without start
  set_process_args true
  fsrun create --bundle "$BUNDLE" created-$$
  fsrun delete --force created-$$
  assert_no_leftovers created-$$
}

# A user namespace mapping 0..65535 to itself: the rootfs stays usable, but mknod is impossible and
# the flags of the mounts inherited from the host are locked.
userns_config() {
  update_config '.linux.namespaces += [{"type": "user"}]
    | .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]'
}

@test "rootfs: in a user namespace the devices are the host's, bound onto /dev" {
  userns_config
  run_in_container sh -c 'cat /proc/self/mountinfo; stat -c "%n %t:%T" /dev/null /dev/tty; ls -A /dev | tr "\n" " "; echo; echo "[$(cat /proc/keys)]"'
  [ "$status" -eq 0 ]
  for d in null zero full random urandom tty; do
    [[ "$output" == *" /dev/$d "* ]]
  done
  [[ "$output" == *"/dev/null 1:3"* ]]
  [[ "$output" == *"/dev/tty 5:0"* ]]
  [[ "$output" == *"[]"* ]]
}

@test "rootfs: in a user namespace without a netns, /sys is the host's, read-only throughout" {
  userns_config
  update_config '.linux.namespaces |= map(select(.type != "network"))'
  run_in_container sh -c 'cat /proc/self/mountinfo; touch /sys/kernel/x 2>/dev/null || echo sys-readonly'
  [ "$status" -eq 0 ]
  [[ "$output" == *sys-readonly* ]]
  [ "$(fstype /sys)" = sysfs ]
  # the cgroup mount over the host's (which came with /sys) shows the namespace's root
  if [ "$(cgroup_mode)" = unified ]; then
    [ "$(mount_field /sys/fs/cgroup 4)" = / ]
  else
    [ "$(mount_field /sys/fs/cgroup/pids 4)" = / ]
  fi
  # every mount below /sys that came with the host's tree is read-only too
  while read -r mnt opts; do
    [[ ",$opts," == *,ro,* ]] || { echo "$mnt is $opts"; false; }
  done < <(awk '$5 ~ "^/sys(/|$)" { print $5, $6 }' <<<"$output")
}

@test "rootfs: in a user namespace a bind keeps the source's locked flags" {
  userns_config
  mkdir -p "$HOSTDIR/locked"
  mount -t tmpfs -o size=1m,nosuid,nodev fsrun-test-locked "$HOSTDIR/locked"
  add_mount "{\"destination\": \"/mnt/locked\", \"type\": \"bind\", \"source\": \"$HOSTDIR/locked\", \"options\": [\"rbind\", \"ro\", \"suid\", \"dev\"]}"
  run_in_container cat /proc/self/mountinfo
  umount "$HOSTDIR/locked"
  [ "$status" -eq 0 ]
  has_opt /mnt/locked ro
  has_opt /mnt/locked nosuid
  has_opt /mnt/locked nodev
}

# join_netns PATH, sysfs asked read-write (podman --privileged, docker --network container:X)
sysfs_rw_in_netns() {
  update_config '.mounts |= map(if .destination == "/sys" then .options = ["nosuid", "noexec", "nodev", "rw"] else . end)
    | .linux.namespaces |= map(if .type == "network" then .path = $p else . end)' --arg p "$1"
}

@test "rootfs: /sys is read-write as asked with a network namespace joined by path, never with the runtime's own" {
  # a network namespace of another process, as podman's bridge or another container's
  unshare --net sleep 1000 &
  NETNS_PID=$!
  # shellcheck disable=SC2016 # expanded by that shell
  wait_until sh -c '[ "$(readlink "/proc/$1/ns/net")" != "$(readlink /proc/self/ns/net)" ]' sh "$NETNS_PID"
  base=$(jq . "$BUNDLE/config.json")
  sysfs_rw_in_netns "/proc/$NETNS_PID/ns/net"
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  [ "$(fstype /sys)" = sysfs ]
  has_opt /sys rw
  # the runtime's own network namespace given by path is the host's: /sys stays read-only
  printf '%s\n' "$base" >"$BUNDLE/config.json"
  sysfs_rw_in_netns /proc/self/ns/net
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  has_opt /sys ro
  # in a user namespace that does not own the joined one, sysfs cannot be mounted: the host's
  # /sys is bound read-only instead
  printf '%s\n' "$base" >"$BUNDLE/config.json"
  sysfs_rw_in_netns "/proc/$NETNS_PID/ns/net"
  userns_config
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  [ "$(fstype /sys)" = sysfs ]
  has_opt /sys ro
}

@test "rootfs: in a user namespace, binds of a source below a 0700 directory (plain, through a symlink) work and keep the host's flags locked" {
  userns_config
  # the mapped root (host 0 is mapped to itself here, so map it elsewhere) cannot search priv/
  update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
    | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
  chown -R 100000:100000 "$ROOTFS"
  local priv=$HOSTDIR/priv
  mkdir -p "$priv/src" "$priv/ro"
  chmod 700 "$priv"
  echo data >"$priv/src/file"
  echo data >"$priv/ro/file"
  ln -s "$priv/src" "$priv/link"
  # a read-only host mount: the container's root must not remount it read-write
  mount --bind "$priv/ro" "$priv/ro"
  mount -o remount,bind,ro "$priv/ro"
  add_mount "{\"destination\": \"/mnt/plain\", \"type\": \"bind\", \"source\": \"$priv/src\", \"options\": [\"rbind\"]}"
  add_mount "{\"destination\": \"/mnt/link\", \"type\": \"bind\", \"source\": \"$priv/link\", \"options\": [\"bind\", \"ro\"]}"
  add_mount "{\"destination\": \"/mnt/ro\", \"type\": \"bind\", \"source\": \"$priv/ro\", \"options\": [\"bind\"]}"
  update_config '.process.capabilities = {bounding: ["CAP_SYS_ADMIN"], effective: ["CAP_SYS_ADMIN"],
                                          permitted: ["CAP_SYS_ADMIN"]}'
  run_in_container sh -c 'cat /mnt/plain/file /mnt/link/file; mount -o remount,bind,rw /mnt/ro; echo remount=$?; touch /mnt/ro/x; echo touch=$?'
  umount "$priv/ro"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = data ]
  [ "${lines[1]}" = data ]
  [[ "$output" == *remount=1* ]]
  [[ "$output" == *touch=1* ]]
  [ ! -e "$priv/ro/x" ]
}

@test "rootfs: a tmpfs without mode= over an existing directory keeps its mode (0712), as runc does" {
  mkdir -p "$ROOTFS/t712" "$ROOTFS/t755"
  chmod 0712 "$ROOTFS/t712"
  add_mount '{"destination": "/t712", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "size=1m"]}'
  add_mount '{"destination": "/t755", "type": "tmpfs", "source": "tmpfs", "options": ["mode=755"]}'
  add_mount '{"destination": "/tnew", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid"]}'
  run_in_container sh -c "stat -c '%n %a' /t712 /t755 /tnew; cat /proc/self/mountinfo"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "/t712 712" ]
  [ "${lines[1]}" = "/t755 755" ]
  # a directory the runtime had to create has tmpfs's own default
  [ "${lines[2]}" = "/tnew 1777" ]
  [ "$(fstype /t712)" = tmpfs ]
}

@test "rootfs: a missing process.cwd on a read-only root is created before the root is made read-only" {
  update_config '.root.readonly = true | .process.cwd = "/work/dir"'
  run_in_container sh -c 'pwd; stat -c %a /work/dir; touch /x 2>&1 || true'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = /work/dir ]
  [ "${lines[1]}" = 755 ]
  # the root is read-only all the same
  [[ "${lines[2]}" == *"Read-only file system"* ]]
}

@test "rootfs: in a user namespace the default devices are bound nosuid,noexec" {
  userns_config
  run_in_container cat /proc/self/mountinfo
  [ "$status" -eq 0 ]
  for d in /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty; do
    has_opt "$d" nosuid
    has_opt "$d" noexec
  done
}
