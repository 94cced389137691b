#!/usr/bin/env bats
# A `fsrun bundle` task container's binds keep what the bundle checked (docs/sandbox.md, "Paths the
# command can re-point"): config.json carries each caller bind's source identity, the no-link rule
# of its destination and its secret-file covers as `run.fsrun.mounts.N` annotations, and every later
# `fsrun create` of the bundle honours them. The container's command writes the worktree, so a link
# it leaves there (where a bind's source was, or on the way to a destination) must not make the next
# create of the same bundle show another directory: that create is refused, leaving nothing. Root
# and an ordinary user (uid 1000), each with a state root of its own.

load helpers
bats_require_minimum_version 1.5.0

setup() {
  requires_root
  requires_fsrun_command bundle
  requires_host_command git
  requires_host_command jq
  requires_host_command setpriv
  TASK=binds-$$-$RANDOM$RANDOM
  DIR=$BATS_TEST_TMPDIR/binds
  REPO=$DIR/repo
  WT=$DIR/worktree
  mkdir -p "$DIR/home"
  git init -q "$REPO"
  git -C "$REPO" -c user.email=binds@example.invalid -c user.name=binds commit -q --allow-empty -m first
  git -C "$REPO" worktree add -q -b "$TASK" "$WT"
}

teardown() {
  local uid id
  for uid in 0 1000; do
    for id in $(cat "$DIR/ids-$uid" 2>/dev/null); do
      as_uid "$uid" "$FSRUN" --root "$(state_of "$uid")" delete --force "$id" >/dev/null 2>&1 || true
    done
    for id in $(cat "$DIR/other-ids-$uid" 2>/dev/null); do
      as_uid "$uid" "$FSRUN" --root "$DIR/other-root-$uid" delete --force "$id" >/dev/null 2>&1 || true
    done
  done
  teardown_bundle
  if mountpoint -q "$DIR/alias" 2>/dev/null; then umount "$DIR/alias"; fi
  if grep -F -- "$DIR" /proc/self/mountinfo >&2; then
    echo "leftover mount of $DIR" >&2
    return 1
  fi
}

# state_of UID: the state root of UID's containers (root's: the file's, which the harness sweeps)
state_of() {
  if [ "$1" = 0 ]; then echo "$FSRUN_ROOT"; else echo "$DIR/state-$1"; fi
}

# as_uid UID CMD...: CMD as root, or as the ordinary user UID
as_uid() {
  local uid=$1
  shift
  if [ "$uid" = 0 ]; then
    "$@"
  else
    setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$DIR/home" "$@"
  fi
}

# fsr UID ARGS...: fsrun ARGS as UID, on UID's state root
fsr() {
  local uid=$1
  shift
  as_uid "$uid" "$FSRUN" --root "$(state_of "$uid")" "$@"
}

# the test's files to UID (skips where UID gets no user namespace); 0: nothing to do
files_to() {
  [ "$1" = 0 ] && return 0
  setpriv --reuid "$1" --regid "$1" --clear-groups unshare -U true 2>/dev/null ||
    skip "an unprivileged user cannot create a user namespace on this host"
  make_traversable "$DIR"
  chown -R "$1:$1" "$DIR"
}

# files_and_secret UID: files_to UID, then $DIR/private/secret: root's, 0600, in a directory of
# root's that others may search (so that what refuses a link to it is the identity check, not a
# permission on the way)
files_and_secret() {
  files_to "$1"
  mkdir -p "$DIR/private"
  echo root-only-secret >"$DIR/private/secret"
  chmod 600 "$DIR/private/secret"
  chmod 755 "$DIR/private"
  chown -R root:root "$DIR/private"
}

# plant_link UID PATH TARGET: what the container's command can leave for the next create: PATH
# moved to PATH.real and, in its place, a link to TARGET (made as UID). unplant_link PATH undoes it.
plant_link() {
  as_uid "$1" mv "$2" "$2.real"
  as_uid "$1" ln -s "$3" "$2"
}
unplant_link() {
  rm "$1"
  mv "$1.real" "$1"
}

