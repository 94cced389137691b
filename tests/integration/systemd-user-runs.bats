#!/usr/bin/env bats
# bats file_tags=cgroupv2,systemd
# --systemd-cgroup for an ordinary user, 50 times in a row against a real `systemd --user` (the
# set-up of systemd-user.bats, in systemd-user-helpers.bash). Before dbus.c sent BEGIN with AUTH,
# one create in three waited 25 s for the manager's first answer and ran without a cgroup; each of
# the 50 here must have its scope, its limit, and leave no cgroup and no process. It takes about
# 10 minutes in the cgroup v2 VM (588 s measured, with other jobs on the host).

load helpers
load systemd-user-helpers

@test "systemd user manager: 50 creates in a row, each init in its scope with the limits, each delete leaves no cgroup" {
  requires_manager
  um_create_delete_loop 50
}
