#!/usr/bin/env bats
# Git in the Fusion adapter's task-container mode (docs/sandbox.md, "Git in a task container"): each
# `fsrun exec` into a container made by `fsrun bundle` gets what one `fsrun sandbox` run gets, the
# overlay over the git common dir, the allowlist applied after the command and the tamper report
# (in --status-json). The routes of the sandbox-git files are tried through such an exec, as root
# and as an ordinary user, and checked from the host the same way.
#
# This file: the exec's check and walk under a worktree name swapped to another repository, a
# layout lost after the check, create's binds; coarse, untyped and tmpfs filesystems (writes
# through a mapping, by the command or a leftover); leftRunning and the quiet container's walk;
# a SIGKILLed fsrun exec and its watchdog. In the VM (`test_tags=kernel61`) the leftover count's
# procfs test runs as the ordinary user on kernel 6.1. (exec-git.bats: the repository;
# exec-git-tamper.bats: what is planted.)

load helpers
EXEC_GIT_USER_PREFIX=fsrxgit
load exec-git-helpers
load exec-git-task

# swap_fixture OWNER: uid 4343 owns $DIR/race (a cache dir it may rename entries of) holding the
# task's worktree `cache`, the owner's main checkout, and `x`, 4343's link to the owner's other
# repository $DIR/other (a config key and a hook named other-only-*, a file committed); OWN=$DIR/race
swap_fixture() {
  make_owner "$1"
  OWN=$DIR/race
  mkdir -p "$OWN/cache"
  [ "$OWNER" = root ] || chown "$TEST_UID:$TEST_GID" "$OWN/cache"
  hgit init -q -b main "$OWN/cache"
  hgit -C "$OWN/cache" -c user.email=u@example.invalid -c user.name=u commit -q --allow-empty -m wt
  hgit init -q -b main "$DIR/other"
  as_owner sh -c 'echo other-only-secret >"$1/secret"; echo exit 0 >"$1/.git/hooks/other-only-hook"' \
    sh "$DIR/other"
  hgit -C "$DIR/other" add secret
  hgit -C "$DIR/other" -c user.email=u@example.invalid -c user.name=u commit -q -m other
  hgit -C "$DIR/other" config fsrun.marker other-only-config
  ln -s "$DIR/other" "$OWN/x"
  chown 4343:4343 "$OWN"
  chown -h 4343:4343 "$OWN/x"
}

# pause_walks_swapped ID: `late`, a nested repository made in the worktree after the last exec's
# walk, is named by every `pause --tamper-json` walk while the worktree's name is swapped (the
# container frozen, the walk's cutoff kept), or the walk could not tell ("."); never the other's.
# An ordinary user without a delegated cgroup cannot pause (route_pause_walk): nothing to walk.
# Its window (the bind's check to the walk's open) is microseconds: with the walk's check off, 0
# of 30 pauses were raced here; the exec's spans the command and catches that (route_exec_swap).
pause_walks_swapped() {
  local i
  as_owner mkdir -p "$OWN/cache/late/.git"
  start_swapper "$OWN"
  for i in $(seq "${EXEC_SWAP_RUNS:-30}"); do
    rm -f "$DIR/paused.json"
    as_owner "$FSRUN" --root "$DIR/state" pause --tamper-json "$DIR/paused.json" "$1" \
      2>>"$DIR/pause-err" || break
    jq -c . "$DIR/paused.json" >>"$DIR/pause-walks"
    as_owner "$FSRUN" --root "$DIR/state" resume "$1"
  done
  stop_swapper "$OWN"
  echo "pause: $(sort "$DIR/pause-err" | uniq -c)"
  cat "$DIR/pause-walks" 2>/dev/null || true
  if [ "$OWNER" = user ] && grep -q "no cgroup was delegated to this user" "$DIR/pause-err"; then
    return 0
  fi
  [ "$(wc -l <"$DIR/pause-walks")" -eq "${EXEC_SWAP_RUNS:-30}" ]
  jq -se 'all(.[] | select(.walked); .tamper | index("late/.git") != null or index(".") != null)' \
    "$DIR/pause-walks"
  jq -se 'all(.[] | select(.walked and (.tamper | index(".") != null));
    .hostGitArgs[0:2] == ["-c", "core.abbrev=fsrun-cannot-disarm"])' "$DIR/pause-walks"
  ! grep -q othernested "$DIR/pause-walks" "$DIR/pause-err" || false
  [ "$(as_owner "$FSRUN" --root "$DIR/state" state "$1" | jq -r .status)" = running ]
}

# route_exec_swap root|user (review23 A1, for exec): while uid 4343 swaps the worktree's name with
# its link to the owner's other repository, EXEC_SWAP_RUNS (30) execs into the worktree's task
# container each make a nested repository n<i>, print .git/config and hooks/ and try to write the
# config. The other repository holds a nested repository made after the create, which a walk of it
# would name. Checked: no exec showed the other's config or hook or wrote a config; every exec that
# walked named its own n<i>/.git or "." (its walk could not tell: the worktree's name led elsewhere),
# never the other's, and "." came with "cannot disarm" in hostGitArgs; an exec that ran always
# said its tamper (one that met the link at its look was refused); the other is as it was;
# pause --tamper-json's walks the same (pause_walks_swapped). Then, the swap stopped, an exec
# names its own.
route_exec_swap() {
  requires_host_command perl
  requires_host_command setpriv
  swap_fixture "$1"
  local id head i
  id=$(task_container "$OWN/cache")
  head=$(hgit -C "$DIR/other" rev-parse HEAD)
  as_owner mkdir -p "$DIR/other/othernested/.git"
  start_swapper "$OWN"
  for i in $(seq "${EXEC_SWAP_RUNS:-30}"); do
    rm -f "$DIR/status.json"
    as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null timeout -s KILL 120 \
      "$FSRUN" --root "$DIR/state" exec --status-json "$DIR/status.json" "$id" /bin/sh -c \
      "mkdir -p n$i/.git; cat .git/config; ls .git/hooks
       echo '[core] fsmonitor = x' >>.git/config && echo CONFIG-WRITTEN" \
      >>"$DIR/race-out" 2>>"$DIR/race-err" || true
    [ ! -s "$DIR/status.json" ] ||
      jq -c --arg n "n$i/.git" '{n: $n, tamper, hostGitArgs}' "$DIR/status.json" \
        >>"$DIR/race-status"
  done
  stop_swapper "$OWN"
  echo "printed: $(sort "$DIR/race-out" | uniq -c)"
  echo "stderr: $(sort "$DIR/race-err" | uniq -c)"
  cat "$DIR/race-status"
  ! grep -e other-only -e CONFIG-WRITTEN "$DIR/race-out" || false
  # an exec that ran said its tamper (one whose look at the worktree met the link was refused, its
  # status empty): none ran with no overlay, sync or walk and said nothing (review25 C11)
  jq -se 'all(.[]; .tamper != null)' "$DIR/race-status"
  # each walk named its own repository or could not tell; none named the other's
  jq -se 'all(.[] | select(.tamper != null); . as $r | $r.tamper |
    index($r.n) != null or index(".") != null)' "$DIR/race-status"
  # and one that could not tell leaves the host's git nothing to run: "cannot disarm"
  jq -se 'all(.[] | select(.tamper != null and (.tamper | index(".") != null));
    .hostGitArgs[0:2] == ["-c", "core.abbrev=fsrun-cannot-disarm"])' "$DIR/race-status"
  ! grep -q othernested "$DIR/race-status" "$DIR/race-err" || false
  [ -z "$(hgit -C "$DIR/other" status --porcelain)" ]
  [ "$(hgit -C "$DIR/other" rev-parse HEAD)" = "$head" ]
  [ "$(ls "$DIR/other")" = "$(printf 'othernested\nsecret')" ]
  [ -z "$(hgit -C "$OWN/cache" config core.fsmonitor)" ]
  [ -z "$(run_dirs)" ]
  pause_walks_swapped "$id"
  # the execs looked: unswapped, one names its own repository and shows its own config
  sbx "$OWN/cache" -- "mkdir -p final/.git; cat .git/config"
  [[ $output == *"[core]"* ]]
  [[ $output != *other-only* ]]
  jq -e '.tamper | index("final/.git") != null and all(.[]; test("^(n[0-9]+|late|final)/\\.git$"))' \
    "$DIR/status.json"
}

