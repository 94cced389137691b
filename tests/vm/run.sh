#!/bin/bash
# Runs the bats files tagged for cgroup v2 inside the cgroup v2 VM (shared/vm/run-in-vm), all in
# one boot.
#
#   tests/vm/run.sh [--fsrun PATH] [--log-dir DIR] [--tag TAG]... [--all] [--whole] [--filter REGEX]
#                   [--among "FILE.bats..."] [FILE.bats...]
#   tests/vm/run.sh --locate      print the run-in-vm it would use (exit 3 with a reason if none)
#
# A file's `# vm-packages: PKG...` line names Debian packages installed on the host first when
# missing. Files: the FILE arguments; otherwise tests/vm/*.bats plus every tests/integration/*.bats that has
# a line `# bats file_tags=...` or `# bats test_tags=...` naming one of the TAGs (default: cgroupv2,
# the tests whose result depends on cgroup v2, and kernel61, the ones whose code takes another branch
# on the VM's Linux 6.1, Debian 12's kernel; each --tag replaces the default); with --all,
# every tests/integration/*.bats. Tests: every test of tests/vm/ files and of files tagged as a
# whole (file_tags); of a file that tags single tests (test_tags), only those tagged with one of the
# TAGs (bats --filter-tags, once per tag), because the VM is slow and the others already ran on the
# host with the same result. --whole
# (and --all) runs every test of each file. --filter passes a test-name regex to bats. --among keeps,
# of the files chosen by tag, only those it names (run-tests.sh passes its BATS_FILES); exit 3 if none.
# Each file's TAP goes to DIR/NAME.tap (default build/test-logs/vm) and one `vm: ...` line per file
# is printed. Exit status: 0 all passed, 1 something failed, 3 the VM cannot run here, otherwise
# run-in-vm's own (124 timeout, 125 VM failure).
# run-in-vm is found as $RUN_IN_VM, or ../shared/vm/run-in-vm beside the repository, or beside the
# repository it was cloned from when its remote.origin.url is a local path (a clone of a clone too).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1

fsrun=""
log_dir=$repo/build/test-logs/vm
tags=()
all=0
whole=0
filter=""
among=""
locate=0
files=()
while [ $# -gt 0 ]; do
  case $1 in
    --fsrun) fsrun=$2; shift 2 ;;
    --log-dir) log_dir=$2; shift 2 ;;
    --tag) tags+=("$2"); shift 2 ;;
    --all) all=1; whole=1; shift ;;
    --whole) whole=1; shift ;;
    --filter) filter=$2; shift 2 ;;
    --among) among=$2; shift 2 ;;
    --locate) locate=1; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "tests/vm/run.sh: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done

cannot_run() {
  echo "$*" >&2
  exit 3
}

