#!/usr/bin/env bats
# Git in the Fusion adapter's task-container mode (docs/sandbox.md, "Git in a task container"): each
# `fsrun exec` into a container made by `fsrun bundle` gets what one `fsrun sandbox` run gets, the
# overlay over the git common dir, the allowlist applied after the command and the tamper report
# (in --status-json). The routes of the sandbox-git files are tried through such an exec, as root
# and as an ordinary user, and checked from the host the same way.
#
# This file: what a command plants, or a process it left plants after the exec's walk (hooks,
# drivers, included configs, nested repositories), is named by the next exec, by pause
# --tamper-json or by delete, with hostGitArgs that disarm it or say they cannot.
# (exec-git.bats: the repository; exec-git-walk.bats: swapped names, filesystems, leftovers.)

load helpers
EXEC_GIT_USER_PREFIX=fsrxgit
load exec-git-helpers
load exec-git-task

# review19 finding 4: a process exec 1 left running makes a nested repository after exec 1 has
# returned (fifos say when: no wait on time), i.e. after exec 1's tamper walk, with a ctime before
# exec 2's start. Exec 2's walk looks at what changed since the last walk began, not since its own
# start, and names it.
route_late_nested() {
  make_repo "$1"
  sbx -- "mkfifo go planted && setsid sh -c 'read x <go; git init -q nested; echo >planted' \
          </dev/null >/dev/null 2>&1 &"
  [ "$(jq -c .tamper "$DIR/status.json")" = '[]' ]
  as_owner timeout -s KILL 60 sh -c 'echo go >"$1" && cat "$2"' sh "$WT/go" "$WT/planted"
  [ -d "$WT/nested/.git" ]
  sbx -- 'echo second'
  [ "$(jq -c .tamper "$DIR/status.json")" = '["nested/.git"]' ]
}

@test "exec-git: a nested repository a process left by one exec made after its walk is named by the next exec (root)" {
  route_late_nested root
}

@test "exec-git: a nested repository a process left by one exec made after its walk is named by the next exec (ordinary user)" {
  route_late_nested user
}

# make_hook_repo root|user: make_repo with husky's hooks dir (core.hooksPath=.husky, a
# pre-commit) and lefthook's lefthook.yml at the top, watched through a stand-in of its hook
make_hook_repo() {
  make_repo "$1"
  hgit -C "$REPO" config core.hooksPath .husky
  as_owner mkdir "$WT/.husky"
  as_owner sh -c 'printf "#!/bin/sh\ntrue\n" >"$1/pre-commit" && chmod 755 "$1/pre-commit"' sh \
    "$WT/.husky"
  # a stand-in for lefthook's installed hook: its marker makes lefthook's files watched
  as_owner sh -c 'printf "#!/bin/sh\n# lefthook\ntrue\n" >"$1/commit-msg"' sh "$WT/.husky"
  as_owner sh -c 'echo "pre-commit: {}" >"$1/lefthook.yml"' sh "$WT"
}

# rewrite_script: in the worktree, `.rewrite`: once `go` (a fifo) is read, it rewrites husky's
# `.husky/pre-commit` and lefthook.yml, makes lefthook-local.yml, and says so in `planted` (a fifo)
rewrite_script() {
  as_owner mkfifo "$WT/go" "$WT/planted"
  printf '%s\n' 'read x <go' \
    "printf '#!/bin/sh\\necho ran >>$MARKER\\n' >.husky/pre-commit" \
    "echo 'pre-commit: {commands: {x: {run: echo}}}' >lefthook.yml" \
    "echo 'pre-commit: {}' >lefthook-local.yml; echo >planted" | as_owner sh -c 'cat >"$1"' sh "$WT/.rewrite"
}

# rewrite_named_next: lets the rewrite go (no wait on time: the fifos); the next exec names all
# three, the one after it, with nothing changed since, none
rewrite_named_next() {
  as_owner timeout -s KILL 60 sh -c 'echo go >"$1" && cat "$2"' sh "$WT/go" "$WT/planted"
  grep -q "$MARKER" "$WT/.husky/pre-commit"
  sbx -- 'echo next'
  [ "$(jq -c '.tamper | sort' "$DIR/status.json")" = \
    '["config:core.hooksPath=.husky","hooks:lefthook-local.yml","hooks:lefthook.yml"]' ]
  sbx -- 'echo again'
  [ "$(jq -c .tamper "$DIR/status.json")" = '[]' ]
}