# bundle_for UID POLICY OUT COMMAND...: `fsrun bundle` as UID
bundle_for() {
  local uid=$1 policy=$2 out=$3
  shift 3
  printf '%s\n' "$policy" >"$DIR/policy.json"
  chmod 644 "$DIR/policy.json"
  fsr "$uid" bundle --policy "$DIR/policy.json" --worktree "$WT" --out "$out" -- "$@"
}

# mount_index BUNDLE DEST: N of the bundle's run.fsrun.mounts.N annotation for destination DEST
mount_index() {
  jq -r --arg d "$2" '.annotations | to_entries[] | select(.key | startswith("run.fsrun.mounts."))
    | select((.value | fromjson).destination == $d) | .key | ltrimstr("run.fsrun.mounts.")' \
    "$1/config.json"
}

# assert_create_refused UID BUNDLE ID MESSAGE: `fsrun create` of BUNDLE as UID exits 1 with the one
# line MESSAGE (a glob; `[` is literal), and nothing of ID is left: no state dir, cgroup, process or mount
assert_create_refused() {
  local uid=$1 bundle=$2 id=$3 message=$4 stderr
  echo "$id" >>"$DIR/ids-$uid"
  # not `run`: a create that goes through (a broken check) leaves an init holding its stdio, which
  # `run` would wait on for ever; the test fails on the status instead
  status=0
  fsr "$uid" create --bundle "$bundle" "$id" </dev/null >/dev/null 2>"$DIR/create.err" || status=$?
  stderr=$(cat "$DIR/create.err")
  echo "uid $uid: status $status, stderr: $stderr"
  [ "$status" -eq 1 ]
  [ "$(grep -c . <<<"$stderr")" = 1 ]
  # MESSAGE is a glob whose brackets (mounts[N]) are literal
  message=${message//\[/\\[}
  # shellcheck disable=SC2053
  [[ $stderr == $message ]]
  [ ! -e "$(state_of "$uid")/$id" ]
  assert_no_leftovers "$id" "$bundle"
}

# task_flow UID BUNDLE ID PROBE: the adapter's flow (create, start, exec PROBE, delete) works;
# prints the exec's output
task_flow() {
  local uid=$1 bundle=$2 id=$3
  echo "$id" >>"$DIR/ids-$uid"
  fsr "$uid" create --bundle "$bundle" "$id" >&2
  fsr "$uid" start "$id" >&2
  fsr "$uid" exec "$id" /bin/sh -c "$4"
  fsr "$uid" delete --force "$id" >&2
  assert_no_leftovers "$id" "$bundle" >&2
}

@test "bundle: a bind's source the command replaced by a link (to /etc, to a 0600 file's dir) is refused at the next create, naming the mount, nothing left (root and an ordinary user)" {
  local uid out n target
  for uid in 0 1000; do
    files_and_secret "$uid"
    for target in /etc "$DIR/private"; do
      out=$DIR/bundle-$uid-${target##*/}
      as_uid "$uid" mkdir "$WT/data"
      as_uid "$uid" touch "$WT/data/mine"
      bundle_for "$uid" "{\"allowedPaths\": [\"$WT/data\"]}" "$out" sleep infinity
      n=$(mount_index "$out" "$WT/data")
      [ -n "$n" ]
      jq -e --arg n "run.fsrun.mounts.$n" '.annotations[$n] | fromjson | .sourceId | test("^[0-9]+:[0-9]+$")' \
        "$out/config.json"
      [ "$(task_flow "$uid" "$out" "flow-$uid-$TASK" "ls '$WT/data'")" = mine ]
      plant_link "$uid" "$WT/data" "$target"
      assert_create_refused "$uid" "$out" "again-$uid-$TASK" \
        "fsrun: mounts[$n]: bind source \`$WT/data\` was replaced after the config was built*"
      unplant_link "$WT/data"
      rm -r "$WT/data"
    done
  done
}

@test "bundle: a bind's destination the command led through a link is refused at the next create (ELOOP), even where the source is still the same directory (root and an ordinary user)" {
  local uid out n
  for uid in 0 1000; do
    files_to "$uid"
    out=$DIR/bundle-$uid
    as_uid "$uid" mkdir -p "$WT/x/b"
    as_uid "$uid" touch "$WT/x/b/mine"
    bundle_for "$uid" "{\"allowedPaths\": [\"$WT/x/b\"]}" "$out" sleep infinity
    n=$(mount_index "$out" "$WT/x/b")
    jq -e --arg n "run.fsrun.mounts.$n" '.annotations[$n] | fromjson | .destinationNoSymlinks == true' \
      "$out/config.json"
    [ "$(task_flow "$uid" "$out" "flow-$uid-$TASK" "ls '$WT/x/b'")" = mine ]
    # the source path still leads to the same directory (its identity holds), but the way to the
    # destination in the container now passes through the command's link
    plant_link "$uid" "$WT/x" "$WT/x.real"
    assert_create_refused "$uid" "$out" "again-$uid-$TASK" \
      "fsrun: mounts[$n]: destination \`$WT/x/b\`: *: Too many levels of symbolic links"
    unplant_link "$WT/x"
    rm -r "$WT/x"
  done
}

@test "bundle: the git binds in the worktree and the common dir (the .git file, hooks/) keep their identity too: a link there is refused at the next create (root and an ordinary user)" {
  local uid out spec path target n
  for uid in 0 1000; do
    files_and_secret "$uid"
    for spec in "$WT/.git $DIR/private/secret" "$REPO/.git/hooks $DIR/private"; do
      path=${spec% *}
      target=${spec#* }
      out=$DIR/bundle-$uid-${path##*/}
      bundle_for "$uid" '{}' "$out" sleep infinity
      n=$(mount_index "$out" "$path")
      [ -n "$n" ]
      [ "$(task_flow "$uid" "$out" "flow-$uid-$TASK" "cat '$WT/.git'")" = "gitdir: $REPO/.git/worktrees/${WT##*/}" ]
      plant_link "$uid" "$path" "$target"
      assert_create_refused "$uid" "$out" "again-$uid-$TASK" \
        "fsrun: mounts[$n]: bind source \`$path\` was replaced after the config was built*"
      unplant_link "$path"
    done
  done
}

@test "bundle: the shadow files a bind shows are covered on the bind itself, not by entries at their paths (root and an ordinary user)" {
  [ -f /etc/shadow ] || skip "the host has no /etc/shadow"
  hold_passwd_lock
  local uid out n seen
  ln -s /etc "$DIR/etclink"
  for uid in 0 1000; do
    files_to "$uid"
    out=$DIR/bundle-$uid
    # a cover is an empty file of mode 0 (the host's is neither)
    bundle_for "$uid" "{\"allowedPaths\": [\"$DIR/etclink\"]}" "$out" \
      stat -L -c %s:%a "$DIR/etclink/shadow"
    n=$(mount_index "$out" "$DIR/etclink")
    jq -e --arg n "run.fsrun.mounts.$n" '.annotations[$n] | fromjson | .covers | index("shadow")' \
      "$out/config.json"
    jq -e '[.mounts[] | select(.source == "unreadable" and (.destination | endswith("shadow")))] | length == 0' \
      "$out/config.json"
    echo "run-$uid-$TASK" >>"$DIR/ids-$uid"
    seen=$(fsr "$uid" run --bundle "$out" "run-$uid-$TASK")
    echo "uid $uid: shadow is $seen (size:mode)"
    [ "$seen" = 0:0 ]
  done
}

@test "bundle: a run.fsrun.mounts annotation is honoured in any config, never relaxes a check, and a malformed one is one line naming it; nothing left" {
  local out=$DIR/bundle n dest id spec
  mkdir -p "$WT/data"
  bundle_for 0 "{\"allowedPaths\": [\"$WT/data\"]}" "$out" /bin/true
  n=$(mount_index "$out" "$WT/data")
  dest=$WT/data
  # an allowedPaths directory is shown through an overlay (its sockets and FIFOs its own)
  jq -e --arg n "run.fsrun.mounts.$n" '.annotations[$n] | fromjson | .overlayView == true' \
    "$out/config.json"
  # edited, the config is no task container's (its worktree key ignored, with a warning of its own)
  jq 'del(.annotations["run.fsrun.sandbox.worktree"])' "$out/config.json" >"$DIR/good.json"
  local cases=(
    "{\"destination\": \"$dest\", \"sourceId\": \"1:2\"}|*mounts[$n]: bind source \`$dest\` was replaced after the config was built*"
    "{\"destination\": \"$dest\", \"destinationNoSymlinks\": false}|*annotations[\"run.fsrun.mounts.$n\"]: destinationNoSymlinks: only true is allowed"
    "{\"destination\": \"$dest\", \"overlayView\": false}|*annotations[\"run.fsrun.mounts.$n\"]: overlayView: only true is allowed"
    "{\"destination\": \"$dest\", \"sourceId\": \"12\"}|*annotations[\"run.fsrun.mounts.$n\"]: sourceId: not \"DEVICE:INODE\" (decimal)"
    "{\"destination\": \"$dest\", \"covers\": [\"passwd\"]}|*annotations[\"run.fsrun.mounts.$n\"]: covers[0]: not the place of a secret file"
    "{\"destination\": \"/elsewhere\"}|*annotations[\"run.fsrun.mounts.$n\"]: destination \"/elsewhere\" is not that of mounts[$n]"
    "{\"destination\": \"$dest\", \"relax\": true}|*annotations[\"run.fsrun.mounts.$n\"]: unknown key \`relax\`*"
    "{not json|*annotations[\"run.fsrun.mounts.$n\"]: invalid JSON*"
  )
  for spec in "${cases[@]}"; do
    jq --arg k "run.fsrun.mounts.$n" --arg v "${spec%%|*}" '.annotations[$k] = $v' \
      "$DIR/good.json" >"$out/config.json"
    id=bad-$$-$RANDOM$RANDOM-$TASK
    assert_create_refused 0 "$out" "$id" "${spec#*|}"
  done
  # an index that names no mount, and one of a mount that is not a bind (the root's tmpfs)
  jq '.annotations["run.fsrun.mounts.9999"] = "{}"' "$DIR/good.json" >"$out/config.json"
  assert_create_refused 0 "$out" "bad-index-$TASK" \
    "*annotations[\"run.fsrun.mounts.9999\"]: names no entry of mounts*"
  jq '.annotations["run.fsrun.mounts.0"] = "{\"destination\": \"/\"}"' "$DIR/good.json" \
    >"$out/config.json"
  assert_create_refused 0 "$out" "bad-tmpfs-$TASK" \
    "*annotations[\"run.fsrun.mounts.0\"]: mounts[0] is not a bind mount"
  # fsrun validate says the same
  run fsrun validate --bundle "$out"
  [ "$status" -eq 1 ]
  [[ $output == *"annotations[\"run.fsrun.mounts.0\"]: mounts[0] is not a bind mount"* ]]
  # a config that did not come from `fsrun bundle` (the suite's busybox bundle) is held to one too
  setup_bundle "$DIR/plain-bundle"
  mkdir -p "$DIR/shared"
  update_config '.mounts += [{"destination": "/shared", "type": "bind", "source": $s,
      "options": ["bind", "ro"]}]
    | .annotations["run.fsrun.mounts.\(.mounts | length - 1)"] = ({destination: "/shared",
      sourceId: "1:2"} | tojson)' --arg s "$DIR/shared"
  assert_create_refused 0 "$BUNDLE" "plain-$TASK" "*bind source \`$DIR/shared\` was replaced after the config was built*"
}

@test "bundle: covers on an rbind keep what a mount below the covered directory hides (review20 G)" {
  # an admin's mask (a tmpfs over src/etc/private) under a recursive bind: an overlay over src/etc
  # would show the directory's own entries, the key below the mask among them
  mkdir -p "$DIR/src/etc/private"
  echo TOP-SECRET-KEY >"$DIR/src/etc/private/key"
  echo hash >"$DIR/src/etc/shadow"
  chmod 600 "$DIR/src/etc/shadow"
  setup_bundle "$DIR/rbind-bundle"
  install -m 0 /dev/null "$BUNDLE/unreadable"
  update_config '.mounts += [{"destination": "/hostsrc", "type": "bind", "source": $s,
      "options": ["rbind", "ro"]}]
    | .annotations["run.fsrun.mounts.\(.mounts | length - 1)"] = ({destination: "/hostsrc",
      covers: ["etc/shadow"]} | tojson)
    | .process.args = ["sh", "-c", "ls -A /hostsrc/etc/private; stat -c %s:%a /hostsrc/etc/shadow"]' \
    --arg s "$DIR/src"
  echo "rbind-$TASK" >>"$DIR/ids-0"
  run --separate-stderr unshare -m --propagation private sh -c \
    'mount -t tmpfs mask "$1/src/etc/private" && exec "$2" --root "$3" run --bundle "$4" "$5"' \
    _ "$DIR" "$FSRUN" "$FSRUN_ROOT" "$BUNDLE" "rbind-$TASK"
  echo "status $status, out: $output, err: $stderr"
  [ "$status" -eq 0 ]
  [ "$output" = 0:0 ]
}

