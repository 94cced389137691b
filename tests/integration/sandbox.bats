#!/usr/bin/env bats
# `fsrun sandbox` and `fsrun bundle` (design.md, "The Fusion sandbox"): a policy turned into a
# sandbox over a git worktree, observed from inside (what exists, what is writable, the
# environment, the syscalls that fail) and from the host (the commit, the cgroup limits, the audit
# log, and that nothing is left behind).

load helpers
bats_require_minimum_version 1.5.0

setup() {
  requires_root
  requires_fsrun_command sandbox
  requires_host_command git
  requires_host_command jq
  TASK=task-$$-$RANDOM$RANDOM
  DIR=$BATS_TEST_TMPDIR/sbx
  REPO=$DIR/repo
  WT=$DIR/worktree
  POLICY=$DIR/policy.json
  mkdir -p "$DIR"
  git init -q "$REPO"
  git -C "$REPO" config user.email sandbox@example.invalid
  git -C "$REPO" config user.name sandbox
  echo hello >"$REPO/README"
  git -C "$REPO" add README
  git -C "$REPO" commit -qm "first commit"
  git -C "$REPO" worktree add -q -b "$TASK" "$WT"
  write_policy '{"allowNetwork": false, "envAllowlist": ["PATH", "CI"],
                 "cpuLimit": {"maxCores": 1, "maxMs": 60000}, "memoryLimitMb": 512}'
}

teardown() {
  local pid
  for pid in ${BACKGROUND_PIDS:-}; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  [ -n "${LEFTOVER_SLEEP:-}" ] && pkill -f "^sleep $LEFTOVER_SLEEP\$"
  teardown_bundle
  # a failed test must not leave the worktree mounted anywhere before bats removes its tmp dir
  assert_sandbox_gone
}

write_policy() {
  printf '%s\n' "$1" >"$POLICY"
}

# sbx ARGS... -- COMMAND...: `fsrun sandbox` on the worktree with the policy and this test's task id
sbx() {
  fsrun sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" "$@"
}

# wait_for_sleep MARKER: waits (WAIT_MAX_S at most) until `sleep MARKER` runs; fails when it never
# does.
wait_for_sleep() {
  local tries=$((WAIT_MAX_S * 10))
  while [ -z "$(pgrep -f "^sleep $1\$")" ] && [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  [ -n "$(pgrep -f "^sleep $1\$")" ]
}

# Nothing of this test's sandboxes remains: no state or temp dir, mount, cgroup or process.
assert_sandbox_gone() {
  local entry problems=0
  for entry in "$FSRUN_ROOT"/*; do
    [ -e "$entry" ] || continue
    if [[ ${entry##*/} == *"$TASK"* ]]; then
      echo "leftover: $entry" >&2
      problems=1
    fi
  done
  if grep -F -- "$DIR" /proc/self/mountinfo >&2; then
    echo "leftover mount of $DIR" >&2
    problems=1
  fi
  assert_no_leftovers "$TASK" || problems=1
  [ "$problems" = 0 ]
}

# bats test_tags=kernel61
@test "sandbox: the quickstart scenario: a commit in the worktree, cwd, lo only, no home files" {
  run sbx -- /bin/sh -c '
    echo "cwd: $(pwd)"
    echo "change from the sandbox" >> README && git commit -qam "edited in the sandbox" && echo committed
    echo "net: $(ls /sys/class/net | tr "\n" " ")"
    echo "home: $(ls -A "$HOME" | wc -l)"'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"cwd: $WT"* ]]
  [[ $output == *committed* ]]
  [[ $output == *"net: lo "* ]]
  [[ $output == *"home: 0"* ]]
  # the commit is in the repository, seen from the host
  [ "$(git -C "$REPO" log -1 --format=%s "$TASK")" = "edited in the sandbox" ]
  [ "$(git -C "$WT" status --porcelain)" = "" ]
  assert_sandbox_gone
}

@test "sandbox: what the host's git would execute stays read-only (hooks, config, the .git file); commits still work" {
  local before_config
  before_config=$(cat "$REPO/.git/config")
  run sbx -- /bin/sh -c '
    (printf "#!/bin/sh\necho pwned\n" > '"'$REPO/.git/hooks/post-commit'"') 2>/dev/null && echo hook-written || echo hook-refused
    git config core.fsmonitor "echo pwned" 2>/dev/null && echo config-written || echo config-refused
    (echo "gitdir: /tmp/elsewhere" > .git) 2>/dev/null && echo dotgit-written || echo dotgit-refused
    echo again >> README && git commit -qam "second" && echo committed'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = hook-refused ]
  [ "${lines[1]}" = config-refused ]
  [ "${lines[2]}" = dotgit-refused ]
  [ "${lines[3]}" = committed ]
  # from the host: no hook, the config as it was, the commit there
  [ ! -e "$REPO/.git/hooks/post-commit" ]
  [ "$(cat "$REPO/.git/config")" = "$before_config" ]
  [ "$(git -C "$REPO" log -1 --format=%s "$TASK")" = second ]
}

@test "sandbox: on a main checkout (.git a directory) the hooks and config stay read-only too" {
  local before_config
  before_config=$(cat "$REPO/.git/config")
  run fsrun sandbox --policy "$POLICY" --worktree "$REPO" --task-id "$TASK" -- /bin/sh -c '
    (printf "#!/bin/sh\necho pwned\n" > .git/hooks/post-commit) 2>/dev/null && echo hook-written || echo hook-refused
    git config core.fsmonitor "echo pwned" 2>/dev/null && echo config-written || echo config-refused
    echo again >> README && git commit -qam "on main" && echo committed'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = hook-refused ]
  [ "${lines[1]}" = config-refused ]
  [ "${lines[2]}" = committed ]
  [ ! -e "$REPO/.git/hooks/post-commit" ]
  [ "$(cat "$REPO/.git/config")" = "$before_config" ]
}

@test "sandbox: a submodule's hooks, config and .git file stay read-only too" {
  local sub=$DIR/subrepo gitdir
  git init -q "$sub"
  git -C "$sub" -c user.email=s@example.invalid -c user.name=s commit -q --allow-empty -m sub
  git -C "$WT" -c protocol.file.allow=always submodule -q add "$sub" libs/sub
  git -C "$WT" commit -qm "add a submodule"
  # the checkout's git dir, as the host's git will use it (under the linked worktree's git dir)
  gitdir=$(git -C "$WT/libs/sub" rev-parse --absolute-git-dir)
  [ -d "$gitdir/hooks" ]
  run sbx -- /bin/sh -c '
    (printf "#!/bin/sh\necho pwned\n" > '"'$gitdir/hooks/post-checkout'"') 2>/dev/null && echo hook-written || echo hook-refused
    (echo "[core] fsmonitor = echo pwned" >> '"'$gitdir/config'"') 2>/dev/null && echo config-written || echo config-refused
    (echo "gitdir: /tmp/elsewhere" > libs/sub/.git) 2>/dev/null && echo dotgit-written || echo dotgit-refused
    echo more >> README && git commit -qam third && echo committed'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = hook-refused ]
  [ "${lines[1]}" = config-refused ]
  [ "${lines[2]}" = dotgit-refused ]
  [ "${lines[3]}" = committed ]
  [ ! -e "$gitdir/hooks/post-checkout" ]
  ! grep -q pwned "$gitdir/config" || false
}

@test "sandbox: a repository without a hooks directory gets an empty read-only one (no hook can be planted)" {
  rm -rf "$REPO/.git/hooks"
  run sbx -- /bin/sh -c 'mkdir -p '"'$REPO/.git/hooks'"' 2>/dev/null; (printf "#!/bin/sh\n" > '"'$REPO/.git/hooks/pre-commit'"') 2>/dev/null && echo planted || echo refused'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = refused ]
  [ ! -e "$REPO/.git/hooks/pre-commit" ]
}

@test "sandbox: network host keeps the host's network devices (control for lo only)" {
  write_policy '{"allowNetwork": true, "network": "host"}'
  # the host's devices other than lo (compared as a set that other tests' veths may join or leave)
  local before after
  before=$(ls /sys/class/net | grep -vx lo | sort)
  [ -n "$before" ] || skip "the host has no network device but lo"
  run sbx -- /bin/sh -c 'ls /sys/class/net'
  [ "$status" -eq 0 ]
  after=$(ls /sys/class/net | grep -vx lo | sort)
  # every device present before and after the run is seen inside
  for dev in $(comm -12 <(echo "$before") <(echo "$after")); do
    grep -qx "$dev" <<<"$output"
  done
  grep -qx lo <<<"$output"
}

@test "sandbox: paths outside the policy are not there; the parent repo shows only its .git" {
  mkdir -p "$DIR/outside"
  echo secret >"$DIR/outside/file"
  run sbx -- /bin/sh -c "test -e '$DIR/outside/file' && echo visible || echo absent; ls -A '$REPO'"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = absent ]
  [ "${lines[1]}" = .git ]
  [ "${#lines[@]}" -eq 2 ]
}

@test "sandbox: the root is a fresh read-only tmpfs; a run leaves nothing on disk but the shared empty bundle" {
  run sbx -- /bin/sh -c 'stat -f -c %T /; touch /new-file; ls -d /bin/ /lib/ /usr/bin/; /bin/true && echo bin-runs'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = tmpfs ]
  [[ $output == *"/new-file"*"Read-only file system"* ]]
  [[ $output == *bin-runs* ]]
  # what every run shares: an empty root (the mount points were made in the tmpfs), the empty
  # directory, the unreadable file, the egress profile's resolv.conf and root's view of /etc
  # with its record; no config.json (each run's config goes to create in memory)
  [ "$(ls -A "$FSRUN_ROOT/.sandbox-bundle" | sort | tr '\n' ' ')" = "empty etc etc.covers etc.stamps resolv.conf rootfs unreadable " ]
  [ -z "$(find "$FSRUN_ROOT/.sandbox-bundle/rootfs" -mindepth 1)" ]
  [ ! -e "$FSRUN_ROOT/.sandbox" ]
  # the next run reuses it as it is
  local inode
  inode=$(stat -c %i "$FSRUN_ROOT/.sandbox-bundle")
  run sbx -- /bin/true
  [ "$status" -eq 0 ]
  [ "$(stat -c %i "$FSRUN_ROOT/.sandbox-bundle")" = "$inode" ]
  # and makes again what someone removed from it
  rmdir "$FSRUN_ROOT/.sandbox-bundle/rootfs"
  rm -f "$FSRUN_ROOT/.sandbox-bundle/unreadable"
  # (the view of /etc too: a copy removed from it is made again, though the host's is unchanged)
  rm "$FSRUN_ROOT/.sandbox-bundle/etc/passwd"
  run sbx -- /bin/sh -c 'cat /etc/shadow || echo refused; head -n 1 /etc/passwd'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *refused* ]]
  [ "${lines[-1]}" = "$(head -n 1 /etc/passwd)" ]
  [ "$(ls -A "$FSRUN_ROOT/.sandbox-bundle" | sort | tr '\n' ' ')" = "empty etc etc.covers etc.stamps resolv.conf rootfs unreadable " ]
}

@test "sandbox: eight runs at once on a fresh state root: each its own container; one shared bundle made" {
  local i status_i pids=()
  # no shared bundle yet: the runs race to make it
  FSRUN_ROOT=$DIR/fresh-state
  # each waits for a lock the test holds, so that all start at once when it lets go; one that
  # reaches its flock only afterwards goes on at once (at a fifo it would have waited forever)
  exec 9>"$DIR/go"
  flock 9
  for i in 1 2 3 4 5 6 7 8; do
    { flock -s "$DIR/go" true; exec "$FSRUN" --root "$FSRUN_ROOT" sandbox --policy "$POLICY" \
      --worktree "$WT" --task-id "$TASK" --run-id "r$i" -- /bin/sh -c "echo run-$i >out-$i; exit $i"; } \
      9>&- >"$DIR/log-$i" 2>&1 &
    pids+=($!)
  done
  # all eight wait at the lock: a blocked flock shows in /proc/locks as a "->" line on its inode
  local inode
  inode=$(stat -c %i "$DIR/go")
  # shellcheck disable=SC2016 # expanded by that shell
  wait_until sh -c '[ "$(grep -c -- "-> FLOCK .*:$1 " /proc/locks)" -ge 8 ]' sh "$inode"
  flock -u 9
  exec 9>&-
  for i in 1 2 3 4 5 6 7 8; do
    status_i=0
    wait "${pids[i - 1]}" || status_i=$?
    echo "run $i: $status_i: $(cat "$DIR/log-$i")"
    [ "$status_i" -eq "$i" ]
    [ "$(cat "$WT/out-$i")" = "run-$i" ]
  done
  # the bundle was made once and renamed into place: no run's half-made copy is left
  [ "$(ls -A "$FSRUN_ROOT")" = .sandbox-bundle ]
  # nor any run's half-made copy of an /etc file (the view is made under a lock)
  [ "$(ls -A "$FSRUN_ROOT/.sandbox-bundle" | sort | tr '\n' ' ')" = "empty etc etc.covers etc.stamps resolv.conf rootfs unreadable " ]
  [ -z "$(find "$FSRUN_ROOT/.sandbox-bundle/rootfs" -mindepth 1)" ]
}

@test "sandbox --json: 100 runs under CPU load all finish (the init never waits for the runtime's reader thread)" {
  # --json reads the output on a thread; the init is cloned right after it starts. libc's
  # setgroups in the init once waited forever for that thread when it had not run yet (about 1
  # run in 14 under this load).
  local i rc hung=0
  for i in 1 2; do
    sh -c 'while :; do :; done' 3>&- &
    BACKGROUND_PIDS="${BACKGROUND_PIDS:-} $!"
  done
  for i in $(seq 100); do
    rc=0
    timeout -s KILL "$WAIT_MAX_S" "$FSRUN" --root "$FSRUN_ROOT" sandbox --json --policy "$POLICY" \
      --worktree "$WT" --task-id "$TASK" -- /bin/sh -c 'id -u' >/dev/null 2>&1 3>&- || rc=$?
    # one hang is the failure; the next ones would only take as long again
    [ "$rc" = 137 ] && hung=$((hung + 1)) && break
  done
  echo "hung: $hung"
  [ "$hung" -eq 0 ]
}

# OVERLAYS_AT: (sh) defines `overlays_at DIR`: how many cover overlays are mounted at DIR (which
# ends in a space), counted by their upper layers: each a tmpfs of 16 inodes at the same place
# (overlays alone would count the host's own where its root is an overlay, as in the VM)
# shellcheck disable=SC2016 # expanded in the sandbox
OVERLAYS_AT='overlays_at() { grep -c -E "^([^ ]+ ){4}$1.* - tmpfs [^ ]+ [^ ]*nr_inodes=16[, ]" /proc/self/mountinfo; }; '