# review20 A: the same for the files the config and the installed hooks point at. A process exec 1
# left running rewrites them after exec 1 looked; exec 2 compares with what exec 1 saw (kept in the
# container's state dir), not with its own start, and names all three; exec 3 names none.
route_late_pointers() {
  make_hook_repo "$1"
  rewrite_script
  sbx -- "setsid sh .rewrite </dev/null >/dev/null 2>&1 &"
  [ "$(jq -c .tamper "$DIR/status.json")" = '[]' ]
  rewrite_named_next
}

@test "exec-git: husky's hook and lefthook's files a process left by one exec rewrote after it looked are named by the next exec (root)" {
  route_late_pointers root
}

@test "exec-git: husky's hook and lefthook's files a process left by one exec rewrote after it looked are named by the next exec (ordinary user)" {
  route_late_pointers user
}

# The same from the container's own process, before any exec: the bundle's command rewrites them
# after create; the first exec compares with what create recorded, not with its own start, and
# names all three; the second names none.
route_created_pointers() {
  make_hook_repo "$1"
  local id
  id=xgit-$(printf '%s' "$WT" | sha256sum | cut -c1-12)
  rewrite_script
  as_owner "$FSRUN" --root "$DIR/state" bundle --policy "$DIR/policy.json" --worktree "$WT" \
    --out "$DIR/bundle-$id" -- /bin/sh -c "sh .rewrite; exec sleep infinity" >&2
  as_owner "$FSRUN" --root "$DIR/state" create --bundle "$DIR/bundle-$id" "$id" >&2
  echo "$id" >>"$DIR/containers"
  as_owner "$FSRUN" --root "$DIR/state" start "$id" >&2
  rewrite_named_next
}

@test "exec-git: husky's hook and lefthook's files the container's process rewrote between create and the first exec are named by that exec (root)" {
  route_created_pointers root
}

@test "exec-git: husky's hook and lefthook's files the container's process rewrote between create and the first exec are named by that exec (ordinary user)" {
  route_created_pointers user
}

# After the task's last exec: a process it left running plants a nested repository, which no exec's
# walk will ever name. `fsrun delete --tamper-json` walks once more when the container's processes
# are dead and names it (a bad --tamper-json path, a link there too, deletes nothing: one line naming
# the option).
route_final_walk() {
  make_repo "$1"
  local id
  sbx -- "mkfifo go planted && setsid sh -c 'read x <go; git init -q nested; echo >planted' \
          </dev/null >/dev/null 2>&1 &"
  [ "$(jq -c .tamper "$DIR/status.json")" = '[]' ]
  as_owner timeout -s KILL 60 sh -c 'echo go >"$1" && cat "$2"' sh "$WT/go" "$WT/planted"
  [ -d "$WT/nested/.git" ]
  id=$(task_container "$WT")
  run as_owner "$FSRUN" --root "$DIR/state" delete --force --tamper-json "$DIR/no/such/dir" "$id"
  echo "$output"
  [ "$status" = 1 ]
  [[ $output == *"--tamper-json $DIR/no/such/dir: open: No such file or directory" ]]
  [ -d "$DIR/state/$id" ]
  # nor through a link left at the path (caller-output.h): the file it names unchanged
  echo precious >"$DIR/precious"
  ln -s "$DIR/precious" "$DIR/link.json"
  run as_owner "$FSRUN" --root "$DIR/state" delete --force --tamper-json "$DIR/link.json" "$id"
  echo "$output"
  [ "$status" = 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == *"--tamper-json $DIR/link.json: a symbolic link (fsrun writes no file through one)" ]]
  [ -d "$DIR/state/$id" ]
  [ "$(cat "$DIR/precious")" = precious ]
  # nor through a link in a parent that another uid owns (path-walk.h)
  mkdir "$DIR/out"
  ln -s "$DIR/out" "$DIR/plink"
  chown -h 4343 "$DIR/plink"
  run as_owner "$FSRUN" --root "$DIR/state" delete --force --tamper-json "$DIR/plink/t.json" "$id"
  echo "$output"
  [ "$status" = 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == *"--tamper-json $DIR/plink/t.json: reached through \`"*"/plink\`, owned by uid 4343: "* ]]
  [ -d "$DIR/state/$id" ]
  [ ! -e "$DIR/out/t.json" ]
  as_owner "$FSRUN" --root "$DIR/state" delete --force --tamper-json "$DIR/final.json" "$id"
  cat "$DIR/final.json"
  # a repository of its own below the top: cannot disarm (review26 D1)
  [ "$(jq -c '{walked, tamper, cannot: .hostGitArgs[0:2]}' "$DIR/final.json")" = \
    '{"walked":true,"tamper":["nested/.git"],"cannot":["-c","core.abbrev=fsrun-cannot-disarm"]}' ]
  jq -e '.hostGitArgs | index("diff.ignoreSubmodules=all")' "$DIR/final.json"
  [ ! -e "$DIR/state/$id" ]
}

