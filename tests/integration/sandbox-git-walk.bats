#!/usr/bin/env bats
# The sandbox and the host's git (issue 11 section 1, docs/sandbox.md "Git"): nothing a sandboxed
# command writes can make the host's git run code or move what is not the task's. Each route is
# tried from inside the sandbox, as root and as an ordinary user (made for this file), on real
# `git worktree add` worktrees in Fusion's `.worktrees/<task>` layout, and checked from the host.
#
# This file: what the tamper walk must see, or say it cannot disarm: nested repositories (made in
# the worktree, armed in place, deep, behind a .git file), other checkouts in writablePaths,
# included configs past the reader's bounds (size, includes, odd syntax, links), FIFOs, and the
# walk's clock: linked worktrees made right before a run, whole-second and untyped filesystems,
# tmpfs worktrees written through a mapping, the init's wait for the cutoff. In the VM
# (`test_tags=kernel61`) the init's wait runs on kernel 6.1. (sandbox-git.bats: the repository
# itself; sandbox-git-tamper.bats: hooks and drivers.)

load helpers
load sandbox-git-helpers

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
  # a checkout whose `.git` is a link to the git dir, and one below the walk's 6 levels
  as_owner mkdir -p "$DIR/lk" "$DIR/deep/a/b/c/d/e/f/g"
  as_owner ln -s "$gd" "$DIR/lk/.git"
  refused_entry "$DIR/lk" "$wt" "holds a checkout of the worktree's repository"
  as_owner mv "$main" "$DIR/deep/a/b/c/d/e/f/g/proj"
  refused_entry "$DIR/deep" "$wt" "cannot tell whether it holds the main checkout"
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
  [ ! -e "$MARKER" ]
  [ ! -e "$DIR/cred" ]
  [ ! -e "$DIR/sub" ]
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
  [ ! -e "$DIR/pwn-trailer" ]
  [ ! -e "$DIR/pwn-ext" ]
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
  [ "$(printf '%s|' "${args[@]}")" = "-c|diff.x.textconv=$(command -v cat)|" ]
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
  [[ " ${args[*]} " != *" filter."* ]]
  [[ " ${args[*]} " != *" diff.x.textconv=$(command -v cat) "* ]]
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

# fifos_named_on_every_run WANT: the last run's config entries (sorted) are WANT, and again after
# a run that writes an unrelated file
fifos_named_on_every_run() {
  [ "$(config_tamper | jq -c sort)" = "$1" ]
  sbx -- 'echo two >unrelated.txt'
  [ "$(config_tamper | jq -c sort)" = "$1" ]
}

# host_git_fails_not_hangs: the last run's hostGitArgs cannot disarm, and with them the host's
# `status` and `add -A` exit 128 at once; a plain `status` waits in open() until `timeout` ends it
host_git_fails_not_hangs() {
  local args rc cmd
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

# route_fifo_by_name OWNER (review26 D2): a run making FIFOs of files git opens by name in every
# directory it reads (src/.gitignore, a top-level .gitattributes) gets them named as configs fsrun
# cannot read, on every run while they are there, and hostGitArgs that cannot disarm: with them the
# host's `status` and `add -A` fail at once (128), where a plain one waits in open() for ever (the
# control, ended by `timeout`: it never returns on its own).
route_fifo_by_name() {
  local want
  make_repo "$1"
  sbx -- 'mkdir -p src && mkfifo src/.gitignore .gitattributes'
  want=$(jq -cn '["config:unread:.gitattributes (not a regular file: git'"'"'s open of it would wait or fail)",
    "config:unread:src/.gitignore (not a regular file: git'"'"'s open of it would wait or fail)"]')
  fifos_named_on_every_run "$want"
  host_args >/dev/null
  host_git_fails_not_hangs
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
  local want
  make_repo "$1"
  sbx -- 'mkdir -p a/.git/objects a/.git/refs b/c/.git/objects b/c/.git/refs && mkfifo a/.git/HEAD &&
    echo "ref: refs/heads/main" >b/c/.git/HEAD && mkfifo b/c/.git/commondir'
  want=$(jq -cn '["config:unread:a/.git/HEAD (not a regular file: git'"'"'s open of it would wait or fail)",
    "config:unread:b/c/.git/commondir (not a regular file: git'"'"'s open of it would wait or fail)"]')
  fifos_named_on_every_run "$want"
  host_git_fails_not_hangs
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
    [[ "$joined" = *"|-c|diff.$driver.textconv=$(command -v cat)|"* ]]
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