@test "bundle: an --out in a tree the command writes (the worktree, a writablePaths entry), by any path, is refused, 1, nothing written (root and an ordinary user)" {
  local uid out
  mkdir -p "$DIR/cache"
  for uid in 0 1000; do
    files_to "$uid"
    for out in "$WT/bundle" "$WT" "$DIR/cache/bundle"; do
      printf '{"writablePaths": ["%s"]}\n' "$DIR/cache" >"$DIR/policy.json"
      run --separate-stderr fsr "$uid" bundle --policy "$DIR/policy.json" --worktree "$WT" \
        --out "$out" -- /bin/true
      echo "uid $uid, $out: $status $stderr"
      [ "$status" -eq 1 ]
      [ "$(grep -c . <<<"$stderr")" = 1 ]
      [[ $stderr == *"bundle: --out \`$out\` is in \`"*"\`, which the sandboxed command can write" ]]
      [ ! -e "$out/config.json" ]
      [ ! -e "$WT/bundle" ]
      [ ! -e "$DIR/cache/bundle" ]
    done
  done
  # a writablePaths entry spelled through a host link holds the same directory (review18b #2)
  ln -s "$DIR" "$DIR/lnk"
  for uid in 0 1000; do
    files_to "$uid"
    printf '{"writablePaths": ["%s"]}\n' "$DIR/lnk/cache" >"$DIR/policy.json"
    run --separate-stderr fsr "$uid" bundle --policy "$DIR/policy.json" --worktree "$WT" \
      --out "$DIR/cache/bundle" -- /bin/true
    echo "uid $uid, through lnk: $status $stderr"
    [ "$status" -eq 1 ]
    [[ $stderr == *"bundle: --out \`$DIR/cache/bundle\` is in \`$DIR/lnk/cache\`, which the sandboxed command can write" ]]
    [ ! -e "$DIR/cache/bundle" ]
  done
  # a bind mount of their parent names the same directories under another path (review19 #6):
  # the root's alias, used by root and by the ordinary user
  mkdir "$DIR/alias"
  files_to 1000 # before the bind: chown -R would meet it as a cycle
  chown -h 0:0 "$DIR/lnk" # the host admin's link: root follows no other user's
  mount --bind "$DIR" "$DIR/alias"
  for uid in 0 1000; do
    printf '{"writablePaths": ["%s"]}\n' "$DIR/lnk/cache" >"$DIR/policy.json"
    for out in "$DIR/alias/cache/bundle" "$DIR/alias/worktree/bundle"; do
      run --separate-stderr fsr "$uid" bundle --policy "$DIR/policy.json" --worktree "$WT" \
        --out "$out" -- /bin/true
      echo "uid $uid, through a bind: $out: $status $stderr"
      [ "$status" -eq 1 ]
      [ "$(grep -c . <<<"$stderr")" = 1 ]
      [[ $stderr == *"bundle: --out \`$out\` is in \`"*"\`, which the sandboxed command can write" ]]
      [ ! -e "$DIR/cache/bundle" ]
      [ ! -e "$WT/bundle" ]
    done
  done
  umount "$DIR/alias"
  # beside the worktree is fine
  printf '{"writablePaths": ["%s"]}\n' "$DIR/cache" >"$DIR/policy.json"
  fsr 0 bundle --policy "$DIR/policy.json" --worktree "$WT" --out "$DIR/beside" -- /bin/true
  [ -f "$DIR/beside/config.json" ]
}