# SECRET_GID: the group of the host's /etc/shadow (Debian's shadow), which the test's own secret
# files (VAR_NS) get too. The cover tests run their ordinary user in it: such a user can read the
# secret files, so only a cover keeps them from its command; a user who cannot read them gets no
# cover (the kernel refuses them to its command as to itself: caller_needs_cover in sandbox.c).
SECRET_GID=$(stat -c %g /etc/shadow 2>/dev/null || echo 0)
export SECRET_GID

# shadow_probe RUNNER...: which of the host's shadow files the command reads (`read FILE`), how
# many of them are a cover (an empty file of mode 0), and how many cover overlays /etc has
shadow_probe() {
  run "$@" -- /bin/sh -c "$OVERLAYS_AT"'test -s /etc/passwd && echo passwd
    n=0
    for f in /etc/shadow /etc/gshadow /etc/shadow- /etc/gshadow-; do
      cat "$f" >/dev/null 2>&1 && echo "read $f"
      [ "$(stat -c %s:%a "$f" 2>/dev/null)" = 0:0 ] && n=$((n + 1))
    done
    echo "covers $n in $(overlays_at "/etc ")"'
  echo "$output"
}

# bats test_tags=kernel61
@test "sandbox: the host's /etc/shadow, gshadow and their backups are never readable (root and an ordinary user)" {
  [ -f /etc/shadow ] || skip "the host has no /etc/shadow"
  hold_passwd_lock
  requires_host_command setpriv
  local f host_files=0
  for f in /etc/shadow /etc/gshadow /etc/shadow- /etc/gshadow-; do
    [ -f "$f" ] && [ ! -L "$f" ] && host_files=$((host_files + 1))
  done
  # root's /etc is the allowlist: no shadow file there, so nothing to cover
  shadow_probe sbx
  [ "$status" -eq 0 ]
  [ "$output" = $'passwd\ncovers 0 in 0' ]
  run sbx -- cat /etc/shadow
  [[ $output == *"No such file or directory"* ]]
  # an allowedPaths entry of /etc binds the host's over it: then each file is covered (root owns
  # them, and owner permissions need no capability), by one overlay over /etc
  write_policy '{"allowedPaths": ["/etc"]}'
  shadow_probe sbx
  [ "$status" -eq 0 ]
  [ "$output" = "passwd"$'\n'"covers $host_files in 1" ]
  # an ordinary user in the files' group gets the host's /etc: covered too, on both binds, the
  # user's /etc and allowedPaths': each bind carries its own covers, whatever lands over
  give_dir_to_user 1000
  shadow_probe setpriv --reuid 1000 --regid 1000 --groups "$SECRET_GID" env HOME="$DIR/home" \
    "$FSRUN" --root "$DIR/state-1000" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK"
  [ "$status" -eq 0 ]
  [ "$output" = "passwd"$'\n'"covers $host_files in 2" ]
  # one outside it cannot read them: no cover (the user's /etc has no overlay; allowedPaths' bind
  # keeps its overlay view), and its command reads none of them either
  shadow_probe setpriv --reuid 1000 --regid 1000 --clear-groups env HOME="$DIR/home" \
    "$FSRUN" --root "$DIR/state-1000" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK"
  [ "$status" -eq 0 ]
  [ "$output" = "passwd"$'\n'"covers 0 in 1" ]
}

# read_secrets PATH...: runs the sandbox (policy already written) and reads each PATH's shadow and
# gshadow; prints what it could read
read_secrets() {
  local d script=""
  for d in "$@"; do
    script+="for f in '$d/shadow' '$d/gshadow' '$d/shadow-' '$d/gshadow-'; do [ -e \"\$f\" ] || continue; echo \"probe \$f\"; cat \"\$f\" 2>/dev/null && echo \"READ \$f\"; done; "
  done
  sbx -- /bin/sh -c "$script true"
}

@test "sandbox: no spelling of /etc in allowedPaths, nor a symlink to it, shows the host's /etc/shadow" {
  [ -f /etc/shadow ] || skip "the host has no /etc/shadow"
  hold_passwd_lock
  ln -s /etc "$DIR/etclink"
  local spelling
  # the covers follow the bind's real source: every spelling names the same directory
  for spelling in /etc /etc/ //etc /etc/. /etc//. "$DIR/etclink" "$DIR/etclink/"; do
    write_policy "{\"allowedPaths\": [\"$spelling\"]}"
    run read_secrets /etc "$spelling"
    echo "$spelling: $output"
    [ "$status" -eq 0 ]
    [[ $output == *"probe "*shadow* ]]
    [[ $output != *READ* ]]
    [[ $output != *"root:"* ]]
  done
}

@test "sandbox: an ordinary user's symlink to /etc in allowedPaths has its shadow files covered" {
  [ -f /etc/shadow ] || skip "the host has no /etc/shadow"
  hold_passwd_lock
  requires_host_command setpriv
  local uid=1000
  give_dir_to_user "$uid"
  ln -s /etc "$DIR/etclink"
  write_policy "{\"allowedPaths\": [\"$DIR/etclink/\"]}"
  # the host's file is root's, group shadow, which the user is in here: covered in both places
  run setpriv --reuid "$uid" --regid "$uid" --groups "$SECRET_GID" env HOME="$DIR/home" \
    "$FSRUN" --root "$DIR/user-state" sandbox --policy "$POLICY" --worktree "$WT" \
    --task-id "$TASK" -- /bin/sh -c \
    "$OVERLAYS_AT echo \$((\$(overlays_at '/etc ') + \$(overlays_at '$DIR/etclink '))); cat '$DIR/etclink/shadow'"
  echo "$output"
  [[ $output != *"root:"* ]]
  [ "${lines[0]}" = 2 ]
}

# covered_probe RUNNER... -- PATH...: the sandbox (the policy written, RUNNER its runner: `sbx` or
# a setpriv line ending in the binary's options) shows each PATH as what? `PATH covered` when it is
# a cover (an empty file of mode 0: no host's secret file is) and cannot be read, `PATH absent`
# when it is not there at all (root's /etc over a bind of /), `PATH SHOWN` when the command reads
# it, `PATH unreadable` when it is the host's file, which the command cannot read
covered_probe() {
  local script='' p
  local runner=()
  while [ "$1" != -- ]; do
    runner+=("$1")
    shift
  done
  shift
  for p in "$@"; do
    script+="if [ ! -e '$p' ] && [ ! -L '$p' ]; then echo '$p absent'; elif cat '$p' >/dev/null 2>&1; then echo '$p SHOWN'; elif [ \"\$(stat -L -c %s:%a '$p')\" = 0:0 ]; then echo '$p covered'; else echo '$p unreadable'; fi; "
  done
  "${runner[@]}" -- /bin/sh -c "$script"
}