# origin_of DIR: the local repository DIR was cloned from (its remote.origin.url when that is a
# path or a file:// URL, read from the config file alone: no git run in a repository not ours),
# as a directory that holds it (a `.git` named is its checkout); nothing when it has none
origin_of() {
  local config url
  for config in "$1/.git/config" "$1/config"; do
    [ -f "$config" ] || continue
    url=$(git config --file "$config" --get remote.origin.url 2>/dev/null) || return 1
    url=${url#file://}
    case $url in
      /*) ;;
      *:*) return 1 ;; # another host's (ssh, https, scp-like host:path)
      *) url=$1/$url ;;
    esac
    url=${url%/}
    url=${url%/.git}
    [ -d "$url" ] && (cd "$url" && pwd)
    return
  done
  return 1
}

# locate_runner: $RUN_IN_VM; else ../shared/vm/run-in-vm beside the repository, or beside the
# repository it was cloned from, and so on (a clone of a clone of /work/main under /tmp finds
# /work/shared/vm); the places looked at in $looked
locate_runner() {
  local dir=$repo
  if [ -n "${RUN_IN_VM:-}" ]; then
    runner=$RUN_IN_VM
    [ -x "$runner" ]
    return
  fi
  looked=""
  for _ in 1 2 3 4 5 6 7 8; do # a bound: a clone cycle (x cloned from y cloned from x)
    runner=$(cd "$dir/.." && pwd)/shared/vm/run-in-vm
    looked+="${looked:+, }$runner"
    [ -x "$runner" ] && return 0
    dir=$(origin_of "$dir") || return 1
  done
  return 1
}

if ! locate_runner; then
  [ -z "${RUN_IN_VM:-}" ] || cannot_run "run-in-vm not found (RUN_IN_VM=$RUN_IN_VM is no executable)"
  cannot_run "run-in-vm not found (looked for ../shared/vm/run-in-vm beside the repo and the local repositories it was cloned from: $looked; set RUN_IN_VM)"
fi
[ "$(id -u)" = 0 ] || cannot_run "the VM needs root"
if [ "$locate" = 1 ]; then
  echo "$runner"
  exit 0
fi

[ ${#tags[@]} -gt 0 ] || tags=(cgroupv2 kernel61)
# a `# bats file_tags=` or `test_tags=` line naming one of the tags
tag_alternatives=$(IFS='|' && echo "${tags[*]}")
tag_line="^#[[:space:]]*bats[[:space:]]+(file|test)_tags=(.*[ ,])?($tag_alternatives)([ ,]|\$)"

if [ ${#files[@]} -eq 0 ]; then
  if [ "$all" = 1 ]; then
    files=(tests/integration/*.bats)
  else
    for f in tests/vm/*.bats tests/integration/*.bats; do
      [ -f "$f" ] || continue
      if [[ $f == tests/vm/* ]] || grep -qE "$tag_line" "$f"; then
        files+=("$f")
      fi
    done
  fi
fi
[ ${#files[@]} -gt 0 ] || cannot_run "no bats file is tagged for the VM (# bats file_tags= or test_tags= naming ${tags[*]})"
if [ -n "$among" ]; then
  kept=()
  for f in "${files[@]}"; do
    for g in $among; do
      [ "${g#"$repo"/}" = "${f#"$repo"/}" ] && kept+=("$f") && break
    done
  done
  [ ${#kept[@]} -gt 0 ] || cannot_run "none of the files asked for ($among) is tagged for the VM (${tags[*]})"
  files=("${kept[@]}")
fi
for i in "${!files[@]}"; do
  files[i]=${files[i]#"$repo"/}
  [ -f "${files[i]}" ] || { echo "tests/vm/run.sh: no such file: ${files[i]}" >&2; exit 2; }
done

# A file's `# vm-packages: PKG...` line: those Debian packages are installed on the host when
# missing, as contrib/run-tests.sh installs the client suites' (the VM runs the host's / and has no
# network). When that fails, the tests that need them skip and name what is missing.
packages=()
for f in "${files[@]}"; do
  read -ra wanted < <(sed -n 's/^#[[:space:]]*vm-packages:[[:space:]]*//p' "$f" | head -n 1)
  packages+=("${wanted[@]}")
done
if [ ${#packages[@]} -gt 0 ]; then
  # shellcheck source=../../contrib/lib.sh
  source contrib/lib.sh
  mkdir -p "$log_dir"
  fsrun_ensure_packages "$log_dir/apt.log" "${packages[@]}" ||
    echo "vm: could not install ${packages[*]} (log: $log_dir/apt.log): the tests that need them will skip" >&2
fi

# The VM shares only the repository (read-write, same path) and sees the host's / read-only, with
# tmpfs over /tmp and /run. Anything under the host's /tmp or /run outside the repo is invisible
# there, so the logs go through a staging folder inside the repo when needed.
inside_repo() { [[ $1 == "$repo"/* ]]; }

fsrun=${fsrun:-${FSRUN:-$repo/build/plain/fsrun}}
fsrun=$(realpath "$fsrun") || exit 2
[ -x "$fsrun" ] || { echo "tests/vm/run.sh: $fsrun is not an executable (build first)" >&2; exit 2; }
mkdir -p "$log_dir" && log_dir=$(realpath "$log_dir")
mkdir -p "$repo/build"
stage=$(mktemp -d "$repo/build/vm-stage.XXXXXX") || exit 1
trap 'rm -rf "$stage"' EXIT
# The binary and the test helper programs the bats files find beside it (tests/recvtty,
# tests/seccomp-listener, tests/noclone3, tests/exec-not-before) are always staged, mode 0755 in a 0755 folder: the build folder may be
# invisible in the VM (/tmp) or closed to the unprivileged uid 1000 that the rootless tests use.
chmod 0755 "$stage" || exit 1
install -m 0755 "$fsrun" "$stage/fsrun" || exit 1
mkdir -m 0755 "$stage/tests"
for helper in recvtty seccomp-listener noclone3 exec-not-before; do
  if [ -x "${fsrun%/*}/tests/$helper" ]; then
    install -m 0755 "${fsrun%/*}/tests/$helper" "$stage/tests/$helper" || exit 1
  else
    echo "vm: ${fsrun%/*}/tests/$helper is not built: the tests that use it will skip" >&2
  fi
done
vm_fsrun=$stage/fsrun
vm_logs=$log_dir
inside_repo "$log_dir" || vm_logs=$stage/logs
mkdir -p "$vm_logs"
rm -f "$vm_logs"/*.tap

echo "vm: ${#files[@]} file(s) in one VM: ${files[*]}"
status=0
vm_tags=${tags[*]}
[ "$whole" = 1 ] && vm_tags=""
"$runner" --timeout "${VM_TIMEOUT:-1800}" --env "FSRUN=$vm_fsrun" --env "VM_BATS_FILTER=$filter" \
  --env "VM_BATS_TAGS=$vm_tags" \
  --env "BATS_FILE_TIMEOUT=${BATS_FILE_TIMEOUT:-900}" \
  "$repo" -- bash tests/vm/in-vm.sh "$vm_logs" "${files[@]}" || status=$?
[ "$vm_logs" = "$log_dir" ] || cp "$vm_logs"/*.tap "$log_dir/" 2>/dev/null
exit "$status"