@test "exec-git: delete names a nested repository a process left after the last exec made (root)" {
  route_final_walk root
}

@test "exec-git: delete names a nested repository a process left after the last exec made (ordinary user)" {
  route_final_walk user
}

# release_and_delete WORKTREE: the process the last exec left writes once released (fifos `go`,
# `planted`); then delete --force --tamper-json $DIR/final.json of WORKTREE's task container. Prints
# its id; final.json and delete's stderr ($DIR/stderr) on stderr.
release_and_delete() {
  local id
  as_owner timeout -s KILL 60 sh -c 'echo go >"$1" && cat "$2"' sh "$1/go" "$1/planted" >&2
  id=$(task_container "$1")
  as_owner "$FSRUN" --root "$DIR/state" delete --force --tamper-json "$DIR/final.json" "$id" \
    2>"$DIR/stderr"
  cat "$DIR/final.json" "$DIR/stderr" >&2
  echo "$id"
}

# The same for the files the config and the installed hooks point at: a process the last exec left
# (held by fifos: no wait on time) rewrites husky's `.husky/pre-commit` and lefthook.yml after that
# exec looked; delete compares them with the digests the last exec kept and names both. The route
# above (nothing of them touched) is the control: its list holds the nested repository alone.
route_final_pointers() {
  local id
  make_hook_repo "$1"
  sbx -- "mkfifo go planted && setsid sh -c 'read x <go
            printf \"#!/bin/sh\\necho ran >>$MARKER\\n\" >.husky/pre-commit
            echo \"pre-commit: {commands: {x: {run: echo}}}\" >lefthook.yml; echo >planted' \
          </dev/null >/dev/null 2>&1 &"
  [ "$(jq -c .tamper "$DIR/status.json")" = '[]' ]
  id=$(release_and_delete "$WT")
  grep -q "$MARKER" "$WT/.husky/pre-commit"
  [ "$(jq -c '.walked, (.tamper | sort)' "$DIR/final.json" | paste -sd' ')" = \
    'true ["config:core.hooksPath=.husky","hooks:lefthook.yml"]' ]
  # the options that keep the host's git from running them: no hooks (once for both)
  [ "$(jq -c .hostGitArgs "$DIR/final.json")" = '["-c","core.hooksPath=/dev/null"]' ]
  grep -q 'delete: .*changed what the host.s git runs.*config:core.hooksPath=.husky' "$DIR/stderr"
  [ ! -e "$DIR/state/$id" ]
}

# review25 C5 at delete: a process the last exec left makes 64 nested repositories and rewrites
# the filter driver once released (fifos); delete's walk names the driver, says the list was cut,
# and its hostGitArgs cannot disarm
route_final_many_nested() {
  local id
  make_repo "$1"
  as_owner sh -c 'cd "$1" && mkdir tools && printf "#!/bin/sh\ncat\n" >tools/clean &&
    chmod +x tools/clean' sh "$WT"
  hgit -C "$REPO" config filter.x.clean ./tools/clean
  sbx -- "mkfifo go planted && setsid sh -c 'read x <go
            for i in \$(seq 1 64); do mkdir -p n\$i/.git; done
            printf \"#!/bin/sh\\necho ran >>$MARKER; cat\\n\" >tools/clean; echo >planted' \
          </dev/null >/dev/null 2>&1 &"
  [ "$(jq -c .tamper "$DIR/status.json")" = '[]' ]
  id=$(release_and_delete "$WT")
  [ "$(jq -c '.tamper | length, .[0], .[1]' "$DIR/final.json" | paste -sd' ')" = \
    '64 "config:unread: (more tamper entries than fsrun reports)" "config:filter.x.clean=./tools/clean"' ]
  [ "$(jq -r '.hostGitArgs[1]' "$DIR/final.json")" = core.abbrev=fsrun-cannot-disarm ]
  jq -e '.hostGitArgs | index("filter.x.clean=") != null' "$DIR/final.json"
  [ ! -e "$DIR/state/$id" ]
}

@test "exec-git: delete names the filter driver a process left rewrote beside 64 nested repositories; hostGitArgs cannot disarm (root)" {
  route_final_many_nested root
}

@test "exec-git: delete names the filter driver a process left rewrote beside 64 nested repositories; hostGitArgs cannot disarm (ordinary user)" {
  route_final_many_nested user
}

