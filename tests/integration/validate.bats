#!/usr/bin/env bats
# `fsrun validate`: bad bundles are refused with one line naming config.json and the field, good
# ones pass silently, and nothing is created either way.

load helpers

bats_require_minimum_version 1.5.0

BAD_CONFIG_DIR=$FSRUN_SRCDIR/tests/data/bad-config

setup() {
  setup_bundle
}

teardown() {
  teardown_bundle
}

# expect_invalid SUBSTRING [GLOBAL_OPTION...]: validate $BUNDLE fails with exactly one stderr line
# "fsrun: config.json: ..." containing SUBSTRING, nothing on stdout, exit 1.
expect_invalid() {
  local want=$1
  shift
  run --separate-stderr "$FSRUN" --root "$FSRUN_ROOT" "$@" validate --bundle "$BUNDLE"
  if [ "$status" -ne 1 ] || [ "${#stderr_lines[@]}" -ne 1 ] || [ -n "$output" ] ||
    [[ "${stderr_lines[0]}" != "fsrun: config.json: "* ]] || [[ "${stderr_lines[0]}" != *"$want"* ]]; then
    echo "expected exit 1 and one line 'fsrun: config.json: ...$want...'" >&2
    echo "got exit $status, stdout '$output', stderr:" >&2
    printf '%s\n' "$stderr" >&2
    return 1
  fi
}

expect_valid() {
  run --separate-stderr "$FSRUN" --root "$FSRUN_ROOT" "$@" validate --bundle "$BUNDLE"
  if [ "$status" -ne 0 ] || [ -n "$output" ] || [ -n "$stderr" ]; then
    echo "expected a silent exit 0, got exit $status, stdout '$output', stderr '$stderr'" >&2
    return 1
  fi
}

@test "validate: the default bundle is valid, silently" {
  expect_valid
  # and validate created nothing
  [ ! -e "$FSRUN_ROOT" ] || [ -z "$(ls -A "$FSRUN_ROOT")" ]
}

# The highest capability the kernel knows comes from libcap's probe at start-up (PR_CAPBSET_READ);
# the last one it knows (read from /proc/sys/kernel/cap_last_cap here) is no warning, a made-up
# name is.
@test "validate: the kernel's last capability (libcap's probe) is no warning; a made-up one is" {
  local last name
  last=$(cat /proc/sys/kernel/cap_last_cap)
  name=$(capsh --decode=$(printf '%x' $((1 << last))) 2>/dev/null | sed 's/.*=//' | tr a-z A-Z)
  [[ $name == CAP_* ]] || skip "capsh cannot name capability $last"
  update_config '.process.capabilities.bounding = [$n, "CAP_MADE_UP"]' --arg n "$name"
  run --separate-stderr "$FSRUN" --root "$FSRUN_ROOT" validate --bundle "$BUNDLE"
  echo "$stderr"
  [ "$status" -eq 0 ]
  [[ $stderr == *"capability \`CAP_MADE_UP\` is unknown to this kernel"* ]]
  [[ $stderr != *"\`$name\`"* ]]
}

@test "validate: without --bundle it checks the current directory" {
  cd "$BUNDLE"
  run --separate-stderr fsrun validate
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  update_config '.process.cwd = "relative"'
  run --separate-stderr fsrun validate
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"process.cwd"* ]]
}

