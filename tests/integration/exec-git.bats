#!/usr/bin/env bats
# Git in the Fusion adapter's task-container mode (docs/sandbox.md, "Git in a task container"): each
# `fsrun exec` into a container made by `fsrun bundle` gets what one `fsrun sandbox` run gets, the
# overlay over the git common dir, the allowlist applied after the command and the tamper report
# (in --status-json). The routes of the sandbox-git files are tried through such an exec, as root
# and as an ordinary user, and checked from the host the same way.
#
# This file: the repository's layout, refs, index, objects, stash and the main checkout, the
# caller's GIT_CONFIG_COUNT, what a command leaves running (a daemon, its process group). The
# others: exec-git-tamper.bats (what a command or its leftover plants, named by the exec, pause or
# delete, and hostGitArgs), exec-git-walk.bats (the worktree's name swapped under the exec's check,
# coarse, untyped and tmpfs filesystems, leftRunning, a SIGKILLed fsrun exec); shared helpers in
# exec-git-task.bash and exec-git-helpers.bash. (One file took 1,273 s under ASan at load 25-30:
# split in three.)
#
# In the VM (kernel 6.1, Debian 12's, tests/vm/run.sh: `test_tags=kernel61` selects a test there)
# two tests of this file run: the task's own git work as root and a route as the ordinary user, so
# that the overlay over the common dir (attached first: 6.1's overlayfs refuses a detached upper
# dir), the sync and the user's namespace are seen on that kernel too. Not the whole file:
# measured in the VM, each test takes 13-43 s under software emulation (about 25 s on average, 46
# tests: about 20 minutes), where the VM suite has about a minute to spare.

load helpers
EXEC_GIT_USER_PREFIX=fsrxgit
load exec-git-helpers
load exec-git-task

# route_exec_foreign_gitdir root|user: a task container on a plain-directory worktree; one exec
# writes `.git` = `gitdir: $DIR/fake` (a bare repository with no back-pointer, standing for
# /etc/cron.d, shown read-only in the container by the policy). The next exec gets no overlay over
# it and no sync into it (its writes there fail: read-only), and fake is byte for byte as it was;
# a new `fsrun bundle` of that worktree is refused (1, one line naming the git dir).
route_exec_foreign_gitdir() {
  make_repo "$1"
  local plain=$DIR/plain fake=$DIR/fake before id
  as_owner mkdir "$plain"
  hgit init -q --bare "$fake"
  as_owner sh -c 'echo secret >"$1/index"' sh "$fake"
  jq -n --arg f "$fake" '{allowedPaths: [$f]}' >"$DIR/policy.json"
  before=$(fingerprint "$fake")
  sbx "$plain" -- "printf 'gitdir: %s\n' '$fake' >.git"
  [ "$(cat "$plain/.git")" = "gitdir: $fake" ]
  id=$(task_container "$plain")
  as_owner "$FSRUN" --root "$DIR/state" exec --status-json "$DIR/status.json" "$id" /bin/sh -c \
    "cd '$fake' && echo '* * * * * root id' >index; echo x >ORIG_HEAD" || true
  diff <(echo "$before") <(fingerprint "$fake")
  [ -z "$(run_dirs)" ]
  status=0
  as_owner "$FSRUN" --root "$DIR/state" bundle --policy "$DIR/policy.json" --worktree "$plain" \
    --out "$DIR/bundle-forged" -- true 2>"$DIR/stderr" || status=$?
  cat "$DIR/stderr"
  [ "$status" -eq 1 ] # fsrun bundle's status for a refused input
  [ "$(wc -l <"$DIR/stderr")" -eq 1 ]
  grep -q "git dir \`$fake\`.*linked-worktree layout" "$DIR/stderr"
  [ ! -e "$DIR/bundle-forged" ]
}

@test "exec-git: a .git file a command made naming a git dir without a back-pointer gets no overlay and no sync (root)" {
  route_exec_foreign_gitdir root
}

@test "exec-git: a .git file a command made naming a git dir without a back-pointer gets no overlay and no sync (ordinary user)" {
  route_exec_foreign_gitdir user
}

@test "exec-git: the task's commondir cannot be replaced (root)" {
  route_commondir root
}

# bats test_tags=kernel61
@test "exec-git: the task's commondir cannot be replaced (ordinary user)" {
  route_commondir user
}

@test "exec-git: no commondir can be made in the main checkout's .git (root)" {
  route_main_commondir root
}

@test "exec-git: no commondir can be made in the main checkout's .git (ordinary user)" {
  route_main_commondir user
}

@test "exec-git: update-ref moves neither main, another task's branch, a new ref nor a tag (root)" {
  route_update_ref root
}

@test "exec-git: update-ref moves neither main, another task's branch, a new ref nor a tag (ordinary user)" {
  route_update_ref user
}

@test "exec-git: another worktree's admin dir stays as it was (root)" {
  route_other_admin root
}

@test "exec-git: another worktree's admin dir stays as it was (ordinary user)" {
  route_other_admin user
}

@test "exec-git: info/, packed-refs, HEAD and modules/ of the common dir stay as they were (root)" {
  route_info root
}