# check_covered_cases: for each of COVER_CASES (`POLICY-KEY POLICY-PATH|PATH...`), a sandbox with
# that one policy path, run by the prefix COVER_NS (an array, may be empty), as root and as uid
# 1000 in SECRET_GID, shows each PATH as the cover file (covered_probe), never the host's (the
# user: but a file it cannot read); as root a PATH may be absent instead where ROOT_ABSENT_OK=1
# (root's /etc is its allowlist's tmpfs over a bind of /)
check_covered_cases() {
  local uid=1000 spec policy paths
  mkdir -p "$DIR/home"
  give_dir_to_user "$uid"
  # the links the cases name stay root's: the host admin's (another uid's link is refused)
  find "$DIR" -maxdepth 1 -type l -exec chown -h 0:0 {} +
  for spec in "${COVER_CASES[@]}"; do
    policy=${spec%%|*}
    paths=${spec#*|}
    write_policy "{\"${policy%% *}\": [\"${policy#* }\"]}"
    # shellcheck disable=SC2086 # PATHS: one word each
    run covered_probe "${COVER_NS[@]}" "$FSRUN" --root "$FSRUN_ROOT" sandbox \
      --policy "$POLICY" --worktree "$WT" --task-id "$TASK" -- $paths
    echo "root, $policy: $output"
    [ "$status" -eq 0 ]
    [[ $output == *covered* || ($ROOT_ABSENT_OK = 1 && $output == *absent*) ]]
    [[ $output != *SHOWN* ]]
    [[ $output != *unreadable* ]]
    [[ $ROOT_ABSENT_OK = 1 || $output != *absent* ]]
    # shellcheck disable=SC2086
    run covered_probe "${COVER_NS[@]}" setpriv --reuid "$uid" --regid "$uid" \
      --groups "$SECRET_GID" env HOME="$DIR/home" "$FSRUN" --root "$DIR/state-$uid" sandbox \
      --policy "$POLICY" --worktree "$WT" --task-id "$TASK" -- $paths
    echo "uid $uid, $policy: $output"
    [ "$status" -eq 0 ]
    [[ $output != *SHOWN* ]]
    # a file not even its group may read (pam's opasswd, 0600) needs no cover for the user
    [[ $output == *covered* || $output == *"opasswd unreadable"* ]]
  done
}

@test "sandbox: the shadow files stay covered through .., a bind of /, a link to / or to the file (root and an ordinary user)" {
  [ -f /etc/shadow ] || skip "the host has no /etc/shadow"
  hold_passwd_lock
  requires_host_command setpriv
  ln -s / "$DIR/rootlink"
  ln -s /etc/shadow "$DIR/shadowlink"
  COVER_CASES=("allowedPaths /tmp/../etc|/etc/shadow /etc/gshadow"
    "allowedPaths /usr/./../etc/|/etc/shadow"
    "allowedPaths $DIR/rootlink|$DIR/rootlink/etc/shadow $DIR/rootlink/etc/gshadow"
    "allowedPaths /|/etc/shadow /etc/gshadow"
    "allowedPaths $DIR/shadowlink|$DIR/shadowlink")
  # (a link in the worktree is refused: "a policy path through a link ... is refused" below)
  COVER_NS=()
  ROOT_ABSENT_OK=1
  check_covered_cases
}

# VAR_KEEP: the dirs right below /var that hold the tree, fsrun, its state or this run's files (a
# tree cloned into /var/tmp), which VAR_NS binds back over its tmpfs so that they stay reachable
VAR_KEEP=$(for p in "$FSRUN_SRCDIR" "$FSRUN" "${FSRUN_SANITIZER_LOG_DIR:-}" "$BATS_RUN_TMPDIR" \
  "$FSRUN_ROOT"; do
  p=$(realpath -m -- "$p") && [[ $p == /var/?* ]] && p=${p#/var/} && echo "${p%%/*}"
done | sort -u | tr '\n' ' ')

# VAR_NS CMD...: CMD in a private mount namespace whose /var is a tmpfs holding Debian's daily
# backups of the shadow files as its passwd cron job leaves them (/var/backups/shadow.bak and
# gshadow.bak, root's), here mode 0640 in SECRET_GID (so that the tests' ordinary user, in that
# group, could read them but for a cover), and VAR_KEEP's dirs of the host's /var. Nothing is
# written to the host's /var.
VAR_NS=(unshare -m sh -c 'set -e
  mount --make-rprivate /
  exec 8</var
  mount -t tmpfs -o mode=755 tmpfs /var
  for top in $1; do mkdir "/var/$top" && mount -c --rbind "/proc/self/fd/8/$top" "/var/$top"; done
  exec 8<&-
  shift
  mkdir -m 755 /var/backups
  umask 077
  echo "root:fsrun-test-backup-hash:19000:0:99999:7:::" >/var/backups/shadow.bak
  echo "root:fsrun-test-gbackup-hash::" >/var/backups/gshadow.bak
  chgrp "$SECRET_GID" /var/backups/shadow.bak /var/backups/gshadow.bak
  chmod 640 /var/backups/shadow.bak /var/backups/gshadow.bak
  exec "$@"' sh "$VAR_KEEP")

@test "sandbox: Debian's /var/backups/shadow.bak and gshadow.bak and pam's /etc/security/opasswd are covered wherever a bind shows them (root and an ordinary user)" {
  requires_host_command setpriv
  COVER_CASES=("allowedPaths /var|/var/backups/shadow.bak /var/backups/gshadow.bak"
    "allowedPaths /var/backups|/var/backups/shadow.bak /var/backups/gshadow.bak"
    "allowedPaths /var/backups/shadow.bak|/var/backups/shadow.bak")
  # pam_pwhistory's old hashes, where the host has the file (never made by this test: /etc)
  [ -f /etc/security/opasswd ] && COVER_CASES+=("allowedPaths /etc|/etc/security/opasswd"
    "allowedPaths /etc/security|/etc/security/opasswd")
  COVER_NS=("${VAR_NS[@]}")
  ROOT_ABSENT_OK=0
  check_covered_cases
}

# bats test_tags=kernel61
@test "sandbox: where overlayfs refuses a directory (an ordinary user's, with a mount below it), its secret files are covered all the same (root and an ordinary user)" {
  requires_host_command setpriv
  COVER_CASES=("allowedPaths /var|/var/backups/shadow.bak /var/backups/gshadow.bak"
    "allowedPaths /var/backups|/var/backups/shadow.bak /var/backups/gshadow.bak")
  # the user's binds are recursive: overlayfs refuses a layer with a (locked) mount below it, and
  # each file gets a bind over it instead; root's binds show no mount below, so it gets the overlay
  # shellcheck disable=SC2016 # expanded in the namespace
  COVER_NS=("${VAR_NS[@]}" sh -c 'mkdir /var/backups/sub && mount -t tmpfs tmpfs /var/backups/sub &&
    exec "$@"' sh)
  ROOT_ABSENT_OK=0
  check_covered_cases
}

# the host's change rename_probe makes by default: a new file renamed over shadow.bak, as useradd
# and passwd replace /etc/shadow, and over `other` (never looked at before), and `made` made
RENAME_FILES='umask 022
  echo "root:fsrun-test-renamed-hash:19001:0:99999:7:::" >/var/backups/shadow.bak.new
  mv -f /var/backups/shadow.bak.new /var/backups/shadow.bak
  echo "other, renamed in" >/var/backups/other.new
  mv -f /var/backups/other.new /var/backups/other
  echo "made meanwhile" >/var/backups/made'

# rename_probe RUNNER...: in VAR_NS, a sandbox (RUNNER its runner, ending in the binary's options)
# looks at /var/backups/shadow.bak, then waits (fifos in the worktree) while the host makes the
# change PROBE_CHANGE (default RENAME_FILES); then it looks again. The new files are readable by
# anyone, so that only a cover keeps them out. Prints what the command saw.
rename_probe() {
  # shellcheck disable=SC2016 # expanded in the sandbox
  local inside='f=/var/backups/shadow.bak
    cat "$f" 2>/dev/null && echo READ-BEFORE
    echo >ready
    read -r x <go
    cat "$f" 2>/dev/null || echo "shadow.bak unreadable"
    stat -c "shadow.bak size %s mode %a" "$f"
    cat /var/backups/other /var/backups/made 2>&1 || true'
  # shellcheck disable=SC2016 # expanded in the namespace
  local host='"$@" -- /bin/sh -c "$0" &
    pid=$!
    timeout 60 cat ready >/dev/null || echo "the command never got ready"
    sh -ec "$PROBE_CHANGE"
    timeout 60 sh -c "echo >go"
    wait "$pid"'
  (cd "$WT" && PROBE_CHANGE=${PROBE_CHANGE:-$RENAME_FILES} "${VAR_NS[@]}" \
    sh -c "echo 'other, before' >/var/backups/other; $host" "$inside" "$@")
}

# probe_as_both PATH: rename_probe with a policy of allowedPaths [PATH], as root and then as uid
# 1000 in SECRET_GID (the fifos in the worktree, the test's dir given to that user), their outputs in ROOT_OUT
# and USER_OUT; each showed the cover (size 0, mode 0) and none of the host's hashes
probe_as_both() {
  local uid=1000 out
  write_policy "{\"allowedPaths\": [\"$1\"]}"
  rm -f "$WT/ready" "$WT/go"
  mkfifo -m 666 "$WT/ready" "$WT/go"
  ROOT_OUT=$(rename_probe "$FSRUN" --root "$FSRUN_ROOT" sandbox --policy "$POLICY" --worktree "$WT" \
    --task-id "$TASK")
  USER_OUT=$(rename_probe setpriv --reuid "$uid" --regid "$uid" --groups "$SECRET_GID" env HOME="$DIR/home" \
    "$FSRUN" --root "$DIR/state-$uid" sandbox --policy "$POLICY" --worktree "$WT" \
    --task-id "$TASK")
  echo "root, $1: $ROOT_OUT"
  echo "uid $uid, $1: $USER_OUT"
  for out in "$ROOT_OUT" "$USER_OUT"; do
    [[ $out != *fsrun-test* && $out != *READ* && $out != *"never got ready"* ]] || return 1
    [[ $out == *"shadow.bak unreadable"*"shadow.bak size 0 mode 0"* ]] || return 1
  done
}

@test "sandbox: a cover holds when the host renames a new file over the covered one while the command runs (root and an ordinary user)" {
  requires_host_command setpriv
  local path
  mkdir -p "$DIR/home"
  give_dir_to_user 1000
  # the bind's directory holds the file, or a directory above does, or the bind is the file itself
  for path in /var/backups /var /var/backups/shadow.bak; do
    probe_as_both "$path"
    # what else the host changes still shows (allowedPaths of the file itself binds no other)
    [[ $path == *.bak || $ROOT_OUT == *"other, renamed in"*"made meanwhile"* ]]
    [[ $path == *.bak || $USER_OUT == *"other, renamed in"*"made meanwhile"* ]]
  done
}

# review20 D: the host replaces the covered *directory* (renamed away, a new one made in its place
# with a new, world-readable shadow.bak). An allowedPaths directory is one overlay at the bind's
# root whose layer holds backups/shadow.bak: names are looked up from there, so the new directory's
# file is covered too (with the overlay on /var/backups itself, the mount went with the old
# directory and the new file showed). A bind of /var/backups itself sits on the old directory.
@test "sandbox: a cover holds when the host replaces the covered directory while the command runs (root and an ordinary user)" {
  requires_host_command setpriv
  local path
  mkdir -p "$DIR/home"
  give_dir_to_user 1000
  # shellcheck disable=SC2016 # expanded in the namespace
  PROBE_CHANGE='mv /var/backups /var/backups.old
    mkdir -m 755 /var/backups
    umask 022
    echo "root:fsrun-test-replaced-dir-hash:19002:0:99999:7:::" >/var/backups/shadow.bak'
  for path in /var /var/backups; do
    probe_as_both "$path"
  done
}

# swap_race COVER RUNNER...: SWAP_RUNS (40) sandboxes (RUNNER its runner, ending in the binary's options) look
# at the shadow file under both names of the swapped pair, $WT/swap and $WT/swap-link, while a
# loop exchanges them; prints a line a run: for each name, `READ` (the host's content), `SHOWN`
# (the host's file, unreadable but not covered), `covered` (the cover file COVER), `absent`; or
# `failed` where the set-up refused (the source was replaced between the check and the bind)
swap_race() {
  local cover=$1 i
  shift
  # shellcheck disable=SC2016 # expanded in the sandbox
  local script='for f in "$1/swap/shadow" "$1/swap-link/shadow"; do
      id=$(stat -L -c %d:%i "$f" 2>/dev/null)
      if grep -q "^root:" "$f" 2>/dev/null; then echo READ
      elif [ "$id" = "$2" ]; then echo SHOWN
      elif [ "$id" = "$3" ]; then echo covered
      else echo absent; fi
    done | tr "\n" " "; echo'
  for i in $(seq "${SWAP_RUNS:-40}"); do
    "$@" -- /bin/sh -c "$script" sh "$WT" "$(stat -c %d:%i /etc/shadow)" "$cover" 2>/dev/null ||
      echo failed
  done
}

@test "sandbox: a path the policy names, swapped between a directory and a link to /etc while sandboxes start, never shows /etc/shadow (root and an ordinary user)" {
  [ -f /etc/shadow ] || skip "the host has no /etc/shadow"
  hold_passwd_lock
  requires_host_command perl
  requires_host_command setpriv
  local uid=1000 swapper root_runs user_runs renameat2
  case $(uname -m) in
    x86_64) renameat2=316 ;;
    aarch64) renameat2=276 ;;
    *) skip "renameat2's system call number here is not known to this test" ;;
  esac
  mkdir -p "$DIR/home" "$WT/swap"
  ln -s /etc "$WT/swap-link"
  give_dir_to_user "$uid"
  write_policy "{\"allowedPaths\": [\"$WT/swap\"]}"
  # the user in /etc/shadow's group: it could read the file but for the cover
  local user=(setpriv --reuid "$uid" --regid "$uid" --groups "$SECRET_GID" env HOME="$DIR/home"
    "$FSRUN" --root "$DIR/state-$uid" sandbox --policy "$POLICY" --worktree "$WT"
    --task-id "$TASK")
  # the cover files, made by a first run each, before anything is swapped
  sbx -- /bin/true
  "${user[@]}" -- /bin/true
  # another sandbox over the worktree could do this: one renameat2(RENAME_EXCHANGE) each time, so
  # that the path is always there, a directory or a link to /etc. (80 runs against a busy loop:
  # how long this takes depends on the load; what it asserts does not depend on timing.)
  perl -e '($n, $a, $b) = @ARGV; while (1) { syscall($n, -100, $a, -100, $b, 2) == 0 or die "$!" }' \
    "$renameat2" "$WT/swap" "$WT/swap-link" &
  swapper=$!
  BACKGROUND_PIDS=$swapper
  root_runs=$(swap_race "$(stat -c %d:%i "$FSRUN_ROOT/.sandbox-bundle/unreadable")" sbx)
  user_runs=$(swap_race "$(stat -c %d:%i "$DIR/state-$uid/.sandbox-bundle/unreadable")" \
    "${user[@]}")
  # the loop dies on its first failed exchange: then the later runs raced nothing
  kill -0 "$swapper"
  kill "$swapper"
  wait "$swapper" || true
  BACKGROUND_PIDS=
  echo "root:"$'\n'"$(sort <<<"$root_runs" | uniq -c)"
  echo "user:"$'\n'"$(sort <<<"$user_runs" | uniq -c)"
  [[ $root_runs != *READ* && $root_runs != *SHOWN* ]]
  [[ $user_runs != *READ* && $user_runs != *SHOWN* ]]
  # a refusal is fine (the source changed under the set-up), and under load (ASan) every raced run
  # may be one; that the runs look at all is shown by one more of each with the swap stopped and
  # the path a directory again: it runs and sees the shadow file covered or absent
  [ ! -L "$WT/swap" ] || perl -e 'syscall($ARGV[0], -100, $ARGV[1], -100, $ARGV[2], 2) == 0 or die "$!"' \
    "$renameat2" "$WT/swap" "$WT/swap-link"
  [ -d "$WT/swap" ]
  [ ! -L "$WT/swap" ]
  root_runs=$(SWAP_RUNS=1 swap_race "$(stat -c %d:%i "$FSRUN_ROOT/.sandbox-bundle/unreadable")" sbx)
  user_runs=$(SWAP_RUNS=1 swap_race "$(stat -c %d:%i "$DIR/state-$uid/.sandbox-bundle/unreadable")" \
    "${user[@]}")
  echo "stopped: root: $root_runs; user: $user_runs"
  [[ $root_runs != failed && $root_runs != *READ* && $root_runs != *SHOWN* ]]
  [[ $user_runs != failed && $user_runs != *READ* && $user_runs != *SHOWN* ]]
}

# refused_probe RUNNER... : runs the sandbox (policy written) with a command that would print the
# secret fixture and make a marker; prints the status, then stderr's lines
refused_probe() {
  run --separate-stderr "$@" -- /bin/sh -c "cat '$DIR/private/secret' /etc/security/opasswd; touch '$DIR/ran'"
  echo "status $status"
  printf '%s\n' "$stderr"
}

@test "sandbox: a policy path through a link in the worktree (to /etc, to /root, dangling, midway) is refused, 125, naming the field (root and an ordinary user)" {
  requires_host_command setpriv
  local uid=1000 spec field path out
  mkdir -p "$DIR/home" "$DIR/private" "$DIR/outside" "$WT/real"
  echo root-only-secret >"$DIR/private/secret"
  chmod 600 "$DIR/private/secret"
  # links the command could have left in the worktree (or in a writablePaths entry)
  ln -s /etc "$WT/etclink"
  ln -s /root "$WT/rootlink"
  ln -s "$DIR/private" "$WT/privlink"
  ln -s /nonexistent-fsrun-test "$WT/dangling"
  ln -s "$DIR" "$WT/real/mid"
  ln -s "$DIR/outside" "$WT/outlink"
  # a link the host's admin made outside the trees the command writes stays allowed (root's, in
  # root's directory: before the directory is the user's)
  ln -s "$DIR/private" "$DIR/adminlink"
  write_policy "{\"allowedPaths\": [\"$DIR/adminlink\"]}"
  run sbx -- ls "$DIR/adminlink/"
  [ "$status" -eq 0 ]
  [ "$output" = secret ]
  give_dir_to_user "$uid"
  local cases=("allowedPaths $WT/etclink" "allowedPaths $WT/rootlink/" "allowedPaths $WT/privlink"
    "allowedPaths $WT/dangling" "allowedPaths $WT/real/mid/private" "writablePaths $WT/etclink/"
    "writablePaths $WT/outlink/made")
  for spec in "${cases[@]}"; do
    field=${spec%% *}
    path=${spec#* }
    write_policy "{\"$field\": [\"$path\"]}"
    out=$(refused_probe sbx)
    echo "root, $spec: $out"
    [ "${out%%$'\n'*}" = "status 125" ]
    [[ $out == *"policy: $field[0]: \`${path%/}\` passes through a symbolic link in \`$WT\`"* ]]
    [[ $out != *root-only* ]]
    [ "$(grep -c . <<<"$out")" = 2 ]
    out=$(refused_probe setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home" \
      "$FSRUN" --root "$DIR/state-$uid" sandbox --policy "$POLICY" --worktree "$WT" \
      --task-id "$TASK")
    echo "uid $uid, $spec: $out"
    [ "${out%%$'\n'*}" = "status 125" ]
    [[ $out == *"policy: $field[0]: \`${path%/}\` passes through a symbolic link in \`$WT\`"* ]]
    [ ! -e "$DIR/ran" ]
    [ ! -e "$DIR/outside/made" ]
  done
}

# shared_link OWNER TARGET: $DIR/shared/cache, a link to TARGET owned by uid OWNER in a directory
# anyone may write (sticky, as /tmp)
shared_link() {
  mkdir -p "$DIR/shared"
  chmod 1777 "$DIR/shared"
  rm -f "$DIR/shared/cache"
  ln -s "$2" "$DIR/shared/cache"
  chown -h "$1:$1" "$DIR/shared/cache"
}

@test "sandbox: a policy path through another user's link in a shared sticky directory is refused, 125, naming the entry; the caller's own link is followed (root and an ordinary user)" {
  requires_host_command setpriv
  local uid=1000 other=4343 field out
  mkdir -p "$DIR/rootdir" "$DIR/home"
  echo root-only-secret >"$DIR/rootdir/secret"
  chmod 600 "$DIR/rootdir/secret"
  for field in writablePaths allowedPaths; do
    shared_link "$other" "$DIR/rootdir"
    write_policy "{\"$field\": [\"$DIR/shared/cache\"]}"
    run --separate-stderr sbx -- /bin/sh -c "cat '$DIR/shared/cache/secret'; echo planted >'$DIR/shared/cache/planted'"
    echo "root, $field: $status $output $stderr"
    [ "$status" -eq 125 ]
    [ "$stderr" = "fsrun: policy: $field[0]: \`$DIR/shared/cache\` is reached through \`$DIR/shared/cache\`, owned by uid $other: whoever can change it decides what the sandbox binds; name a path whose directories and links only this user and root own" ]
    [[ $output != *root-only* ]]
    [ "$(ls "$DIR/rootdir")" = secret ]
    # the caller's own link there is followed
    shared_link 0 "$DIR/rootdir"
    run sbx -- /bin/sh -c "cat '$DIR/shared/cache/secret'"
    [ "$status" -eq 0 ]
    [ "$output" = root-only-secret ]
  done
  give_dir_to_user "$uid"
  mkdir "$DIR/userdir"
  chown "$uid:$uid" "$DIR/userdir"
  for field in writablePaths allowedPaths; do
    shared_link "$other" "$DIR/userdir"
    write_policy "{\"$field\": [\"$DIR/shared/cache\"]}"
    run --separate-stderr sbx_as_user "$uid" -- /bin/sh -c "echo planted >'$DIR/shared/cache/planted'"
    echo "uid $uid, $field: $status $output $stderr"
    [ "$status" -eq 125 ]
    [[ $stderr == *"policy: $field[0]: \`$DIR/shared/cache\` is reached through \`$DIR/shared/cache\`, owned by uid $other: "* ]]
    [ "$(grep -c . <<<"$stderr")" = 1 ]
    [ -z "$(ls "$DIR/userdir")" ]
    shared_link "$uid" "$DIR/userdir"
    run sbx_as_user "$uid" -- /bin/sh -c "ls '$DIR/shared/cache/'"
    echo "uid $uid, own link, $field: $status $output"
    [ "$status" -eq 0 ]
    [ -z "$output" ]
  done
}

# race_fixture OWNER_DIR TARGET: uid 4343 (another user) owns OWNER_DIR, a git repository `cache`
# in it and a link `x` -> TARGET (a directory of the caller's it must never reach)
race_fixture() {
  mkdir -p "$1"
  git init -q "$1/cache"
  git -C "$1/cache" -c user.email=u@example.invalid -c user.name=u commit -q --allow-empty -m user
  ln -s "$2" "$1/x"
  chown -R 4343:4343 "$1"
  chown -h 4343:4343 "$1/x"
  make_traversable "$1"
}

# race_runs RUNNER...: SWAP_RUNS (30) sandboxes each with writablePaths, allowedPaths, a missing
# writablePaths entry below it and --worktree naming $OWN/cache while the swapper runs; every output
# line appended to $DIR/race-out
race_runs() {
  local field i
  for field in writablePaths allowedPaths; do
    write_policy "{\"$field\": [\"$OWN/cache\"]}"
    for i in $(seq "${SWAP_RUNS:-30}"); do
      "$@" --worktree "$WT" -- /bin/sh -c "cat '$OWN/cache/secret'; echo pwn >'$OWN/cache/PWN-$field-$i'" \
        >>"$DIR/race-out" 2>/dev/null || true
    done
  done
  # a missing entry is made (mkdir -p) before the bind: never where the link leads
  for i in $(seq "${SWAP_RUNS:-30}"); do
    write_policy "{\"writablePaths\": [\"$OWN/cache/PWN-made-$i/sub\"]}"
    "$@" --worktree "$WT" -- /bin/true >>"$DIR/race-out" 2>/dev/null || true
  done
  write_policy '{}'
  for i in $(seq "${SWAP_RUNS:-30}"); do
    "$@" --worktree "$OWN/cache" -- /bin/sh -c "cat secret .git/config; ls .git/hooks; echo pwn >PWN-wt-$i
      git -c user.email=p@example.invalid -c user.name=p commit -q --allow-empty -m pwn-$i" \
      >>"$DIR/race-out" 2>/dev/null || true
  done
}

# repo_secrets REPO WHOSE: REPO gets a secret file (committed), a config key and a hook whose
# names or contents say WHOSE-only-
repo_secrets() {
  echo "$2-only-secret" >"$1/secret"
  chmod 600 "$1/secret"
  git -C "$1" add secret
  git -C "$1" -c user.email=r@example.invalid -c user.name=r commit -q -m "$2"
  git -C "$1" config fsrun.marker "$2-only-config"
  echo exit 0 >"$1/.git/hooks/$2-only-hook"
}

# assert_untouched REPO HEAD: from the host: REPO holds its one committed file, nothing else, its
# branch at HEAD; no run printed its secret, its git config or the name of its hook
assert_untouched() {
  echo "runs printed: $(sort "$DIR/race-out" | uniq -c)"
  ls -A "$1"
  [ "$(ls "$1")" = secret ]
  [ -z "$(git -c safe.directory='*' -C "$1" status --porcelain)" ]
  [ "$(git -c safe.directory='*' -C "$1" rev-parse HEAD)" = "$2" ]
  ! grep -e only-secret -e only-config -e only-hook "$DIR/race-out" || false
}

@test "sandbox: writablePaths, allowedPaths, --worktree and bundle --worktree naming another user's directory that it swaps with its link to root's repository: nothing of root's is ever written, read or bound, root's branch never moves (root)" {
  requires_host_command perl
  requires_host_command setpriv
  local rootrepo=$DIR/rootrepo head i ids=() out
  OWN=$DIR/race
  git init -q "$rootrepo"
  repo_secrets "$rootrepo" root
  head=$(git -C "$rootrepo" rev-parse HEAD)
  race_fixture "$OWN" "$rootrepo"
  start_swapper "$OWN"
  race_runs fsrun sandbox --policy "$POLICY" --task-id "$TASK"
  for i in $(seq "${SWAP_RUNS:-30}"); do
    rm -rf "$DIR/bundle"
    fsrun bundle --policy "$POLICY" --worktree "$OWN/cache" --out "$DIR/bundle" -- /bin/true \
      >/dev/null 2>&1 || continue
    jq -r '.annotations | to_entries[] | select(.key | startswith("run.fsrun.mounts.")) |
      .value | fromjson | .sourceId' "$DIR/bundle/config.json" >>"$DIR/bundle-ids"
    jq -r '.mounts[].source' "$DIR/bundle/config.json" >>"$DIR/bundle-sources"
  done
  stop_swapper "$OWN"
  assert_untouched "$rootrepo" "$head"
  # no bundle binds root's repository, by its identity or its path
  ids=(-e "$(stat -c %d:%i "$rootrepo")" -e "$(stat -c %d:%i "$rootrepo/.git")")
  ! grep -qx "${ids[@]}" "$DIR/bundle-ids" 2>/dev/null || false
  ! grep -q "^$rootrepo" "$DIR/bundle-sources" 2>/dev/null || false
  # the runs looked: unraced, each kind binds 4343's directory (an unraced run passes the rest)
  write_policy "{\"allowedPaths\": [\"$OWN/cache\"]}"
  run sbx -- /bin/sh -c "test -d '$OWN/cache/.git' && echo seen"
  [ "$status" -eq 0 ]
  [ "$output" = seen ]
  write_policy '{}'
  run fsrun sandbox --policy "$POLICY" --worktree "$OWN/cache" --task-id "$TASK" -- \
    /bin/sh -c 'cat .git/config; ls .git/hooks'
  [ "$status" -eq 0 ]
  [[ $output == *"[core]"* ]]
  [[ $output != *only-* ]]
  rm -rf "$DIR/bundle"
  fsrun bundle --policy "$POLICY" --worktree "$OWN/cache" --out "$DIR/bundle" -- /bin/true
  out=$(jq -r '.annotations | to_entries[] | .value' "$DIR/bundle/config.json")
  [[ $out == *"\"sourceId\":\"$(stat -c %d:%i "$OWN/cache")\""* ]]
}

@test "sandbox: writablePaths, allowedPaths and --worktree naming another user's directory that it swaps with its link to the caller's own repository: nothing of the caller's is ever written or read, its branch never moves (an ordinary user)" {
  requires_host_command perl
  requires_host_command setpriv
  local uid=1000 userrepo=$DIR/userrepo head
  OWN=$DIR/race
  git init -q "$userrepo"
  repo_secrets "$userrepo" user
  head=$(git -C "$userrepo" rev-parse HEAD)
  mkdir -p "$DIR/home"
  give_dir_to_user "$uid"
  race_fixture "$OWN" "$userrepo"
  start_swapper "$OWN"
  race_runs setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home" \
    "$FSRUN" --root "$DIR/state-$uid" sandbox --policy "$POLICY" --task-id "$TASK"
  stop_swapper "$OWN"
  assert_untouched "$userrepo" "$head"
  write_policy "{\"allowedPaths\": [\"$OWN/cache\"]}"
  run sbx_as_user "$uid" -- /bin/sh -c "test -d '$OWN/cache/.git' && echo seen"
  [ "$status" -eq 0 ]
  [ "$output" = seen ]
}

# as_user UID ARGS... -- COMMAND: `fsrun sandbox` as the ordinary user UID (state and home its own)
sbx_as_user() {
  local uid=$1
  shift
  setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home" \
    "$FSRUN" --root "$DIR/state-$uid" sandbox --policy "$POLICY" --worktree "$WT" \
    --task-id "$TASK" "$@"
}

@test "sandbox: a policy path that reaches the worktree by another name (a link above it) still meets the command's links there: refused, 125 (root and an ordinary user)" {
  requires_host_command setpriv
  local uid=1000 spec field path out
  # fakeetc stands for /etc: a root-only file the command must never read, a dir it must not write
  mkdir -p "$DIR/home" "$DIR/fakeetc"
  echo root-only-secret >"$DIR/fakeetc/secret"
  chmod 600 "$DIR/fakeetc/secret"
  # the operator's other name for the worktree (~/code -> /data/code); the command's link in it
  ln -s "$WT" "$DIR/wtlink"
  ln -s "$DIR/fakeetc" "$WT/e"
  local cases=("allowedPaths $DIR/wtlink/e" "allowedPaths $DIR/wtlink/e/secret"
    "writablePaths $DIR/wtlink/e" "writablePaths $DIR/wtlink/./e/new")
  for spec in "${cases[@]}"; do
    field=${spec%% *}
    path=${spec#* }
    write_policy "{\"$field\": [\"$path\"]}"
    run --separate-stderr sbx -- /bin/sh -c "cat '$path' '$path/secret'; touch '$path/pwned' '$DIR/ran'"
    echo "root, $spec: $status $output $stderr"
    [ "$status" -eq 125 ]
    [[ $stderr == *"policy: $field[0]: \`$WT/e"*"\` passes through a symbolic link in \`$WT\`"* ]]
    [ "$(grep -c . <<<"$stderr")" = 1 ]
    [[ $output != *root-only* ]]
    [ ! -e "$DIR/ran" ]
    [ "$(ls "$DIR/fakeetc")" = secret ]
  done
  give_dir_to_user "$uid"
  for spec in "${cases[@]}"; do
    field=${spec%% *}
    path=${spec#* }
    write_policy "{\"$field\": [\"$path\"]}"
    run --separate-stderr sbx_as_user "$uid" -- /bin/sh -c "touch '$path/pwned' '$DIR/ran'"
    echo "uid $uid, $spec: $status $output $stderr"
    [ "$status" -eq 125 ]
    [[ $stderr == *"policy: $field[0]: \`$WT/e"*"\` passes through a symbolic link in \`$WT\`"* ]]
    [ ! -e "$DIR/ran" ]
    [ "$(ls "$DIR/fakeetc")" = secret ]
  done
}

# A writablePaths entry that is the repository's main checkout by another name (a link): before
# review26 D6 it was bound with the git dir's protections; it is another checkout of the worktree's
# repository, whose files the host's git runs, so it is refused now, by any name (125, one line
# naming the entry and the checkout), and the command never runs.
@test "sandbox: a writablePaths entry that is the repository by another name is refused as another checkout (root and an ordinary user)" {
  requires_host_command setpriv
  local uid=1000 config_before who
  mkdir -p "$DIR/home"
  ln -s "$REPO" "$DIR/repolink"
  write_policy "{\"writablePaths\": [\"$DIR/repolink\"]}"
  config_before=$(cat "$REPO/.git/config")
  for who in root user; do
    local cmd="touch '$REPO/made'; printf '[core]\n\tfsmonitor = touch $DIR/pwned\n' >>'$REPO/.git/config'"
    if [ "$who" = root ]; then
      run --separate-stderr sbx -- /bin/sh -c "$cmd"
    else
      give_dir_to_user "$uid"
      run --separate-stderr sbx_as_user "$uid" -- /bin/sh -c "$cmd"
    fi
    echo "$who: $status $output $stderr"
    [ "$status" -eq 125 ]
    # named as the respelled entry (the repository's own path: "Paths the command can re-point")
    [[ $stderr == *"writablePaths[0]: \`"*"\` reaches \`"*"\`, another checkout of the worktree's repository"* ]]
    [ "$(cat "$REPO/.git/config")" = "$config_before" ]
    [ ! -e "$REPO/made" ]
    [ ! -e "$DIR/pwned" ]
  done
}

@test "sandbox: a worktree and policy paths given through a linked parent (/home -> var/home) still work (root and an ordinary user)" {
  requires_host_command setpriv
  local uid=1000 who link=$BATS_TEST_TMPDIR/homelink
  mkdir -p "$DIR/home" "$DIR/data" "$WT/cache"
  echo data-file >"$DIR/data/f"
  ln -s "$DIR" "$link"
  write_policy "{\"allowedPaths\": [\"$link/data\"], \"writablePaths\": [\"$link/worktree/cache\", \"$link/worktree\"]}"
  for who in root user; do
    local cmd="cat '$link/data/f' && echo made >'$WT/cache/$who' && echo top >'$WT/top-$who' && pwd"
    if [ "$who" = root ]; then
      run --separate-stderr fsrun sandbox --policy "$POLICY" --worktree "$link/worktree" \
        --task-id "$TASK" -- /bin/sh -c "$cmd"
    else
      give_dir_to_user "$uid"
      chmod a+x "$BATS_TEST_TMPDIR"
      run --separate-stderr setpriv --reuid "$uid" --regid "$uid" --clear-groups \
        env HOME="$DIR/home" "$FSRUN" --root "$DIR/state-$uid" sandbox --policy "$POLICY" \
        --worktree "$link/worktree" --task-id "$TASK" -- /bin/sh -c "$cmd"
    fi
    echo "$who: $status $output $stderr"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = data-file ]
    [ "${lines[1]}" = "$WT" ]
    [ "$(cat "$WT/cache/$who")" = made ]
    [ "$(cat "$WT/top-$who")" = top ]
  done
}

@test "sandbox: a writablePaths entry that holds the worktree under a bind mount's name is refused, 125; one through it into the worktree meets the command's links (root and an ordinary user)" {
  requires_host_command setpriv
  requires_host_command unshare
  local uid=1000 alias=$BATS_TEST_TMPDIR/alias field path who state
  mkdir -p "$DIR/home" "$DIR/fakeetc" "$alias"
  echo root-only-secret >"$DIR/fakeetc/secret"
  chmod 600 "$DIR/fakeetc/secret"
  ln -s "$DIR/fakeetc" "$WT/e"
  give_dir_to_user "$uid"
  chmod a+x "$BATS_TEST_TMPDIR"
  for who in root user; do
    local runner=""
    [ "$who" = user ] && runner="setpriv --reuid $uid --regid $uid --clear-groups env HOME=$DIR/home"
    # root's state root not in the user's DIR: that user could swap it (state-root-owner.bats)
    state=$BATS_TEST_TMPDIR/state-root
    [ "$who" = user ] && state=$DIR/state-user
    for spec in "writablePaths $alias" "writablePaths $alias/worktree/e" "allowedPaths $alias/worktree/e"; do
      field=${spec%% *}
      path=${spec#* }
      write_policy "{\"$field\": [\"$path\"]}"
      # the bind in a mount namespace of the test's own (the host's mounts stay as they are)
      run --separate-stderr unshare -m --propagation private /bin/sh -c "mount --bind '$DIR' '$alias' &&
        exec $runner '$FSRUN' --root '$state' sandbox --policy '$POLICY' --worktree '$WT' \
        --task-id '$TASK' -- /bin/sh -c \"cat '$path/worktree/e/secret' '$path/secret'; touch '$DIR/ran'\""
      echo "$who, $spec: $status $output $stderr"
      [ "$status" -eq 125 ]
      [ "$(grep -c . <<<"$stderr")" = 1 ]
      if [ "$path" = "$alias" ]; then
        [[ $stderr == *"policy: $field[0]: \`$alias\` holds \`$WT\`, which the sandboxed command writes, under another name"* ]]
      else
        [[ $stderr == *"policy: $field[0]: \`$WT/e\` passes through a symbolic link in \`$WT\`"* ]]
      fi
      [[ $output != *root-only* ]]
      [ ! -e "$DIR/ran" ]
    done
  done
}

@test "bundle: a policy path that reaches the worktree by another name meets the command's links there; the worktree by that name is bound at its own path (root and an ordinary user)" {
  requires_fsrun_command bundle
  requires_host_command setpriv
  local uid=1000 out=$DIR/bundle field who
  mkdir -p "$DIR/home" "$DIR/fakeetc"
  ln -s "$WT" "$DIR/wtlink"
  ln -s "$DIR/fakeetc" "$WT/e"
  for who in root user; do
    local runner=()
    # the links the caller's own (another user's link on the worktree's way is refused)
    if [ "$who" = user ]; then
      give_dir_to_user "$uid"
      runner=(setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home")
    fi
    for field in allowedPaths writablePaths; do
      write_policy "{\"$field\": [\"$DIR/wtlink/e\"]}"
      run --separate-stderr "${runner[@]}" "$FSRUN" bundle --policy "$POLICY" --worktree "$WT" --out "$out" -- /bin/true
      echo "$who, $field: $status $stderr"
      [ "$status" -eq 1 ]
      [[ $stderr == *"policy: $field[0]: \`$WT/e\` passes through a symbolic link in \`$WT\`"* ]]
      [ ! -e "$out/config.json" ]
    done
    write_policy "{\"writablePaths\": [\"$DIR/wtlink\"]}"
    run --separate-stderr "${runner[@]}" "$FSRUN" bundle --policy "$POLICY" --worktree "$DIR/wtlink" --out "$out" -- /bin/true
    echo "$who: $status $stderr"
    [ "$status" -eq 0 ]
    jq -r '.mounts[].destination' "$out/config.json" | grep -qx "$WT"
    run jq -r '.mounts[].destination' "$out/config.json"
    [[ $output != *wtlink* ]]
    rm -rf "$out"
  done
}

@test "sandbox: a path the policy names twice has its shadow files covered on both binds (root and an ordinary user)" {
  [ -f /etc/shadow ] || skip "the host has no /etc/shadow"
  hold_passwd_lock
  requires_host_command setpriv
  local uid=1000 probe
  mkdir -p "$DIR/home"
  give_dir_to_user "$uid"
  ln -s /etc "$DIR/etclink"
  # the second bind lands where its destination leads when it is mounted, which a link swapped in
  # meanwhile can make another place than the first's: so the first keeps its covers too (an
  # overlay over each)
  write_policy "{\"allowedPaths\": [\"$DIR/etclink\", \"$DIR/etclink\"]}"
  probe="$OVERLAYS_AT overlays_at '$DIR/etclink '; cat '$DIR/etclink/shadow'"
  run sbx -- /bin/sh -c "$probe"
  echo "root: $output"
  [ "${lines[0]}" = 2 ]
  [[ $output != *"root:"* ]]
  run setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home" \
    "$FSRUN" --root "$DIR/state-$uid" sandbox --policy "$POLICY" --worktree "$WT" \
    --task-id "$TASK" -- /bin/sh -c "$probe"
  echo "uid $uid: $output"
  [ "${lines[0]}" = 2 ]
  [[ $output != *"root:"* ]]
}

@test "sandbox: writablePaths are writable, allowedPaths read-only (EROFS)" {
  mkdir -p "$DIR/ro" "$DIR/rw"
  echo readable >"$DIR/ro/file"
  write_policy "{\"allowedPaths\": [\"$DIR/ro\"], \"writablePaths\": [\"$DIR/rw\"]}"
  run sbx -- /bin/sh -c "
    cat '$DIR/ro/file'
    echo new > '$DIR/rw/new' && echo rw-ok
    echo x > '$DIR/ro/new' || echo ro-refused"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *readable* ]]
  [[ $output == *rw-ok* ]]
  [[ $output == *"Read-only file system"* ]]
  [[ $output == *ro-refused* ]]
  [ "$(cat "$DIR/rw/new")" = new ]
  [ ! -e "$DIR/ro/new" ]
}

@test "sandbox: envAllowlist filters the environment; PATH and HOME are set" {
  write_policy '{"envAllowlist": ["SBX_ALLOWED"]}'
  SBX_ALLOWED=yes SBX_SECRET=leak run sbx -- /bin/sh -c 'env | sort'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *SBX_ALLOWED=yes* ]]
  [[ $output != *SBX_SECRET* ]]
  [[ $output == *PATH=* ]]
  [[ $output == *"HOME=$HOME"* ]]
}

# dir_to_user UID: the test's files ($DIR) become UID's, reachable by it, for a sandbox run as that
# ordinary user. Returns 1, having changed nothing, when UID may not make a user namespace here.
dir_to_user() {
  setpriv --reuid "$1" --regid "$1" --clear-groups unshare -U true 2>/dev/null || return 1
  make_traversable "$DIR"
  chown -R "$1:$1" "$DIR"
}

# give_dir_to_user UID: dir_to_user, or the test skips (this host's users get no user namespace)
give_dir_to_user() {
  dir_to_user "$1" || skip "an unprivileged user cannot create a user namespace on this host"
}

# pid1_probe AS_UID BIN: what the command learns of pid 1, run by BIN (a copy of fsrun) as AS_UID
# (0: root) with a secret in fsrun's environment that envAllowlist leaves out: how many environ
# entries name it, pid 1's executable, whether a write to it goes through, and how many of pid 1's
# mappings are the runtime's binary. Returns 1, having run nothing, when AS_UID (not root) may not
# make a user namespace here; otherwise the test's files are AS_UID's from then on. BIN is made
# (a copy of $FSRUN) if it is missing.
pid1_probe() {
  local as_uid=$1 bin=$2 runner=()
  [ -e "$bin" ] || cp "$FSRUN" "$bin"
  make_traversable "$DIR"
  if [ "$as_uid" != 0 ]; then
    runner=(setpriv --reuid "$as_uid" --regid "$as_uid" --clear-groups)
    dir_to_user "$as_uid" || return 1
  fi
  run --separate-stderr "${runner[@]}" env HOME="$DIR/home" SBX_SECRET=leak "$bin" \
    --root "$DIR/state-$as_uid" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" \
    -- /bin/sh -c 'tr "\0" "\n" </proc/1/environ | grep -c SBX_SECRET
      readlink /proc/1/exe
      (echo attack >>/proc/1/exe) 2>/dev/null && echo exe-written || echo exe-not-written
      grep -c fsrun-copy /proc/1/maps
      tr "\0" " " </proc/1/cmdline; echo'
  echo "uid $as_uid: $output"
  echo "$stderr"
}

@test "sandbox: pid 1 holds nothing of the runtime: not the caller's environment, memory or binary (root and an ordinary user)" {
  requires_host_command setpriv
  local bin=$BATS_TEST_TMPDIR/fsrun-copy uid
  for uid in 0 1000; do
    pid1_probe "$uid" "$bin" || continue
    [ "$status" -eq 0 ]
    # the caller's environment (/proc/1/environ showed fsrun's whole environment)
    [ "${lines[0]}" = 0 ]
    # pid 1 runs the tiny init from a sealed memfd: no write reaches the binary on disk
    [ "${lines[1]}" = "/memfd:fsrun-init (deleted)" ]
    [ "${lines[2]}" = exe-not-written ]
    [ "${lines[3]}" = 0 ]
    [[ ${lines[4]} =~ ^fsrun-init\ *$ ]]
    cmp "$FSRUN" "$bin"
  done
}

@test "sandbox: no capabilities, no_new_privs and a seccomp filter" {
  run sbx -- /bin/sh -c 'grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"CapEff:"*"0000000000000000"* ]]
  [[ $output == *"CapBnd:"*"0000000000000000"* ]]
  [[ $output == *"NoNewPrivs:"*"1"* ]]
  [[ $output == *"Seccomp:"*"2"* ]]
}

# proc_write_probe UID: from inside a sandbox run by UID (0: root), every file under /proc/sys,
# /proc/irq, /proc/bus and /proc/fs, and /proc/sysrq-trigger, that access(2) says is writable, then
# `---`, then `written F` for each of a few files (one per namespace kind, the global vm, and
# ns_last_pid, mode 0666) whose current value could be written back. The write is of the value
# read, so a hole changes nothing; sysrq-trigger is only opened for writing (appending: no
# truncate that could fail after the open), never written: a key would act on the host.
proc_write_probe() {
  local runner=()
  if [ "$1" != 0 ]; then
    give_dir_to_user "$1"
    runner=(setpriv --reuid "$1" --regid "$1" --clear-groups)
  fi
  run --separate-stderr "${runner[@]}" env HOME="$DIR/home" "$FSRUN" --root "$DIR/state-$1" \
    sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" -- /bin/sh -c '
      find /proc/sys /proc/irq /proc/bus /proc/fs /proc/sysrq-trigger -type f -writable 2>/dev/null | sort
      echo ---
      for f in kernel/ns_last_pid kernel/domainname kernel/shmmax net/core/somaxconn \
        net/ipv4/ip_forward fs/mqueue/msg_max user/max_user_namespaces vm/overcommit_memory; do
        v=$(cat /proc/sys/$f) && (printf "%s\n" "$v" >/proc/sys/$f) 2>/dev/null && echo "written $f"
      done
      [ ! -e /proc/sysrq-trigger ] || { (: >>/proc/sysrq-trigger) 2>/dev/null && echo "opened sysrq-trigger"; }
      echo end'
  echo "uid $1: $output"
  echo "$stderr"
}

# Also in the cgroup v2 VM (the tag): its kernel has /proc/sysrq-trigger, this host's has none.
# bats test_tags=cgroupv2
@test "sandbox: /proc/sys, /proc/irq, /proc/bus, /proc/fs and /proc/sysrq-trigger take no write (root: read-only; an ordinary user: their modes)" {
  requires_host_command setpriv
  [ -e /proc/sysrq-trigger ] ||
    echo "# no /proc/sysrq-trigger on this kernel (CONFIG_MAGIC_SYSRQ): its writes are not tried" >&3
  # root owns these files, and owner permissions need no capability: only the read-only binds
  # stop it (each failing file lists here when they are dropped)
  proc_write_probe 0
  [ "$status" -eq 0 ]
  [ "$output" = $'---\nend' ]
  # an ordinary user's sandbox has no such binds: the files belong to the host's root, unmapped in
  # its user namespace, and the command has no capability, so its modes refuse every write. Only
  # ns_last_pid is mode 0666, and its write needs CAP_CHECKPOINT_RESTORE.
  proc_write_probe 1000
  [ "$status" -eq 0 ]
  [ "$output" = $'/proc/sys/kernel/ns_last_pid\n---\nend' ] || [ "$output" = $'---\nend' ]
}

@test "sandbox: unshare of a user namespace fails with EPERM (and works with seccomp none)" {
  requires_host_command unshare
  run sbx -- unshare -U true
  echo "$output"
  [ "$status" -ne 0 ]
  [[ $output == *"Operation not permitted"* ]]
  # control: without the filter the same command works, so the refusal above is seccomp's
  write_policy '{"seccomp": "none"}'
  run sbx -- unshare -U /bin/sh -c 'echo in-userns'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = in-userns ]
}

@test "sandbox: seccomp names a profile file: its rules apply in place of the default ones" {
  local profile=$DIR/profile.json
  # mkdir fails with ENOTEMPTY (39), a value nothing else would give; unshare is allowed again
  cat >"$profile" <<'EOF'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 39}]}
EOF
  write_policy "{\"seccomp\": \"$profile\"}"
  run sbx -- /bin/sh -c 'mkdir /tmp/x; unshare -U /bin/sh -c "echo in-userns"'
  echo "$output"
  [[ $output == *"not empty"* ]]
  [[ $output == *in-userns* ]]
  [ ! -e "$WT/x" ]
  # a bad policy: exit 125 (the sandbox cannot be set up), one line naming the field, nothing run
  write_policy '{"seccomp": "profile.json"}'
  run sbx -- /bin/sh -c 'echo ran'
  echo "$output"
  [ "$status" -eq 125 ]
  [[ $output == *"policy: seccomp"*"absolute path"* ]]
  [[ $output != *ran* ]]
  write_policy "{\"seccomp\": \"$DIR/missing.json\"}"
  run sbx -- /bin/sh -c 'echo ran'
  [ "$status" -eq 125 ]
  [[ $output == *"policy: seccomp"*"missing.json"* ]]
  echo '{"defaultAction": "SCMP_ACT_ALLOW", "syscals": []}' >"$profile"
  write_policy "{\"seccomp\": \"$profile\"}"
  run sbx -- /bin/sh -c 'echo ran'
  echo "$output"
  [ "$status" -eq 125 ]
  [[ $output == *syscals* ]]
  assert_sandbox_gone
}

