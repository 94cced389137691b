#!/bin/bash
# Quick start: installs what is missing, builds fsrun, makes a busybox bundle and shows fsrun at
# work on it: spec, features, run, the create/start/state/exec/kill/delete lifecycle, and a
# sandboxed command on a git worktree. Run as root on Debian 12; safe to run again.
#
#   contrib/quickstart.sh [--no-install]
#
# Environment: FSRUN_BUILD_ROOT (default: build/ in the repo; the binary is build/plain/fsrun),
# QUICKSTART_DIR (default: $FSRUN_BUILD_ROOT/quickstart, where the bundle and the demo repo go).
# Steps whose command this fsrun does not have yet say so and are passed over.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FSRUN_SRCDIR=$repo
# shellcheck source=lib.sh
source "$repo/contrib/lib.sh"

install=1
case ${1:-} in
  --no-install) install=0 ;;
  -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "quickstart.sh: unknown argument: $1" >&2; exit 2 ;;
esac

BUILD_ROOT=${FSRUN_BUILD_ROOT:-$repo/build}
mkdir -p "$BUILD_ROOT" && BUILD_ROOT=$(cd "$BUILD_ROOT" && pwd)
DEMO=${QUICKSTART_DIR:-$BUILD_ROOT/quickstart}
mkdir -p "$DEMO" && DEMO=$(cd "$DEMO" && pwd)
LOGS=$DEMO/logs
mkdir -p "$LOGS"
STATE_ROOT=/run/fsrun-quickstart
fsrun_is_root || STATE_ROOT=${XDG_RUNTIME_DIR:-/tmp}/fsrun-quickstart

# ---- install and build --------------------------------------------------------------------------
if [ "$install" = 1 ]; then
  fsrun_ensure_packages "$LOGS/apt.log" "${FSRUN_BUILD_PACKAGES[@]}" busybox-static jq git ||
    fsrun_die "could not install the packages fsrun needs"
fi
echo "building fsrun in $BUILD_ROOT/plain (log: $LOGS/build.log) ..."
# The same configuration as contrib/run-tests.sh, so both share one build.
fsrun_build "$BUILD_ROOT/plain" "$LOGS/build.log" --enable-werror || fsrun_die "the build failed (log: $LOGS/build.log)"
FSRUN=$BUILD_ROOT/plain/fsrun

# ---- step machinery -----------------------------------------------------------------------------
failed_steps=()
ERR=$LOGS/step.err

fsrun() { "$FSRUN" --root "$STATE_ROOT" "$@"; }

# show CMD...: print the command the way a user would type it (on stderr, so that its output can
# be piped), then run it; its stderr is kept to tell a missing feature from a failure.
show() {
  local shown=() arg
  for arg in "$@"; do
    if [[ $arg =~ ^[[:alnum:]_./:=,@%+-]+$ ]]; then shown+=("$arg"); else shown+=("$(printf '%q' "$arg")"); fi
  done
  [ "$1" = fsrun ] && shown[0]="fsrun --root $STATE_ROOT"
  printf '$ %s\n' "${shown[*]}" >&2
  "$@" 2> >(tee -a "$ERR" >&2)
}

# step TITLE "COMMAND..." FUNCTION: run FUNCTION when fsrun has every listed subcommand.
step() {
  local title=$1 needs=$2 fn=$3 cmd missing=() rc=0
  printf '\n== %s\n' "$title"
  for cmd in $needs; do
    fsrun_has_command "$FSRUN" "$cmd" || missing+=("$cmd")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "   not available yet: this fsrun has no '${missing[*]}' command (fsrun --help lists what it has)"
    return 0
  fi
  : >"$ERR"
  "$fn" || rc=$?
  sleep 0.1 # let the stderr tee finish
  if [ "$rc" != 0 ]; then
    if grep -qiE 'not (yet )?implemented' "$ERR"; then
      echo "   not available yet: $(grep -iE 'not (yet )?implemented' "$ERR" | head -n 1)"
    else
      echo "   FAILED (status $rc)"
      failed_steps+=("$title")
    fi
  fi
}

# ---- steps --------------------------------------------------------------------------------------
BUNDLE=$DEMO/bundle

step_version() {
  show "$FSRUN" --version
}

step_bundle() {
  rm -rf --one-file-system "$BUNDLE"
  mkdir -p "$BUNDLE"
  fsrun_make_busybox_rootfs "$BUNDLE/rootfs" || return 1
  echo "busybox rootfs in $BUNDLE/rootfs: $(find "$BUNDLE/rootfs" -type l | wc -l) applets, /etc/passwd with root, user (1000), nobody"
}

