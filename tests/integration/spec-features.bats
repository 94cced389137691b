#!/usr/bin/env bats
# `fsrun spec` (the default config.json) and `fsrun features` (what the runtime claims to support).

load helpers

bats_require_minimum_version 1.5.0

setup() {
  DIR=$BATS_TEST_TMPDIR/spec
  mkdir -p "$DIR/rootfs"
  CONFIG=$DIR/config.json
}

teardown() {
  if [ -n "${BUNDLE:-}" ]; then
    teardown_bundle
  fi
}

# jq -e FILTER on the generated config; prints the config when the filter is false
config_has() {
  jq -e "$1" "$CONFIG" >/dev/null || {
    echo "config.json does not satisfy: $1" >&2
    jq -c . "$CONFIG" >&2
    return 1
  }
}

@test "spec: writes config.json into --bundle, the same container as runc spec" {
  run --separate-stderr fsrun spec --bundle "$DIR"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  [ -z "$stderr" ]
  config_has '.ociVersion == "1.3.0"'
  config_has '.process.terminal == true and .process.user.uid == 0 and .process.user.gid == 0'
  config_has '.process.args == ["sh"] and .process.cwd == "/"'
  config_has '.process.env == ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"]'
  local caps='["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]'
  config_has ".process.capabilities.bounding == $caps and .process.capabilities.effective == $caps and .process.capabilities.permitted == $caps"
  config_has '.process.capabilities | has("inheritable") or has("ambient") | not'
  config_has '.process.rlimits == [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}]'
  config_has '.process.noNewPrivileges == true'
  config_has '.root == {"path": "rootfs", "readonly": true}'
  config_has '.hostname == "fsrun"'
  config_has '[.mounts[] | [.destination, .type]] == [["/proc","proc"], ["/dev","tmpfs"], ["/dev/pts","devpts"], ["/dev/shm","tmpfs"], ["/dev/mqueue","mqueue"], ["/sys","sysfs"], ["/sys/fs/cgroup","cgroup"]]'
  config_has '.mounts[] | select(.destination == "/dev/pts") | .options | index("gid=5") != null'
  config_has '.mounts[] | select(.destination == "/sys") | .options | index("ro") != null'
  config_has '[.linux.namespaces[].type] == ["pid", "network", "ipc", "uts", "mount", "cgroup"]'
  config_has '.linux.namespaces | all(has("path") | not)'
  config_has '.linux.resources.devices == [{"allow": false, "access": "rwm"}]'
  config_has '.linux | has("uidMappings") or has("gidMappings") | not'
  config_has '.linux.maskedPaths | index("/proc/kcore") != null and index("/sys/firmware") != null and index("/sys/devices/virtual/powercap") != null'
  config_has '.linux.readonlyPaths == ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]'
}

@test "spec: without --bundle writes into the current directory" {
  cd "$DIR"
  run fsrun spec
  [ "$status" -eq 0 ]
  [ -f "$DIR/config.json" ]
  config_has '.process.args == ["sh"]'
}

@test "spec: the output parses back and validates, rootless too" {
  run fsrun spec --bundle "$DIR"
  [ "$status" -eq 0 ]
  run --separate-stderr fsrun validate --bundle "$DIR"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  [ -z "$stderr" ]

  rm "$CONFIG"
  run fsrun spec --rootless --bundle "$DIR"
  [ "$status" -eq 0 ]
  run --separate-stderr fsrun validate --bundle "$DIR"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  [ -z "$stderr" ]
}

@test "spec --rootless: a user namespace mapping root to the caller, no network namespace" {
  run fsrun spec --rootless --bundle "$DIR"
  [ "$status" -eq 0 ]
  local uid gid
  uid=$(id -u)
  gid=$(id -g)
  config_has "[.linux.namespaces[].type] | index(\"user\") != null and index(\"network\") == null"
  config_has ".linux.uidMappings == [{\"containerID\": 0, \"hostID\": $uid, \"size\": 1}]"
  config_has ".linux.gidMappings == [{\"containerID\": 0, \"hostID\": $gid, \"size\": 1}]"
  # the host's /sys, bound read-only: sysfs cannot be mounted without owning the netns
  config_has '.mounts[] | select(.destination == "/sys") | .source == "/sys" and (.options | index("rbind") != null and index("ro") != null)'
  config_has '[.mounts[] | select(.type == "sysfs")] | length == 0'
  # gid 5 does not exist in a single-id mapping
  config_has '.mounts[] | select(.destination == "/dev/pts") | .options | index("gid=5") == null'
  config_has '.linux.resources.devices == null'
}

@test "spec --rootless as an unprivileged user maps that user" {
  requires_root
  requires_host_command setpriv
  local dir=$BATS_TEST_TMPDIR/user-spec
  mkdir -p "$dir"
  chown 1000:1000 "$dir"
  _fsrun_make_traversable "$dir"
  run setpriv --reuid=1000 --regid=1000 --clear-groups "$FSRUN" --root "$dir/state" spec --rootless --bundle "$dir"
  [ "$status" -eq 0 ]
  CONFIG=$dir/config.json
  config_has '.linux.uidMappings == [{"containerID": 0, "hostID": 1000, "size": 1}]'
  config_has '.linux.gidMappings == [{"containerID": 0, "hostID": 1000, "size": 1}]'
}

@test "spec: refuses to overwrite an existing config.json" {
  echo '{"keep": "me"}' >"$CONFIG"
  run --separate-stderr fsrun spec --bundle "$DIR"
  [ "$status" -eq 1 ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "${stderr_lines[0]}" == "fsrun: config.json already exists in $DIR" ]]
  [ "$(jq -r .keep "$CONFIG")" = me ]
}