@test "exec-git: info/, packed-refs, HEAD and modules/ of the common dir stay as they were (ordinary user)" {
  route_info user
}

@test "exec-git: a command that changes the hooks of core.hooksPath=.husky is reported in --status-json (root)" {
  route_husky root
}

@test "exec-git: a command that changes the hooks of core.hooksPath=.husky is reported in --status-json (ordinary user)" {
  route_husky user
}

@test "exec-git: a command that writes the config file include.path names is reported in --status-json (root)" {
  route_include root
}

@test "exec-git: a command that writes the config file include.path names is reported in --status-json (ordinary user)" {
  route_include user
}

@test "exec-git: a command that edits the files installed lefthook and pre-commit hooks read is reported in --status-json (root)" {
  route_hook_managers root
}

@test "exec-git: a command that edits the files installed lefthook and pre-commit hooks read is reported in --status-json (ordinary user)" {
  route_hook_managers user
}

@test "exec-git: a gitlink and nested git dirs the command made are reported in --status-json (root)" {
  route_gitlink root
}

@test "exec-git: a gitlink and nested git dirs the command made are reported in --status-json (ordinary user)" {
  route_gitlink user
}

@test "exec-git: an index entry outside the worktree or a new assume-unchanged bit is left out; git add still lands (root)" {
  route_index_escape root
}

@test "exec-git: an index entry outside the worktree or a new assume-unchanged bit is left out; git add still lands (ordinary user)" {
  route_index_escape user
}

@test "exec-git: an entry with the old id and the edited file's stat data does not hide the edit; git add still lands (root)" {
  route_index_stat_forged root
}

@test "exec-git: an entry with the old id and the edited file's stat data does not hide the edit; git add still lands (ordinary user)" {
  route_index_stat_forged user
}

@test "exec-git: a NUL-name index and a repository moved out of node_modules are reported; the host's git runs nothing (root)" {
  route_index_nul_moved_repo root
}

@test "exec-git: a NUL-name index and a repository moved out of node_modules are reported; the host's git runs nothing (ordinary user)" {
  route_index_nul_moved_repo user
}

@test "exec-git: a conflict resolved inside reaches the host without its resolve-undo record (REUC); the merge can be finished there (root)" {
  route_resolve_undo root
}

@test "exec-git: a conflict resolved inside reaches the host without its resolve-undo record (REUC); the merge can be finished there (ordinary user)" {
  route_resolve_undo user
}

# bats test_tags=kernel61
@test "exec-git: add, commit, amend, stash, reset and rebase on the task branch reach the repository (root)" {
  task_work root
}

@test "exec-git: add, commit, amend, stash, reset and rebase on the task branch reach the repository (ordinary user)" {
  task_work user
}

@test "exec-git: a pack spoofing an existing object and a loose object under another content's id are discarded (root)" {
  route_spoof_objects root
}

@test "exec-git: a pack spoofing an existing object and a loose object under another content's id are discarded (ordinary user)" {
  route_spoof_objects user
}

@test "exec-git: loose commits and small fetches land; a gc'd or packed fetch's branch move does not (root)" {
  route_objects_packed root
}

@test "exec-git: loose commits and small fetches land; a gc'd or packed fetch's branch move does not (ordinary user)" {
  route_objects_packed user
}

@test "exec-git: a fetch of 150 commits arrives loose and lands; the caller's GIT_CONFIG_COUNT is kept (root)" {
  route_objects_fetch_many root
}

@test "exec-git: a fetch of 150 commits arrives loose and lands; the caller's GIT_CONFIG_COUNT is kept (ordinary user)" {
  route_objects_fetch_many user
}

@test "exec-git: a task worktree's stash clear and push leave the user's stash; push and pop inside work (root)" {
  route_stash_task root
}

@test "exec-git: a task worktree's stash clear and push leave the user's stash; push and pop inside work (ordinary user)" {
  route_stash_task user
}

@test "exec-git: in the main checkout the stash is only pushed on, never cleared or dropped (root)" {
  route_stash_main root
}

@test "exec-git: in the main checkout the stash is only pushed on, never cleared or dropped (ordinary user)" {
  route_stash_main user
}

@test "exec-git: on the main checkout, commits land and the routes are closed (root)" {
  main_checkout root
}

@test "exec-git: on the main checkout, commits land and the routes are closed (ordinary user)" {
  main_checkout user
}

@test "exec-git: a fifo at the branch's ref or .gitmodules, or .gitmodules linked to /dev/zero, hangs no exec (root)" {
  route_fifo root
}

@test "exec-git: a fifo at the branch's ref or .gitmodules, or .gitmodules linked to /dev/zero, hangs no exec (ordinary user)" {
  route_fifo user
}

@test "exec-git: a commit whose tree was not applied moves no branch; objects/ is reported (root)" {
  route_objects_incomplete root
}

@test "exec-git: a commit whose tree was not applied moves no branch; objects/ is reported (ordinary user)" {
  route_objects_incomplete user
}