@test "exec-git: an exec while the worktree's name is swapped with a link to another repository walks, shows and binds only the task's (root)" {
  route_exec_swap root
}

@test "exec-git: an exec while the worktree's name is swapped with a link to another repository walks, shows and binds only the task's (ordinary user)" {
  route_exec_swap user
}

# start_swap_on_open N MARKED [BACK...]: tests/integration/swap-on-open exchanges `cache` with
# 4343's link to the other repository (swap_fixture; SWAP_A and SWAP_B: another pair) at the first
# open of MARKED by another process, and back at the first open of a BACK path after it; its lines
# in $DIR/swap-out<N>
start_swap_on_open() {
  local n=$1 ready
  shift
  rm -f "$DIR/ready"
  mkfifo "$DIR/ready"
  exec {ready}<>"$DIR/ready"
  timeout -s KILL "$WAIT_MAX_S" "$DIR/swap-on-open" "$1" "${SWAP_A:-$OWN/cache}" \
    "${SWAP_B:-$OWN/x}" "$DIR/ready" "${@:2}" >"$DIR/swap-out$n" &
  SWAPPER=$!
  read -r -t "$WAIT_MAX_S" _ <&"$ready"
  exec {ready}<&-
}

# wait_swap_on_open N: it has made its exchanges (and exited); `cache` the worktree again
wait_swap_on_open() {
  wait "$SWAPPER"
  SWAPPER=
  cat "$DIR/swap-out$1"
  grep -q '^swapped on the open by pid' "$DIR/swap-out$1"
  if [ -L "$OWN/cache" ]; then
    mv "$OWN/cache" "$OWN/link" && mv "$OWN/x" "$OWN/cache" && mv "$OWN/link" "$OWN/x"
  fi
}

# swapped_exec ID N SCRIPT: `fsrun exec` of SCRIPT into ID, its status in $DIR/swapped<N>.json
swapped_exec() {
  as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null timeout -s KILL 120 \
    "$FSRUN" --root "$DIR/state" exec --status-json "$DIR/swapped$2.json" "$1" /bin/sh -c "$3"
}

# filter_fixture OWNER: swap_fixture's, its worktree `cache` with a committed `tools/clean.sh`,
# `filter.x.clean = sh tools/clean.sh` and `sub/`; the other repository has no such script;
# tests/integration/swap-on-open built
filter_fixture() {
  requires_host_command cc
  swap_fixture "$1"
  cc -O2 -o "$DIR/swap-on-open" "$FSRUN_TESTS_DIR/swap-on-open.c"
  as_owner mkdir "$OWN/cache/tools" "$OWN/cache/sub"
  as_owner sh -c 'echo cat >"$1"' sh "$OWN/cache/tools/clean.sh"
  hgit -C "$OWN/cache" add tools
  hgit -C "$OWN/cache" -c user.email=u@example.invalid -c user.name=u commit -q -m tools
  hgit -C "$OWN/cache" config filter.x.clean "sh tools/clean.sh"
}

# route_exec_digest_swap root|user (review23 A1, the config's digests): in two execs the
# worktree's name leads to the other repository from just after the walk's check of the top (at
# the walk's open of `sub/`) to the exec's end (filter_fixture, swap-on-open: no race). The first
# leaves the script alone: nothing named; the second rewrites it: named and disarmed. Broken (the
# digests read by path, as before this test): the first named the other's missing script (a false
# alarm, the digest the container keeps), the second `tamper: []` and `hostGitArgs: []` (the
# other's missing script again: a rewrite the host's next `git add` runs, not named).
route_exec_digest_swap() {
  filter_fixture "$1"
  local id
  id=$(task_container "$OWN/cache")
  start_swap_on_open 1 "$OWN/cache/sub"
  swapped_exec "$id" 1 true
  wait_swap_on_open 1
  jq -c '{tamper, hostGitArgs}' "$DIR/swapped1.json"
  jq -e '.tamper == []' "$DIR/swapped1.json"
  start_swap_on_open 2 "$OWN/cache/sub"
  swapped_exec "$id" 2 "echo 'touch /tmp/fsrun-pwned; cat' >tools/clean.sh"
  wait_swap_on_open 2
  jq -c '{tamper, hostGitArgs}' "$DIR/swapped2.json"
  jq -e '.tamper == ["config:filter.x.clean=sh tools/clean.sh"]' "$DIR/swapped2.json"
  jq -e '.hostGitArgs | index("filter.x.clean=") != null' "$DIR/swapped2.json"
}

@test "exec-git: the config's digests read the worktree checked by the walk while its name leads to another repository (root)" {
  route_exec_digest_swap root
}

@test "exec-git: the config's digests read the worktree checked by the walk while its name leads to another repository (ordinary user)" {
  route_exec_digest_swap user
}

# route_exec_config_swap root|user (review23 A1, a main checkout's config read at the set-up): an
# exec rewrites the filter's script (filter_fixture) while the worktree's name leads to the other
# repository from the set-up's read of `.git/index` (through the common dir held, after the
# layout's check) to fsrun's next open of the other's top or its `.git/hooks` (swap-on-open: no
# race): the script named and disarmed. Broken (the config read by its path, as before this
# test): the other's config was read, which names no script: `tamper: []`, `hostGitArgs: []`.
route_exec_config_swap() {
  filter_fixture "$1"
  local id
  id=$(task_container "$OWN/cache")
  start_swap_on_open 1 "$OWN/cache/.git/index" "$DIR/other" "$DIR/other/.git/hooks"
  swapped_exec "$id" 1 "echo 'touch /tmp/fsrun-pwned; cat' >tools/clean.sh"
  wait_swap_on_open 1
  grep -q '^swapped back on the open by pid' "$DIR/swap-out1"
  jq -c '{tamper, hostGitArgs}' "$DIR/swapped1.json"
  jq -e '.tamper | index("config:filter.x.clean=sh tools/clean.sh") != null' "$DIR/swapped1.json"
  jq -e '.hostGitArgs | index("filter.x.clean=") != null' "$DIR/swapped1.json"
}

@test "exec-git: a main checkout's config is read through the common dir checked while the worktree's name leads to another repository (root)" {
  route_exec_config_swap root
}

@test "exec-git: a main checkout's config is read through the common dir checked while the worktree's name leads to another repository (ordinary user)" {
  route_exec_config_swap user
}

# exchange A B: the names of A and B exchanged back (mv: neither is the other's parent)
exchange() {
  mv "$1" "$1.swap" && mv "$2" "$1" && mv "$1.swap" "$2"
}

# refused_exec ID [SCRIPT]: `fsrun exec --status-json` into ID of SCRIPT (default: one that leaves
# `ran` in its worktree); its exit status in $status, its stderr in $DIR/refused-err
refused_exec() {
  status=0
  as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null timeout -s KILL 120 \
    "$FSRUN" --root "$DIR/state" exec --status-json "$DIR/refused.json" "$1" /bin/sh -c \
    "${2:-echo >ran}" 2>"$DIR/refused-err" || status=$?
  echo "exit $status"
  cat "$DIR/refused-err"
}

# refused_said WHY: the exec was refused as docs/fsrun-exec.8 says (exit 1, one line ending in
# the refusal, no status, nothing left in the state root); WHY a part of that line
refused_said() {
  [ "$status" -eq 1 ]
  [ "$(wc -l <"$DIR/refused-err")" -eq 1 ]
  grep -q "exec: git: .*$1.*; the command is not run without the git overlay, sync and walk" \
    "$DIR/refused-err"
  [ ! -s "$DIR/refused.json" ]
  [ -z "$(run_dirs)" ]
}

