#!/usr/bin/env bats
# Credentials of the container process (caps.c): the five capability sets, NoNewPrivs, user,
# groups, umask and rlimits, all read from inside the container.

load helpers

setup() {
  requires_root
  requires_fsrun_command run
  setup_bundle
  update_config '.root.readonly = false'
}

teardown() {
  teardown_bundle
}

# caps_from_config SET: the names the config lists in process.capabilities.SET, sorted.
caps_from_config() {
  jq -r --arg set "$1" '(.process.capabilities[$set] // []) | .[]' "$BUNDLE/config.json" | sort -u |
    paste -sd, -
}

# status_field FIELD: the value of "FIELD:" in the container's /proc/self/status ($output).
status_field() {
  awk -v f="$1:" '$1 == f { print $2 }' <<<"$output"
}

# Every set in the container equals the config's list (an absent list means empty).
assert_caps_match_config() {
  local set field
  for set in effective permitted bounding inheritable ambient; do
    case $set in
      effective) field=CapEff ;;
      permitted) field=CapPrm ;;
      bounding) field=CapBnd ;;
      inheritable) field=CapInh ;;
      ambient) field=CapAmb ;;
    esac
    local got want
    got=$(caps_from_hex "$(status_field $field)")
    want=$(caps_from_config $set)
    if [ "$got" != "$want" ]; then
      echo "$field: container has '$got', config asks for '$want'" >&2
      return 1
    fi
  done
}

@test "caps: the default spec's capability sets, exactly; inheritable and ambient empty" {
  run_in_container cat /proc/self/status
  [ "$status" -eq 0 ]
  assert_caps_match_config
  [ "$(status_field CapInh)" = 0000000000000000 ]
  [ "$(status_field CapAmb)" = 0000000000000000 ]
  # the default spec grants something, so the comparison above is not trivially empty
  [ "$(status_field CapEff)" != 0000000000000000 ]
}

@test "caps: empty capability lists and no capabilities object give empty sets" {
  update_config '.process.capabilities = {}'
  run_in_container cat /proc/self/status
  [ "$status" -eq 0 ]
  for field in CapEff CapPrm CapBnd CapInh CapAmb; do
    [ "$(status_field $field)" = 0000000000000000 ]
  done

  update_config 'del(.process.capabilities)'
  run_in_container cat /proc/self/status
  [ "$status" -eq 0 ]
  for field in CapEff CapPrm CapBnd CapInh CapAmb; do
    [ "$(status_field $field)" = 0000000000000000 ]
  done
}

# For uid 0 the kernel makes effective = permitted at execve, and without no_new_privs it widens
# permitted to the bounding set: with noNewPrivileges, a permitted set smaller than the bounding
# set must survive exactly.
@test "caps: a bounding set wider than permitted; CAP_SYS_ADMIN and CAP_SETPCAP granted exactly" {
  update_config '.process.noNewPrivileges = true | .process.capabilities = {
      "bounding": ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_SYS_ADMIN", "CAP_SETPCAP", "CAP_KILL", "CAP_NET_RAW"],
      "effective": ["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_SETPCAP"],
      "permitted": ["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_SETPCAP"]}'
  run_in_container cat /proc/self/status
  [ "$status" -eq 0 ]
  assert_caps_match_config
  [ "$(caps_from_hex "$(status_field CapPrm)")" = CAP_CHOWN,CAP_SETPCAP,CAP_SYS_ADMIN ]
  [ "$(caps_from_hex "$(status_field CapBnd)")" = CAP_CHOWN,CAP_DAC_OVERRIDE,CAP_KILL,CAP_NET_RAW,CAP_SETPCAP,CAP_SYS_ADMIN ]
}

@test "caps: uid 1000 with ambient CAP_NET_BIND_SERVICE keeps it in every set, ambient included" {
  update_config '.process.user = {"uid": 1000, "gid": 1000}
    | .process.capabilities = {
      "bounding": ["CAP_NET_BIND_SERVICE"], "effective": ["CAP_NET_BIND_SERVICE"],
      "permitted": ["CAP_NET_BIND_SERVICE"], "inheritable": ["CAP_NET_BIND_SERVICE"],
      "ambient": ["CAP_NET_BIND_SERVICE"]}'
  run_in_container cat /proc/self/status
  [ "$status" -eq 0 ]
  assert_caps_match_config
  [ "$(status_field CapAmb)" = 0000000000000400 ]
  [ "$(awk '$1 == "Uid:" { print $2 $3 $4 $5 }' <<<"$output")" = 1000100010001000 ]
}

@test "caps: inheritable is set only when the config asks for it" {
  update_config '.process.capabilities.inheritable = ["CAP_KILL"]'
  run_in_container cat /proc/self/status
  [ "$status" -eq 0 ]
  assert_caps_match_config
  [ "$(caps_from_hex "$(status_field CapInh)")" = CAP_KILL ]
}

