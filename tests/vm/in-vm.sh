#!/bin/bash
# Runs inside the cgroup v2 VM (started by tests/vm/run.sh), as root, in the repository:
#   in-vm.sh LOG_DIR FILE.bats...
# Each file's TAP goes to LOG_DIR/NAME.tap; one short line per file goes to stdout (the VM's
# serial console is slow: no test output here). Exit 1 when any test failed.
set -uo pipefail
log_dir=$1
shift
export FSRUN_SRCDIR=$PWD
# shellcheck source=../../contrib/lib.sh
source contrib/lib.sh

if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
  echo "vm: /sys/fs/cgroup is not a cgroup2 mount: not the VM this suite expects"
  exit 1
fi

# The VM's / is the host's over 9p under a tmpfs overlay, so the lock files the host's own suites
# make in /etc while they run (useradd, userdel: /etc/passwd.lock) show through, and a useradd here
# then fails ("cannot lock /etc/passwd; try again later"). A copy of /etc on tmpfs, bound over it,
# keeps the VM's user database apart from the host's. The host's lock is not ours to take (an fcntl
# lock does not cross 9p), so the copy leaves shadow-utils' lock files out (NAME.lock, and the
# NAME.PID it links one from): copied while a host useradd held them, they would lock the VM's
# database for good. A file that vanishes mid-copy (such a lock released) is no error; the files
# themselves are replaced by rename, so each is copied whole, old or new.
copy_etc() {
  local err
  if ! err=$(cp -a /etc/. "$1/" 2>&1) && grep -v 'No such file or directory$' <<<"$err" | grep -q .; then
    echo "$err"
    return 1
  fi
  rm -f "$1"/{passwd,shadow,group,gshadow,subuid,subgid}.lock \
    "$1"/{passwd,shadow,group,gshadow,subuid,subgid}.[0-9]*
  [ -s "$1/passwd" ] && [ -s "$1/group" ]
}
vm_etc=$(mktemp -d /run/vm-etc.XXXXXX)
if ! copy_etc "$vm_etc" || ! mount --bind "$vm_etc" /etc; then
  echo "vm: cannot give the VM an /etc of its own"
  exit 1
fi

# State, bundles and the rootfs cache on tmpfs: mknod, mkfifo and unix sockets fail on the 9p share.
export TMPDIR=/tmp FSRUN_TEST_STATE_BASE=/run/fsrun-tests/vm FSRUN
# for the few tests that bound CPU time: this VM's CPU is emulated in software (TCG)
export FSRUN_IN_VM=1
TEST_CACHE=$(mktemp -d /tmp/fsrun-test-cache.XXXXXX)
export TEST_CACHE
mkdir -p "$FSRUN_TEST_STATE_BASE"
filter=()
[ -n "${VM_BATS_FILTER:-}" ] && filter=(--filter "$VM_BATS_FILTER")

# VM_BATS_TAGS: a tests/integration file that tags single tests with one of these tags (a
# space-separated list) runs only those (the rest ran on the host); tests/vm/ files and files tagged
# as a whole with one of them run every test.
tag_line() { # tag_line KIND: a `# bats KIND_tags=` line naming one of VM_BATS_TAGS
  echo "^#[[:space:]]*bats[[:space:]]+$1_tags=(.*[ ,])?(${VM_BATS_TAGS// /|})([ ,]|\$)"
}
tagged_tests_only() {
  [ -n "${VM_BATS_TAGS:-}" ] && [[ $1 != tests/vm/* ]] &&
    grep -qE "$(tag_line test)" "$1" && ! grep -qE "$(tag_line file)" "$1"
}

failed=0
for file in "$@"; do
  name=${file##*/}
  tap=$log_dir/${name%.bats}.tap
  start=$SECONDS
  tags=() scope=""
  if tagged_tests_only "$file"; then
    for tag in $VM_BATS_TAGS; do tags+=(--filter-tags "$tag"); done
    scope=", tests tagged ${VM_BATS_TAGS// / or }"
  fi
  fsrun_run_bats_file "$file" "$tap" "${filter[@]}" "${tags[@]}"
  ok=$(grep -c '^ok ' "$tap")
  skips=$(grep -ciE '^ok .* # skip' "$tap")
  not_ok=$(grep -c '^not ok ' "$tap")
  [ "$not_ok" = 0 ] || failed=1
  echo "vm: $file: $((ok - skips)) passed, $not_ok failed, $skips skipped ($((SECONDS - start))s$scope)"
done
exit "$failed"
