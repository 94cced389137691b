#!/usr/bin/env bats
# `make install` of the build that made $FSRUN (its directory has the Makefile): with DESTDIR and
# a prefix, the binary, the man pages, the bash completion, the client configurations as
# examples and the Fusion adapter's package; `make uninstall` takes every file away again.

load ../integration/helpers

setup_file() {
  export BUILD_DIR
  BUILD_DIR=$(cd "$(dirname "$FSRUN")" && pwd)
  [ -f "$BUILD_DIR/Makefile" ] || skip "$FSRUN is not in a configured build directory"
}

# the commands `fsrun --help` lists
commands() {
  "$FSRUN" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'
}

setup() {
  DEST=$BATS_TEST_TMPDIR/dest
}

make_install() { # make_install PREFIX [TARGET]
  make -C "$BUILD_DIR" "${2:-install}" DESTDIR="$DEST" prefix="$1" >"$BATS_TEST_TMPDIR/make.log" 2>&1 || {
    tail -n 20 "$BATS_TEST_TMPDIR/make.log"
    return 1
  }
}

@test "make install DESTDIR=D prefix=/usr: binary, man pages, completion, examples, Fusion adapter" {
  make_install /usr
  # the binary, the same build
  [ -x "$DEST/usr/bin/fsrun" ]
  [ "$("$DEST/usr/bin/fsrun" --version)" = "$("$FSRUN" --version)" ]
  # every man page of docs/, each one that man renders
  local src page
  for src in "$FSRUN_SRCDIR"/docs/*.8; do
    page=$DEST/usr/share/man/man8/${src##*/}
    [ -f "$page" ] || { echo "no man page $page"; return 1; }
    run man -l -P cat "$page"
    [ "$status" -eq 0 ]
    [[ $output == *NAME* ]]
  done
  # the bash completion, where bash-completion looks for it
  cmp "$FSRUN_SRCDIR/contrib/completion/fsrun" "$DEST/usr/share/bash-completion/completions/fsrun"
  # the client configurations, the very files of contrib/configs
  local f
  for f in podman/fsrun.conf containerd/fsrun.toml kubernetes/runtimeclass.yaml crio/10-fsrun.conf \
    docker/daemon.json; do
    cmp "$FSRUN_SRCDIR/contrib/configs/$f" "$DEST/usr/share/doc/fsrun/examples/$f"
  done
  # the Fusion adapter's package, without installed dependencies or build output
  cmp "$FSRUN_SRCDIR/contrib/fusion/package.json" "$DEST/usr/share/fsrun/fusion/package.json"
  [ -d "$DEST/usr/share/fsrun/fusion/src" ]
  [ ! -e "$DEST/usr/share/fsrun/fusion/node_modules" ]
  # nothing writable by others, nothing outside the prefix
  [ -z "$(find "$DEST" -perm /022 ! -type l)" ]
  [ "$(ls "$DEST")" = usr ]
}

@test "man fsrun-COMMAND finds each installed page through MANPATH" {
  make_install /usr
  local cmd
  for cmd in $(commands); do
    run env MANPATH="$DEST/usr/share/man" man -w "fsrun-$cmd"
    [ "$status" -eq 0 ]
    [ "$output" = "$DEST/usr/share/man/man8/fsrun-$cmd.8" ]
  done
}

@test "prefix=/opt/fsrun puts everything under it, and make uninstall removes every file" {
  make_install /opt/fsrun
  [ -x "$DEST/opt/fsrun/bin/fsrun" ]
  [ -f "$DEST/opt/fsrun/share/man/man8/fsrun.8" ]
  [ -f "$DEST/opt/fsrun/share/bash-completion/completions/fsrun" ]
  [ -f "$DEST/opt/fsrun/share/doc/fsrun/examples/podman/fsrun.conf" ]
  [ -f "$DEST/opt/fsrun/share/fsrun/fusion/package.json" ]
  [ "$(ls "$DEST")" = opt ]
  make_install /opt/fsrun uninstall
  run find "$DEST" ! -type d
  [ "$status" -eq 0 ]
  [ -z "$output" ]
}

@test "fsrun --version names the git commit it was built from" {
  local top
  top=$(git -C "$FSRUN_SRCDIR" rev-parse --show-toplevel 2>/dev/null) || skip "the source tree is not a git checkout"
  [ "$(cd "$top" && pwd -P)" = "$(cd "$FSRUN_SRCDIR" && pwd -P)" ] || skip "the source tree is inside another git checkout"
  run "$FSRUN" --version
  [ "$status" -eq 0 ]
  [[ ${lines[0]} == "fsrun version "* ]]
  # the commit of the last build; make rebuilds the line when HEAD moves
  [ "${lines[1]}" = "commit: $(git -C "$FSRUN_SRCDIR" rev-parse --short=12 HEAD)" ]
}
