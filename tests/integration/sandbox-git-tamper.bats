#!/usr/bin/env bats
# The sandbox and the host's git (issue 11 section 1, docs/sandbox.md "Git"): nothing a sandboxed
# command writes can make the host's git run code or move what is not the task's. Each route is
# tried from inside the sandbox, as root and as an ordinary user (made for this file), on real
# `git worktree add` worktrees in Fusion's `.worktrees/<task>` layout, and checked from the host.
#
# This file: the hooks and drivers a run plants or rewrites (core.hooksPath, include.path, hook
# managers, interpreters' modules and scripts, files named in a driver's words, the global config)
# are named in the run's tamper, and the hostGitArgs it reports disarm them: the host's git then
# runs nothing of them. (sandbox-git.bats: the repository itself; sandbox-git-walk.bats: nested
# repositories, included configs past the reader's bounds, the walk's clock.)

load helpers
load sandbox-git-helpers

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

# nbstripout_repo OWNER: make_repo with nbstripout's own filter (`"/usr/bin/python3" -m
# nbstripout`: Python imports nbstripout.py from the worktree's top) and diff.external=./d.sh
nbstripout_repo() {
  make_repo "$1"
  [ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
  hgit -C "$REPO" config filter.nbstripout.clean '"/usr/bin/python3" -m nbstripout'
  hgit -C "$REPO" config diff.external ./d.sh
}

# plant_nbstripout: a run's script that plants nbstripout.py (it leaves the marker, then passes its
# input through) and changes a.ipynb
plant_nbstripout() {
  printf '%s' "printf 'import sys\\nopen(\"$MARKER\", \"a\").write(\"ran\\\\n\")\\nsys.stdout.write(sys.stdin.read())\\n' >nbstripout.py && echo '{ }' >a.ipynb"
}

# route_interpreters OWNER (review20 B): drivers that run an interpreter with the worktree's top as
# the current directory: nbstripout's own `"/usr/bin/python3" -m nbstripout` (Python imports a
# planted nbstripout.py from there), `sh clean.sh` (an argument, not a path with a `/`), and
# `diff.external=./d.sh` (a key that was not watched). A run writing an unrelated file reports
# nothing; each of the others is reported by its entry. The host's `add -A` with the filter's
# `-c` lines (docs/sandbox.md) runs nothing of the planted module; a plain one runs it.
route_interpreters() {
  nbstripout_repo "$1"
  hgit -C "$REPO" config filter.x.clean 'sh clean.sh'
  as_owner sh -c 'cd "$1" && echo "*.ipynb filter=nbstripout" >.gitattributes && echo "{}" >a.ipynb &&
    echo cat >clean.sh && echo "#!/bin/sh" >d.sh' sh "$WT"
  local nb='config:filter.nbstripout.clean="/usr/bin/python3" -m nbstripout'
  sbx -- 'echo two >unrelated.txt'
  [ "$(config_tamper)" = '[]' ]
  sbx -- "$(plant_nbstripout)"
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

# route_disarm OWNER (review20 B, the host side): a run that plants nbstripout.py (for nbstripout's
# own `"/usr/bin/python3" -m nbstripout` filter) and rewrites diff.external's script gets the
# options that disarm both (hostGitArgs); with them the host's `status`, `diff`, `add -A` and
# `commit` succeed and run nothing the run planted; a plain `add -A` then runs the planted module
# (the control). A run that changes nothing such has none.
route_disarm() {
  nbstripout_repo "$1"
  as_owner sh -c 'cd "$1" && echo "*.ipynb filter=nbstripout" >.gitattributes && echo "{}" >a.ipynb &&
    printf "#!/bin/sh\necho ran >>%s\n" "$2" >d.sh && chmod +x d.sh' sh "$WT" "$MARKER"
  hgit -C "$WT" -c core.hooksPath=/dev/null add -A
  hgit -C "$WT" -c core.hooksPath=/dev/null commit -qm "nbstripout, d.sh"
  sbx -- 'echo two >unrelated.txt'
  host_args >/dev/null
  [ -z "$(host_args)" ]
  sbx -- "$(plant_nbstripout) && echo 'echo ran >>$MARKER' >>d.sh"
  local args
  host_args >/dev/null
  mapfile -t args < <(host_args)
  [ "$(printf '%s|' "${args[@]}")" = "-c|filter.nbstripout.clean=|-c|filter.nbstripout.smudge=|-c|filter.nbstripout.process=|-c|filter.nbstripout.required=false|-c|diff.external=f() { [ \$# -lt 7 ] || $(command -v git) --no-pager diff --no-index --no-ext-diff --no-textconv -- \"\$2\" \"\$5\"; [ \$? -le 1 ]; }; f|" ]
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

# route_path_absolute OWNER worktree|writable (review27 E6, D3 b's watch): `filter.x.clean = myfilt`
# found through an ABSOLUTE PATH entry the run writes: `<worktree>/bin` (a direnv setup), or
# `$DIR/lnk` leading to `$DIR/npm/bin` with `$DIR/npm` a writablePaths entry (`~/.npm-global/bin`
# with `~/.npm-global` writable; a link on the way). The filter is named, `add -A` with
# hostGitArgs runs nothing, a plain one runs the payload; a run writing an unrelated file reports
# nothing. Seen to fail with the absolute entries not looked at (tamper `[]`).
route_path_absolute() {
  local dir
  make_repo "$1"
  if [ "$2" = worktree ]; then
    dir=$WT/bin
  else
    dir=$DIR/npm/bin
    echo "{\"writablePaths\":[\"$DIR/npm\"]}" >"$DIR/policy.json"
    ln -s npm/bin "$DIR/lnk"
  fi
  as_owner sh -c 'mkdir -p "$1" && printf "#!/bin/sh\ncat\n" >"$1/myfilt" && chmod 755 "$1/myfilt"' sh "$dir"
  # appended: the suite's own commands are found as before
  PATH=$PATH:$([ "$2" = worktree ] && echo "$dir" || echo "$DIR/lnk")
  filter_rewrite_named myfilt "$dir/myfilt" "#!/bin/sh
echo ran >>$MARKER
cat"
}

@test "sandbox-git: a driver's command found through an absolute PATH entry in the worktree is watched and disarmed (root)" {
  route_path_absolute root worktree
}

@test "sandbox-git: a driver's command found through an absolute PATH entry in the worktree is watched and disarmed (ordinary user)" {
  route_path_absolute user worktree
}

@test "sandbox-git: a driver's command found through a PATH entry leading into a writablePaths entry is watched and disarmed (root)" {
  route_path_absolute root writable
}

@test "sandbox-git: a driver's command found through a PATH entry leading into a writablePaths entry is watched and disarmed (ordinary user)" {
  route_path_absolute user writable
}

# route_disarm_program OWNER (review29 G3, fsrun's own disarm words): `diff.x7.textconv = evilconv`
# and a PATH whose first entry is in a writablePaths entry; the run plants evilconv AND a `cat`
# there. The textconv is named, and hostGitArgs replace it with a `cat` the run cannot have
# written: the host's `git diff` with them and that PATH runs neither (the planted cat marks only
# when git runs it); with the bare word `cat` (what fsrun said before) it runs the planted cat.
# Seen to fail with the bare word back in the table (the marker after the disarmed diff).
route_disarm_program() {
  local npm=$DIR/npm/bin own_cat args joined
  own_cat=$(command -v cat)
  make_repo "$1"
  echo "{\"writablePaths\":[\"$DIR/npm\"]}" >"$DIR/policy.json"
  as_owner mkdir -p "$npm"
  hgit -C "$REPO" config diff.x7.textconv evilconv
  as_owner sh -c 'cd "$1" && echo "*.g diff=x7" >.gitattributes && echo one >a.g' sh "$WT"
  hgit -C "$WT" add .gitattributes a.g
  hgit -C "$WT" commit -qm "a textconv"
  PATH=$npm:$PATH sbx -- 'echo two >unrelated'
  [ "$(config_tamper)" = '[]' ]
  PATH=$npm:$PATH sbx -- "printf '#!/bin/sh\necho evilconv >>$MARKER\nexec $own_cat \"\$@\"\n' >$npm/evilconv &&
    printf '#!/bin/sh\nread -r p </proc/\$PPID/comm\n[ \"\$p\" != git ] || echo cat >>$MARKER\nexec $own_cat \"\$@\"\n' >$npm/cat &&
    chmod 755 $npm/evilconv $npm/cat && echo two >>a.g"
  [ "$(config_tamper)" = '["config:diff.x7.textconv=evilconv"]' ]
  host_args >/dev/null
  mapfile -t args < <(host_args)
  TMPDIR=$DIR/home PATH=$npm:$PATH hgit -C "$WT" "${args[@]}" diff >"$DIR/diff"
  [ ! -e "$MARKER" ]
  grep -qxF '+two' "$DIR/diff"
  joined="|$(printf '%s|' "${args[@]}")"
  [ "$joined" = "|-c|diff.x7.textconv=$own_cat|" ]
  TMPDIR=$DIR/home PATH=$npm:$PATH hgit -C "$WT" -c diff.x7.textconv=cat diff >/dev/null
  grep -qx cat "$MARKER"
}

@test "sandbox-git: hostGitArgs name a program by a path the run cannot write, never a bare word a planted one answers (root)" {
  route_disarm_program root
}

@test "sandbox-git: hostGitArgs name a program by a path the run cannot write, never a bare word a planted one answers (ordinary user)" {
  route_disarm_program user
}

# route_path_runners OWNER (review27, D3 b's runners): the PATH-searched command comes after
# runners: `sh -c '...'`, `nice -n 5`, `timeout 60`, `xargs -0` (each takes the next word, after its
# options and timeout's duration, as the command), found through a relative PATH entry
# (`./node_modules/.bin/myfilt`; not the top, where a file word `myfilt` is watched anyway). The
# filter is named and disarmed as the bare `myfilt` is. Seen to fail with each runner undone in
# turn (sh -c, nice, timeout, xargs: tamper `[]`).
route_path_runners() {
  make_repo "$1"
  as_owner sh -c 'mkdir -p "$1/node_modules/.bin" && printf "#!/bin/sh\ncat\n" >"$1/node_modules/.bin/myfilt" &&
    chmod 755 "$1/node_modules/.bin/myfilt"' sh "$WT"
  PATH=$PATH:./node_modules/.bin
  filter_rewrite_named "sh -c 'nice -n 5 timeout 60 xargs -0 myfilt'" node_modules/.bin/myfilt "#!/bin/sh
echo ran >>$MARKER
cat"
}

@test "sandbox-git: a driver's command after sh -c, nice -n, timeout and xargs is watched and disarmed (root)" {
  route_path_runners root
}

@test "sandbox-git: a driver's command after sh -c, nice -n, timeout and xargs is watched and disarmed (ordinary user)" {
  route_path_runners user
}

# The runners of session 29 (sandbox-git-runner.c), each before a command found through PATH's
# ./node_modules/.bin with its options, their values and its operand: `sudo` is not installed
# here, so none of these is run; fsrun reads the words.
MORE_RUNNERS=('stdbuf -o L -e0' 'ionice -c 3 -n 7 -t' 'chrt -f 10' 'taskset -c 0-3'
  'flock -w 5 x.lock' 'flock x.lock -c' 'time -p' 'sudo -u nobody -E --')

# The runners of session 30, the same way: busybox's applet, doas's options, su's `-c` after its
# user, runuser's `-u USER --`, env's `-S` (whose words are env's own arguments again: options,
# `--`, PATH=, review30 H2) and su's `-s SHELL` (a program of its own, review30 H2). None is run
# (doas is not installed; nothing runs a filter here). Seen to fail without their table entries
# (tamper missing all but env -S's), and with env -S read as a command string and -s's value
# skipped (the four H2 lines missing).
RUNNERS_30=('busybox nice -n 5' 'busybox sh -c' 'doas -n -u nobody' 'su - nobody -s /bin/sh -c'
  'runuser -u nobody -g nogroup --' 'env -S' "env -S'-u X'" "env -S'--'"
  "env -S'-i PATH=./node_modules/.bin'" 'su root -s' 'runuser -u root --shell')

# route_more_runners OWNER [ARRAY]: a filter per runner of ARRAY (MORE_RUNNERS by default), each
# `RUNNER... myfilt`. A run writing an unrelated file reports nothing; a run rewriting
# node_modules/.bin/myfilt names every filter (one not followed to myfilt watches a top-level
# `myfilt` instead, and is missing).
route_more_runners() {
  local i want=()
  local -n runners=${2:-MORE_RUNNERS}
  make_repo "$1"
  as_owner sh -c 'mkdir -p "$1/node_modules/.bin" && printf "#!/bin/sh\ncat\n" >"$1/node_modules/.bin/myfilt" &&
    chmod 755 "$1/node_modules/.bin/myfilt"' sh "$WT"
  PATH=$PATH:./node_modules/.bin
  for i in "${!runners[@]}"; do
    hgit -C "$REPO" config "filter.r$i.clean" "${runners[$i]} myfilt"
    want+=("config:filter.r$i.clean=${runners[$i]} myfilt")
  done
  sbx -- 'echo two >unrelated'
  [ "$(config_tamper)" = '[]' ]
  sbx -- 'printf "#!/bin/sh\nexit 1\n" >node_modules/.bin/myfilt'
  [ "$(config_tamper | jq -c sort)" = "$(printf '%s\n' "${want[@]}" | jq -Rsc 'split("\n")[:-1] | sort')" ]
}

@test "sandbox-git: a driver's command after stdbuf, ionice, chrt, taskset, flock, time and sudo is watched (root)" {
  route_more_runners root
}

@test "sandbox-git: a driver's command after stdbuf, ionice, chrt, taskset, flock, time and sudo is watched (ordinary user)" {
  route_more_runners user
}

@test "sandbox-git: a driver's command after busybox, doas, su -c, runuser -u and env -S is watched (root)" {
  route_more_runners root RUNNERS_30
}

@test "sandbox-git: a driver's command after busybox, doas, su -c, runuser -u and env -S is watched (ordinary user)" {
  route_more_runners user RUNNERS_30
}

# route_path_assignment OWNER (review29 G8): `env -i PATH=/usr/bin:$DIR/npm/bin myfiltL`: the
# assignment names the dirs the command is looked up in (env's execvp, a shell's lookup), not files:
# the command is watched in those of them the run writes ($DIR/npm, a writablePaths entry, which
# fsrun's own PATH does not hold), and /usr/bin is watched for nothing. A second filter as review29
# wrote it (`env -i PATH=/usr/bin myfiltL`, no dir the run writes) is never reported: a run of
# `true` and an unrelated write report nothing (it was reported on every run); a run planting
# myfiltL in $DIR/npm/bin names the first filter alone, disarmed. Seen to fail with the assignment
# read as before (the standing /usr/bin entry on the run of `true`).
route_path_assignment() {
  local npm=$DIR/npm/bin
  make_repo "$1"
  echo "{\"writablePaths\":[\"$DIR/npm\"]}" >"$DIR/policy.json"
  as_owner sh -c 'mkdir -p "$1" && printf "#!/bin/sh\ncat\n" >"$1/myfiltL" && chmod 755 "$1/myfiltL"' sh "$npm"
  hgit -C "$REPO" config filter.q7.clean "env -i PATH=/usr/bin myfiltL"
  sbx -- true
  [ "$status" -eq 0 ]
  [ "$(config_tamper)" = '[]' ]
  filter_rewrite_named "env -i PATH=/usr/bin:$npm myfiltL" "$npm/myfiltL" "#!/bin/sh
echo ran >>$MARKER
cat"
}

@test "sandbox-git: a driver's PATH= assignment names where its command is watched, never a standing entry (root)" {
  route_path_assignment root
}

@test "sandbox-git: a driver's PATH= assignment names where its command is watched, never a standing entry (ordinary user)" {
  route_path_assignment user
}

# route_runner_chain OWNER: the runners the host's git can run as any user, one after another, before
# ./node_modules/.bin/myfilt: the run rewriting it is reported, hostGitArgs disarm the filter, and
# the host's plain `add -A` runs what the run wrote through every runner.
route_runner_chain() {
  make_repo "$1"
  as_owner sh -c 'mkdir -p "$1/node_modules/.bin" && printf "#!/bin/sh\ncat\n" >"$1/node_modules/.bin/myfilt" &&
    chmod 755 "$1/node_modules/.bin/myfilt"' sh "$WT"
  PATH=$PATH:./node_modules/.bin
  filter_rewrite_named "stdbuf -oL ionice -c 3 -t chrt -o 0 taskset 0xffffffff flock -w 60 $DIR/x.lock time -p myfilt" \
    node_modules/.bin/myfilt "#!/bin/sh
echo ran >>$MARKER
cat"
}

@test "sandbox-git: a driver's command after a chain of stdbuf, ionice, chrt, taskset, flock and time is watched and disarmed (root)" {
  route_runner_chain root
}

@test "sandbox-git: a driver's command after a chain of stdbuf, ionice, chrt, taskset, flock and time is watched and disarmed (ordinary user)" {
  route_runner_chain user
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
