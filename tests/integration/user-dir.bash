# The bats file's ordinary user (helpers.bash's file_test_user_add: $TEST_USER) with a directory of
# its own, for the files whose tests run fsrun rootless as that user (rootless.bats,
# seccomp-cache.bats):
#   user_dir_make PREFIX   TEST_UID, TEST_GID; UDIR=/tmp/PREFIX.XXXXXX (0755) holding run/ (0700,
#                          the user's XDG_RUNTIME_DIR: its default state root is run/fsrun) and
#                          bundle/ (rootfs: a private copy of $ROOTFS, as an image the user unpacked
#                          itself; config.json: the user's own `fsrun spec --rootless`), all the user's
#   as_user CMD...         CMD as the user: a clean environment (PATH $USER_PATH, or the system's
#                          directories), its sanitizer reports written to $UDIR/san.*
#   user_dir_remove        (teardown) the containers left in the user's default state root deleted,
#                          $UDIR removed; returns 1, with the reports on stderr, when the user's fsrun
#                          runs left sanitizer reports

user_dir_make() {
  TEST_UID=$(id -u "$TEST_USER")
  TEST_GID=$(id -g "$TEST_USER")
  UDIR=$(mktemp -d "/tmp/$1.XXXXXX")
  chmod 755 "$UDIR"
  mkdir -m 700 "$UDIR/run"
  mkdir "$UDIR/bundle"
  cp -a "$ROOTFS" "$UDIR/bundle/rootfs"
  chown -R "$TEST_UID:$TEST_GID" "$UDIR"
  as_user sh -c 'cd "$1" && "$2" spec --rootless' sh "$UDIR/bundle" "$FSRUN"
}

as_user() {
  setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --init-groups \
    env -i PATH="${USER_PATH:-/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin}" HOME="/home/$TEST_USER" \
    XDG_RUNTIME_DIR="$UDIR/run" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$UDIR/san" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$UDIR/san" "$@"
}

user_dir_remove() {
  local f reports=0
  [ -n "${UDIR:-}" ] || return 0
  for f in "$UDIR"/run/fsrun/*/; do
    [ -d "$f" ] && as_user "$FSRUN" delete --force "$(basename "$f")" >/dev/null 2>&1
  done
  for f in "$UDIR"/san.*; do
    [ -e "$f" ] || continue
    cat "$f" >&2
    reports=1
  done
  rm -rf "$UDIR"
  return "$reports"
}