# route_exec_swapped_after_check root|user (review25 C11): the worktree's name leads to the other
# repository from the exec's first open of its state root (its clean-up of killed execs' dirs,
# after the worktree's check; swap-on-open: no race) to its end. The layout is found below the
# worktree checked, not by its name again: the command runs with the overlay (its commit lands in
# the task's repository) and the walk, which cannot tell through the swapped name, says "."
# (cannot disarm). Broken (the layout looked up by the name again, as before this test): no
# overlay (the commit fails: EROFS), and --status-json had no tamper at all.
route_exec_swapped_after_check() {
  requires_host_command cc
  swap_fixture "$1"
  cc -O2 -o "$DIR/swap-on-open" "$FSRUN_TESTS_DIR/swap-on-open.c"
  local id head
  id=$(task_container "$OWN/cache")
  head=$(hgit -C "$DIR/other" rev-parse HEAD)
  start_swap_on_open 1 "$DIR/state"
  swapped_exec "$id" 1 "mkdir -p n/.git
    git -c user.email=u@example.invalid -c user.name=u commit -q --allow-empty -m inside" || true
  wait_swap_on_open 1
  cat "$DIR/swapped1.json"
  jq -e '.exitCode == 0 and (.tamper | index(".") != null)' "$DIR/swapped1.json"
  jq -e '.hostGitArgs[0:2] == ["-c", "core.abbrev=fsrun-cannot-disarm"]' "$DIR/swapped1.json"
  [ "$(hgit -C "$OWN/cache" log -1 --format=%s main)" = inside ]
  [ "$(hgit -C "$DIR/other" rev-parse HEAD)" = "$head" ]
  [ -z "$(run_dirs)" ]
}

@test "exec-git: an exec whose worktree's name is swapped after its check runs with the overlay of the worktree checked and says it cannot tell (root)" {
  route_exec_swapped_after_check root
}

@test "exec-git: an exec whose worktree's name is swapped after its check runs with the overlay of the worktree checked and says it cannot tell (ordinary user)" {
  route_exec_swapped_after_check user
}

# route_exec_worktree_gone root|user (review25 C11): the worktree's name shows another directory
# when the exec looks (4343's link to the other repository, swapped in for good): the exec is
# refused (refused_said), the command never ran, the other repository is as it was; with the
# name back, the next exec runs with its overlay. Broken (the exec ran with a warning, as before
# this test): exit 0, `ran` written, and --status-json had no tamper at all.
route_exec_worktree_gone() {
  swap_fixture "$1"
  local id head
  id=$(task_container "$OWN/cache")
  head=$(hgit -C "$DIR/other" rev-parse HEAD)
  exchange "$OWN/cache" "$OWN/x"
  refused_exec "$id"
  exchange "$OWN/cache" "$OWN/x"
  refused_said "\`$OWN/cache\` is no longer the directory the config's bind of it names"
  [ ! -e "$OWN/cache/ran" ]
  [ ! -e "$DIR/other/ran" ]
  [ "$(hgit -C "$DIR/other" rev-parse HEAD)" = "$head" ]
  sbx "$OWN/cache" -- "git -c user.email=u@example.invalid -c user.name=u commit -q --allow-empty -m after"
  [ "$(hgit -C "$OWN/cache" log -1 --format=%s main)" = after ]
}

@test "exec-git: an exec into a task container whose worktree's name shows another directory is refused (root)" {
  route_exec_worktree_gone root
}

@test "exec-git: an exec into a task container whose worktree's name shows another directory is refused (ordinary user)" {
  route_exec_worktree_gone user
}

# linked_swap_on_open A B COMMAND: in make_repo's task container, A and B exchanged at the exec's
# open of the task worktree's `.git` (after the worktree's check; swap-on-open: no race) while
# COMMAND runs through refused_exec (its status in $DIR/refused.json), then exchanged back
linked_swap_on_open() {
  requires_host_command cc
  cc -O2 -o "$DIR/swap-on-open" "$FSRUN_TESTS_DIR/swap-on-open.c"
  local id
  id=$(task_container "$WT")
  SWAP_A=$1 SWAP_B=$2 start_swap_on_open 1 "$WT/.git"
  refused_exec "$id" "$3"
  wait "$SWAPPER"
  SWAPPER=
  cat "$DIR/swap-out1" "$DIR/refused.json"
  grep -q '^swapped on the open by pid' "$DIR/swap-out1"
  exchange "$1" "$2"
}

# route_exec_linked_swapped root|user (review25 C11): a linked worktree's name exchanged with the
# other task's right after the exec's check (linked_swap_on_open): the layout is found below the
# worktree checked (its admin dir's back-pointer names `<worktree>/.git`, the `.git` read from the
# checked top), so the command runs with the overlay (its commit lands on the task's branch) and
# the walk, through the swapped name, says "."; the other task's branch is unchanged. Broken (the
# back-pointer's `.git` opened by the name, as before this test): refused; before that, exit 0, no
# overlay and no tamper at all.
route_exec_linked_swapped() {
  make_repo "$1"
  linked_swap_on_open "$WT" "$OTHER" \
    'git -c user.email=u@example.invalid -c user.name=u commit -q --allow-empty -m inside'
  [ "$status" -eq 0 ]
  jq -e '.exitCode == 0 and (.tamper | index(".") != null)' "$DIR/refused.json"
  [ "$(hgit -C "$REPO" log -1 --format=%s task)" = inside ]
  [ "$(hgit -C "$REPO" rev-parse other)" = "$MAIN0" ]
  [ -z "$(run_dirs)" ]
}

@test "exec-git: an exec whose linked worktree's name is swapped after its check runs with the overlay of the worktree checked and says it cannot tell (root)" {
  route_exec_linked_swapped root
}

@test "exec-git: an exec whose linked worktree's name is swapped after its check runs with the overlay of the worktree checked and says it cannot tell (ordinary user)" {
  route_exec_linked_swapped user
}

# route_exec_layout_lost root|user (review25 C11): the two tasks' admin dirs in the common dir
# exchanged at the exec's open of the task worktree's `.git` (linked_swap_on_open): its gitdir then
# leads to the other's admin dir, whose back-pointer names the other's `.git`, so git's layout
# cannot be found: the exec is refused (refused_said), nothing ran. Broken (a layout not found was
# taken for "no repository", as before this test): exit 0, `ran` written, no overlay, sync or
# walk, and --status-json had no tamper at all.
route_exec_layout_lost() {
  make_repo "$1"
  linked_swap_on_open "$REPO/.git/worktrees/task" "$REPO/.git/worktrees/other" 'echo >ran'
  refused_said "has no gitdir file naming this worktree's .git"
  [ ! -e "$WT/ran" ]
  [ ! -e "$OTHER/ran" ]
  [ "$(hgit -C "$REPO" rev-parse task)" = "$MAIN0" ]
}

@test "exec-git: an exec into a linked worktree whose git layout cannot be found after the check is refused (root)" {
  route_exec_layout_lost root
}

@test "exec-git: an exec into a linked worktree whose git layout cannot be found after the check is refused (ordinary user)" {
  route_exec_layout_lost user
}