# bats test_tags=kernel61
@test "sandbox: without the tiny program pid 1 is fsrun's init from its protected image, the environment zeroed (root and an ordinary user)" {
  requires_host_command setpriv
  local bin=$BATS_TEST_TMPDIR/fsrun-copy uid
  export FSRUN_NO_TINY=1
  for uid in 0 1000; do
    pid1_probe "$uid" "$bin" || continue
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = 0 ]
    [[ ${lines[1]} == /fsrun-copy || ${lines[1]} == "/memfd:fsrun (deleted)" ]]
    [ "${lines[2]}" = exe-not-written ]
    cmp "$FSRUN" "$bin"
  done
}

@test "sandbox: a profile that denies execveat: pid 1 stays the runtime's clone, unreadable and without its environment" {
  local profile=$DIR/profile.json
  # pid 1 cannot become the tiny init (tiny-init.h): it reaps in place
  cat >"$profile" <<'EOF'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["execveat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
EOF
  write_policy "{\"seccomp\": \"$profile\"}"
  SBX_SECRET=leak run sbx -- /bin/sh -c 'readlink /proc/1/exe >/dev/null 2>&1 && echo exe-readable
    { tr "\0" "\n" </proc/1/environ; } 2>/dev/null | grep -c SBX_SECRET; cat /proc/1/comm; exit 5'
  echo "$output"
  [ "$status" -eq 5 ]
  [[ $output != *exe-readable* ]]
  [ "${lines[0]}" = 0 ]
  [ "${lines[1]}" = fsrun-init ]
}

@test "sandbox: a profile file is read once, and what was read is what runs and what the audit hashes" {
  requires_host_command strace
  local profile=$DIR/profile.json
  echo '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 39}]}' >"$profile"
  write_policy "{\"seccomp\": \"$profile\"}"
  # one open: a second read could see another file than the one that was checked
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    run strace -f -qq -e trace=open,openat,openat2 -o "$DIR/trace" \
      "$FSRUN" --root "$FSRUN_ROOT" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" \
      --audit-log "$DIR/audit1.log" -- /bin/sh -c 'mkdir /tmp/x'
  echo "$output"
  [[ $output == *"not empty"* ]]
  [ "$(grep -c "\"$profile\"" "$DIR/trace")" -eq 1 ]
  # same policy file, another profile: another policy hash
  echo '{"defaultAction": "SCMP_ACT_ALLOW"}' >"$profile"
  run sbx --audit-log "$DIR/audit2.log" -- /bin/sh -c 'mkdir /tmp/x && echo made'
  echo "$output"
  [[ $output == *made* ]]
  [ "$(jq -sr '.[0].policyHash' "$DIR/audit1.log")" != "$(jq -sr '.[0].policyHash' "$DIR/audit2.log")" ]
  assert_sandbox_gone
}

@test "sandbox: mount fails with EPERM" {
  # tree not used: the sandboxed command's mount, refused
  run sbx -- /bin/sh -c 'mount -t tmpfs none /tmp; echo "status $?"'
  echo "$output"
  [[ $output == *"status 32"* || $output == *"status 1"* ]]
  [[ $output == *"ermission denied"* || $output == *"not permitted"* ]]
}

@test "sandbox: memoryLimitMb and the default pids limit are in the container's cgroup" {
  write_policy '{"memoryLimitMb": 96}'
  local out=$WT/cgroup release=$WT/release mem_path pids_path
  sbx -- /bin/sh -c "cat /proc/self/cgroup > '$out.tmp'; mv '$out.tmp' '$out'
    while [ ! -e '$release' ]; do sleep 0.05; done" 3>&- &
  BACKGROUND_PIDS=$!
  wait_for_file "$out"
  cat "$out"
  if [ "$(cgroup_mode)" = unified ]; then
    mem_path=/sys/fs/cgroup$(sed -n 's/^0:://p' "$out")
    [ "$(cat "$mem_path/memory.max")" = $((96 * 1024 * 1024)) ]
    [ "$(cat "$mem_path/pids.max")" = 4096 ]
  else
    mem_path=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' "$out")
    pids_path=/sys/fs/cgroup/pids$(sed -n 's/^[0-9]*:pids://p' "$out")
    [ "$(cat "$mem_path/memory.limit_in_bytes")" = $((96 * 1024 * 1024)) ]
    [ "$(cat "$pids_path/pids.max")" = 4096 ]
  fi
  touch "$release"
  wait "$BACKGROUND_PIDS"
  BACKGROUND_PIDS=
  assert_sandbox_gone
}

# the line of /proc/PID/cgroup (given as text) for the v1 hierarchy that carries controller $2
v1_line() { grep -E "^[0-9]+:([^:]*,)?$2(,[^:]*)?:" <<<"$1" || :; }

@test "sandbox: on a v1 or hybrid host its cgroup is made only in the hierarchies it limits or needs" {
  [ "$(cgroup_mode)" != unified ] || skip "cgroup v2: one hierarchy"
  local mine c
  mine=$(cat /proc/self/cgroup)
  run sbx -- cat /proc/self/cgroup
  echo "$output"
  [ "$status" -eq 0 ]
  # memory and pids (the limits), cpuacct (cpuLimit.maxMs): its own
  for c in memory pids cpuacct; do
    [ -n "$(v1_line "$output" "$c")" ]
    [ "$(v1_line "$output" "$c")" != "$(v1_line "$mine" "$c")" ]
  done
  # the others: the caller's cgroup, no directory made and removed there; a one-shot run needs no
  # freezer (its pid namespace ends the tree) and no device allow-list (no node within its reach)
  for c in cpuset blkio freezer devices; do
    [ "$(v1_line "$output" "$c")" = "$(v1_line "$mine" "$c")" ]
  done
  # without a cpuLimit nothing reads or limits the CPU: cpu and cpuacct stay the caller's too
  write_policy '{"memoryLimitMb": 512}'
  run sbx -- cat /proc/self/cgroup
  echo "$output"
  [ "$status" -eq 0 ]
  for c in memory pids; do
    [ "$(v1_line "$output" "$c")" != "$(v1_line "$mine" "$c")" ]
  done
  for c in cpu cpuacct cpuset blkio freezer devices; do
    [ "$(v1_line "$output" "$c")" = "$(v1_line "$mine" "$c")" ]
  done
  # a task container (fsrun bundle) keeps both: `fsrun pause` and exec-git's disarm freeze it
  fsrun bundle --policy "$POLICY" --worktree "$WT" --out "$DIR/bundle" -- true
  [ "$(jq -r '.annotations["run.fsrun.cgroup.v1Controllers"]' "$DIR/bundle/config.json")" = memory,pids,freezer,devices ]
  [ "$(jq -r '.linux.resources.devices[0] | "\(.allow) \(.access)"' "$DIR/bundle/config.json")" = "false rwm" ]
  assert_sandbox_gone
}

# Root's one-shot sandbox runs without a device allow-list in its cgroup (issue 15, session 28):
# nothing else lets its command open a device node (no capability, every mount it reaches `nodev`
# but its own /dev). The host places a block and a character node outside the default list in the
# worktree and in a writablePaths dir, nodes it can open itself; the command tries to open them
# there and through /proc/self/root and /proc/1/root, and to make one in every writable place.
# All refused. A node outside the list on the command's stdin keeps the allow-list: reopening it
# through /proc/self/fd/0 for writing is refused, and the run has a devices cgroup of its own.
@test "sandbox: as root without a device allow-list, no device node outside the default ones opens or is made; one on stdin keeps the list" {
  [ -e /dev/loop0 ] && [ -e /dev/loop-control ] || skip "needs /dev/loop0 and /dev/loop-control"
  local wp=$DIR/wp n mine
  mkdir "$wp"
  write_policy "{\"writablePaths\": [\"$wp\"]}"
  for n in "$WT/blk" "$wp/blk" "$DIR/stdin-blk"; do mknod -m 666 "$n" b 7 0; done
  # /dev/loop-control: not a default, and opened without a capability
  for n in "$WT/chr" "$wp/chr"; do mknod -m 666 "$n" c 10 237; done
  # the host opens them (its /tmp is not nodev here), so only the sandbox can refuse them
  for n in "$WT/blk" "$wp/chr"; do
    (exec 3<"$n") 2>/dev/null || skip "the host cannot open $n here"
  done
  run sbx -- sh -c '
    for n in "$1/blk" "$1/chr" "$2/blk" "$2/chr" "/proc/self/root$1/blk" "/proc/1/root$2/chr"; do
      if (exec 3<"$n") 2>/dev/null; then echo "OPENED $n"; else echo "refused $n"; fi
    done
    for d in /tmp /dev /dev/shm "$1" "$2" "$HOME"; do
      if mknod "$d/made" b 7 0 2>/dev/null; then echo "MADE $d"; else echo "no mknod $d"; fi
    done' sh "$WT" "$wp"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(grep -c '^refused ' <<<"$output")" -eq 6 ]
  [ "$(grep -c '^no mknod ' <<<"$output")" -eq 6 ]
  # a node on stdin: the allow-list stays
  mine=$(cat /proc/self/cgroup)
  run sbx -- sh -c 'if (exec 3<>/proc/self/fd/0) 2>/dev/null; then echo REOPENED; else echo refused; fi
    cat /proc/self/cgroup' <"$DIR/stdin-blk"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = refused ]
  if [ "$(cgroup_mode)" != unified ]; then
    [ -n "$(v1_line "$output" devices)" ]
    [ "$(v1_line "$output" devices)" != "$(v1_line "$mine" devices)" ]
  fi
  assert_sandbox_gone
}

# A pid written to a cgroup.procs takes the kernel's global threadgroup lock: its writer holds
# cgroup_mutex through an RCU grace period (5-14 ms of wall time here) that the runtime's cgroup
# mkdirs and its clone into the cgroup then wait for. The init joins its v1 hierarchies through
# `tasks` and is cloned into the cgroup2 one, so nothing of a run may write one (the watchdog's
# old no-op move of itself did, to start that wait early).
@test "sandbox: no process of the run writes a cgroup.procs (root and an ordinary user); the command is in its cgroup" {
  requires_host_command strace
  requires_host_command setpriv
  local uid=1000 mine c
  mine=$(cat /proc/self/cgroup)
  # (LeakSanitizer cannot run under ptrace: off for this command of a sanitizer build)
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    run strace -f -qq -e trace=open,openat,openat2 -o "$DIR/trace" \
    "$FSRUN" --root "$FSRUN_ROOT" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" \
    -- cat /proc/self/cgroup
  echo "$output"
  [ "$status" -eq 0 ]
  grep -E 'cgroup\.procs"|/tasks"' "$DIR/trace" || true
  [ "$(grep -c 'cgroup\.procs", O_WRONLY' "$DIR/trace")" -eq 0 ]
  if [ "$(cgroup_mode)" = unified ]; then
    [ "$(grep '^0::' <<<"$output")" != "$(grep '^0::' <<<"$mine")" ]
  else
    for c in memory pids; do
      [ -n "$(v1_line "$output" "$c")" ]
      [ "$(v1_line "$output" "$c")" != "$(v1_line "$mine" "$c")" ]
    done
  fi
  assert_sandbox_gone
  give_dir_to_user "$uid"
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    run setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home" \
    strace -f -qq -e trace=open,openat,openat2 -o "$DIR/trace-user" \
    "$FSRUN" --root "$DIR/user-state" sandbox --policy "$POLICY" --worktree "$WT" \
    --task-id "$TASK" -- true
  echo "$output"
  [ "$status" -eq 0 ]
  grep -E 'cgroup\.procs"' "$DIR/trace-user" || true
  [ "$(grep -c 'cgroup\.procs", O_WRONLY' "$DIR/trace-user")" -eq 0 ]
}

@test "sandbox: --json captures stdout, stderr, the status and the enforced limits" {
  run sbx --json -- /bin/sh -c 'echo out; echo err >&2; exit 3'
  echo "$output"
  [ "$status" -eq 3 ]
  [ "$(jq -r .stdout <<<"$output")" = out ]
  [ "$(jq -r .stderr <<<"$output")" = err ]
  [ "$(jq -r .exitCode <<<"$output")" = 3 ]
  [ "$(jq -r .timedOut <<<"$output")" = false ]
  [ "$(jq -r .truncated <<<"$output")" = false ]
  [ "$(jq -r .backend <<<"$output")" = fsrun ]
  [ "$(jq -r .limits.memoryLimitMb <<<"$output")" = 512 ]
  [ "$(jq -r .limits.pidsLimit <<<"$output")" = 4096 ]
  [ "$(jq -r .limits.network <<<"$output")" = none ]
  jq -e '.durationMs >= 0' <<<"$output"
}

@test "sandbox: --max-buffer truncates a stream and says so" {
  run sbx --json --max-buffer 10 -- /bin/sh -c 'seq 1 100000'
  [ "$status" -eq 0 ]
  [ "$(jq -r .truncated <<<"$output")" = true ]
  [ "$(jq -j .stdout <<<"$output")" = "$(printf '1\n2\n3\n4\n5\n')" ]
}

@test "sandbox: --json keeps fsrun's own warnings out of the command's captured stderr" {
  write_policy "{\"allowedPaths\": [\"$DIR/no-such-dir\"]}"
  sbx --json -- /bin/sh -c 'echo from-command >&2' >"$DIR/out.json" 2>"$DIR/fsrun.err"
  cat "$DIR/out.json" "$DIR/fsrun.err"
  [ "$(jq -r .stderr "$DIR/out.json")" = from-command ]
  grep -q "allowedPaths\[0\].*does not exist" "$DIR/fsrun.err"
}

# assert_no_sleep MARKER: no process runs `sleep MARKER`. Anchored: the command lines of fsrun
# and of its watchdog, which may still be ending, hold the words too.
assert_no_sleep() {
  no_process_left -f "^sleep $1\$"
}

@test "sandbox: --timeout-ms kills the whole sandbox: 124, no process left" {
  local marker=1$RANDOM$RANDOM
  run sbx --timeout-ms 300 -- /bin/sh -c "sleep $marker & sleep $marker; echo not-killed"
  echo "$output"
  [ "$status" -eq 124 ]
  [[ $output != *not-killed* ]]
  assert_no_sleep "$marker"
  assert_sandbox_gone
  # a set-up slower than 300 ms (ASan, a loaded machine) ends the same way, with one more line on
  # stderr: only stdout is the result
  run --separate-stderr sbx --json --timeout-ms 300 -- sleep "$marker"
  [ "$status" -eq 124 ]
  [ "$(jq -r .timedOut <<<"$output")" = true ]
  [ "$(jq -r '"\(.exitCode) \(.signal)"' <<<"$output")" = "null SIGKILL" ]
  assert_no_sleep "$marker"
}

@test "sandbox: under fallback-native, --timeout-ms kills the command's whole process group: 124" {
  # a host that cannot sandbox (pivot_root answers ENOSYS, the host probe's too): run natively
  local noclone3=${FSRUN%/*}/tests/noclone3
  [ -x "$noclone3" ] || skip "tests/noclone3 is not built next to $FSRUN"
  local marker=1$RANDOM$RANDOM json status ms=3000
  LEFTOVER_SLEEP=$marker # teardown kills what a broken timeout leaves
  # --timeout-ms counts the set-up too: here the failed sandbox attempt and the host probe before
  # the native run (0.7-2.3 s under ASan at load 20-25; a run given 800 ms was still in the probe
  # at 2.1 s). A deadline reached there is a correct outcome of its own, asserted as such (124,
  # "the set-up did not finish", never native); only then is the run made again with four times
  # the deadline, until the command has run.
  while :; do
    status=0
    # bounded from outside (without the watchdog the sleeps would run on: 137), output to a file
    # (a leftover sleep must not hold bats' pipe)
    timeout -s KILL $((WAIT_MAX_S + ms / 1000)) "$noclone3" --enosys pivot_root "$FSRUN" \
      --root "$FSRUN_ROOT" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" \
      --failure-mode fallback-native --json --timeout-ms "$ms" \
      -- /bin/sh -c "sleep $marker & sleep $marker; echo not-killed" >"$DIR/out" 2>&1 3>&- || status=$?
    cat "$DIR/out"
    [ "$status" -eq 124 ]
    json=$(grep '^{' "$DIR/out")
    [ "$(jq -r .timedOut <<<"$json")" = true ]
    [ "$(jq -r .backend <<<"$json")" != native ] || break
    [[ $(jq -r .error <<<"$json") == *"set-up did not finish within $ms ms"* ]]
    [ "$ms" -lt $((WAIT_MAX_S * 1000)) ]
    ms=$((ms * 4))
  done
  [[ $(jq -r .stdout <<<"$json") != *not-killed* ]]
  assert_no_sleep "$marker"
}

@test "sandbox: a misspelt policy key is refused: exit 125, one line naming it, nothing run" {
  write_policy '{"allowNetwrok": true}'
  run sbx --audit-log "$DIR/audit.log" -- /bin/sh -c "touch '$WT/ran'"
  echo "$output"
  [ "$status" -eq 125 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ $output == *allowNetwrok* ]]
  [ ! -e "$WT/ran" ]
  [ ! -s "$DIR/audit.log" ]
  assert_sandbox_gone
}

@test "sandbox: a settings object for another backend is refused (125); validate reads a policy on stdin" {
  write_policy '{"sandbox": {"backend": "other", "failureMode": "fallback-native", "policy": {}}}'
  run sbx -- /bin/sh -c "touch '$WT/ran'"
  echo "$output"
  [ "$status" -eq 125 ]
  [[ $output == *'sandbox.backend: `other` is not fsrun'* ]]
  [ ! -e "$WT/ran" ]
  run fsrun validate --policy - <"$POLICY"
  [ "$status" -eq 1 ]
  [[ $output == *"policy (stdin): sandbox.backend"* ]]
  run fsrun validate --policy - <<<'{"sandbox": {"backend": "fsrun", "policy": {"allowNetwork": true}}}'
  echo "$output"
  [ "$status" -eq 0 ]
}

# Before, the error named the errno twice: "--worktree `x`: No such file or directory: No such
# file or directory".
@test "sandbox: a worktree that does not exist is refused in one line naming it (sandbox 125, bundle 1), nothing made (root and an ordinary user)" {
  local uid=1000 who given home runner
  make_traversable "$DIR"
  for who in root user; do
    # each caller's own directory: its cwd, its state root, its home
    home=$DIR/$who
    mkdir -p "$home"
    runner=()
    [ "$who" = root ] || { chown "$uid:$uid" "$home" && runner=(setpriv --reuid "$uid" --regid "$uid" --clear-groups); }
    for given in relative/missing "$home/nope"; do
      run --separate-stderr in_dir "$home" "${runner[@]}" env HOME="$home" \
        "$FSRUN" --root "$home/state" sandbox --policy "$POLICY" --worktree "$given" \
        --task-id "$TASK" -- touch "$DIR/ran"
      echo "$who, $given: $status [$output] [$stderr]"
      [ "$status" -eq 125 ]
      [ "$stderr" = "fsrun: --worktree \`$given\`: No such file or directory" ]
      [ -z "$output" ]
      run --separate-stderr in_dir "$home" "${runner[@]}" env HOME="$home" \
        "$FSRUN" --root "$home/state" bundle --policy "$POLICY" --worktree "$given" \
        --out "$home/bundle" -- touch "$DIR/ran"
      echo "bundle, $who, $given: $status [$output] [$stderr]"
      [ "$status" -eq 1 ]
      [ "$stderr" = "fsrun: --worktree \`$given\`: No such file or directory" ]
      [ -z "$output" ]
      [ ! -e "$DIR/ran" ]
      [ -z "$(ls -A "$home")" ]
    done
  done
}

# in_dir DIR COMMAND...: COMMAND run in DIR (a relative path it is given is DIR's)
in_dir() {
  cd "$1" && shift && "$@"
}

@test "sandbox: the audit log has prepare and run, with the canonical policy's sha256" {
  # any spelling of the same policy has the same hash: that of its canonical form
  write_policy '{ "memoryLimitMb" : 64,
                  "allowNetwork": false }'
  local want
  want=$(printf '%s' '{"allowNetwork":false,"memoryLimitMb":64}' | sha256sum | cut -d' ' -f1)
  run sbx --run-id run-1 --audit-log "$DIR/audit.log" -- /bin/sh -c 'exit 7'
  [ "$status" -eq 7 ]
  cat "$DIR/audit.log"
  [ "$(wc -l <"$DIR/audit.log")" -eq 2 ]
  [ "$(jq -sr 'map(.event) | join(",")' "$DIR/audit.log")" = "sandbox:prepare,sandbox:run" ]
  [ "$(jq -sr 'map(.policyHash) | unique | join(",")' "$DIR/audit.log")" = "$want" ]
  [ "$(jq -sr '.[1].exitCode' "$DIR/audit.log")" = 7 ]
  [ "$(jq -sr '.[1].taskId + " " + .[1].runId + " " + .[1].backend' "$DIR/audit.log")" = "$TASK run-1 fsrun" ]
  jq -se '.[1].durationMs >= 0 and (.[0].time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T"))' "$DIR/audit.log"
}

@test "sandbox: a sandbox that cannot be set up: 125 under fail-hard, native run under fallback" {
  # a state root below a regular file: the bundle cannot be written
  : >"$DIR/not-a-dir"
  local bad_root=$DIR/not-a-dir/state
  run "$FSRUN" --root "$bad_root" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" \
    --audit-log "$DIR/audit.log" -- /bin/sh -c "touch '$WT/ran'"
  echo "$output"
  [ "$status" -eq 125 ]
  [ ! -e "$WT/ran" ]
  [ "$(jq -sr 'map(.event) | join(",")' "$DIR/audit.log")" = "sandbox:prepare,sandbox:failure" ]
  jq -se '.[1].reason | length > 0' "$DIR/audit.log"

  # fallback-native runs natively only where the host cannot sandbox (the host probe has a state
  # root of its own, so a broken one is no reason: sandbox-run.bats): pivot_root answers ENOSYS
  local noclone3=${FSRUN%/*}/tests/noclone3
  [ -x "$noclone3" ] || skip "tests/noclone3 is not built next to $FSRUN"
  rm -f "$DIR/audit.log"
  run "$noclone3" --enosys pivot_root "$FSRUN" --root "$FSRUN_ROOT" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" \
    --audit-log "$DIR/audit.log" --failure-mode fallback-native --json -- /bin/sh -c "pwd; touch '$WT/ran'"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -e "$WT/ran" ]
  json=$(grep '^{' <<<"$output")
  [ "$(jq -r .backend <<<"$json")" = native ]
  [ "$(jq -r .stdout <<<"$json")" = "$WT" ]
  [ "$(jq -sr 'map(.event + ":" + .backend) | join(",")' "$DIR/audit.log")" = \
    "sandbox:prepare:fsrun,sandbox:fallback:native,sandbox:run:native" ]
}

@test "bundle: a link to /etc in allowedPaths gets its shadow files covered on its bind; one in the worktree is refused" {
  requires_fsrun_command bundle
  [ -f /etc/shadow ] || skip "the host has no /etc/shadow"
  hold_passwd_lock
  local out=$DIR/bundle id=bundle-$TASK
  # the command of a task container writes the worktree: a link it leaves there is refused
  ln -s /etc "$WT/etclink"
  write_policy "{\"allowedPaths\": [\"$WT/etclink\"]}"
  run --separate-stderr fsrun bundle --policy "$POLICY" --worktree "$WT" --out "$out" -- /bin/true
  echo "$stderr"
  [ "$status" -eq 1 ]
  [[ $stderr == *"policy: allowedPaths[0]: \`$WT/etclink\` passes through a symbolic link in \`$WT\`"* ]]
  [ ! -e "$out/config.json" ]
  # one the host's admin made elsewhere is bound, its covers carried by its bind
  ln -s /etc "$DIR/etclink"
  write_policy "{\"allowedPaths\": [\"$DIR/etclink\"]}"
  run fsrun bundle --policy "$POLICY" --worktree "$WT" --out "$out" -- /bin/sh -c \
    "cat '$DIR/etclink/shadow' >/dev/null 2>&1 && echo READ; echo looked"
  [ "$status" -eq 0 ]
  # a task container is created by another process, from the JSON: the covers a run attaches on
  # the bind itself are in its annotation (bundle-binds.bats), never entries at their paths
  jq -e --arg d "$DIR/etclink" '[.annotations[] | fromjson? | objects | select(.destination == $d) | .covers | index("shadow")] | length == 1' "$out/config.json"
  jq -e --arg d "$DIR/etclink/shadow" '[.mounts[] | select(.destination == $d)] | length == 0' "$out/config.json"
  run fsrun run --bundle "$out" "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = looked ]
  assert_no_leftovers "$id" "$out"
}

@test "bundle: writes config.json and an empty root; fsrun run uses it on the worktree" {
  requires_fsrun_command bundle
  local out=$DIR/bundle id=bundle-$TASK
  run fsrun bundle --policy "$POLICY" --worktree "$WT" --out "$out" -- /bin/sh -c 'echo from-bundle > made-here; pwd'
  echo "$output"
  [ "$status" -eq 0 ]
  [ -f "$out/config.json" ]
  [ -d "$out/rootfs" ]
  [ -z "$(find "$out/rootfs" -mindepth 1)" ]
  # the root is a tmpfs mounted over it: the mount points are made there, not in the bundle
  [ "$(jq -r '.mounts[0] | .destination + " " + .type' "$out/config.json")" = "/ tmpfs" ]
  [ "$(jq -r .process.cwd "$out/config.json")" = "$WT" ]
  [ "$(jq -r .root.readonly "$out/config.json")" = true ]
  [ "$(jq -r '.linux.resources.memory.limit' "$out/config.json")" = $((512 * 1024 * 1024)) ]
  [ "$(jq -r '[.linux.namespaces[].type] | sort | join(",")' "$out/config.json")" = "ipc,mount,network,pid,uts" ]
  [ "$(jq -r '.process.rlimits[] | select(.type == "RLIMIT_CPU") | .hard' "$out/config.json")" = 60 ]
  jq -e '.linux.seccomp.syscalls[0].names | index("mount") and index("ptrace") and index("unshare")' "$out/config.json"
  # the git common dir is bound read-only: each exec's overlay makes it writable (exec-git.bats)
  jq -e --arg d "$REPO/.git" '[.mounts[] | select(.destination == $d and (.options | index("ro")))] | length == 1' "$out/config.json"

  run fsrun run --bundle "$out" "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "$WT" ]
  [ "$(cat "$WT/made-here")" = from-bundle ]
  [ -z "$(find "$out/rootfs" -mindepth 1)" ]
  assert_no_leftovers "$id" "$out"

  # an existing bundle is never overwritten
  run fsrun bundle --policy "$POLICY" --worktree "$WT" --out "$out"
  [ "$status" -eq 1 ]
  [[ $output == *"already exists"* ]]
}

# bats test_tags=kernel61
@test "sandbox: an ordinary user gets a user namespace mapping its own uid; commits still work" {
  requires_host_command setpriv
  requires_host_command unshare
  local uid=1000
  give_dir_to_user "$uid"
  run --separate-stderr setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home" \
    "$FSRUN" --root "$DIR/user-state" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" \
    --json -- /bin/sh -c 'id -u; cat /proc/self/uid_map; echo x >> README && git commit -qam user && echo committed; ls /sys/class/net'
  echo "$output"
  echo "$stderr"
  [ "$status" -eq 0 ]
  stdout=$(jq -r .stdout <<<"$output")
  [ "$(sed -n 1p <<<"$stdout")" = "$uid" ]
  [ "$(sed -n 2p <<<"$stdout" | tr -s ' ' | sed 's/^ //')" = "$uid $uid 1" ]
  [[ $stdout == *committed* ]]
  [ "$(sed -n '$p' <<<"$stdout")" = lo ]
  # without a delegated cgroup the memory limit is not claimed as enforced
  [ "$(jq -r '.limits | has("memoryLimitMb")' <<<"$output")" = false ]
  # ... and is said not to be (sandbox-limits.bats has the rest)
  [ "$(jq -r '.limitsNotEnforced[0].limit' <<<"$output")" = memoryLimitMb ]
  [[ $stderr == *"limits not enforced: memoryLimitMb"* ]]
  [ "$(git -c safe.directory="*" -C "$REPO" log -1 --format=%s "$TASK")" = user ]
  [ -z "$(ls -A "$DIR/user-state/.sandbox" 2>/dev/null)" ]
}

@test "sandbox: an ordinary user's run repairs a shared bundle that an older fsrun made (no resolv.conf)" {
  requires_host_command setpriv
  requires_host_command unshare
  local uid=1000
  give_dir_to_user "$uid"
  as_uid() { setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home" "$@"; }
  run as_uid "$FSRUN" --root "$DIR/user-state" sandbox --policy "$POLICY" --worktree "$WT" \
    --task-id "$TASK" -- true
  [ "$status" -eq 0 ]
  # what an older fsrun left: the skeleton without resolv.conf, the mask file mode 0 and ours
  rm "$DIR/user-state/.sandbox-bundle/resolv.conf"
  [ "$(stat -c '%a %u' "$DIR/user-state/.sandbox-bundle/unreadable")" = "0 $uid" ]
  run as_uid "$FSRUN" --root "$DIR/user-state" sandbox --policy "$POLICY" --worktree "$WT" \
    --task-id "$TASK" -- cat /etc/shadow
  echo "$output"
  # the run happened (cat's own failure on the masked file, not a set-up failure)
  [ "$status" -eq 1 ]
  [[ $output == *"Permission denied"* ]]
  [ -f "$DIR/user-state/.sandbox-bundle/resolv.conf" ]
  [ "$(stat -c '%a %s' "$DIR/user-state/.sandbox-bundle/unreadable")" = "0 0" ]
}

@test "sandbox: SIGTERM to fsrun sandbox ends a shell that installs no handler (Fusion's cancel)" {
  local marker=1$RANDOM$RANDOM rc=0
  # the shell is not pid 1 (fsrun's init is), so SIGTERM's default action applies to it
  "$FSRUN" --root "$FSRUN_ROOT" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" \
    -- /bin/sh -c "sleep $marker; echo not-ended" >"$BATS_TEST_TMPDIR/out" 3>&- &
  BACKGROUND_PIDS=$!
  wait_for_sleep "$marker"
  kill -TERM "$BACKGROUND_PIDS"
  wait "$BACKGROUND_PIDS" || rc=$?
  BACKGROUND_PIDS=
  cat "$BATS_TEST_TMPDIR/out"
  [ "$rc" -eq 143 ]
  ! grep -q not-ended "$BATS_TEST_TMPDIR/out" || false
  [ -z "$(pgrep -f "^sleep $marker\$")" ]
  assert_sandbox_gone
}

@test "sandbox: with --json, SIGTERM still reaches the command, and its output so far is in the result" {
  local marker=1$RANDOM$RANDOM rc=0
  # the output reader must not take the signal (its default action would end fsrun, uncaught)
  "$FSRUN" --root "$FSRUN_ROOT" sandbox --json --policy "$POLICY" --worktree "$WT" \
    --task-id "$TASK" -- /bin/sh -c "trap 'echo got-term; exit 7' TERM; echo started;
      sleep $marker & wait" >"$BATS_TEST_TMPDIR/out" 3>&- &
  BACKGROUND_PIDS=$!
  wait_for_sleep "$marker"
  kill -TERM "$BACKGROUND_PIDS"
  wait "$BACKGROUND_PIDS" || rc=$?
  BACKGROUND_PIDS=
  cat "$BATS_TEST_TMPDIR/out"
  [ "$rc" -eq 7 ]
  [ "$(jq -r .exitCode "$BATS_TEST_TMPDIR/out")" = 7 ]
  [ "$(jq -r .stdout "$BATS_TEST_TMPDIR/out")" = "$(printf 'started\ngot-term')" ]
  [ -z "$(pgrep -f "^sleep $marker\$")" ]
  assert_sandbox_gone
}

@test "sandbox: a SIGKILLed fsrun sandbox leaves no container, process or bundle behind" {
  local marker=1$RANDOM$RANDOM tries
  # a simple command, not the fsrun function: $! must be fsrun itself, not a subshell
  "$FSRUN" --root "$FSRUN_ROOT" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" -- sleep "$marker" 3>&- &
  BACKGROUND_PIDS=$!
  wait_for_sleep "$marker"
  kill -KILL "$BACKGROUND_PIDS"
  wait "$BACKGROUND_PIDS" || true
  BACKGROUND_PIDS=
  # the watchdog deletes the container once it sees fsrun die
  tries=$((WAIT_MAX_S * 10))
  while { [ -n "$(pgrep -f "^sleep $marker\$")" ] || ls -A "$FSRUN_ROOT" | grep -qF -- "$TASK"; } &&
    [ "$tries" -gt 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  [ -z "$(pgrep -f "^sleep $marker\$")" ]
  assert_sandbox_gone
}

@test "bundle: a long-lived task container: create, start, exec a command in the worktree, delete" {
  requires_fsrun_command bundle
  requires_fsrun_command exec
  local out=$DIR/bundle id=life-$TASK
  fsrun bundle --policy "$POLICY" --worktree "$WT" --out "$out" -- sleep 1000
  fsrun create --bundle "$out" "$id"
  fsrun start "$id"
  run fsrun exec "$id" /bin/sh -c 'pwd; echo change >> README && git commit -qam "from exec" && echo committed; ls /sys/class/net'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$WT" ]
  [ "${lines[1]}" = committed ]
  [ "${lines[2]}" = lo ]
  [ "$(git -C "$REPO" log -1 --format=%s "$TASK")" = "from exec" ]
  fsrun delete --force "$id"
  assert_no_leftovers "$id" "$out"
}

@test "bundle: an ordinary user's task container takes exec (fsrun's init can be joined by its owner)" {
  requires_fsrun_command bundle
  requires_fsrun_command exec
  requires_host_command setpriv
  requires_host_command unshare
  local uid=1000 out=$DIR/user-bundle id=ulife-$TASK
  give_dir_to_user "$uid"
  as_uid() {
    setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home" \
      "$FSRUN" --root "$DIR/user-state" "$@"
  }
  as_uid bundle --policy "$POLICY" --worktree "$WT" --out "$out" -- sleep 1000
  as_uid create --bundle "$out" "$id"
  as_uid start "$id"
  run as_uid exec "$id" /bin/sh -c 'id -u; pwd; echo change >> README && git commit -qam "user exec" && echo committed; grep ^CapEff /proc/1/status'
  echo "$output"
  as_uid delete --force "$id"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$uid" ]
  [ "${lines[1]}" = "$WT" ]
  [ "${lines[2]}" = committed ]
  # fsrun's init, joinable by its owner, holds no capability
  [ "${lines[3]}" = "CapEff:	0000000000000000" ]
  [ "$(git -c safe.directory="*" -C "$REPO" log -1 --format=%s "$TASK")" = "user exec" ]
  # the bundle's mark stays while the bundle does (docs/sandbox.md, "Git in a task container")
  # (a disk state root keeps the one-shot sandbox's state dir for the next, status-kept.h; a
  # seccomp profile's compiled program is cached, seccomp-cache.h)
  [ -z "$(ls -A "$DIR/user-state" | grep -v -e '^\.sandbox-bundle$' -e '^\.bundle-marks$' -e '^\.sandbox-kept-[0-3]$' -e '^\.seccomp-cache$')" ]
}

@test "bundle: an ordinary user's task container holds what its one-shot sandbox would: RLIMIT_DATA and RLIMIT_NPROC in every exec" {
  requires_fsrun_command bundle
  requires_fsrun_command exec
  requires_host_command setpriv
  local uid=1000 out=$DIR/user-bundle id=ulim-$TASK
  write_policy '{"memoryLimitMb": 32, "pidsLimit": 64}'
  # root's bundle: the cgroup holds both, no rlimit stands in (as before)
  fsrun bundle --policy "$POLICY" --worktree "$WT" --out "$DIR/root-bundle" -- sleep 1000
  [ "$(jq -c '[.linux.resources.memory.limit, .linux.resources.pids.limit, [.process.rlimits[]?.type]]' "$DIR/root-bundle/config.json")" = '[33554432,64,[]]' ]
  give_dir_to_user "$uid"
  as_uid() {
    setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home" \
      "$FSRUN" --root "$DIR/user-state" "$@"
  }
  # what the one-shot sandbox gives this user here: RLIMIT_DATA only where no cgroup holds memory
  [ "$(as_uid sandbox --json --policy "$POLICY" --worktree "$WT" -- true 2>/dev/null |
    jq -r '.limits.memoryPerProcessMb')" = 32 ] ||
    skip "the one-shot sandbox gives this user no RLIMIT_DATA here (a delegated memory cgroup, or an ASan build)"
  as_uid bundle --policy "$POLICY" --worktree "$WT" --out "$out" -- sleep 1000
  as_uid create --bundle "$out" "$id" </dev/null
  as_uid start "$id"
  # a 50 MB buffer past the 32 MB bound fails on its own (ENOMEM), nothing is killed
  run as_uid exec "$id" /bin/sh -c 'grep -e "^Max data size" -e "^Max processes" /proc/self/limits
    head -c 50000000 /dev/zero | tail -c 50000000 >/dev/null 2>&1; echo "tail $?"'
  echo "$output"
  as_uid delete --force "$id"
  [ "$status" -eq 0 ]
  [[ ${lines[0]} == "Max data size"*" 33554432 "*" 33554432 "* ]]
  [[ ${lines[1]} == "Max processes"*" 64 "*" 64 "* ]]
  [ "${lines[2]}" = "tail 1" ]
  # (a disk state root keeps the one-shot sandbox's state dir for the next, status-kept.h; a
  # seccomp profile's compiled program is cached, seccomp-cache.h)
  [ -z "$(ls -A "$DIR/user-state" | grep -v -e '^\.sandbox-bundle$' -e '^\.bundle-marks$' -e '^\.sandbox-kept-[0-3]$' -e '^\.seccomp-cache$')" ]
}

# On a kernel whose Landlock cannot restrict TCP (before ABI 4, Linux 6.7: Debian 12's 6.1 has 2)
# allowedTcpPorts is a limit not enforced, said as the others are (fails on 'fd177c7': the port was
# reachable and only the init's warning said so; limitsMode "require" ran the command).
# bats test_tags=kernel61
@test "sandbox: allowedTcpPorts limits TCP connects when the network is on (Landlock); before Landlock ABI 4 it is a limit not enforced (root and an ordinary user)" {
  requires_host_command bash
  requires_host_command setpriv
  # nothing listens on 127.0.0.1:1: refused when allowed, denied (EACCES) when not listed. The
  # host's network: only connect matters here, and egress needs /dev/net/tun (the VM has none)
  local connect='bash -c "exec 3<>/dev/tcp/127.0.0.1/1" 2>&1 || true' abi
  abi=$("$FSRUN" features | jq -r '.annotations["run.fsrun.landlock"]')
  write_policy '{"allowNetwork": true, "network": "host"}'
  run sbx -- /bin/sh -c "$connect"
  echo "$output"
  [[ $output == *"Connection refused"* ]]
  write_policy '{"allowNetwork": true, "network": "host", "allowedTcpPorts": [2]}'
  run --separate-stderr sbx --json -- /bin/sh -c "$connect"
  echo "$output"
  echo "$stderr"
  [ "$status" -eq 0 ]
  if [ "$abi" -ge 4 ]; then
    [[ $(jq -r .stdout <<<"$output") == *"Permission denied"* ]]
    # TCP is held; the host's network leaves UDP and ICMP open, which is said (review22 F13)
    [ "$(jq -r '[.limitsNotEnforced[].limit] | join(",")' <<<"$output")" = allowedTcpPorts ]
    [[ $(jq -r '.limitsNotEnforced[0].reason' <<<"$output") == *"UDP and ICMP reach any address and port"* ]]
    write_policy '{"allowNetwork": true, "network": "host", "allowedTcpPorts": [1]}'
    run sbx -- /bin/sh -c "$connect"
    [[ $output == *"Connection refused"* ]]
    return
  fi
  local reason="the kernel's Landlock ABI $abi cannot restrict TCP (ABI 4, Linux 6.7)"
  [[ $(jq -r .stdout <<<"$output") == *"Connection refused"* ]]
  [ "$(jq -r '.limitsNotEnforced[] | select(.limit == "allowedTcpPorts") | .reason' <<<"$output")" = "$reason" ]
  [[ $stderr == *"limits not enforced: allowedTcpPorts ($reason)"* ]]
  # limitsMode "require": refused before anything runs, for root and for an ordinary user
  write_policy '{"allowNetwork": true, "network": "host", "allowedTcpPorts": [2], "limitsMode": "require"}'
  run --separate-stderr sbx -- /bin/sh -c 'touch ran'
  echo "$stderr"
  [ "$status" -eq 125 ]
  [ "$stderr" = "fsrun: sandbox: limitsMode \"require\": cannot enforce allowedTcpPorts ($reason)" ]
  give_dir_to_user 1000
  run --separate-stderr setpriv --reuid 1000 --regid 1000 --clear-groups env HOME="$DIR/home" \
    "$FSRUN" --root "$DIR/user-state" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" \
    -- /bin/sh -c 'touch ran'
  echo "$stderr"
  [ "$status" -eq 125 ]
  [[ $stderr == *"cannot enforce allowedTcpPorts ($reason)"* ]]
  [ ! -e "$WT/ran" ]
}

# pid 1 of a sandbox is fsrun's init, made dumpable so that its owner can `exec` into it: it must
# not show the command the caller's environment (fails on d3adcc1: the secret was in environ)
@test "sandbox: the caller's environment outside envAllowlist is not readable through /proc/1/environ (root and an ordinary user)" {
  requires_host_command setpriv
  local probe='tr "\0" "\n" </proc/1/environ | grep -c FSRUN_TEST_SECRET; tr "\0" "\n" </proc/self/environ | grep -c FSRUN_TEST_SECRET; grep -c "^Name:.fsrun-init" /proc/1/status'
  run --separate-stderr env FSRUN_TEST_SECRET=s3cr3t-$$ "$FSRUN" sandbox --policy "$POLICY" \
    --worktree "$WT" --task-id "$TASK" --json -- /bin/sh -c "$probe"
  echo "$output $stderr"
  [ "$(jq -j .stdout <<<"$output" | tr '\n' ' ')" = "0 0 1 " ]
  local uid=1000
  give_dir_to_user "$uid"
  run --separate-stderr setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home" \
    FSRUN_TEST_SECRET=s3cr3t-$$ "$FSRUN" --root "$DIR/user-state" sandbox --policy "$POLICY" \
    --worktree "$WT" --task-id "$TASK" --json -- /bin/sh -c "$probe"
  echo "$output $stderr"
  [ "$(jq -j .stdout <<<"$output" | tr '\n' ' ')" = "0 0 1 " ]
}

# held_ids ROOT [PREFIX...]: two sandboxes at once (PREFIX runs fsrun: nothing for root, setpriv for
# the user), the (task, run id) pairs ($TASK, b-c-1) and ($TASK-b, c-1), each held in its command
# (fifos in the worktree) while `fsrun list` runs as the same caller; prints the ids listed, one a
# line, sorted. (review19 #9: both ids began `sandbox-$TASK-b-c-1-`)
held_ids() {
  local root=$1 pids=() i
  shift
  local fsrun=("$@" "$FSRUN" --root "$root")
  rm -f "$WT"/ready-* "$WT"/go-*
  mkfifo -m 666 "$WT/ready-1" "$WT/go-1" "$WT/ready-2" "$WT/go-2"
  "${fsrun[@]}" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" --run-id b-c-1 \
    -- /bin/sh -c 'echo >ready-1; read -r x <go-1' &
  pids+=($!)
  "${fsrun[@]}" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK-b" --run-id c-1 \
    -- /bin/sh -c 'echo >ready-2; read -r x <go-2' &
  pids+=($!)
  for i in 1 2; do timeout 60 cat "$WT/ready-$i" >/dev/null || echo "sandbox $i never got ready"; done
  "${fsrun[@]}" list --quiet | sort
  for i in 1 2; do timeout 60 sh -c "echo >'$WT/go-$i'"; done
  for i in 0 1; do wait "${pids[$i]}" || echo "sandbox $((i + 1)) failed"; done
}

@test "sandbox: the container ids of (task, run) = (T, b-c-1) and (T-b, c-1) share no stem (root and an ordinary user)" {
  requires_host_command setpriv
  local uid=1000 out hex='__[0-9a-f]{8}'
  out=$(cd "$WT" && held_ids "$FSRUN_ROOT")
  echo "root: $out"
  [[ $out =~ ^sandbox-$TASK-b__c-1$hex$'\n'sandbox-${TASK}__b-c-1$hex$ ]]
  give_dir_to_user "$uid"
  out=$(cd "$WT" && held_ids "$DIR/user-state" setpriv --reuid "$uid" --regid "$uid" \
    --clear-groups env HOME="$DIR/home")
  echo "uid $uid: $out"
  [[ $out =~ ^sandbox-$TASK-b__c-1$hex$'\n'sandbox-${TASK}__b-c-1$hex$ ]]
}