# refs_of: the host repository's refs and objects, to compare before and after
refs_of() {
  git -c safe.directory='*' -C "$REPO" for-each-ref --format='%(refname) %(objectname)'
  find "$REPO/.git/objects" -type f | sort
}

# mark_of BUNDLE: the name of the mark `fsrun bundle` left for BUNDLE's config.json (its device and
# inode in hex, bundle-mark.h)
mark_of() {
  printf '%x-%x' "$(stat -c %d "$1/config.json")" "$(stat -c %i "$1/config.json")"
}

# commit_probe: what an exec runs to commit on the task branch (exit 0 when the commit was made)
commit_probe() {
  echo "git -c user.email=p@example.invalid -c user.name=p commit -q --allow-empty -m probe-$1"
}

# assert_not_task UID BUNDLE ID [ROOT [PROBE]]: create of BUNDLE as UID (on ROOT, default UID's
# state root) succeeds with the one warning that the annotation is ignored; an exec's commit (or
# PROBE's write into the git dir) does not reach the repository (no overlay: the git dir is the
# bundle's read-only bind); delete leaves nothing
assert_not_task() {
  local uid=$1 bundle=$2 id=$3 root=${4:-$(state_of "$1")} probe=${5:-$(commit_probe "$3")}
  local before stderr
  before=$(refs_of)
  if [ "$root" = "$(state_of "$uid")" ]; then
    echo "$id" >>"$DIR/ids-$uid"
  else
    echo "$id" >>"$DIR/other-ids-$uid"
  fi
  as_uid "$uid" "$FSRUN" --root "$root" create --bundle "$bundle" "$id" </dev/null >/dev/null \
    2>"$DIR/create.err"
  stderr=$(cat "$DIR/create.err")
  echo "uid $uid, $bundle: create: $stderr"
  [ "$stderr" = "fsrun: warning: create: $KEY: ignored: config.json is not one \`fsrun bundle\` wrote with this state root (--root); no git overlay, sync or walk at exec and delete" ]
  as_uid "$uid" "$FSRUN" --root "$root" start "$id"
  run --separate-stderr as_uid "$uid" "$FSRUN" --root "$root" exec "$id" /bin/sh -c \
    "grep ' $REPO/.git ' /proc/self/mountinfo | grep ' - overlay '; $probe"
  echo "exec: status $status, out: $output, err: $stderr"
  [ "$status" -ne 0 ]
  [ -z "$output" ]
  [[ $stderr == *"exec: git: the container was not created from a bundle \`fsrun bundle\` marked; $KEY ignored"* ]]
  [[ $stderr == *"Read-only file system"* ]]
  [ "$(refs_of)" = "$before" ]
  as_uid "$uid" "$FSRUN" --root "$root" delete --force "$id" 2>/dev/null
  [ ! -e "$root/$id" ]
  assert_no_leftovers "$id" "$bundle"
}