# route_accept_swap root|user (gitpin25's left: exec-git-accept.c listed the binds a task container
# must have by the worktree's name): a submodule `sub` (.gitmodules and the `sub/.git` file) appears
# in the worktree after `fsrun bundle`, whose config then has no read-only bind of `sub/.git`:
# create is refused, naming it. Then again while the worktree's name leads to a decoy (an empty
# .gitmodules) from create's first open of the common dir's worktrees/ (after the layout's check)
# to its first open of the decoy's .gitmodules (swap-on-open: no race): still refused, naming
# `sub/.git`. Broken (the list by name, as before this test): the decoy's .gitmodules was read, the
# config was taken without the bind, and the container was created with `sub/.git` writable.
route_accept_swap() {
  requires_host_command cc
  make_repo "$1"
  local id=xacc-$$ decoy=$REPO/.worktrees/decoy
  cc -O2 -o "$DIR/swap-on-open" "$FSRUN_TESTS_DIR/swap-on-open.c"
  as_owner "$FSRUN" --root "$DIR/state" bundle --policy "$DIR/policy.json" --worktree "$WT" \
    --out "$DIR/bundle" -- true
  as_owner sh -c 'printf "[submodule \"sub\"]\n\tpath = sub\n" >"$1/.gitmodules" &&
    mkdir "$1/sub" && echo "gitdir: ../.git/modules/sub" >"$1/sub/.git" &&
    mkdir "$2" && : >"$2/.gitmodules"' sh "$WT" "$decoy"
  status=0
  as_owner "$FSRUN" --root "$DIR/state" create --bundle "$DIR/bundle" "$id" >"$DIR/create.out" \
    2>&1 || status=$?
  output=$(cat "$DIR/create.out")
  [ "$status" -ne 0 ] || echo "$id" >>"$DIR/containers"
  echo "unswapped: $status $output"
  [ "$status" -eq 1 ]
  [[ $output == *"\`$WT/sub/.git\` has no read-only bind"* ]]
  rm -f "$DIR/ready"
  mkfifo "$DIR/ready"
  exec {ready}<>"$DIR/ready"
  timeout -s KILL "$WAIT_MAX_S" "$DIR/swap-on-open" "$REPO/.git/worktrees" "$WT" "$decoy" \
    "$DIR/ready" "$WT/.gitmodules" >"$DIR/swap-out" &
  SWAPPER=$!
  read -r -t "$WAIT_MAX_S" _ <&"$ready"
  exec {ready}<&-
  # not through a pipe: a container created holds create's stdio
  status=0
  as_owner "$FSRUN" --root "$DIR/state" create --bundle "$DIR/bundle" "$id" >"$DIR/create.out" \
    2>&1 || status=$?
  output=$(cat "$DIR/create.out")
  [ "$status" -ne 0 ] || echo "$id" >>"$DIR/containers"
  kill "$SWAPPER" 2>/dev/null || true
  wait "$SWAPPER" || true
  SWAPPER=
  echo "swapped: $status $output"
  cat "$DIR/swap-out"
  # names back as they were: the swap's back mark is not met when the list is not taken by name
  if [ ! -e "$WT/sub/.git" ]; then
    mv "$WT" "$DIR/x" && mv "$decoy" "$WT" && mv "$DIR/x" "$decoy"
  fi
  grep -q '^swapped on the open by pid' "$DIR/swap-out"
  [ "$status" -eq 1 ]
  [[ $output == *"\`$WT/sub/.git\` has no read-only bind"* ]]
}

@test "exec-git: create lists the binds a task container must have through the worktree it checked, not its name swapped to a decoy (root)" {
  route_accept_swap root
}

@test "exec-git: create lists the binds a task container must have through the worktree it checked, not its name swapped to a decoy (ordinary user)" {
  route_accept_swap user
}

# coarse_exec_runs OWNER (run by coarse_fs, review23 A3): on a filesystem of whole-second times,
# five execs into one task container each make a nested repository at once: each is named (with
# the earlier execs' of the same second: a false alarm). With the exec's 20 ms margin alone, 5 of 5
# were missed.
coarse_exec_runs() {
  local id
  make_repo "$1"
  id=$(task_container "$WT")
  for i in $(seq 5); do
    sbx -- "mkdir -p n$i/.git"
    jq -e --arg own "n$i/.git" \
      '.tamper | index($own) != null and all(.[]; test("^n[0-9]+/\\.git$"))' "$DIR/status.json" \
      >/dev/null || { echo "exec $i named $(jq -c .tamper "$DIR/status.json")"; return 1; }
  done
  as_owner "$FSRUN" --root "$DIR/state" delete --force "$id"
}

@test "exec-git: on a filesystem of whole-second times a nested repository an exec makes at once is named (root)" {
  coarse_fs root coarse_exec_runs sbx task_container run_dirs git_run_dirs
}

@test "exec-git: on a filesystem of whole-second times a nested repository an exec makes at once is named (ordinary user)" {
  coarse_fs user coarse_exec_runs sbx task_container run_dirs git_run_dirs
}

# through_exec OWNER (the body private_fs or loop_ext4 runs): sandbox-git.bats's runs $EXEC_RUNS
# OWNER, each sbx an exec into the task container, then that container deleted
through_exec() {
  "$EXEC_RUNS" "$1"
  as_owner "$FSRUN" --root "$DIR/state" delete --force "$(task_container "$WT")"
}

# exec_on FS OWNER RUNS FUNCTION...: through_exec of RUNS (FUNCTIONs: what RUNS calls) on a worktree
# on FS: tmpfs, disk (private_fs), or untyped (loop_ext4: an ext4 without `filetype`)
exec_on() {
  local fs=$1 owner=$2 runs=$3
  shift 3
  local with=(through_exec "$runs" "$@" sbx task_container run_dirs git_run_dirs)
  case $fs in
    tmpfs) EXEC_RUNS=$runs private_fs mount_tmpfs is_tmpfs "$owner" "${with[@]}" ;;
    disk) EXEC_RUNS=$runs private_fs mount_disk on_disk "$owner" "${with[@]}" ;;
    untyped) EXEC_RUNS=$runs loop_ext4 "-O ^filetype" no_filetype "$owner" "${with[@]}" ;;
  esac
}

# review24 B2: sandbox-git.bats's untyped_runs through an exec
@test "exec-git: on a filesystem whose readdir gives no types the nested repositories an exec makes are named (root)" {
  exec_on untyped root untyped_runs host_args
}

@test "exec-git: on a filesystem whose readdir gives no types the nested repositories an exec makes are named (ordinary user)" {
  exec_on untyped user untyped_runs host_args
}

# review24 B3: sandbox-git.bats's mmap_runs through an exec
@test "exec-git: on a tmpfs worktree a tracked file an exec rewrote through a shared mapping shows in the host's git status (root)" {
  exec_on tmpfs root mmap_runs mmap_rewrite_shows
}

@test "exec-git: on a tmpfs worktree a tracked file an exec rewrote through a shared mapping shows in the host's git status (ordinary user)" {
  exec_on tmpfs user mmap_runs mmap_rewrite_shows
}

# review24 B3: sandbox-git.bats's submount_mmap_runs through an exec
@test "exec-git: a tracked file on a tmpfs mounted below a disk worktree, rewritten through a shared mapping by an exec, shows in the host's git status (root)" {
  on_disk "$DIR" || skip "$DIR is not on a disk filesystem"
  exec_on disk root submount_mmap_runs mmap_rewrite_shows
}

@test "exec-git: a tracked file on a tmpfs mounted below a disk worktree, rewritten through a shared mapping by an exec, shows in the host's git status (ordinary user)" {
  on_disk "$DIR" || skip "$DIR is not on a disk filesystem"
  exec_on disk user submount_mmap_runs mmap_rewrite_shows
}

# dotgit_quiet_runs OWNER (review24 B1): sandbox-git.bats's dotgit_mmap_runs (through an exec: the
# task container's `.git` entries were listed at its create, where `sub/.git` was already there);
# the next exec names nothing
dotgit_quiet_runs() {
  dotgit_mmap_runs "$1"
  rm -f "$DIR/audit.jsonl"
  sbx -- true
  [ "$(tamper)" = '[]' ]
}

@test "exec-git: on a tmpfs worktree a .git file an exec rewrote through a shared mapping into a nested repository is named (root)" {
  exec_on tmpfs root dotgit_quiet_runs dotgit_mmap_runs host_args
}

@test "exec-git: on a tmpfs worktree a .git file an exec rewrote through a shared mapping into a nested repository is named (ordinary user)" {
  exec_on tmpfs user dotgit_quiet_runs dotgit_mmap_runs host_args
}

