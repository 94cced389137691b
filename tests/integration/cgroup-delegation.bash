# A cgroup v2 subtree delegated to an ordinary user as systemd's user@UID.service delegates it (for
# sandbox-limits-v2.bats and rootless-delegated.bats; the caller makes the user):
#
#   delegate_subtree USER NAME   as root: DELEG=/sys/fs/cgroup/fsrun-deleg-NAME, owned by USER with
#                                its cgroup.procs, cgroup.subtree_control and cgroup.threads, the
#                                controllers enabled in the parent, and USER's leaf DELEG/leaf
#   in_delegated_leaf CMD...     CMD started in DELEG/leaf (CMD drops to the user itself: setpriv)
#   remove_delegation            kills what is left in DELEG (by pid), removes it, deepest first

# The user's processes start in a leaf of their own: no process may sit in a cgroup whose children
# have controllers.
delegate_subtree() {
  local user=$1
  DELEG=/sys/fs/cgroup/fsrun-deleg-$2
  mkdir "$DELEG"
  chown "$user:$user" "$DELEG" "$DELEG/cgroup.procs" \
    "$DELEG/cgroup.subtree_control" "$DELEG/cgroup.threads"
  echo "+memory +pids +cpu" >/sys/fs/cgroup/cgroup.subtree_control
  setpriv --reuid="$user" --regid="$user" --clear-groups mkdir "$DELEG/leaf"
}

in_delegated_leaf() {
  sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$DELEG/leaf" "$@"
}

remove_delegation() {
  local pid tries=$((WAIT_MAX_S * 10))
  [ -n "${DELEG:-}" ] && [ -d "$DELEG" ] || return 0
  while [ "$tries" -gt 0 ]; do
    local left=0
    # a frozen process dies only once thawed
    find "$DELEG" -name cgroup.freeze -exec sh -c 'for f; do echo 0 >"$f"; done' sh {} + 2>/dev/null
    while read -r pid; do
      kill -9 "$pid" 2>/dev/null
      left=1
    done < <(find "$DELEG" -name cgroup.procs -exec cat {} + 2>/dev/null)
    [ "$left" = 0 ] && break
    sleep 0.1
    tries=$((tries - 1))
  done
  find "$DELEG" -depth -type d -exec rmdir {} + 2>/dev/null
  [ ! -d "$DELEG" ] || { echo "teardown: $DELEG is left" >&2; return 1; }
}