# leave_include_writer OWNER: a repository whose config includes ../.gitconfig, and an exec that
# leaves a process (setsid) writing that file (an fsmonitor of its own) once released (fifos `go`,
# `planted` in $REPO): the exec's own walk names nothing
leave_include_writer() {
  make_repo "$1"
  hgit -C "$REPO" config include.path ../.gitconfig
  sbx "$REPO" -- "mkfifo go planted && setsid sh -c 'read x <go
            printf \"[core]\\n\\tfsmonitor = $DIR/evil.sh\\n\" >.gitconfig; echo >planted' \
          </dev/null >/dev/null 2>&1 &"
  [ "$(jq -c .tamper "$DIR/status.json")" = '[]' ]
}

# review21 P3: a process the last exec left (held by fifos: no wait on time) writes the config file
# include.path names (an fsmonitor of its own) after that exec looked. Delete's last walk names the
# include, and its hostGitArgs come from that file as it is now (the repository's pointers):
# core.fsmonitor=false, under which the host's `git status` succeeds and runs nothing; a plain one
# runs the fsmonitor (the control).
route_final_include() {
  leave_include_writer "$1"
  release_and_delete "$REPO" >/dev/null
  grep -qF "$DIR/evil.sh" "$REPO/.gitconfig"
  [ "$(jq -c .tamper "$DIR/final.json")" = '["config:include.path=../.gitconfig"]' ]
  [ "$(jq -c .hostGitArgs "$DIR/final.json")" = '["-c","core.fsmonitor=false"]' ]
  host_git_disarmed_by "$DIR/final.json"
}

@test "exec-git: delete's hostGitArgs disarm an included config a process left after the last exec wrote (root)" {
  route_final_include root
}

@test "exec-git: delete's hostGitArgs disarm an included config a process left after the last exec wrote (ordinary user)" {
  route_final_include user
}

# gitunread: a process the last exec left (held by fifos) makes the included config one fsrun cannot
# read whole after that exec looked (sandbox-git.bats's plant_unread big: over 1 MiB, a filter at
# its end). Delete names it (and, reading the config again, the file as a standing
# `config:unread:` entry); its hostGitArgs cannot disarm; with them the host's `git status` exits 128 and runs
# nothing, a plain one runs the filter (the control).
route_final_unread() {
  local args
  make_repo "$1"
  hgit -C "$REPO" config include.path ../.gitconfig
  plant_unread big | as_owner sh -c 'cat >"$1"' sh "$REPO/.plant.sh"
  sbx "$REPO" -- "mkfifo go planted && setsid sh -c 'read x <go; sh .plant.sh $DIR/evil.sh
            echo >planted' </dev/null >/dev/null 2>&1 &"
  [ "$(jq -c .tamper "$DIR/status.json")" = '[]' ]
  release_and_delete "$REPO" >/dev/null
  # the last walk reads the repository's config again: the file is now a standing entry too
  [ "$(jq -c .tamper "$DIR/final.json")" = "$(jq -cn --arg r "$REPO" '["config:include.path=../.gitconfig",
    "config:unread:\($r)/.git/../.gitconfig (larger than fsrun reads)"]')" ]
  mapfile -t args < <(jq -r '.hostGitArgs[]' "$DIR/final.json")
  [ "${args[0]}|${args[1]}" = "-c|core.abbrev=fsrun-cannot-disarm" ]
  status=0
  hgit -C "$REPO" "${args[@]}" status >/dev/null 2>&1 || status=$?
  [ "$status" = 128 ]
  [ ! -e "$MARKER" ]
  hgit -C "$REPO" status >/dev/null 2>&1 || true
  [ -e "$MARKER" ]
}

@test "exec-git: delete's hostGitArgs cannot disarm an included config a process left over 1 MiB with a filter inside (root)" {
  route_final_unread root
}

@test "exec-git: delete's hostGitArgs cannot disarm an included config a process left over 1 MiB with a filter inside (ordinary user)" {
  route_final_unread user
}

