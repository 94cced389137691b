#!/usr/bin/env bats
# Run by harness.bats through fsrun_run_bats_file (contrib/lib.sh), never on its own: it leaves two
# processes for the sweep after the file to judge, their pids a line each in $LEAVE_PIDS:
#   copy  a process in a mount namespace of its own that copied the host's table while a mount
#         under this file's tmp dir existed (another suite's `unshare -m`): its root is the host's
#   pivot a process that pivot_root'ed into a root under the tmp dir (a container left running)
# Both as $LEAVE_WHO: root, or an ordinary user (uid 1000) in a user namespace of its own.
# No helpers.bash: its teardown_bundle kills a process whose root is the bundle, so the sweep would
# never see the pivoted one (why an earlier try of this test found nothing left).

@test "leave a pivoted process and a copy of the host's mount table" {
  local d=$BATS_TEST_TMPDIR pid as=() userns=()
  if [ "$LEAVE_WHO" = user ]; then
    as=(setpriv --reuid=1000 --regid=1000 --clear-groups)
    userns=(-U -r)
    # the user's bind of its root must reach it
    chmod a+x "$BATS_RUN_TMPDIR" "$BATS_RUN_TMPDIR/test" "$d"
  fi
  mkdir -p "$d/root/bin" "$d/root/old" "$d/mnt"
  cp "$LEAVE_BUSYBOX" "$d/root/bin/busybox"
  mkfifo "$d/copy" "$d/pivot"
  # a mount under the tmp dir while the copy is taken; the host's own is gone before the file ends
  mount -t tmpfs leave "$d/mnt"
  # each says its pid once in place, through a FIFO (the event), and sleeps
  # shellcheck disable=SC2016 # expanded by that shell
  (cd / && exec "${as[@]}" unshare "${userns[@]}" -m sh -c 'echo $$ >&4 && exec sleep 1000 4>&-' \
    sh 4>"$d/copy") </dev/null >/dev/null 2>&1 3>&- &
  read -r pid <"$d/copy"
  echo "copy $pid" >>"$LEAVE_PIDS"
  # shellcheck disable=SC2016 # expanded by that shell
  (cd / && exec "${as[@]}" unshare "${userns[@]}" -m sh -c 'mount --bind "$1" "$1" && cd "$1" &&
    pivot_root . old && echo $$ >&4 && exec /bin/busybox sleep 1000 4>&-' sh "$d/root" \
    4>"$d/pivot") </dev/null >/dev/null 2>&1 3>&- &
  read -r pid <"$d/pivot"
  echo "pivot $pid" >>"$LEAVE_PIDS"
  umount "$d/mnt"
}
