#!/usr/bin/env bats
# bats file_tags=cgroupv2,systemd
# --systemd-cgroup for an ordinary user, 50 times in a row against user@UID.service started by
# systemd-logind (the set-up of systemd-logind.bats): each of the 50 must have its scope, its
# limit, and leave no cgroup and no process. A file of its own for its own BATS_FILE_TIMEOUT.

load helpers
load systemd-boot
load systemd-user-helpers

setup_file() {
  um_logind_setup_file
}

teardown_file() {
  um_logind_teardown_file
}

@test "logind: 50 creates in a row in user@UID.service, each init in its scope with the limits, each delete leaves no cgroup" {
  requires_manager
  um_create_delete_loop 50
}