# review22 F2: a process an exec left (held by fifos: no wait on time) writes the config file
# include.path names (an fsmonitor of its own) after that exec's walk and before the host's git runs.
# `fsrun pause --tamper-json` freezes the container and walks it: it names the include and gives
# the option under which the host's `git status` runs nothing, and nothing plants more while it is
# paused; a plain `git status` runs the fsmonitor (the control). A bad path pauses nothing; a pause
# that fails (no such container) leaves no file behind and a file that was there untouched. An
# ordinary user without a delegated cgroup cannot pause: one line, the container still running, no
# file.
route_pause_walk() {
  local id args
  leave_include_writer "$1"
  as_owner timeout -s KILL 60 sh -c 'echo go >"$1" && cat "$2"' sh "$REPO/go" "$REPO/planted"
  grep -qF "$DIR/evil.sh" "$REPO/.gitconfig"
  id=$(task_container "$REPO")
  run as_owner "$FSRUN" --root "$DIR/state" pause --tamper-json "$DIR/no/such/dir" "$id"
  echo "$output"
  [ "$status" = 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == *"--tamper-json $DIR/no/such/dir: open: No such file or directory" ]]
  [ "$(as_owner "$FSRUN" --root "$DIR/state" state "$id" | jq -r .status)" = running ]
  # a pause that fails leaves no file it made, and a file that was there as it was
  run as_owner "$FSRUN" --root "$DIR/state" pause --tamper-json "$DIR/paused.json" no-such-id
  echo "$output"
  [ "$status" = 1 ]
  [ "${#lines[@]}" -eq 1 ]
  [ ! -e "$DIR/paused.json" ]
  as_owner sh -c 'echo kept >"$1"' sh "$DIR/kept.json"
  run as_owner "$FSRUN" --root "$DIR/state" pause --tamper-json "$DIR/kept.json" no-such-id
  [ "$status" = 1 ]
  [ "$(cat "$DIR/kept.json")" = kept ]
  run as_owner "$FSRUN" --root "$DIR/state" pause --tamper-json "$DIR/paused.json" "$id"
  echo "$output"
  if [ "$1" = user ] && [[ $output == *"no cgroup was delegated to this user"* ]]; then
    [ "$status" = 1 ]
    [ "${#lines[@]}" -eq 1 ]
    [ ! -e "$DIR/paused.json" ]
    [ "$(as_owner "$FSRUN" --root "$DIR/state" state "$id" | jq -r .status)" = running ]
    return
  fi
  [ "$status" = 0 ]
  cat "$DIR/paused.json"
  [ "$(as_owner "$FSRUN" --root "$DIR/state" state "$id" | jq -r .status)" = paused ]
  [ "$(jq -c '.walked, .tamper' "$DIR/paused.json" | paste -sd' ')" = \
    'true ["config:include.path=../.gitconfig"]' ]
  [ "$(jq -c .hostGitArgs "$DIR/paused.json")" = '["-c","core.fsmonitor=false"]' ]
  mapfile -t args < <(jq -r '.hostGitArgs[]' "$DIR/paused.json")
  hgit -C "$REPO" "${args[@]}" status --short
  [ ! -e "$MARKER" ]
  as_owner "$FSRUN" --root "$DIR/state" resume "$id"
  [ "$(as_owner "$FSRUN" --root "$DIR/state" state "$id" | jq -r .status)" = running ]
  hgit -C "$REPO" status >/dev/null 2>&1 || true
  [ -e "$MARKER" ]
}

@test "exec-git: pause --tamper-json walks the frozen container: what a process left planted after the exec's walk is named and disarmed (root)" {
  route_pause_walk root
}

@test "exec-git: pause --tamper-json walks the frozen container: what a process left planted after the exec's walk is named and disarmed (ordinary user)" {
  route_pause_walk user
}

@test "exec-git: delete names husky's hook and lefthook's file a process left after the last exec rewrote (root)" {
  route_final_pointers root
}

@test "exec-git: delete names husky's hook and lefthook's file a process left after the last exec rewrote (ordinary user)" {
  route_final_pointers user
}

@test "exec-git: an exec making 64 nested repositories and rewriting the filter driver still names it; hostGitArgs cannot disarm (root)" {
  route_many_nested root
}

@test "exec-git: an exec making 64 nested repositories and rewriting the filter driver still names it; hostGitArgs cannot disarm (ordinary user)" {
  route_many_nested user
}

@test "exec-git: an exec's tamper and discarded lists of names escaped 6 bytes a character stay within 32 KiB and say they were cut (root)" {
  route_wide_names root
}

@test "exec-git: an exec's tamper and discarded lists of names escaped 6 bytes a character stay within 32 KiB and say they were cut (ordinary user)" {
  route_wide_names user
}

@test "exec-git: a driver's script dir past the digest's 4,096 entries is named on every exec, never taken as unchanged (root)" {
  route_wide_script_dir root
}

@test "exec-git: a driver's script dir past the digest's 4,096 entries is named on every exec, never taken as unchanged (ordinary user)" {
  route_wide_script_dir user
}