@test "bundle: run.fsrun.sandbox.worktree counts only on the config.json fsrun bundle wrote and marked in the caller's state root: a copy, an edit, another state root are ignored with one warning and commit nothing; the bundle's own is a task container, at each create (root and an ordinary user)" {
  local uid out root n mark before stderr
  KEY='annotations["run.fsrun.sandbox.worktree"]'
  for uid in 0 1000; do
    files_to "$uid"
    root=$(state_of "$uid")
    out=$DIR/bundle-$uid
    bundle_for "$uid" '{}' "$out" sleep infinity
    mark=$(mark_of "$out")
    # the mark: the caller's, 0600 in a 0700 directory of the state root
    [ "$(stat -c '%u %a' "$root/.bundle-marks")" = "$uid 700" ]
    [ "$(stat -c '%u %a' "$root/.bundle-marks/$mark")" = "$uid 600" ]
    # a copy of the bundle (config.json byte for byte): another file, no mark
    as_uid "$uid" sh -c 'mkdir "$2" && cd "$1" && cp -a config.json empty resolv.conf rootfs "$2" &&
      : >"$2/unreadable" && chmod 0 "$2/unreadable"' sh "$out" "$DIR/copy-$uid"
    cmp "$out/config.json" "$DIR/copy-$uid/config.json"
    assert_not_task "$uid" "$DIR/copy-$uid" "copy-$uid-$TASK"
    # fsrun validate says what create would
    run --separate-stderr fsr "$uid" validate --bundle "$DIR/copy-$uid"
    [ "$status" -eq 0 ]
    [[ $stderr == "fsrun: warning: validate: $KEY: ignored: "* ]]
    # edited in place (the same file, other bytes): one variable more, and the shape refused before
    # (the worktree bound read-only) now ignored too
    bundle_for "$uid" '{}' "$DIR/edit-$uid" sleep infinity
    as_uid "$uid" sh -c 'jq ".process.env += [\"EDITED=1\"]" "$1" >"$1.new" && cat "$1.new" >"$1"' \
      sh "$DIR/edit-$uid/config.json"
    assert_not_task "$uid" "$DIR/edit-$uid" "edit-$uid-$TASK"
    bundle_for "$uid" '{}' "$DIR/ro-$uid" sleep infinity
    as_uid "$uid" sh -c 'jq --arg wt "$2" "(.mounts[] | select(.destination == \$wt) | .options) += [\"ro\"]" "$1" >"$1.new" && cat "$1.new" >"$1"' \
      sh "$DIR/ro-$uid/config.json" "$WT"
    assert_not_task "$uid" "$DIR/ro-$uid" "ro-$uid-$TASK"
    # the bundle itself, created on another state root (as a client's, with its own)
    assert_not_task "$uid" "$out" "other-$uid-$TASK" "$DIR/other-root-$uid"
    # the bundle's own create on the caller's root: a task container, whose exec's commit lands;
    # its state dir holds a link to the mark (the record stays for the bundle's next create)
    before=$(git -c safe.directory='*' -C "$REPO" rev-parse "$TASK")
    echo "flow-$uid-$TASK" >>"$DIR/ids-$uid"
    fsr "$uid" create --bundle "$out" "flow-$uid-$TASK" 2>"$DIR/create.err"
    [ ! -s "$DIR/create.err" ]
    [ "$(stat -c %i "$root/flow-$uid-$TASK/bundle-mark")" = "$(stat -c %i "$root/.bundle-marks/$mark")" ]
    fsr "$uid" start "flow-$uid-$TASK"
    fsr "$uid" exec "flow-$uid-$TASK" /bin/sh -c "$(commit_probe flow)"
    [ "$(git -c safe.directory='*' -C "$REPO" log -1 --format=%s "$TASK")" = probe-flow ]
    [ "$(git -c safe.directory='*' -C "$REPO" rev-parse "$TASK^")" = "$before" ]
    fsr "$uid" delete --force "flow-$uid-$TASK"
    assert_no_leftovers "flow-$uid-$TASK" "$out"
    # the next create of the same bundle is a task container too
    [ -e "$root/.bundle-marks/$mark" ]
    [ -n "$(task_flow "$uid" "$out" "again-$uid-$TASK" "grep ' $REPO/.git ' /proc/self/mountinfo | grep ' - overlay '")" ]
    # a bundle removed without a create (the adapter's policy check): its mark goes at the next
    # `fsrun bundle` (the edited bundles' stay while their config.json does)
    bundle_for "$uid" '{}' "$DIR/gone-$uid" sleep infinity
    n=$(find "$root/.bundle-marks" -type f | wc -l)
    rm -rf "$DIR/gone-$uid"
    bundle_for "$uid" '{}' "$DIR/next-$uid" sleep infinity
    [ -e "$root/.bundle-marks/$(mark_of "$DIR/next-$uid")" ]
    [ "$(find "$root/.bundle-marks" -type f | wc -l)" = "$n" ]
    find "$root/.bundle-marks" -type f -exec cat {} + | grep -qx "$DIR/next-$uid"
    [ -z "$(find "$root/.bundle-marks" -type f -exec grep -lx "$DIR/gone-$uid" {} +)" ]
  done
  # the review's config: a plain bundle with a read-only rbind of a repository (root's) and the key
  setup_bundle "$DIR/plain-bundle"
  update_config '.mounts += [{"destination": $r, "type": "bind", "source": $r, "options": ["rbind", "ro"]}]
    | .process.args = ["sleep", "infinity"] | .process.cwd = $r
    | .annotations["run.fsrun.sandbox.worktree"] = $r' --arg r "$REPO"
  assert_not_task 0 "$BUNDLE" "plain-$TASK" "$FSRUN_ROOT" ": >'$REPO/.git/probe'"
  [ ! -e "$REPO/.git/probe" ]
}