@test "spec: does not write through a config.json symlink" {
  ln -s "$BATS_TEST_TMPDIR/target" "$CONFIG"
  run fsrun spec --bundle "$DIR"
  [ "$status" -eq 1 ]
  [ ! -e "$BATS_TEST_TMPDIR/target" ]
}

@test "spec: a missing bundle directory is an error naming it" {
  run --separate-stderr fsrun spec --bundle "$BATS_TEST_TMPDIR/nope"
  [ "$status" -eq 1 ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "$stderr" == *"$BATS_TEST_TMPDIR/nope"* ]]
}

@test "spec: the generated config is what the test harness uses" {
  setup_bundle
  [ "$FSRUN_CONFIG_SOURCE" = spec ]
}

# ---- features ------------------------------------------------------------------------------------

@test "features: valid JSON with the version range and fsrun's annotations" {
  run --separate-stderr fsrun features
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  local version
  version=$("$FSRUN" --version | sed -n 's/^fsrun version //p')
  jq -e '.ociVersionMin == "1.0.0" and .ociVersionMax == "1.3.0"' <<<"$output"
  jq -e --arg v "$version" '.annotations["org.fsrun.version"] == $v' <<<"$output"
  jq -e '.annotations["io.github.seccomp.libseccomp.version"] | test("^[0-9]+\\.[0-9]+\\.[0-9]+$")' <<<"$output"
  # a bind's checks in config.json (bundle-binds.bats): the keys its object takes
  jq -e '.annotations["run.fsrun.mounts.N"] == "{destination, sourceId, destinationNoSymlinks, covers, overlayView}"' <<<"$output"
}

@test "features: lists only known namespaces, hooks and capabilities" {
  run fsrun features
  [ "$status" -eq 0 ]
  jq -e '(.linux.namespaces // []) - ["cgroup","ipc","mount","network","pid","time","user","uts"] == []' <<<"$output"
  jq -e '(.hooks // []) - ["prestart","createRuntime","createContainer","startContainer","poststart","poststop"] == []' <<<"$output"
  jq -e '(.linux.capabilities // []) | all(test("^CAP_[A-Z_]+$"))' <<<"$output"
  # when capabilities are claimed, they are the kernel's: as many as cap_last_cap + 1
  local n_caps
  n_caps=$(jq '(.linux.capabilities // []) | length' <<<"$output")
  [ "$n_caps" -eq 0 ] || [ "$n_caps" -eq $(($(cat /proc/sys/kernel/cap_last_cap) + 1)) ]
}

@test "features: claims nothing of the container lifecycle while fsrun cannot run a container" {
  if fsrun_has_command "$FSRUN" run; then
    setup_bundle
    run_in_container /bin/true
    if [ "$status" -eq 0 ]; then
      skip "fsrun runs containers: each claim is checked by running containers below"
    fi
  fi
  run fsrun features
  [ "$status" -eq 0 ]
  jq -e '(.hooks // []) == [] and (.mountOptions // []) == [] and (.linux.namespaces // []) == []' <<<"$output"
  jq -e '(.linux.capabilities // []) == []' <<<"$output"
  jq -e '(.linux.cgroup // {}) | [.v1, .v2, .systemd, .systemdUser, .rdma] | all(. != true)' <<<"$output"
  jq -e '(.linux.seccomp.enabled // false) == false' <<<"$output"
  jq -e '(.linux.apparmor.enabled // false) == false and (.linux.selinux.enabled // false) == false' <<<"$output"
  jq -e '(.linux.intelRdt.enabled // false) == false and (.linux.mountExtensions.idmap.enabled // false) == false' <<<"$output"
}

@test "features: every claimed namespace works in a container" {
  requires_root
  requires_fsrun_command run
  local features ns
  features=$(fsrun features)
  setup_bundle
  for ns in $(jq -r '(.linux.namespaces // [])[]' <<<"$features"); do
    setup_bundle
    update_config '.linux.namespaces = ([.linux.namespaces[] | select(.type != $t)] + [{"type": $t}])' --arg t "$ns"
    if [ "$ns" = user ]; then
      update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
    fi
    run_in_container /bin/true
    [ "$status" -eq 0 ] || {
      echo "features claims namespace $ns, but a container with it failed: $output" >&2
      return 1
    }
  done
}

@test "features: every claimed runtime-namespace hook runs" {
  requires_root
  requires_fsrun_command run
  local features hook marks=$BATS_TEST_TMPDIR/hooks
  features=$(fsrun features)
  mkdir -p "$marks"
  setup_bundle
  for hook in $(jq -r '(.hooks // [])[] | select(. == "prestart" or . == "createRuntime" or . == "poststart" or . == "poststop")' <<<"$features"); do
    update_config '.hooks[$h] = [{"path": "/bin/sh", "args": ["sh", "-c", ("touch " + $dir + "/" + $h)]}]' \
      --arg h "$hook" --arg dir "$marks"
  done
  run_in_container /bin/true
  for hook in $(jq -r '(.hooks // [])[] | select(. == "prestart" or . == "createRuntime" or . == "poststart" or . == "poststop")' <<<"$features"); do
    [ -e "$marks/$hook" ] || {
      echo "features claims the $hook hook, but it did not run" >&2
      return 1
    }
  done
}

@test "features: a claimed seccomp really filters" {
  requires_root
  requires_fsrun_command run
  run fsrun features
  jq -e '.linux.seccomp.enabled == true' <<<"$output" >/dev/null || skip "seccomp is not claimed"
  jq -e '.linux.seccomp.actions | index("SCMP_ACT_ERRNO") != null' <<<"$output"
  setup_bundle
  update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}'
  run_in_container /bin/sh -c 'mkdir /tmp/x && echo made'
  [ "$status" -ne 0 ]
  [[ "$output" != *made* ]]
}