@test "exec-git: an exec arming an existing nested repository's config in place cannot be disarmed: the host's add -A with hostGitArgs runs nothing (root)" {
  route_nested_in_place root
}

@test "exec-git: an exec arming an existing nested repository's config in place cannot be disarmed: the host's add -A with hostGitArgs runs nothing (ordinary user)" {
  route_nested_in_place user
}

@test "exec-git: a nested .git file an exec made naming a git dir it made in the worktree cannot be disarmed (root)" {
  route_gitfile_subdir root
}

@test "exec-git: a nested .git file an exec made naming a git dir it made in the worktree cannot be disarmed (ordinary user)" {
  route_gitfile_subdir user
}

# route_nested_deep_delete OWNER: the deep one at delete too, whose walk does not reach it either:
# delete reads the host's index for its gitlinks (review26 D1)
route_nested_deep_delete() {
  local id
  route_nested_in_place "$1" deep
  id=$(task_container "$WT")
  as_owner "$FSRUN" --root "$DIR/state" delete --force --tamper-json "$DIR/final.json" "$id"
  cat "$DIR/final.json"
  [ "$(jq -c '.hostGitArgs[0:2]' "$DIR/final.json")" = '["-c","core.abbrev=fsrun-cannot-disarm"]' ]
}

@test "exec-git: delete's hostGitArgs cannot disarm a nested repository 7 levels down (root)" {
  route_nested_deep_delete root
}

@test "exec-git: delete's hostGitArgs cannot disarm a nested repository 7 levels down (ordinary user)" {
  route_nested_deep_delete user
}

@test "exec-git: an exec arming the config of an existing nested repository 7 levels down cannot be disarmed (root)" {
  route_nested_in_place root deep
}

@test "exec-git: an exec arming the config of an existing nested repository 7 levels down cannot be disarmed (ordinary user)" {
  route_nested_in_place user deep
}

@test "exec-git: an exec arming the config of a gitlink's git dir that its .git file names in the worktree cannot be disarmed (root)" {
  route_nested_in_place root gitfile
}

@test "exec-git: an exec arming the config of a gitlink's git dir that its .git file names in the worktree cannot be disarmed (ordinary user)" {
  route_nested_in_place user gitfile
}

@test "exec-git: an exec planting what a driver runs gets hostGitArgs in --status-json, under which the host's git runs nothing of it (root)" {
  route_disarm root
}

@test "exec-git: an exec planting what a driver runs gets hostGitArgs in --status-json, under which the host's git runs nothing of it (ordinary user)" {
  route_disarm user
}

@test "exec-git: an exec making the included config over 1 MiB with a filter inside gets hostGitArgs in --status-json that cannot disarm (root)" {
  route_unread root big
}

@test "exec-git: an exec making the included config over 1 MiB with a filter inside gets hostGitArgs in --status-json that cannot disarm (ordinary user)" {
  route_unread user big
}

@test "exec-git: an exec making the included config a key before any section then drivers gets hostGitArgs in --status-json that disarm them (root)" {
  route_reader root orphan
}

@test "exec-git: an exec making the included config a key before any section then drivers gets hostGitArgs in --status-json that disarm them (ordinary user)" {
  route_reader user orphan
}

@test "exec-git: an exec making the included config a backslash before CR LF then drivers gets hostGitArgs in --status-json that disarm them (root)" {
  route_reader root crlf
}

@test "exec-git: an exec making the included config a backslash before CR LF then drivers gets hostGitArgs in --status-json that disarm them (ordinary user)" {
  route_reader user crlf
}

@test "exec-git: an exec making the included config a driver of a 1100-byte name gets hostGitArgs in --status-json that disarm it by its whole name (root)" {
  route_reader root long
}

@test "exec-git: an exec making the included config a driver of a 1100-byte name gets hostGitArgs in --status-json that disarm it by its whole name (ordinary user)" {
  route_reader user long
}

@test "exec-git: an exec making the included config a link through /proc/self/cwd gets hostGitArgs in --status-json that cannot disarm (root)" {
  route_reader root cwdlink
}

@test "exec-git: an exec making the included config a link through /proc/self/cwd gets hostGitArgs in --status-json that cannot disarm (ordinary user)" {
  route_reader user cwdlink
}

# A nested repository under a name that is not UTF-8 text: --status-json stays UTF-8 JSON, with
# DEL as \u007f and the stray byte as \ufffd (the --json result of `fsrun sandbox` writes the same).
route_odd_name() {
  make_repo "$1"
  sbx -- 'd=$(printf "odd\177\377") && mkdir "$d" && git init -q "$d/r"'
  iconv -f UTF-8 -t UTF-8 "$DIR/status.json" >/dev/null
  grep -F '"tamper":["odd\u007f\ufffd/r/.git"]' "$DIR/status.json"
}

