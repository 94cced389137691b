#!/usr/bin/env bats
# Invariant 7: process.cwd is resolved inside the new root; after chdir, getcwd() succeeds and lies
# under it, whatever symlinks or ".." the rootfs (untrusted) puts on the way.

load helpers

setup() {
  requires_root
  requires_fsrun_command run
  setup_bundle
  update_config '.root.readonly = false'
  touch "$ROOTFS/inside-marker"
  # symlinks that would lead out of the rootfs if they were followed on the host
  ln -s /.. "$ROOTFS/up"
  ln -s ../../../../../../.. "$ROOTFS/deep"
  mkdir -p "$ROOTFS/a"
  ln -s /../../etc "$ROOTFS/a/etc-up"
  set_process_args /bin/sh -c 'echo "pwd=$(pwd -P)"; [ -e inside-marker ] && echo marker-here; ls'
}

teardown() {
  teardown_bundle
}

@test "security-cwd: a cwd that is a symlink to /.. stays at the container's root" {
  update_config '.process.cwd = "/up"'
  run fsrun run --bundle "$BUNDLE" sec-up-$UNIQ
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = pwd=/ ]
  [ "${lines[1]}" = marker-here ]
}

@test "security-cwd: relative symlinks and .. chains in the cwd stay inside" {
  for cwd in /deep /../../.. /a/../../../up /deep/a; do
    update_config '.process.cwd = $c' --arg c "$cwd"
    set_process_args /bin/sh -c 'echo "pwd=$(pwd -P)"; [ -e /inside-marker ] && echo marker-here'
    run fsrun run --bundle "$BUNDLE" "sec-cwd-$$-$RANDOM$RANDOM"
    [ "$status" -eq 0 ]
    [[ ${lines[0]} == pwd=/* ]]
    [ "${lines[1]}" = marker-here ]
  done
  update_config '.process.cwd = "/a/etc-up"'
  set_process_args /bin/sh -c 'pwd -P; ls'
  run fsrun run --bundle "$BUNDLE" sec-cwd-etc-$UNIQ
  [ "$status" -eq 0 ]
  # the container's /etc, not the host's
  [ "${lines[0]}" = /etc ]
  [[ $output != *"$(ls /etc | grep -m1 -vx -f <(ls "$ROOTFS/etc") || echo no-host-only-entry)"* ]]
}