@test "validate: every tests/data/bad-config case fails with one line naming config.json and its field" {
  local cases=("$BAD_CONFIG_DIR"/*.json) json expect failed=0 checked=0
  [ -e "${cases[0]}" ] || skip "no tests/data/bad-config/*.json yet"
  for json in "${cases[@]}"; do
    expect=${json%.json}.expect
    [ -f "$expect" ] || {
      echo "$json has no sibling .expect file" >&2
      failed=1
      continue
    }
    cp "$json" "$BUNDLE/config.json"
    if ! expect_invalid "$(head -n 1 "$expect")" 2>"$BATS_TEST_TMPDIR/why"; then
      echo "--- $(basename "$json"):" >&2
      cat "$BATS_TEST_TMPDIR/why" >&2
      failed=1
    fi
    checked=$((checked + 1))
  done
  echo "# checked $checked bad configs" >&3
  [ "$failed" -eq 0 ]
}

@test "validate: configs shaped like the ones podman, containerd and docker write are valid" {
  # the fields those clients set that the default config lacks
  update_config '
    .process.user.additionalGids = [0, 10] | .process.oomScoreAdj = 0 |
    .process.apparmorProfile = "unconfined" | .process.terminal = false |
    .process.rlimits += [{"type": "RLIMIT_NPROC", "soft": 32768, "hard": 32768}] |
    .mounts += [
      {"destination": "/etc/resolv.conf", "type": "bind", "source": "/etc/resolv.conf",
       "options": ["rbind", "rprivate", "ro", "nosuid", "nodev", "noexec"]},
      {"destination": "/run", "type": "tmpfs", "source": "tmpfs",
       "options": ["nosuid", "nodev", "noexec", "mode=755", "size=65536k"]}] |
    .hooks.prestart = [{"path": "/proc/1/exe", "args": ["libnetwork-setkey", "-exec-root=/var/run/docker", "abc", "def"]}] |
    .linux.namespaces |= map(if .type == "network" then .path = "/proc/self/ns/net" else . end) |
    .linux.cgroupsPath = "/libpod_parent/libpod-0123456789abcdef" |
    .linux.sysctl = {"net.ipv4.ping_group_range": "0 0", "net.ipv4.ip_unprivileged_port_start": "0"} |
    .linux.resources = {"devices": [{"allow": false, "access": "rwm"},
                                    {"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwm"},
                                    {"allow": true, "type": "c", "major": 136, "access": "rwm"}],
                        "pids": {"limit": 2048}, "memory": {"limit": 536870912, "swap": 1073741824},
                        "cpu": {"shares": 1024, "quota": 100000, "period": 100000},
                        "blockIO": {"weight": 500}} |
    .linux.seccomp = {"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 1,
                      "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
                      "syscalls": [{"names": ["accept", "read", "write", "exit_group"], "action": "SCMP_ACT_ALLOW"},
                                   {"names": ["personality"], "action": "SCMP_ACT_ALLOW",
                                    "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]},
                                   {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
                                    "args": [{"index": 0, "value": 2114060288, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]}]} |
    .annotations = {"io.kubernetes.cri.container-type": "container", "org.opencontainers.image.stopSignal": "15"}'
  expect_valid
  # rootless podman: no user namespace of our own, no cgroupsPath, empty resources
  update_config 'del(.linux.cgroupsPath) | .linux.resources = {}'
  expect_valid
}

@test "validate: malformed JSON is one line naming config.json" {
  printf '{"ociVersion": "1.2.0", "process": ' >"$BUNDLE/config.json"
  expect_invalid "config.json"
}

@test "validate: a missing config.json is an error" {
  rm "$BUNDLE/config.json"
  run --separate-stderr fsrun validate --bundle "$BUNDLE"
  [ "$status" -eq 1 ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "$stderr" == *"config.json"* ]]
}

@test "validate: ociVersion must be 1.x" {
  update_config '.ociVersion = "2.0.0"'
  expect_invalid "ociVersion"
}

@test "validate: root.path must exist and be a directory" {
  update_config '.root.path = "no-such-rootfs"'
  expect_invalid "root.path: "
  touch "$BUNDLE/a-file"
  update_config '.root.path = "a-file"'
  expect_invalid "is not a directory"
  # absolute paths are taken as they are
  update_config '.root.path = $p' --arg p "$ROOTFS"
  expect_valid
}

@test "validate: a container needs a process with arguments and an absolute cwd" {
  update_config 'del(.process)'
  expect_invalid "process"
  setup_bundle
  update_config '.process.args = []'
  expect_invalid "process.args"
  update_config '.process.args = [""]'
  expect_invalid "process.args[0]"
  update_config '.process.args = ["sh"] | .process.cwd = "tmp"'
  expect_invalid "process.cwd"
}

@test "validate: environment entries are KEY=VALUE" {
  update_config '.process.env += ["NOEQUALS"]'
  expect_invalid "process.env[2]"
}

@test "validate: rlimits: known types, no duplicates, soft <= hard" {
  update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 2048, "hard": 1024}]'
  expect_invalid "process.rlimits[0].soft"
  update_config '.process.rlimits = [{"type": "RLIMIT_NOFILE", "soft": 1, "hard": 1}, {"type": "RLIMIT_NOFILE", "soft": 1, "hard": 1}]'
  expect_invalid "process.rlimits[1].type"
  update_config '.process.rlimits = [{"type": "RLIMIT_BOGUS", "soft": 1, "hard": 1}]'
  expect_invalid "RLIMIT_BOGUS"
  # the largest value (2^64-1, "unlimited") is fine; jq would round it through a double
  update_config '.process.rlimits = [{"type": "RLIMIT_CORE", "soft": 4242, "hard": 4242}]'
  sed -i 's/4242/18446744073709551615/g' "$BUNDLE/config.json"
  expect_valid
}

@test "validate: an unknown capability is a warning, not an error" {
  update_config '.process.capabilities.bounding += ["CAP_FROM_THE_FUTURE"]'
  run --separate-stderr fsrun validate --bundle "$BUNDLE"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "$stderr" == *"warning"*"process.capabilities.bounding[3]"*"CAP_FROM_THE_FUTURE"* ]]
  # with a log file the warning goes there
  run --separate-stderr fsrun --log "$BATS_TEST_TMPDIR/log" --log-format json validate --bundle "$BUNDLE"
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  [ "$(jq -r 'select(.level == "warning") | .msg' "$BATS_TEST_TMPDIR/log" | grep -c CAP_FROM_THE_FUTURE)" -eq 1 ]
}

@test "validate: oomScoreAdj within -1000..1000" {
  update_config '.process.oomScoreAdj = 1001'
  expect_invalid "process.oomScoreAdj"
  update_config '.process.oomScoreAdj = -1000'
  expect_valid
}

@test "validate: mount destinations and types must not be empty; binds need a source" {
  local n
  n=$(jq '.mounts | length' "$BUNDLE/config.json")
  update_config '.mounts += [{"destination": "", "type": "tmpfs", "source": "tmpfs"}]'
  expect_invalid "mounts[$n].destination"
  setup_bundle
  update_config '.mounts += [{"destination": "/x", "type": "", "source": "tmpfs"}]'
  expect_invalid "mounts[$n].type"
  setup_bundle
  update_config '.mounts += [{"destination": "/x", "type": "none", "options": ["rbind"]}]'
  expect_invalid "mounts[$n].source"
  # relative destinations (runtime-spec 1.2) and any filesystem type are accepted
  setup_bundle
  update_config '.mounts += [{"destination": "data", "type": "exotic-fs", "source": "none"}]'
  expect_valid
}

@test "validate: namespaces: no duplicates, absolute paths" {
  update_config '.linux.namespaces += [{"type": "ipc"}]'
  expect_invalid "linux.namespaces"
  setup_bundle
  update_config '.linux.namespaces |= map(if .type == "network" then .path = "netns" else . end)'
  expect_invalid "linux.namespaces[1].path"
  update_config '.linux.namespaces |= map(if .type == "network" then .path = "/proc/self/ns/net" else . end)'
  expect_valid
  update_config '.linux.namespaces |= map(if .type == "network" then .path = "/no/such/netns" else . end)'
  expect_invalid "linux.namespaces[1].path"
}

@test "validate: a new user namespace needs mappings, and mappings need a user namespace" {
  update_config '.linux.namespaces += [{"type": "user"}]'
  expect_invalid "linux.uidMappings"
  update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
  expect_invalid "linux.gidMappings"
  update_config '.linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
  expect_valid
  # the process's uid must be one of the mapped ones
  update_config '.process.user.uid = 70000'
  expect_invalid "process.user.uid"
  update_config '.process.user.uid = 0 | .linux.uidMappings[0].size = 0'
  expect_invalid "linux.uidMappings[0].size"
  # mappings without a user namespace
  update_config '.linux.uidMappings[0].size = 65536 | .linux.namespaces |= map(select(.type != "user"))'
  expect_invalid "linux.uidMappings"
}

@test "validate: sysctls must be namespaced and have their namespace" {
  update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.shmmax": "1000000", "kernel.domainname": "x"}'
  expect_valid
  update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1"} | .linux.namespaces |= map(select(.type != "network"))'
  expect_invalid "linux.sysctl: \`net.ipv4.ip_forward\`"
  setup_bundle
  update_config '.linux.sysctl = {"kernel.shmmax": "1"} | .linux.namespaces |= map(select(.type != "ipc"))'
  expect_invalid "kernel.shmmax"
  setup_bundle
  update_config '.linux.sysctl = {"fs/mqueue/msg_max": "20"} | .linux.namespaces |= map(select(.type != "ipc"))'
  expect_invalid "fs/mqueue/msg_max"
  setup_bundle
  update_config '.linux.sysctl = {"vm.swappiness": "10"}'
  expect_invalid "vm.swappiness"
  update_config '.linux.sysctl = {"net.ipv4/../../../kernel/x": "1"}'
  expect_invalid "linux.sysctl"
}

@test "validate: hostname and domainname need a UTS namespace" {
  update_config '.linux.namespaces |= map(select(.type != "uts"))'
  expect_invalid "hostname"
  update_config 'del(.hostname) | .domainname = "example"'
  expect_invalid "domainname"
  update_config 'del(.domainname)'
  expect_valid
}

@test "validate: timeOffsets need a new time namespace" {
  update_config '.linux.timeOffsets = {"monotonic": {"secs": 10}}'
  expect_invalid "linux.timeOffsets"
  update_config '.linux.namespaces += [{"type": "time"}]'
  expect_valid
}

@test "validate: devices have absolute paths, a known type and numbers" {
  update_config '.linux.devices = [{"path": "dev/fuse", "type": "c", "major": 10, "minor": 229}]'
  expect_invalid "linux.devices[0].path"
  update_config '.linux.devices = [{"path": "/dev/../etc/passwd", "type": "c", "major": 1, "minor": 3}]'
  expect_invalid "linux.devices[0].path"
  update_config '.linux.devices = [{"path": "/dev/fuse", "type": "c"}]'
  expect_invalid "linux.devices[0]"
  update_config '.linux.devices = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229}, {"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229}]'
  expect_invalid "linux.devices[1].path"
  update_config '.linux.devices = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229}, {"path": "/dev/fifo", "type": "p"}]'
  expect_valid
}

@test "validate: cgroupsPath syntax, plain and with --systemd-cgroup" {
  update_config '.linux.cgroupsPath = "/fsrun/../../escape"'
  expect_invalid "linux.cgroupsPath"
  update_config '.linux.cgroupsPath = "/libpod_parent/libpod-abc"'
  expect_valid
  update_config '.linux.cgroupsPath = "relative/path"'
  expect_valid
  expect_invalid "linux.cgroupsPath" --systemd-cgroup
  update_config '.linux.cgroupsPath = "system.slice:cri-containerd:abc"'
  expect_valid --systemd-cgroup
  update_config '.linux.cgroupsPath = "system:cri-containerd:abc"'
  expect_invalid "slice" --systemd-cgroup
  update_config '.linux.cgroupsPath = "system.slice:prefix:"'
  expect_invalid "name" --systemd-cgroup
}

@test "validate: memory limits: swap counts memory+swap" {
  update_config '.linux.resources.memory = {"limit": 200000000, "swap": 100000000}'
  expect_invalid "linux.resources.memory.swap"
  update_config '.linux.resources.memory = {"limit": 200000000, "swap": -1}'
  expect_valid
  update_config '.linux.resources.memory = {"limit": 200000000, "swap": 300000000, "swappiness": 101}'
  expect_invalid "swappiness"
  update_config '.linux.resources.memory = {"limit": -2}'
  expect_invalid "linux.resources.memory.limit"
}

@test "validate: cpu quota, period and burst" {
  update_config '.linux.resources.cpu = {"quota": 500, "period": 100000}'
  expect_invalid "linux.resources.cpu.quota"
  update_config '.linux.resources.cpu = {"quota": 50000, "period": 10}'
  expect_invalid "linux.resources.cpu.period"
  update_config '.linux.resources.cpu = {"quota": 50000, "period": 100000, "burst": 60000}'
  expect_invalid "linux.resources.cpu.burst"
  update_config '.linux.resources.cpu = {"quota": -1, "cpus": "0-1,x"}'
  expect_invalid "linux.resources.cpu.cpus"
  update_config '.linux.resources.cpu = {"quota": 50000, "period": 100000, "burst": 10000, "shares": 1024, "cpus": "0", "mems": "0"}'
  expect_valid
}

@test "validate: other resources: devices access, pids, hugepages, unified keys" {
  update_config '.linux.resources.devices += [{"allow": true, "type": "c", "major": 1, "minor": 3, "access": "rwx"}]'
  expect_invalid "linux.resources.devices[1].access"
  setup_bundle
  update_config '.linux.resources.pids = {"limit": -5}'
  expect_invalid "linux.resources.pids.limit"
  update_config '.linux.resources.pids = {"limit": 100} | .linux.resources.hugepageLimits = [{"pageSize": "2M", "limit": 1}]'
  expect_invalid "hugepageLimits[0].pageSize"
  update_config '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 1}] | .linux.resources.unified = {"../../cgroup.procs": "1"}'
  expect_invalid "linux.resources.unified"
  update_config '.linux.resources.unified = {"memory.high": "100000000"}'
  expect_valid
}

@test "validate: hooks need absolute paths and positive timeouts" {
  update_config '.hooks.prestart = [{"path": "bin/hook"}]'
  expect_invalid "hooks.prestart[0].path"
  update_config '.hooks.prestart = [{"path": "/bin/true", "timeout": 0}]'
  expect_invalid "hooks.prestart[0].timeout"
  update_config '.hooks.prestart = [{"path": "/bin/true", "timeout": 5}]'
  expect_valid
}

@test "validate: seccomp actions, architectures and listener" {
  update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_MAYBE"}'
  expect_invalid "linux.seccomp.defaultAction"
  update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_Z80"]}'
  expect_invalid "linux.seccomp.architectures[0]"
  update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_NOTIFY"}]}'
  expect_invalid "listenerPath"
  update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_KILL", "errnoRet": 1}]}'
  expect_invalid "linux.seccomp.syscalls[0].errnoRet"
  update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": 38, "architectures": ["SCMP_ARCH_X86_64"], "syscalls": [{"names": ["read", "write"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": 1, "op": "SCMP_CMP_EQ"}]}]}'
  expect_valid
}

@test "validate: maskedPaths and readonlyPaths are absolute" {
  update_config '.linux.maskedPaths += ["proc/kcore"]'
  expect_invalid "linux.maskedPaths"
  setup_bundle
  update_config '.linux.readonlyPaths += ["proc/sys"]'
  expect_invalid "linux.readonlyPaths"
}

@test "validate: rootfsPropagation and personality are checked" {
  update_config '.linux.rootfsPropagation = "sideways"'
  expect_invalid "linux.rootfsPropagation"
  update_config '.linux.rootfsPropagation = "rslave" | .linux.personality = {"domain": "LINUX64"}'
  expect_invalid "linux.personality.domain"
  update_config '.linux.personality = {"domain": "LINUX32"}'
  expect_valid
}

# ---- --policy ------------------------------------------------------------------------------------

@test "validate --policy: a good Fusion policy passes, silently" {
  local policy=$BATS_TEST_TMPDIR/policy.json
  jq -n --arg dir "$BATS_TEST_TMPDIR" '{allowNetwork: false, allowedPaths: ["/usr"], writablePaths: [$dir], envAllowlist: ["PATH", "CI"], cpuLimit: {maxCores: 2, maxMs: 600000}, memoryLimitMb: 2048}' >"$policy"
  run --separate-stderr fsrun validate --policy "$policy"
  [ "$status" -eq 0 ]
  [ -z "$output" ]
  [ -z "$stderr" ]
  # the Fusion settings wrapper too
  jq '{sandbox: {backend: "fsrun", policy: ., failureMode: "fail-hard"}}' "$policy" >"$policy.wrapped"
  run --separate-stderr fsrun validate --policy "$policy.wrapped"
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
}

@test "validate --policy: relative or missing paths and unknown keys are refused" {
  local policy=$BATS_TEST_TMPDIR/policy.json
  echo '{"allowedPaths": ["relative/dir"]}' >"$policy"
  run --separate-stderr fsrun validate --policy "$policy"
  [ "$status" -eq 1 ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "$stderr" == *"allowedPaths[0]"* ]]

  echo '{"allowedPaths": ["/no/such/dir"]}' >"$policy"
  run --separate-stderr fsrun validate --policy "$policy"
  [ "$status" -eq 1 ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "$stderr" == *"allowedPaths[0]"*"/no/such/dir"* ]]
  # a missing writablePaths entry is fine: the sandbox creates it
  echo '{"writablePaths": ["/no/such/dir"]}' >"$policy"
  run --separate-stderr fsrun validate --policy "$policy"
  [ "$status" -eq 0 ]
  echo '{"writablePaths": ["relative/dir"]}' >"$policy"
  run --separate-stderr fsrun validate --policy "$policy"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"writablePaths[0]"*"absolute path"* ]]

  # a misspelt key must never be ignored
  echo '{"allowNetwrok": true}' >"$policy"
  run --separate-stderr fsrun validate --policy "$policy"
  [ "$status" -eq 1 ]
  [ "${#stderr_lines[@]}" -eq 1 ]
  [[ "$stderr" == *"allowNetwrok"* ]]
}

@test "validate --policy with --bundle checks both" {
  local policy=$BATS_TEST_TMPDIR/policy.json
  echo '{"allowNetwork": false}' >"$policy"
  update_config '.process.cwd = "relative"'
  run --separate-stderr fsrun validate --policy "$policy" --bundle "$BUNDLE"
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"process.cwd"* ]]
}

@test "validate: a kernel.hostname or kernel.domainname sysctl that conflicts with hostname/domainname is refused" {
  update_config '.hostname = "box" | .linux.sysctl = {"kernel.hostname": "other"}'
  expect_invalid "linux.sysctl: \`kernel.hostname\` (\`other\`) conflicts with hostname (\`box\`)"
  update_config '.domainname = "example.org" | .linux.sysctl = {"kernel/domainname": "example.com"}'
  expect_invalid "linux.sysctl: \`kernel.domainname\` (\`example.com\`) conflicts with domainname (\`example.org\`)"
  # the same value is no conflict
  update_config '.hostname = "box" | .domainname = "d" | .linux.sysctl = {"kernel.hostname": "box", "kernel.domainname": "d"}'
  expect_valid
}

@test "validate: create by an ordinary user refuses a conflicting kernel.hostname sysctl, leaving nothing" {
  [ "$EUID" = 0 ] || skip "needs root to become uid 1000"
  requires_host_command setpriv
  local state=$BATS_TEST_TMPDIR/user-state
  mkdir -p "$state"
  chown 1000:1000 "$state"
  update_config '.hostname = "box" | .linux.sysctl = {"kernel.hostname": "other"}'
  run --separate-stderr setpriv --reuid=1000 --regid=1000 --clear-groups "$FSRUN" --root "$state" \
    create --bundle "$BUNDLE" user-sysctl-$UNIQ
  [ "$status" -eq 1 ]
  [[ "$stderr" == *"linux.sysctl: \`kernel.hostname\` (\`other\`) conflicts with hostname (\`box\`)"* ]]
  [ -z "$(ls -A "$state")" ]
}