@test "exec-git: --status-json escapes a tamper path that is not UTF-8 (root)" {
  route_odd_name root
}

@test "exec-git: --status-json escapes a tamper path that is not UTF-8 (ordinary user)" {
  route_odd_name user
}

@test "exec-git: a 70 KB driver rewritten through a mapping on a tmpfs worktree is reported in --status-json and disarmed (root)" {
  route_tmpfs_mmap root driver
}

@test "exec-git: a 70 KB driver rewritten through a mapping on a tmpfs worktree is reported in --status-json and disarmed (ordinary user)" {
  route_tmpfs_mmap user driver
}

@test "exec-git: an 88 KB included config rewritten through a mapping on a tmpfs worktree is reported in --status-json and disarmed (root)" {
  route_tmpfs_mmap root include
}

@test "exec-git: an 88 KB included config rewritten through a mapping on a tmpfs worktree is reported in --status-json and disarmed (ordinary user)" {
  route_tmpfs_mmap user include
}

@test "exec-git: a command rewriting what a driver's worktree script sources beside it is reported in --status-json and disarmed (root)" {
  route_script_loads root sh
}

@test "exec-git: a command rewriting what a driver's worktree script sources beside it is reported in --status-json and disarmed (ordinary user)" {
  route_script_loads user sh
}

@test "exec-git: a driver naming its script through \$(...) is named in --status-json on every exec and disarmed (root)" {
  route_expansion root
}

@test "exec-git: a driver naming its script through \$(...) is named in --status-json on every exec and disarmed (ordinary user)" {
  route_expansion user
}

# route_pointers_v1 OWNER (review24 B0): a container whose git-pointers file an older fsrun wrote
# (version 1: 64-bit sums, not collision resistant) is never compared with it: the next exec names
# each pointer the file lists once, as changed (the filter's, the user's git files'), and writes
# version 2; the exec after it names nothing
route_pointers_v1() {
  local file
  make_repo "$1"
  as_owner sh -c 'echo cat >"$1/clean.sh"' sh "$WT"
  hgit -C "$REPO" config filter.x.clean 'sh clean.sh'
  sbx -- true
  [ "$(jq -c '.tamper | map(select(startswith("config:")))' "$DIR/status.json")" = '[]' ]
  file=$(find "$DIR/state" -name git-pointers)
  [ "$(head -c 21 "$file")" = 'fsrun-git-pointers 2 ' ]
  sed -i '1s/^fsrun-git-pointers 2 /fsrun-git-pointers 1 /; 2,$s/ .*/ 0123456789abcdef/' "$file"
  sbx -- true
  # the filter among them (the user's own git files are pointers of the file too)
  [ "$(jq '.tamper | index("config:filter.x.clean=sh clean.sh") != null' "$DIR/status.json")" = true ]
  [ "$(head -c 21 "$file")" = 'fsrun-git-pointers 2 ' ]
  sbx -- true
  [ "$(jq -c '.tamper | map(select(startswith("config:")))' "$DIR/status.json")" = '[]' ]
}

@test "exec-git: a version-1 git-pointers file is never compared: each pointer it lists is named once (root)" {
  route_pointers_v1 root
}

@test "exec-git: a version-1 git-pointers file is never compared: each pointer it lists is named once (ordinary user)" {
  route_pointers_v1 user
}

# route_path_absolute OWNER (review27, D3 b's watch): `filter.x.clean = myfilt` found through an
# absolute PATH entry in the worktree (`<worktree>/bin`, a direnv setup) is the run's: an exec that
# rewrites `bin/myfilt` names the filter in --status-json, hostGitArgs disarm it, a plain `add -A`
# runs the payload; an exec writing an unrelated file names nothing (a writablePaths entry's:
# route_path_writable below). Seen to fail
# with the absolute entries not looked at (tamper `[]`).
route_path_absolute() {
  make_repo "$1"
  hgit -C "$REPO" config filter.x.clean myfilt
  as_owner sh -c 'cd "$1" && mkdir bin && printf "#!/bin/sh\ncat\n" >bin/myfilt && chmod 755 bin/myfilt &&
    echo "*.txt filter=x" >.gitattributes && echo one >a.txt' sh "$WT"
  # appended: the suite's own commands are found as before
  PATH=$PATH:$WT/bin
  sbx -- 'echo two >unrelated'
  [ "$(config_tamper)" = '[]' ]
  sbx -- "printf '#!/bin/sh\\necho ran >>$MARKER\\ncat\\n' >bin/myfilt && echo two >>a.txt"
  filter_x_named_and_disarmed "config:filter.x.clean=myfilt"
}

