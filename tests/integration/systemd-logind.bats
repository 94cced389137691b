#!/usr/bin/env bats
# bats file_tags=cgroupv2,systemd
# --systemd-cgroup for an ordinary user whose manager runs as on a desktop: user@UID.service,
# started by systemd-logind. In the cgroup v2 VM, setup_file boots the host's systemd 252 as PID 1
# of new namespaces (systemd-boot.bash) with the system bus (dbus.socket, dbus-daemon) and
# systemd-logind, makes a user, and runs `loginctl enable-linger` for it: logind asks the system
# manager for user-runtime-dir@UID.service (/run/user/UID) and user@UID.service (`systemd --user`
# with PAM, in /user.slice/user-UID.slice/user@UID.service, delegated to the user). The user's
# fsrun runs in those namespaces with XDG_RUNTIME_DIR=/run/user/UID, from outside the manager's
# cgroup as a login session's process is, so the manager asks the system manager (over the system
# bus) to move the init into the scope. The checks are those of systemd-user.bats
# (systemd-user-helpers.bash); the 50 creates in a row: systemd-logind-runs.bats. Elsewhere the
# tests skip.

load helpers
load systemd-boot
load systemd-user-helpers

setup_file() {
  um_logind_setup_file
}

teardown_file() {
  um_logind_teardown_file
}

@test "logind: enable-linger starts user@UID.service, the user's manager, in its place" {
  requires_manager
  [ "$(in_sd loginctl show-user -P Linger "$UM_USER")" = yes ]
  [ "$(in_sd systemctl show -P ActiveState "user@$UM_UID.service")" = active ]
  [ "$(in_sd systemctl show -P ActiveState "user-runtime-dir@$UM_UID.service")" = active ]
  [ "$UM_CG" = "/user.slice/user-$UM_UID.slice/user@$UM_UID.service" ]
  [ "$(in_sd systemctl show -P ControlGroup "user@$UM_UID.service")" = "$UM_CG" ]
  # the manager's socket is in the runtime dir logind made, and the user reaches it through -M
  in_sd test -S "/run/user/$UM_UID/systemd/private"
  run in_sd systemctl --user -M "$UM_USER@" is-system-running
  [[ $output == running || $output == degraded ]] || { echo "$output"; false; }
}

@test "logind: the container is a scope of user@UID.service, with the limits in the files and the unit" {
  requires_manager
  run_detached || { cat "$UM_DIR/run-$ID.out"; false; }
  um_check_scope
}

@test "logind: update tells user@UID.service the new limits" {
  requires_manager
  run_detached || { cat "$UM_DIR/run-$ID.out"; false; }
  um_check_update
}

@test "logind: delete leaves no unit, no cgroup and no process" {
  requires_manager
  run_detached || { cat "$UM_DIR/run-$ID.out"; false; }
  um_check_delete
}