@test "caps: an unknown capability name is skipped with a warning, the container runs" {
  update_config '.process.capabilities.bounding += ["CAP_FROM_THE_FUTURE"]
    | .process.capabilities.effective += ["CAP_FROM_THE_FUTURE"]'
  run_in_container cat /proc/self/status
  [ "$status" -eq 0 ]
  [[ "$output" == *"unknown capability \`CAP_FROM_THE_FUTURE\`"* ]]
  update_config '.process.capabilities.bounding -= ["CAP_FROM_THE_FUTURE"]
    | .process.capabilities.effective -= ["CAP_FROM_THE_FUTURE"]'
  assert_caps_match_config
}

@test "caps: NoNewPrivs follows process.noNewPrivileges" {
  update_config '.process.noNewPrivileges = true'
  run_in_container cat /proc/self/status
  [ "$status" -eq 0 ]
  [ "$(status_field NoNewPrivs)" = 1 ]

  update_config '.process.noNewPrivileges = false'
  run_in_container cat /proc/self/status
  [ "$status" -eq 0 ]
  [ "$(status_field NoNewPrivs)" = 0 ]
}

@test "caps: user, additional groups and umask" {
  update_config '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [10, 20], "umask": 23}'
  run_in_container sh -c 'id -u; id -g; id -G; umask'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1000 ]
  [ "${lines[1]}" = 1000 ]
  [ "${lines[2]}" = "1000 10 20" ]
  [ "${lines[3]}" = 0027 ]
}

@test "caps: no supplementary groups leak in from the runtime" {
  update_config '.process.user = {"uid": 0, "gid": 0}'
  run_in_container sh -c 'id -G'
  [ "$status" -eq 0 ]
  [ "$output" = 0 ]
}

# assert_host_view PID: from the host, PID's bounding set is the config's and it has no
# supplementary group
assert_host_view() {
  local bnd groups
  bnd=$(awk '$1 == "CapBnd:" { print $2 }' "/proc/$1/status")
  groups=$(awk '$1 == "Groups:" { print $2 }' "/proc/$1/status")
  [ "$(caps_from_hex "$bnd")" = "$(caps_from_config bounding)" ] || {
    echo "pid $1: CapBnd $bnd" >&2
    return 1
  }
  [ -z "$groups" ] || {
    echo "pid $1: groups $groups kept from the runtime" >&2
    return 1
  }
}

@test "caps: an image's /proc/sys/kernel/cap_last_cap and /proc/self/setgroups (no procfs) change nothing, init and exec" {
  # failed before 2026-12: both were read inside the container (CapBnd 000001fffefffffc)
  update_config '.mounts |= map(select(.destination != "/proc"))'
  fake_procfs_files "$ROOTFS"
  set_process_args /bin/sleep 1000
  CONTAINER_ID=id-$$-$RANDOM$RANDOM
  # the runtime with a supplementary group of its own
  setpriv --groups 4242 -- "$FSRUN" --root "$FSRUN_ROOT" run -d --bundle "$BUNDLE" "$CONTAINER_ID" \
    </dev/null
  wait_for_status "$CONTAINER_ID" running
  assert_host_view "$(fsrun state "$CONTAINER_ID" | jq -r .pid)"
  setpriv --groups 4242 -- "$FSRUN" --root "$FSRUN_ROOT" exec -d \
    --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$CONTAINER_ID" /bin/sleep 1000
  assert_host_view "$(cat "$BATS_TEST_TMPDIR/exec.pid")"
}

@test "rlimits: soft and hard limits as configured (ulimit and /proc/self/limits)" {
  update_config '.process.rlimits = [
      {"type": "RLIMIT_NOFILE", "soft": 512, "hard": 1024},
      {"type": "RLIMIT_CORE", "soft": 0, "hard": 4096},
      {"type": "RLIMIT_NPROC", "soft": 300, "hard": 400}]'
  run_in_container sh -c 'ulimit -n; ulimit -Hn; cat /proc/self/limits'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 512 ]
  [ "${lines[1]}" = 1024 ]
  [[ "$output" =~ "Max open files"\ +512\ +1024\ +files ]]
  [[ "$output" =~ "Max core file size"\ +0\ +4096\ +bytes ]]
  [[ "$output" =~ "Max processes"\ +300\ +400\ +processes ]]
}

@test "rlimits: a hard limit above the runtime's needs CAP_SYS_RESOURCE: clear error, nothing left" {
  if [ "$(capsh --print | grep -c 'Bounding set.*cap_sys_resource')" != 0 ]; then
    skip "this host has CAP_SYS_RESOURCE in its bounding set: the limit could be raised"
  fi
  local current above
  current=$(ulimit -Hn)
  [ "$current" != unlimited ] || skip "the hard RLIMIT_NOFILE is unlimited here"
  above=$((current + 1))
  update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 1024, "hard": ($h | tonumber)}]' \
    --arg h "$above"
  run_in_container true
  [ "$status" -eq 1 ]
  [[ "$output" == *"process.rlimits: RLIMIT_NOFILE: hard limit $above is above the current hard limit $current and raising it needs CAP_SYS_RESOURCE"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}