@test "exec-git: a driver's command found through an absolute PATH entry in the worktree is named in --status-json and disarmed (root)" {
  route_path_absolute root
}

@test "exec-git: a driver's command found through an absolute PATH entry in the worktree is named in --status-json and disarmed (ordinary user)" {
  route_path_absolute user
}

# route_path_writable OWNER (session 29): `filter.x.clean = myfilt` found through a PATH entry in
# the task container's writablePaths entry ($DIR/npm/bin: `~/.npm-global/bin` with `~/.npm-global`
# writable), which exec, create and delete take from the container's config (its writable binds).
# The container's own process rewrites myfilt between create and the first exec: that exec names
# the filter (create's digest); an exec writing an unrelated file names nothing; an exec rewriting
# myfilt names it in --status-json, hostGitArgs disarm it, a plain `add -A` runs the payload; a
# process the last exec left rewrites it after that exec looked: delete names it. Processes are
# held by fifos (no wait on time).
route_path_writable() {
  local id
  make_repo "$1"
  echo "{\"writablePaths\":[\"$DIR/npm\"]}" >"$DIR/policy.json"
  hgit -C "$REPO" config filter.x.clean myfilt
  as_owner sh -c 'mkdir -p "$1/bin" && printf "#!/bin/sh\ncat\n" >"$1/bin/myfilt" &&
    chmod 755 "$1/bin/myfilt" && mkfifo "$1/go" "$1/planted"' sh "$DIR/npm"
  as_owner sh -c 'cd "$1" && echo "*.txt filter=x" >.gitattributes && echo one >a.txt' sh "$WT"
  # appended: the suite's own commands are found as before
  PATH=$PATH:$DIR/npm/bin
  id=xgit-$(printf '%s' "$WT" | sha256sum | cut -c1-12)
  as_owner "$FSRUN" --root "$DIR/state" bundle --policy "$DIR/policy.json" --worktree "$WT" \
    --out "$DIR/bundle-$id" -- /bin/sh -c "read x <$DIR/npm/go; printf '#!/bin/sh\\ncat\\n\\n' \
      >$DIR/npm/bin/myfilt; echo >$DIR/npm/planted; exec sleep infinity" >&2
  as_owner "$FSRUN" --root "$DIR/state" create --bundle "$DIR/bundle-$id" "$id" >&2
  echo "$id" >>"$DIR/containers"
  as_owner "$FSRUN" --root "$DIR/state" start "$id" >&2
  as_owner timeout -s KILL 60 sh -c 'echo go >"$1" && cat "$2"' sh "$DIR/npm/go" "$DIR/npm/planted"
  sbx -- 'echo first'
  [ "$(config_tamper)" = '["config:filter.x.clean=myfilt"]' ]
  : >"$DIR/audit.jsonl" # config_tamper: the execs' from here on
  sbx -- 'echo two >unrelated'
  [ "$(config_tamper)" = '[]' ]
  sbx -- "printf '#!/bin/sh\\necho ran >>$MARKER\\ncat\\n' >$DIR/npm/bin/myfilt && echo two >>a.txt"
  filter_x_named_and_disarmed "config:filter.x.clean=myfilt"
  : >"$DIR/audit.jsonl"
  sbx -- "setsid sh -c 'read x <$DIR/npm/go; echo \"#!/bin/sh\" >$DIR/npm/bin/myfilt; echo >$DIR/npm/planted' \
          </dev/null >/dev/null 2>&1 &"
  [ "$(config_tamper)" = '[]' ]
  as_owner timeout -s KILL 60 sh -c 'echo go >"$1" && cat "$2"' sh "$DIR/npm/go" "$DIR/npm/planted"
  as_owner "$FSRUN" --root "$DIR/state" delete --force --tamper-json "$DIR/final.json" "$id"
  cat "$DIR/final.json"
  [ "$(jq -c .tamper "$DIR/final.json")" = '["config:filter.x.clean=myfilt"]' ]
  [ ! -e "$DIR/state/$id" ]
}

@test "exec-git: a driver's command in the task container's writablePaths entry is named by create's first exec, an exec and delete (root)" {
  route_path_writable root
}

@test "exec-git: a driver's command in the task container's writablePaths entry is named by create's first exec, an exec and delete (ordinary user)" {
  route_path_writable user
}