@test "exec and delete of a container whose kept config carries run.fsrun.sandbox.worktree without the bundle's mark in its state dir (one created before the mark) lay no overlay, write nothing to the repository and walk nothing (review21 L4)" {
  local id=forged-$TASK main0 evil before state
  main0=$(git -C "$REPO" rev-parse HEAD)
  # a commit on top of main that the repository has (as the review's command copied its objects in)
  evil=$(git -C "$REPO" commit-tree -p "$main0" -m evil "$main0^{tree}")
  before=$(refs_of)
  setup_bundle "$DIR/plain-bundle"
  update_config '.mounts += [{"destination": $r, "type": "bind", "source": $r, "options": ["rbind", "ro"]}]
    | .process.args = ["sleep", "infinity"]' --arg r "$REPO"
  echo "$id" >>"$DIR/ids-0"
  "$FSRUN" --root "$FSRUN_ROOT" create --bundle "$BUNDLE" "$id"
  "$FSRUN" --root "$FSRUN_ROOT" start "$id"
  # the annotation in the state create kept, as an fsrun without the create's check left it
  state=$FSRUN_ROOT/$id
  for f in config.json state.json; do
    jq --arg r "$REPO" '.annotations["run.fsrun.sandbox.worktree"] = $r' "$state/$f" >"$DIR/$f"
    cat "$DIR/$f" >"$state/$f"
  done
  run --separate-stderr "$FSRUN" --root "$FSRUN_ROOT" exec "$id" sh -c \
    "grep ' $REPO/.git ' /proc/self/mountinfo | grep ' - overlay '; echo $evil >'$REPO/.git/refs/heads/$(git -C "$REPO" symbolic-ref --short HEAD)'"
  echo "status $status, out: $output, err: $stderr"
  [ "$status" -ne 0 ]
  [ -z "$output" ]
  [[ $stderr == *"exec: git: the container was not created from a bundle \`fsrun bundle\` marked; annotations[\"run.fsrun.sandbox.worktree\"] ignored: no git overlay, sync or walk"* ]]
  [[ $stderr == *"Read-only file system"* ]]
  [ "$(git -C "$REPO" rev-parse HEAD)" = "$main0" ]
  [ "$(refs_of)" = "$before" ]
  # a repository the host made in the tree since the create: a walk at delete would name it
  git init -q "$REPO/nested"
  run --separate-stderr "$FSRUN" --root "$FSRUN_ROOT" delete --force "$id"
  echo "delete: status $status, err: $stderr"
  [ "$status" -eq 0 ]
  [[ $stderr == *"delete: git: the container was not created from a bundle \`fsrun bundle\` marked; annotations[\"run.fsrun.sandbox.worktree\"] ignored"* ]]
  [[ $stderr != *"nested"* ]]
  assert_no_leftovers "$id"
}