# route_exec_git_env root|user (review19, on 44427e5): the adapter passes an allowlisted
# GIT_CONFIG_* as `fsrun exec --env`, which replaces the bundle's GIT_CONFIG_COUNT; fsrun's own
# entries (gc.auto=0, the unpack limits) are merged in again after the caller's. An exec without
# --env keeps the bundle's entries once (not appended a second time).
route_exec_git_env() {
  make_repo "$1"
  local id
  id=$(task_container "$WT")
  output=$(as_owner "$FSRUN" --root "$DIR/state" exec --env GIT_CONFIG_COUNT=1 \
    --env GIT_CONFIG_KEY_0=user.name --env GIT_CONFIG_VALUE_0=x "$id" \
    /bin/sh -c 'git config gc.auto; git config user.name; git config fetch.unpackLimit')
  echo "$output"
  [ "$output" = "$(printf '0\nx\n2147483647')" ]
  output=$(as_owner "$FSRUN" --root "$DIR/state" exec "$id" /bin/sh -c 'env | grep ^GIT_CONFIG_ | sort')
  echo "$output"
  [ "$(grep -c . <<<"$output")" -eq 9 ]
  grep -qx GIT_CONFIG_COUNT=4 <<<"$output"
  grep -qx GIT_CONFIG_KEY_0=gc.auto <<<"$output"
}

@test "exec-git: --env GIT_CONFIG_COUNT keeps the caller's entries and fsrun's gc.auto=0 (root)" {
  route_exec_git_env root
}

@test "exec-git: --env GIT_CONFIG_COUNT keeps the caller's entries and fsrun's gc.auto=0 (ordinary user)" {
  route_exec_git_env user
}

@test "exec-git: a sparse 1 GiB object and MERGE_MSG are discarded, not written on the host (root)" {
  route_sparse root
}

@test "exec-git: a sparse 1 GiB object and MERGE_MSG are discarded, not written on the host (ordinary user)" {
  route_sparse user
}

route_daemon() {
  make_repo "$1"
  local task0
  sbx -- "setsid sh -c 'while [ ! -e go ]; do sleep 0.1; done
          git update-ref refs/heads/main HEAD~0; echo two >>README; git commit -qam late
          echo \$? >daemon-done' </dev/null >/dev/null 2>&1 &"
  task0=$(hgit -C "$REPO" rev-parse task)
  as_owner touch "$WT/go"
  wait_for_file "$WT/daemon-done"
  cat "$WT/daemon-done"
  # the daemon ran its git in the exec's overlay; nothing of it reached the repository
  [ "$(hgit -C "$REPO" rev-parse main)" = "$MAIN0" ]
  [ "$(hgit -C "$REPO" rev-parse task)" = "$task0" ]
  [ "$(hgit -C "$REPO" log -1 --format=%s task)" = first ]
}

@test "exec-git: a daemon the command left running changes no ref after the command ended (root)" {
  route_daemon root
}

@test "exec-git: a daemon the command left running changes no ref after the command ended (ordinary user)" {
  route_daemon user
}

# review23 A4: with --kill-group, what a command left in its own process group (`cmd &`) ends with
# the command, killed by fsrun exec before it reaps the command (so that a caller, the adapter,
# never has to kill the group by a number that may be another's by then); without it, it lives on
# (runc's exec; the control). Each leftover holds a fifo open: opened without blocking (no writer
# may be left to wait for), a read ends (EOF) once no process holds it for writing, i.e. once the
# leftover is dead, and says EAGAIN while one does; the timeout only keeps a broken fix from
# hanging. --kill-group with --detach is refused (one line), the command never ran.
route_group_end() {
  make_repo "$1"
  local id
  id=$(task_container "$WT")
  fifo_read() {
    as_owner timeout -s KILL 60 python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
os.set_blocking(fd, sys.argv[2] == "blocking")
try:
    print("eof" if os.read(fd, 1) == b"" else "data")
except BlockingIOError:
    print("held")' "$WT/$1" "$2"
  }
  as_owner "$FSRUN" --root "$DIR/state" exec "$id" /bin/sh -c \
    'mkfifo lives && { sleep 1000 3<>lives </dev/null >/dev/null 2>&1 & }'
  [ "$(fifo_read lives nonblocking)" = held ]
  as_owner "$FSRUN" --root "$DIR/state" exec --kill-group "$id" /bin/sh -c \
    'mkfifo held && { sleep 1000 3<>held </dev/null >/dev/null 2>&1 & }'
  [ "$(fifo_read held blocking)" = eof ]
  [ "$(fifo_read lives nonblocking)" = held ]
  run as_owner "$FSRUN" --root "$DIR/state" exec --detach --kill-group "$id" /bin/sh -c 'touch ran'
  [ "$status" -eq 1 ]
  [ "$output" = "fsrun: --kill-group: cannot be used with --detach (nothing waits)" ]
  [ ! -e "$WT/ran" ]
}

@test "exec-git: with --kill-group, what a command left in its process group ends with it (root)" {
  route_group_end root
}

@test "exec-git: with --kill-group, what a command left in its process group ends with it (ordinary user)" {
  route_group_end user
}
