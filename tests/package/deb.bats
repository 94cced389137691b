#!/usr/bin/env bats
# The Debian package: built from this tree with dpkg-buildpackage -b (debian/), checked by lintian,
# installed with `apt-get install ./fsrun_*.deb` in a throw-away copy of this machine's root
# (clean-root.sh: an overlay over / in a private mount namespace, so the host's dpkg database,
# users and files are never touched), used there for the quickstart's container and sandbox (as
# root and as an ordinary user), found there by podman, containerd and a dockerd of the copy's own
# through the shipped configurations alone, and by the installed Fusion adapter with no setting,
# and purged again without leaving anything.

load ../integration/helpers

setup_file() {
  [ "$EUID" = 0 ] || skip "needs root (apt-get install in the throw-away root)"
  local cmd
  for cmd in dpkg-buildpackage dh dpkg-deb apt-get unshare pivot_root; do
    command -v "$cmd" >/dev/null || skip "needs $cmd (Debian packages dpkg-dev, debhelper, apt, util-linux)"
  done
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || skip "no overlayfs"
  export PKG_DIR DEB
  PKG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/fsrun-deb.XXXXXX")
  local src=$PKG_DIR/fsrun
  mkdir -p "$src"
  # the tree as it is (committed or not), without builds or ignored files
  if git -C "$FSRUN_SRCDIR" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$FSRUN_SRCDIR" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$src"
  else
    (cd "$FSRUN_SRCDIR" && tar --exclude=./build -cf - .) | tar -xf - -C "$src"
  fi
  (cd "$src" && dpkg-buildpackage -b -us -uc) >"$PKG_DIR/build.log" 2>&1 || {
    tail -n 30 "$PKG_DIR/build.log" >&2
    return 1
  }
  DEB=$(ls "$PKG_DIR"/fsrun_*.deb)
  unshare -m --propagation private "$BATS_TEST_DIRNAME/clean-root.sh" "$PKG_DIR" "$DEB" >"$PKG_DIR/steps"
}

teardown_file() {
  [ -n "${PKG_DIR:-}" ] && rm -rf --one-file-system "$PKG_DIR"
}

# steps_ok STEP...: clean-root.sh reported each STEP ok (the failing step's log otherwise)
steps_ok() {
  local s bad=0
  for s in "$@"; do
    grep -qx "step $s ok" "$PKG_DIR/steps" && continue
    bad=1
    echo "step $s: $(grep "^step $s " "$PKG_DIR/steps" || echo 'not run')"
    sed -n "/^== $s: /,/^== /p" "$PKG_DIR/log" | head -n 30
  done
  [ "$bad" = 0 ]
}

@test "dpkg-buildpackage -b: fsrun_VERSION_ARCH.deb with the binary, man pages, completion, examples, adapter" {
  local version
  version=$(cd "$PKG_DIR/fsrun" && dpkg-parsechangelog -S Version)
  [ "$(dpkg-deb -f "$DEB" Package Version | tr '\n' ' ')" = "Package: fsrun Version: $version " ]
  run dpkg-deb -c "$DEB"
  [ "$status" -eq 0 ]
  local f
  for f in ./usr/bin/fsrun ./usr/share/man/man8/fsrun.8.gz ./usr/share/man/man8/fsrun-sandbox.8.gz \
    ./usr/share/man/man8/fsrun-bundle.8.gz ./usr/share/bash-completion/completions/fsrun \
    ./usr/share/doc/fsrun/examples/podman/fsrun.conf ./usr/share/doc/fsrun/examples/docker/daemon.json \
    ./usr/share/doc/fsrun/examples/containerd/fsrun.toml ./usr/share/doc/fsrun/examples/crio/10-fsrun.conf \
    ./usr/share/doc/fsrun/examples/kubernetes/runtimeclass.yaml ./usr/share/fsrun/fusion/package.json \
    ./usr/share/doc/fsrun/copyright; do
    grep -q " $f\$" <<<"$output" || { echo "not in the package: $f"; return 1; }
  done
  # a man page for every command of the binary
  local cmd
  for cmd in $("$FSRUN" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'); do
    grep -q " ./usr/share/man/man8/fsrun-$cmd.8.gz\$" <<<"$output" || { echo "no man page for $cmd"; return 1; }
  done
}

@test "lintian: no error and no warning (each override explained in debian/fsrun.lintian-overrides)" {
  command -v lintian >/dev/null || skip "needs lintian"
  run lintian --fail-on error,warning "$DEB"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output != *"E: "* && $output != *"W: "* ]]
}

@test "apt-get install ./fsrun_*.deb in a clean root: /usr/bin/fsrun, version, man, completion, examples" {
  steps_ok clean install binary version man completion examples fusion
}

@test "podman and containerd find the installed fsrun through the shipped configurations alone" {
  local s ran=0
  for s in podman containerd; do
    grep -qx "step $s skipped" "$PKG_DIR/steps" && continue
    steps_ok "$s"
    ran=$((ran + 1))
  done
  [ "$ran" -gt 0 ] || skip "neither podman nor containerd is installed"
}

@test "Docker finds the installed fsrun through the shipped daemon.json alone, and its daemon leaves nothing" {
  grep -qx "step docker skipped" "$PKG_DIR/steps" && skip "needs Debian's docker.io and busybox-static"
  steps_ok docker docker-nothing-left
}

@test "the installed fsrun runs the quickstart's container, and its sandbox as root and as a user" {
  steps_ok container sandbox-root sandbox-user
}

@test "the installed Fusion adapter, packed and installed into a project, finds /usr/bin/fsrun unconfigured" {
  steps_ok fusion-pack fusion-root fusion-user
}

@test "apt-get purge removes the package and leaves nothing of it" {
  steps_ok remove removed nothing-left
}