step_spec() {
  (cd "$BUNDLE" && show fsrun spec) || return 1
  jq -c '{ociVersion, args: .process.args, terminal: .process.terminal, root: .root,
          namespaces: [.linux.namespaces[]?.type]}' "$BUNDLE/config.json"
}

step_features() {
  show fsrun features >"$LOGS/features.json" || return 1
  jq -c '{ociVersionMin, ociVersionMax, namespaces: .linux.namespaces, cgroup: .linux.cgroup,
          seccomp: .linux.seccomp.enabled}' "$LOGS/features.json"
}

# set_args ARG...: process.args in the bundle's config, no terminal.
set_args() {
  fsrun_config_set_args "$BUNDLE/config.json" "$@" || return 1
  local json
  json=$(jq '.process.terminal = false' "$BUNDLE/config.json") && printf '%s\n' "$json" >"$BUNDLE/config.json"
}

step_run() {
  set_args /bin/sh -c 'echo "uname: $(uname -a)"; echo "id: $(id)"; echo "hostname: $(hostname)"' || return 1
  fsrun delete --force quickstart-run >/dev/null 2>&1
  show fsrun run --bundle "$BUNDLE" quickstart-run
}

step_lifecycle() {
  local id=quickstart-life
  fsrun delete --force "$id" >/dev/null 2>&1
  set_args /bin/sh -c 'echo "container: started as pid $$"; exec sleep 300' || return 1
  show fsrun create --bundle "$BUNDLE" "$id" || return 1
  show fsrun state "$id" | jq -c '{id, status, pid}' || return 1
  show fsrun start "$id" || return 1
  sleep 0.2
  show fsrun state "$id" | jq -c '{id, status, pid}' || return 1
  if fsrun_has_command "$FSRUN" exec; then
    show fsrun exec "$id" /bin/ps -o pid,user,args || return 1
  fi
  show fsrun kill "$id" KILL || return 1
  local tries=50
  while [ "$(fsrun state "$id" 2>/dev/null | jq -r .status)" != stopped ] && [ $tries -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  show fsrun state "$id" | jq -c '{id, status}' || return 1
  show fsrun delete "$id"
}

step_sandbox() {
  local dir=$DEMO/sandbox
  rm -rf "$dir"
  mkdir -p "$dir"
  git init -q "$dir/repo" &&
    git -C "$dir/repo" config user.email quickstart@example.invalid &&
    git -C "$dir/repo" config user.name quickstart &&
    echo "hello" >"$dir/repo/README" &&
    git -C "$dir/repo" add README &&
    git -C "$dir/repo" commit -qm "first commit" &&
    git -C "$dir/repo" worktree add -q -b task "$dir/worktree" || return 1
  cat >"$dir/policy.json" <<'EOF'
{
  "allowNetwork": false,
  "allowedPaths": [],
  "writablePaths": [],
  "envAllowlist": ["PATH", "CI"],
  "cpuLimit": { "maxCores": 1, "maxMs": 60000 },
  "memoryLimitMb": 512
}
EOF
  echo "worktree: $dir/worktree (of $dir/repo); policy: $dir/policy.json"
  show fsrun sandbox --policy "$dir/policy.json" --worktree "$dir/worktree" -- /bin/sh -c '
    echo "cwd: $(pwd)"
    echo "change from the sandbox" >> README && git commit -qam "edited in the sandbox" && git log --oneline | head -n 2
    echo "network devices: $(ls /sys/class/net | tr "\n" " ")"
    echo "home: $(ls -A "$HOME" | wc -l) entries; /etc/shadow readable: $(cat /etc/shadow >/dev/null 2>&1 && echo yes || echo no)"
    echo "of the parent repo only its git dir is here (for commits): $(ls -A '"$dir/repo"' 2>&1 | tr "\n" " ")"'
}

step "fsrun version" "" step_version
step "a busybox bundle" "" step_bundle
step "fsrun spec: the default config.json" "spec" step_spec
step "fsrun features" "features" step_features
step "fsrun run: a container that prints who and where it is" "run" step_run
step "lifecycle: create, state, start, exec, kill, delete" "create start state kill delete" step_lifecycle
step "fsrun sandbox: a command on a git worktree under a default policy" "sandbox" step_sandbox

echo
if [ ${#failed_steps[@]} -gt 0 ]; then
  echo "quickstart: failed steps: ${failed_steps[*]} (fsrun's messages are above; logs in $LOGS)"
  exit 1
fi
echo "quickstart: done. fsrun is $FSRUN; the bundle is $BUNDLE."
echo "next: ./contrib/run-tests.sh runs every test suite; README.md has the tour."
