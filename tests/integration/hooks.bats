#!/usr/bin/env bats
# OCI hooks (hooks.c): the six kinds, in order, with the state JSON on stdin, args, env and timeout;
# a failing hook fails (and undoes) the operation, or only warns for poststart/poststop.

load helpers

setup() {
  requires_root
  requires_fsrun_command run
  requires_host_command busybox
  setup_bundle
  HOOK_LOG=$BATS_TEST_TMPDIR/hooks.log
  HOOK=$BATS_TEST_TMPDIR/hook.sh
  # hook.sh NAME: appends "NAME nargs=... env=... status=... id=... pid=..." (the state from stdin)
  cat >"$HOOK" <<EOF
#!/bin/sh
name=\$1
state=\$(cat)
printf '%s nargs=%s env=%s status=%s id=%s pid=%s\n' "\$name" "\$#" "\${HOOK_ENV:-unset}" \\
  "\$(printf '%s' "\$state" | jq -r .status)" "\$(printf '%s' "\$state" | jq -r .id)" \\
  "\$(printf '%s' "\$state" | jq -r .pid)" >>"$HOOK_LOG"
EOF
  chmod 755 "$HOOK"
}

teardown() {
  teardown_bundle
}

# hook_json NAME: one hook entry running hook.sh NAME through busybox, which picks its applet from
# argv[0]: the hook only works when args[0] really is its argv[0] ("sh").
hook_json() {
  jq -nc --arg bb "$(command -v busybox)" --arg hook "$HOOK" --arg name "$1" \
    '{path: $bb, args: ["sh", $hook, $name], env: ["HOOK_ENV=set-" + $name]}'
}

@test "hooks: every kind runs in order with the state on stdin, args and env" {
  local kind filter=""
  for kind in prestart createRuntime createContainer poststart poststop; do
    filter+=".hooks.$kind = [$(hook_json $kind)] | "
  done
  # startContainer runs inside the container: its path resolves in the container's root
  update_config '.root.readonly = false'
  cat >"$ROOTFS/start-hook" <<'EOF'
#!/bin/sh
echo "startContainer $(cat | grep -o '"status":"[a-z]*"')" > /start-hook.out
EOF
  chmod 755 "$ROOTFS/start-hook"
  update_config "$filter"'.hooks.startContainer = [{"path": "/start-hook"}]'
  run_in_container /bin/cat /start-hook.out
  [ "$status" -eq 0 ]
  [ "$output" = 'startContainer "status":"created"' ]

  run cat "$HOOK_LOG"
  [ "${#lines[@]}" -eq 5 ]
  [[ ${lines[0]} == "prestart nargs=1 env=set-prestart status=creating id=$CONTAINER_ID pid="[1-9]* ]]
  [[ ${lines[1]} == "createRuntime nargs=1 env=set-createRuntime status=creating id=$CONTAINER_ID "* ]]
  [[ ${lines[2]} == "createContainer nargs=1 env=set-createContainer status=creating id=$CONTAINER_ID "* ]]
  [[ ${lines[3]} == "poststart nargs=1 env=set-poststart status=running id=$CONTAINER_ID "* ]]
  [[ ${lines[4]} == "poststop nargs=1 env=set-poststop status=stopped id=$CONTAINER_ID pid=0" ]]
  # the state's pid is the init's, the same for every hook before it ran
  pid=${lines[0]##*pid=}
  [[ ${lines[1]} == *"pid=$pid" ]]
  [[ ${lines[2]} == *"pid=$pid" ]]
}

@test "hooks: createContainer runs in the container's mount namespace, prestart in the runtime's" {
  update_config '.hooks.prestart = [{"path": "/bin/sh", "args": ["sh", "-c", "readlink /proc/self/ns/mnt > '"$BATS_TEST_TMPDIR"'/prestart"]}]
    | .hooks.createContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "readlink /proc/self/ns/mnt > '"$BATS_TEST_TMPDIR"'/createContainer"]}]'
  set_process_args /bin/sh -c 'readlink /proc/self/ns/mnt'
  run_in_container /bin/sh -c 'readlink /proc/self/ns/mnt'
  [ "$status" -eq 0 ]
  [ "$(cat "$BATS_TEST_TMPDIR/createContainer")" = "$output" ]
  [ "$(cat "$BATS_TEST_TMPDIR/prestart")" = "$(readlink /proc/self/ns/mnt)" ]
}

@test "hooks: a failing prestart, createRuntime or createContainer hook fails create and leaves nothing" {
  local kind
  cp "$BUNDLE/config.json" "$BATS_TEST_TMPDIR/good.json"
  for kind in prestart createRuntime createContainer; do
    cp "$BATS_TEST_TMPDIR/good.json" "$BUNDLE/config.json"
    update_config ".hooks.$kind = [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"exit 3\"]}]"
    run fsrun create --bundle "$BUNDLE" "hook-fail-$kind-$UNIQ"
    [ "$status" -eq 1 ]
    [[ $output == *"$kind hook #0"*"exited with status 3"* ]]
    assert_no_leftovers "hook-fail-$kind-$UNIQ"
  done
}

@test "hooks: a failing startContainer hook stops the container instead of running its process" {
  update_config '.hooks.startContainer = [{"path": "/bin/sh", "args": ["sh", "-c", "exit 4"]}]'
  run_in_container /bin/sh -c 'echo the-process-ran'
  [ "$status" -ne 0 ]
  [[ $output != *the-process-ran* ]]
  [[ $output == *"startContainer hook #0"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "hooks: failing poststart and poststop hooks only warn" {
  update_config '.hooks.poststart = [{"path": "/bin/false"}] | .hooks.poststop = [{"path": "/bin/false"}]'
  run_in_container /bin/sh -c 'echo ok; exit 0'
  [ "$status" -eq 0 ]
  [[ $output == *ok* ]]
  [[ $output == *"poststart hook #0"* ]]
  [[ $output == *"poststop hook #0"* ]]
  assert_no_leftovers "$CONTAINER_ID"
}

@test "hooks: a hook that outlives its timeout is killed and fails the operation" {
  # argv[0] names this test's hook, so that a concurrent run's is not taken for it
  update_config '.hooks.createRuntime = [{"path": "/bin/sleep", "args": [$name, "30"], "timeout": 1}]' \
    --arg name "hook-sleep-$UNIQ"
  run fsrun create --bundle "$BUNDLE" hook-timeout-$UNIQ
  [ "$status" -eq 1 ]
  [[ $output == *"createRuntime hook #0"*"timeout"* ]]
  assert_no_leftovers hook-timeout-$UNIQ
  # the hook itself is gone
  [ -z "$(pgrep -f "^hook-sleep-$UNIQ 30\$" || true)" ]
}

@test "hooks: a hook without env gets the runtime's PATH (as crun)" {
  # a hook given no env must still find its tools: the runtime's environment is passed through
  local out=$BATS_TEST_TMPDIR/hook-path
  update_config '.hooks.prestart = [{"path": "/bin/sh", "args": ["sh", "-c", "echo \"$PATH\" >\"$1\"", "sh", $out]}]' \
    --arg out "$out"
  PATH=/usr/bin:/bin:/fsrun-hook-test run_in_container /bin/true
  [ "$status" -eq 0 ]
  [ "$(cat "$out")" = /usr/bin:/bin:/fsrun-hook-test ]
}