# dotgit_delete_runs OWNER (run by private_fs on a tmpfs, review24 B1): after the last exec's walk,
# a process it left (held by fifos: no wait on time) rewrites `sub/.git` through a shared mapping
# into a pointer at the repository that exec made (dotgit_mmap_runs' route): `fsrun delete
# --tamper-json` names it, comparing with the list the exec's walk kept. Without the list:
# `"tamper":[]`.
dotgit_delete_runs() {
  local id
  make_repo "$1"
  as_owner mkdir "$WT/sub"
  as_owner sh -c 'echo "gitdir: ../../.git/modules/sub-not-here" >"$1"' sh "$WT/sub/.git"
  sbx -- 'git init -q --bare .r && git --git-dir=.r config core.bare false && mkfifo go done &&
    setsid python3 -c "
import mmap
open(\"go\").read()
with open(\"sub/.git\", \"r+b\") as f:
    m = mmap.mmap(f.fileno(), 0)
    assert m[0:8] == b\"gitdir: \"
    m[:] = b\"gitdir: ../.r\".ljust(len(m), b\"\\n\")
    m.close()
open(\"done\", \"w\").write(\"x\")
" </dev/null >/dev/null 2>&1 &'
  [ "$(jq -c .tamper "$DIR/status.json")" = '[]' ]
  id=$(task_container "$WT")
  as_owner timeout -s KILL 60 sh -c 'echo go >"$1" && cat "$2"' sh "$WT/go" "$WT/done" >/dev/null
  [ "$(hgit -C "$WT/sub" rev-parse --absolute-git-dir)" = "$WT/.r" ]
  as_owner "$FSRUN" --root "$DIR/state" delete --force --tamper-json "$DIR/final.json" "$id"
  echo "delete: $(cat "$DIR/final.json")"
  [ "$(jq -c .tamper "$DIR/final.json")" = '["sub/.git"]' ]
}

@test "exec-git: on a tmpfs worktree delete names a .git file a process left after the last exec rewrote through a shared mapping (root)" {
  private_fs mount_tmpfs is_tmpfs root dotgit_delete_runs sbx task_container run_dirs git_run_dirs
}

@test "exec-git: on a tmpfs worktree delete names a .git file a process left after the last exec rewrote through a shared mapping (ordinary user)" {
  private_fs mount_tmpfs is_tmpfs user dotgit_delete_runs sbx task_container run_dirs git_run_dirs
}

# mmap_pause_runs OWNER (run by private_fs on a tmpfs, review24 B3): a process an exec left (held
# by fifos: no wait on time) rewrites README through a shared mapping it read first after the
# host's `git status` rewrote the index the exec had set back; `fsrun pause --tamper-json` sets it
# back again: the host's `git status --porcelain` shows README modified. Without that: nothing.
mmap_pause_runs() {
  local id index=$REPO/.git/worktrees/task/index
  make_repo "$1"
  as_owner touch -d 2020-01-01 "$WT/README"
  printf '/go\n/done\n' | as_owner tee -a "$REPO/.git/info/exclude" >/dev/null
  sbx -- 'mkfifo go done && setsid python3 -c "
import mmap
open(\"go\").read()
with open(\"README\", \"r+b\") as f:
    m = mmap.mmap(f.fileno(), 0)
    assert m[0:3] == b\"one\"
    m[0:3] = b\"TWO\"
    m.close()
open(\"done\", \"w\").write(\"x\")
" </dev/null >/dev/null 2>&1 &'
  id=$(task_container "$WT")
  hgit -C "$WT" update-index -q --refresh || true
  [ -z "$(hgit -C "$WT" status --porcelain)" ]
  [ "$(stat -c %Y "$index")" != 1 ]
  as_owner timeout -s KILL 60 sh -c 'echo go >"$1" && cat "$2"' sh "$WT/go" "$WT/done" >/dev/null
  [ "$(cat "$WT/README")" = TWO ]
  status=0
  output=$(as_owner "$FSRUN" --root "$DIR/state" pause --tamper-json "$DIR/paused.json" "$id" 2>&1) ||
    status=$?
  echo "$output"
  if [ "$1" = user ] && [[ $output == *"no cgroup was delegated to this user"* ]]; then
    as_owner "$FSRUN" --root "$DIR/state" delete --force "$id"
    return 0 # an ordinary user without a delegated cgroup cannot pause (route_pause_walk)
  fi
  [ "$status" = 0 ]
  echo "status: $(hgit -C "$WT" status --porcelain)"
  [ "$(hgit -C "$WT" status --porcelain)" = " M README" ]
  as_owner "$FSRUN" --root "$DIR/state" delete --force "$id"
}

@test "exec-git: on a tmpfs worktree pause --tamper-json makes a leftover's write through a shared mapping show in the host's git status (root)" {
  private_fs mount_tmpfs is_tmpfs root mmap_pause_runs sbx task_container run_dirs git_run_dirs
}

@test "exec-git: on a tmpfs worktree pause --tamper-json makes a leftover's write through a shared mapping show in the host's git status (ordinary user)" {
  private_fs mount_tmpfs is_tmpfs user mmap_pause_runs sbx task_container run_dirs git_run_dirs
}

# Without a freezer (an ordinary user here): an exec after which nothing is left in the container but
# its own processes (the init and config.json's `sleep`, whose memory no exec may write) says
# `"leftRunning":false` in --status-json, so its walk holds until the next exec. One whose command left a `setsid` process (reparented to the
# init; held on a fifo: no wait on time) says true, and so does the next exec while it is there; so
# does one while a process of an earlier exec forks and exits in a loop (never one pid for long).
route_left_running() {
  make_repo "$1"
  if [ "$("$FSRUN" features | jq -r '.annotations["run.fsrun.landlock"] // "0"')" -le 0 ]; then
    sbx "$REPO" -- true
    [ "$(jq -c .leftRunning "$DIR/status.json")" = true ]
    skip "no Landlock here: no exec can be kept from the init's memory, leftRunning is always true"
  fi
  # the init and `sleep` run no code of a command's: no exec may write their memory (a Landlock
  # domain of its own; the same uid without it could), which also needs no wait
  sbx "$REPO" -- 'for p in 1 2; do
      err=$( (exec 3<>/proc/$p/mem) 2>&1) && { echo "opened /proc/$p/mem"; exit 1; }
      case $err in *"Permission denied"*) ;; *) echo "$err"; exit 1 ;; esac
    done'
  [ "$(jq -c .leftRunning "$DIR/status.json")" = false ]
  sbx "$REPO" -- true
  [ "$(jq -c .leftRunning "$DIR/status.json")" = false ]
  sbx "$REPO" -- "mkfifo hold && setsid sh -c 'read x <hold' </dev/null >/dev/null 2>&1 &"
  [ "$(jq -c .leftRunning "$DIR/status.json")" = true ]
  sbx "$REPO" -- true
  [ "$(jq -c .leftRunning "$DIR/status.json")" = true ]
  as_owner timeout -s KILL 60 sh -c 'echo go >"$1"' sh "$REPO/hold"
  # a hop: each process starts the next and exits, until the file stop is there
  sbx "$REPO" -- "printf '[ -e stop ] || sh ./hop.sh &\n' >hop.sh && setsid sh ./hop.sh </dev/null >/dev/null 2>&1"
  sbx "$REPO" -- true
  as_owner touch "$REPO/stop"
  [ "$(jq -c .leftRunning "$DIR/status.json")" = true ]
}

@test "exec-git: an exec that leaves no process says leftRunning false; a setsid leftover or a hopping process makes it true (root)" {
  route_left_running root
}

@test "exec-git: an exec that leaves no process says leftRunning false; a setsid leftover or a hopping process makes it true (ordinary user)" {
  route_left_running user
}

# walk_adds_nothing FILE: FILE's walk (pause's or delete's --tamper-json) names nothing and asks
# for no option that the last exec's status.json did not (a repeat at most)
walk_adds_nothing() {
  [ "$(jq -c .walked "$1")" = true ]
  jq -en --slurpfile s "$DIR/status.json" --slurpfile w "$1" '
    def pairs: [range(0; length; 2) as $i | .[$i:$i + 2]];
    ($w[0].tamper - $s[0].tamper) == [] and ($w[0].hostGitArgs | pairs) - ($s[0].hostGitArgs | pairs) == []'
}

# pauseskip24: the adapter skips its pause when an exec says leftRunning false, because that
# exec's walk is final. From the host: an exec that plants itself (a nested repository, an
# fsmonitor in an included config) and leaves nothing has both in its own status, and a walk of
# the quiet container after it (pause --tamper-json where a freezer exists, then delete's last
# walk) adds nothing to that list or its options: the host's git under the status's hostGitArgs
# runs nothing (a plain git status runs it: the control). route_pause_walk is the other side: a
# leftover that plants after the walk, which only the frozen walk names.
route_quiet_walk_adds_nothing() {
  local id
  make_repo "$1"
  if [ "$("$FSRUN" features | jq -r '.annotations["run.fsrun.landlock"] // "0"')" -le 0 ]; then
    skip "no Landlock here: leftRunning is always true and the adapter always pauses"
  fi
  hgit -C "$REPO" config include.path ../.gitconfig
  # a nested `.git` file naming nothing: named, and disarmable (a repository of its own is not)
  sbx "$REPO" -- "mkdir quiet-nested && echo gitdir: /nonexistent >quiet-nested/.git &&
                  printf '[core]\\n\\tfsmonitor = $DIR/evil.sh\\n' >.gitconfig"
  [ "$(jq -c .leftRunning "$DIR/status.json")" = false ]
  [ "$(jq -c '.tamper | sort' "$DIR/status.json")" = \
    '["config:include.path=../.gitconfig","quiet-nested/.git"]' ]
  id=$(task_container "$REPO")
  run as_owner "$FSRUN" --root "$DIR/state" pause --tamper-json "$DIR/paused.json" "$id"
  echo "$output"
  if [ "$1" = root ] || [ "$status" = 0 ]; then
    [ "$status" = 0 ]
    cat "$DIR/paused.json"
    walk_adds_nothing "$DIR/paused.json"
    as_owner "$FSRUN" --root "$DIR/state" resume "$id"
  fi
  as_owner "$FSRUN" --root "$DIR/state" delete --force --tamper-json "$DIR/final.json" "$id"
  cat "$DIR/final.json"
  walk_adds_nothing "$DIR/final.json"
  host_git_disarmed_by "$DIR/status.json"
}

@test "exec-git: after an exec that leaves nothing, a walk of the quiet container adds nothing to its status (root)" {
  route_quiet_walk_adds_nothing root
}

@test "exec-git: after an exec that leaves nothing, a walk of the quiet container adds nothing to its status (ordinary user)" {
  route_quiet_walk_adds_nothing user
}

# review23 A2: besides /proc/PID/mem (route_left_running), process_vm_writev and process_vm_readv
# on the init and `sleep` are refused (EPERM: Landlock's ptrace hook; the sandbox's seccomp filter
# also denies writev, not readv, which without the domain reads, or fails with EFAULT at this
# bogus address), while signals still reach them (`kill -0`: Landlock's signal scope is not asked
# for, so that a command may still stop a server an earlier exec left).
route_exec_isolated() {
  make_repo "$1"
  if [ "$("$FSRUN" features | jq -r '.annotations["run.fsrun.landlock"] // "0"')" -le 0 ]; then
    skip "no Landlock here"
  fi
  sbx "$REPO" -- 'python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [(\"base\", ctypes.c_void_p), (\"len\", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(8)
local, remote = iovec(ctypes.addressof(buf), 8), iovec(0x1000, 8)
for pid in (1, 2):
    for call in (libc.process_vm_writev, libc.process_vm_readv):
        r = call(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        err = ctypes.get_errno()
        assert r == -1 and err == 1, (pid, r, os.strerror(err))
    os.kill(pid, 0)
print(\"refused\")
"'
  [[ "$output" == *refused* ]]
}

@test "exec-git: an exec cannot process_vm_writev or process_vm_readv the init or sleep, kill -0 still reaches them (root)" {
  route_exec_isolated root
}

@test "exec-git: an exec cannot process_vm_writev or process_vm_readv the init or sleep, kill -0 still reaches them (ordinary user)" {
  route_exec_isolated user
}

# review23 A2 (lowfix23's count): a leftover whose /proc/PID/ns/pid the counter may not read (it
# exec'd root's program of mode 0711, which the container's user may run but not read: its memory
# belongs to the initial user namespace then, so the ordinary user's helper gets EACCES) is still
# counted: found by its number in the container's pid namespace, leftRunning true (was false).
route_unreadable_leftover() {
  make_repo "$1"
  install -m 0711 -o root -g root "$(command -v sleep)" "$REPO/xsleep"
  # the command waits until the leftover runs xsleep (its comm), spinning: no wait on time
  sbx "$REPO" -- 'setsid -f ./xsleep 1000 </dev/null >/dev/null 2>&1
    until grep -qx xsleep /proc/[0-9]*/comm 2>/dev/null; do :; done'
  [ "$(jq -c .leftRunning "$DIR/status.json")" = true ]
}

@test "exec-git: a leftover whose pid namespace the count may not read makes leftRunning true (root)" {
  route_unreadable_leftover root
}

@test "exec-git: a leftover whose pid namespace the count may not read makes leftRunning true (ordinary user)" {
  route_unreadable_leftover user
}

# userleft25: every kind of process an exec can leave counts, as root and as an ordinary user: in
# the background, double-forked, in a session of its own, in a pid and user namespace of its own
# (the container maps one uid, the caller's, and a nested namespace is the only other name it has:
# uid 0 there for the user; root without CAP_SETFCAP may not map root, so unmapped, nobody there;
# the policy's seccomp is "none" for unshare), and not dumpable (its /proc/PID/status is then owned
# by its namespace's root, which the user's container does not map). rootleft26: one that took
# another uid in a user namespace of its own (a command has no other way to change it; 4242 for
# the user, unmapped for root, who may not map root: the leftover says which), and one the host
# moved out of the container's cgroups into the root cgroup of every hierarchy (as a delegated
# user or a container's root could move its own processes: the container's cgroup bounds nothing
# the count sees), counted by the exec after the move. Each leftover signals a fifo once in place
# and holds on another; released, an exec says false again (polled: the init reaps it when it
# likes).
route_left_kinds() {
  local kind map=-r other_map='--map-user=4242 --map-group=4242' other_uid=4242
  [ "$1" = user ] || map=
  [ "$1" = user ] || other_map= other_uid=65534
  local -A leave=(
    [background]='sh ./held.sh &'
    [double-forked]='(sh ./held.sh &)'
    [setsid]='setsid -f sh ./held.sh'
    [nested-namespaces]="unshare -Up $map sh -c 'sh ./held.sh &'"
    [not-dumpable]='python3 ./undumpable.py &'
    [other-uid]="unshare -U $other_map sh -c 'sh ./held.sh &'"
    [moved-cgroup]='sh ./held.sh &'
  )
  make_repo "$1"
  if [ "$("$FSRUN" features | jq -r '.annotations["run.fsrun.landlock"] // "0"')" -le 0 ]; then
    skip "no Landlock here: leftRunning is always true"
  fi
  echo '{"seccomp":"none"}' >"$DIR/policy.json"
  as_owner sh -c 'printf "echo in \$(id -u) >ready\nread x <hold\n" >"$1/held.sh"' sh "$REPO"
  as_owner sh -c 'cat >"$1/undumpable.py"' sh "$REPO" <<'PY'
import ctypes
libc = ctypes.CDLL(None)
assert libc.prctl(4, 0, 0, 0, 0) == 0 and libc.prctl(3, 0, 0, 0, 0) == 0  # PR_SET/GET_DUMPABLE
open("ready", "w").write("in\n")
open("hold").read()
PY
  for kind in background double-forked setsid nested-namespaces not-dumpable other-uid \
    moved-cgroup; do
    echo "# $kind"
    sbx "$REPO" -- "rm -f ready hold && mkfifo ready hold && {
        ${leave[$kind]}
      } </dev/null >/dev/null 2>&1 && read x <ready && echo \"\$x\""
    [ "$kind" != other-uid ] || [ "$output" = "in $other_uid" ]
    [ "$(jq -c .leftRunning "$DIR/status.json")" = true ]
    if [ "$kind" = moved-cgroup ]; then
      move_to_root_cgroups "$(held_host_pid)"
      sbx "$REPO" -- true
      [ "$(jq -c .leftRunning "$DIR/status.json")" = true ]
    fi
    as_owner timeout -s KILL 60 sh -c 'echo go >"$1"' sh "$REPO/hold"
    wait_until left_none
  done
}

# held_host_pid: the host pid of the one `sh ./held.sh` in the task container of $REPO (found by
# its pid namespace, the init's, and its command line)
held_host_pid() {
  local init ns p found=
  init=$(as_owner "$FSRUN" --root "$DIR/state" state "$(task_container "$REPO")" | jq -r .pid)
  ns=$(readlink "/proc/$init/ns/pid")
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] || continue
    [ "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" = "sh ./held.sh " ] || continue
    [ -z "$found" ] || return 1
    found=${p#/proc/}
  done
  [ -n "$found" ] && echo "$found"
}

# move_to_root_cgroups PID: PID into the root cgroup of every hierarchy (cgroup v2 alone, or each
# v1 hierarchy and the hybrid's unified one), checked in /proc/PID/cgroup
move_to_root_cgroups() {
  local dir
  if [ -e /sys/fs/cgroup/cgroup.procs ]; then
    echo "$1" >/sys/fs/cgroup/cgroup.procs
  else
    for dir in /sys/fs/cgroup/*/; do
      if mountpoint -q "$dir" && [ -e "$dir/cgroup.procs" ]; then
        echo "$1" >"$dir/cgroup.procs"
      fi
    done
  fi
  cat "/proc/$1/cgroup"
  [ -z "$(awk -F: '$3 != "/"' "/proc/$1/cgroup")" ]
}

# rootleft26: the counter passes over a procfs of the container's pid namespace that it mounts
# (the trace of an exec: its `fsconfig ... "hidepid", "off"`, a mount made, the host's /proc not
# opened by it). Where it can make none (fsopen answers ENOSYS: strace injects it into fsrun and
# every process it starts, as a kernel without the new mount API or a seccomp profile would), the
# count passes over the host's /proc as before (the trace: the counter's fsopen of a procfs
# refused, then the host's /proc opened): an exec that leaves nothing says false, a setsid
# leftover and one in namespaces of its own make it true.
route_left_fallback() {
  local kind tracer map=-r no_fsopen=(-e inject=fsopen:error=ENOSYS)
  [ "$1" = user ] || map=
  local -A leave=(
    [setsid]='setsid -f sh ./held.sh'
    [nested-namespaces]="unshare -Up $map sh -c 'sh ./held.sh &'"
  )
  command -v strace >/dev/null || skip "no strace"
  make_repo "$1"
  if [ "$("$FSRUN" features | jq -r '.annotations["run.fsrun.landlock"] // "0"')" -le 0 ]; then
    skip "no Landlock here: leftRunning is always true"
  fi
  echo '{"seccomp":"none"}' >"$DIR/policy.json"
  as_owner sh -c 'printf "echo in >ready\nread x <hold\n" >"$1/held.sh"' sh "$REPO"
  sbx_traced "" true
  [ "$(jq -c .leftRunning "$DIR/status.json")" = false ]
  # the counter: the one process that sets hidepid=off; its fsmount made a mount
  awk '/"hidepid", "off", 0\) = 0/ { pid = $1 } pid != "" && $1 == pid { print }' "$DIR/trace" |
    tee "$DIR/counter" | grep -E '^[0-9]+ +fsmount\(.*\) = [0-9]+$'
  [ "$(grep -cF 'openat(AT_FDCWD, "/proc", O_RDONLY|O_CLOEXEC|O_DIRECTORY)' "$DIR/counter")" = 0 ]
  sbx_traced "${no_fsopen[*]}" true
  [ "$(jq -c .leftRunning "$DIR/status.json")" = false ]
  # the line after the last refused fsopen of a procfs, of the process that asked (the counter)
  awk '/fsopen\("proc", .* ENOSYS/ { pid = $1; next } pid != "" && $1 == pid { next_line = $0; pid = "" }
    END { print next_line }' "$DIR/trace" |
    grep -F 'openat(AT_FDCWD, "/proc", O_RDONLY|O_CLOEXEC|O_DIRECTORY)'
  for kind in setsid nested-namespaces; do
    echo "# $kind"
    # strace ends once the leftover it follows does: in the background until the status is out
    rm -f "$DIR/status.json"
    sbx_traced "${no_fsopen[*]}" "rm -f ready hold && mkfifo ready hold && {
        ${leave[$kind]}
      } </dev/null >/dev/null 2>&1 && read x <ready" >"$DIR/traced.out" 2>&1 &
    tracer=$!
    wait_until has_line "$DIR/status.json" '"leftRunning":.*}' # one write
    cat "$DIR/status.json"
    [ "$(jq -c .leftRunning "$DIR/status.json")" = true ]
    as_owner timeout -s KILL 60 sh -c 'echo go >"$1"' sh "$REPO/hold"
    wait "$tracer" || { cat "$DIR/traced.out"; false; }
    wait_until left_none
  done
}

# sbx_traced STRACE_OPTIONS SCRIPT: `fsrun exec --status-json` of SCRIPT into the task container of
# $REPO under strace -f with STRACE_OPTIONS (words), the fsopen, fsconfig, fsmount and openat calls
# of fsrun and every process it starts in $DIR/trace. LeakSanitizer cannot run under ptrace (a
# fatal error at exit): off for these execs of the ASan build, ASan itself stays on.
sbx_traced() {
  local id opts
  read -ra opts <<<"$1"
  id=$(task_container "$REPO")
  as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout -s KILL 120 \
    strace -f -qq -o "$DIR/trace" -e trace=fsopen,fsconfig,fsmount,openat "${opts[@]}" \
    "$FSRUN" --root "$DIR/state" exec --status-json "$DIR/status.json" "$id" /bin/sh -c "$2"
  cat "$DIR/status.json"
  [ "$(jq -r .exitCode "$DIR/status.json")" -eq 0 ]
}

@test "exec-git: the count mounts a procfs of the container's pid namespace; where none can be made, the count over the host's /proc still finds a leftover (root)" {
  route_left_fallback root
}

# bats test_tags=kernel61
@test "exec-git: the count mounts a procfs of the container's pid namespace; where none can be made, the count over the host's /proc still finds a leftover (ordinary user)" {
  route_left_fallback user
}

# left_none: an exec into the task container of $REPO says leftRunning false (for wait_until)
left_none() {
  sbx "$REPO" -- true >/dev/null && [ "$(jq -c .leftRunning "$DIR/status.json")" = false ]
}

@test "exec-git: a process left in the background, double-forked, setsid, in namespaces of its own, not dumpable, under another uid or moved out of the container's cgroups makes leftRunning true (root)" {
  route_left_kinds root
}

@test "exec-git: a process left in the background, double-forked, setsid, in namespaces of its own, not dumpable, under another uid or moved out of the container's cgroups makes leftRunning true (ordinary user)" {
  route_left_kinds user
}

@test "exec-git: a nested .git file naming the common dir itself cannot be disarmed: the host's add -A runs nothing of the exec's (root)" {
  route_gitfile_common root common
}

@test "exec-git: a nested .git file naming the common dir itself cannot be disarmed: the host's add -A runs nothing of the exec's (ordinary user)" {
  route_gitfile_common user common
}

@test "exec-git: a nested .git file naming another worktree's admin dir cannot be disarmed: the host's add -A runs nothing of the exec's (root)" {
  route_gitfile_common root worktree
}

@test "exec-git: a nested .git file naming another worktree's admin dir cannot be disarmed: the host's add -A runs nothing of the exec's (ordinary user)" {
  route_gitfile_common user worktree
}

@test "exec-git: an exec over the main checkout making the other task's worktree a gitlink cannot be disarmed: the host's add -A runs nothing of the exec's (root)" {
  route_gitfile_checkout root
}

@test "exec-git: an exec over the main checkout making the other task's worktree a gitlink cannot be disarmed: the host's add -A runs nothing of the exec's (ordinary user)" {
  route_gitfile_checkout user
}

@test "exec-git: a nested .git file with a line break inside its path cannot be disarmed: the host's add -A runs nothing of the exec's (root)" {
  route_gitfile_newline root
}

@test "exec-git: a nested .git file with a line break inside its path cannot be disarmed: the host's add -A runs nothing of the exec's (ordinary user)" {
  route_gitfile_newline user
}

@test "exec-git: an absorbed submodule stays disarmable until its own config names a driver's file, which its checkout holds (root)" {
  route_absorbed_submodule root
}

@test "exec-git: an absorbed submodule stays disarmable until its own config names a driver's file, which its checkout holds (ordinary user)" {
  route_absorbed_submodule user
}

# exec_watchdog PID: the watchdog of fsrun exec PID: its child that leads a session of its own and
# still has fsrun's command line (a clone without an exec; the command's process has its own)
exec_watchdog() {
  local own
  own=$(ps -o args= -p "$1")
  ps -o pid=,sid=,args= --ppid "$1" | while read -r pid sid args; do
    [ "$pid" != "$sid" ] || [ "$args" != "$own" ] || echo "$pid"
  done
}

# route_sigkill OWNER [watchdog|exec|delete]: fsrun exec SIGKILLed while its command runs (a fifo
# says when: it has committed) applies nothing. watchdog: its watchdog, seen to end, has unmounted
# and removed the per-run dir (as root a tmpfs of its own on the host) and left no process.
# exec/delete: the watchdog was SIGKILLed first (as a kill of every process of the caller would),
# and the next exec, or delete of the container, removes the per-run dir.
route_sigkill() {
  make_repo "$1"
  local id pid job run_dir wd
  id=$(task_container "$WT")
  as_owner mkfifo "$WT/ready"
  as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "$FSRUN" --root "$DIR/state" \
    exec "$id" /bin/sh -c 'echo two >>README && git commit -qam killed && echo >ready &&
    exec sleep 1000' </dev/null >/dev/null 2>&1 &
  job=$!
  timeout -s KILL 60 cat "$WT/ready"
  # the fsrun exec (the job's child under setpriv): its pid is in its per-run dir's name (under
  # the state root, or an ordinary user's in /dev/shm)
  run_dir=$(run_dirs | grep -- "\.$id\.exec-[0-9]*$")
  pid=${run_dir##*-}
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- " exec $id "
  wd=$(exec_watchdog "$pid")
  echo "fsrun exec $pid, its watchdog $wd"
  [ -n "$wd" ]
  # as root on a state root that is not a tmpfs, the per-run dir is a tmpfs mounted on the host
  [ "$1" = user ] || [ "$(stat -f -c %T "$DIR/state")" = tmpfs ] ||
    [ "$(findmnt -n -o FSTYPE --mountpoint "$run_dir")" = tmpfs ]
  if [ "${2:-watchdog}" = watchdog ]; then
    kill -KILL "$pid"
    wait "$job" || true
    # the watchdog's clean-up ends with it (an event: the bound only ends a failure)
    timeout -s KILL "$WAIT_MAX_S" tail --pid="$wd" -f /dev/null
    [ ! -e "$run_dir" ]
    ! grep -F -- "$run_dir" /proc/self/mountinfo || false
    [ -z "$(run_dirs)" ]
    [ "$(hgit -C "$REPO" log -1 --format=%s task)" = first ]
    return
  fi
  kill -KILL "$wd" "$pid"
  wait "$job" || true
  # the killed exec applied nothing and left its per-run dir
  [ "$(hgit -C "$REPO" log -1 --format=%s task)" = first ]
  [ -d "$run_dir" ]
  if [ "$2" = exec ]; then
    # the next exec removes it, and its own
    as_owner "$FSRUN" --root "$DIR/state" exec "$id" true
  else
    as_owner "$FSRUN" --root "$DIR/state" delete --force "$id"
    [ ! -e "$DIR/state/$id" ]
  fi
  [ -z "$(run_dirs)" ]
  ! grep -F -- "$run_dir" /proc/self/mountinfo || false
}

@test "exec-git: a SIGKILLed fsrun exec applies nothing; its watchdog unmounts and removes its per-run dir (root)" {
  route_sigkill root
}

@test "exec-git: a SIGKILLed fsrun exec applies nothing; its watchdog unmounts and removes its per-run dir (ordinary user)" {
  route_sigkill user
}

@test "exec-git: a SIGKILLed fsrun exec whose watchdog was killed too: the next exec removes its per-run dir (root)" {
  route_sigkill root exec
}

@test "exec-git: a SIGKILLed fsrun exec whose watchdog was killed too: the next exec removes its per-run dir (ordinary user)" {
  route_sigkill user exec
}

@test "exec-git: delete of the task container removes the per-run dir of a SIGKILLed fsrun exec and its watchdog (root)" {
  route_sigkill root delete
}

@test "exec-git: delete of the task container removes the per-run dir of a SIGKILLed fsrun exec and its watchdog (ordinary user)" {
  route_sigkill user delete
}

# route_exec_lower_repointed root|user: in the task container's mount namespace the common dir's
# path leads to another directory by the time of the exec: a copy of it in the worktree, which the
# host binds there in that namespace only, stands for a path component the container's processes
# re-pointed after the host's check. The exec's overlay is never laid over it: the exec fails (1,
# one line naming the common dir) before the command runs, and leaves no per-run dir. Without the
# check by identity, the command ran in an overlay of the decoy.
route_exec_lower_repointed() {
  make_repo "$1"
  local id pid common
  common=$(realpath "$REPO/.git")
  id=$(task_container "$WT")
  pid=$(as_owner "$FSRUN" --root "$DIR/state" state "$id" | jq -r .pid)
  as_owner cp -a "$common" "$WT/decoy"
  as_owner touch "$WT/decoy/decoy"
  nsenter -t "$pid" -m mount --bind "$WT/decoy" "$common"
  status=0
  as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "$FSRUN" --root "$DIR/state" \
    exec "$id" /bin/sh -c 'ls "$1" >seen' sh "$common" 2>"$DIR/stderr" || status=$?
  cat "$DIR/stderr" "$WT/seen" 2>/dev/null || true
  [ "$status" -eq 1 ]
  [ "$(wc -l <"$DIR/stderr")" -eq 1 ]
  grep -q "overlay lowerdir \`$common\` is no longer the directory checked" "$DIR/stderr"
  [ ! -e "$WT/seen" ]
  ! ls -A "$DIR/state" | grep '^\.sandbox-git\.' || false
  [ ! -e "$common/decoy" ]
}

@test "exec-git: a common dir path that leads elsewhere in the container by the exec gets no overlay; the exec fails (root)" {
  route_exec_lower_repointed root
}

@test "exec-git: a common dir path that leads elsewhere in the container by the exec gets no overlay; the exec fails (ordinary user)" {
  route_exec_lower_repointed user
}

@test "exec-git: fsrun exec SIGKILLed during a slow sync said the tamper first; its watchdog removes its per-run dir, the next exec names it again (root)" {
  route_sync_killed root
}

@test "exec-git: fsrun exec SIGKILLed during a slow sync said the tamper first; its watchdog removes its per-run dir, the next exec names it again (ordinary user)" {
  route_sync_killed user
}

@test "exec-git: an object past the sync's 512 MiB budget is not adopted and moves no branch (root)" {
  route_sync_budget root
}

@test "exec-git: an object past the sync's 512 MiB budget is not adopted and moves no branch (ordinary user)" {
  route_sync_budget user
}
