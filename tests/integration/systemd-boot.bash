# The host's systemd booted as PID 1 of new pid, mount and cgroup namespaces in the cgroup v2 VM
# (whose own PID 1 is busybox), for systemd.bats and systemd-logind*.bats: cgroup2 at
# /sys/fs/cgroup is the subtree fsrun-systemd-test, /run is a private tmpfs holding the unit
# fsrun-test.target. Commands that talk to that systemd run inside its namespaces (in_sd), from a
# cgroup inside its tree (systemd can only move a process it can see).

SD_CGROUP=/sys/fs/cgroup/fsrun-systemd-test

# sd_can_boot_in_vm: root in the cgroup v2 VM, with what the boot needs
sd_can_boot_in_vm() {
  [ "$(id -u)" = 0 ] && [ "${RUN_IN_VM:-}" = 1 ] && [ -x /lib/systemd/systemd ] &&
    [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && command -v nsenter >/dev/null
}

# _sd_boot_in_vm [UNIT...]: boots it, fsrun-test.target as its default target, wanting UNIT...
# (none: only the target, which has no dependencies); returns once systemd says it is up.
# With units, no service or socket gets the default dependencies: they would pull in
# sysinit.target, whose services act on what the namespaces share with the VM (tmpfiles empties
# /tmp, which holds the tests' files; sysctl, binfmt, modprobe).
_sd_boot_in_vm() {
  local pid comm units=$BATS_FILE_TMPDIR/systemd-units type
  mkdir -p "$SD_CGROUP/fsrun-test-driver" "$units" || return 1
  printf '[Unit]\nDescription=fsrun test target\nDefaultDependencies=no\n' >"$units/fsrun-test.target"
  if [ $# -gt 0 ]; then
    printf 'Wants=%s\nAfter=%s\n' "$*" "$*" >>"$units/fsrun-test.target"
    for type in service socket; do
      mkdir -p "$units/$type.d"
      printf '[Unit]\nDefaultDependencies=no\n' >"$units/$type.d/10-fsrun-test.conf"
    done
  fi
  # the inner shell moves itself into the subtree, then makes it the root of a cgroup namespace
  # and execs systemd there (same pid: PID 1 of the new pid namespace)
  SD_UNITS=$units setsid unshare --pid --fork --mount --propagation private bash -c '
    echo 0 >"$0/cgroup.procs" || exit 1
    exec unshare --cgroup bash -c "
      umount -l /sys/fs/cgroup && mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup || exit 1
      exec 7<\"\$SD_UNITS\" && mount -t proc proc /proc && mount -t tmpfs -o mode=0755 tmpfs /run || exit 1
      mkdir -p /run/systemd/system && cp -r /proc/self/fd/7/. /run/systemd/system/ || exit 1
      exec 7<&-
      exec env -i container=other PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        /lib/systemd/systemd --unit=fsrun-test.target --log-target=kmsg
    "' "$SD_CGROUP" </dev/null >"$BATS_FILE_TMPDIR/systemd-boot.log" 2>&1 3>&- &
  # systemd's pid here: the process named systemd in the subtree (its init.scope, once it runs)
  local state="" deadline=$((SECONDS + 300))
  while [ "$SECONDS" -lt "$deadline" ]; do
    for pid in $(cat "$SD_CGROUP/cgroup.procs" "$SD_CGROUP/init.scope/cgroup.procs" 2>/dev/null); do
      comm=
      { read -r comm <"/proc/$pid/comm"; } 2>/dev/null
      [ "$comm" = systemd ] || continue
      SD_PID=$pid
      export SD_PID
      # up once its start-up is over (degraded: some unit failed, which is fine here)
      state=$(in_sd systemctl is-system-running 2>/dev/null)
      if [ "$state" = running ] || [ "$state" = degraded ]; then
        return 0
      fi
    done
    sleep 0.5
  done
  echo "systemd did not come up (state '$state'); failed units:" >&2
  [ -n "${SD_PID:-}" ] && in_sd systemctl --failed --no-pager >&2
  echo "boot log:" >&2
  cat "$BATS_FILE_TMPDIR/systemd-boot.log" >&2
  dmesg | grep -i 'systemd\[' | tail -20 >&2
  return 1
}

# sd_kill_booted: ends what _sd_boot_in_vm booted and removes its cgroups, from what exists: a
# boot that failed before its systemd was found (no SD_PID) leaves its processes in SD_CGROUP
sd_kill_booted() {
  if [ -n "${SD_PID:-}" ]; then
    # PID 1 of the namespace: everything in it dies with it
    kill -KILL "$SD_PID" 2>/dev/null
    timeout 60 bash -c 'while [ -e "/proc/$0" ]; do sleep 0.1; done' "$SD_PID"
  fi
  sd_can_boot_in_vm && [ -e "$SD_CGROUP/cgroup.kill" ] || return 0
  echo 1 >"$SD_CGROUP/cgroup.kill"
  timeout 60 bash -c 'while [ -n "$(find "$0" -name cgroup.procs -exec cat {} +)" ]; do
    sleep 0.1; done' "$SD_CGROUP"
  find "$SD_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null
}

# in_sd CMD...: runs CMD where systemd can see it and it can see systemd
in_sd() {
  if [ "$SD_MODE" = vm ]; then
    (echo 0 >"$SD_CGROUP/fsrun-test-driver/cgroup.procs" && exec nsenter -t "$SD_PID" -p -m -C -- "$@")
  else
    "$@"
  fi
}
