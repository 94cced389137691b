# shellcheck shell=bash
# Shell helpers shared by contrib/quickstart.sh, contrib/run-tests.sh, contrib/fusion/run-tests.sh,
# tests/vm/run.sh and tests/integration/helpers.bash. Source it; it defines functions and variables
# only.
# bash only (arrays, [[ ]]); nothing here exits the caller except fsrun_die.

FSRUN_SRCDIR=${FSRUN_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}

# What a fresh Debian 12 needs to build fsrun.
FSRUN_BUILD_PACKAGES=(build-essential autoconf automake libtool pkg-config git
  libyajl-dev libseccomp-dev libcap-dev zlib1g-dev)
# What the test suites need on top: bats/jq/busybox for the integration tests, clang and its
# runtime for the fuzzers, clang-format for `make format-check`, the other runtimes for
# side-by-side tests and benchmarks, and the tools tests use from the host.
FSRUN_TEST_PACKAGES=(bats jq python3 busybox-static clang clang-format libclang-rt-14-dev
  crun runc bubblewrap socat util-linux iproute2 procps kmod uidmap valgrind
  slirp4netns passt # the sandbox's network egress helper, and the alternative it was measured against
  nodejs # the Fusion adapter (contrib/fusion); npm below
  man-db bsdextrautils # man and col: the man pages against --help (tests/integration/man.bats)
  strace # holds fsrun at a chosen system call (hold_pid_file, the Fusion pid-file timeout test)
  criu iptables) # checkpoint/restore (tests/vm/criu.bats, tests/integration/checkpoint.bats);
  # criu locks a container's network namespace with iptables-restore
# npm: contrib/fusion's `npm ci` installs TypeScript from its lockfile. Debian's nodejs lacks it;
# NodeSource's nodejs has it built in and conflicts with Debian's npm package.
command -v npm >/dev/null 2>&1 || FSRUN_TEST_PACKAGES+=(npm)
# ---- client suites (podman / containerd / docker) ----------------------------------------------
# contrib/run-tests.sh installs this list and runs tests/clients/*.bats. The CRI test drives
# containerd's CRI plugin over gRPC with Debian's python3 grpcio (no kubelet, no crictl in Debian).
# catatonit: rootless podman's pause process (a Recommends, and installs skip those).
FSRUN_CLIENT_PACKAGES=(podman conmon catatonit containerd docker.io python3-grpcio
  python3-grpc-tools python3-protobuf)
# ---- package suite (tests/package: make install, the Debian package) ------------------------------
# dpkg-buildpackage (dpkg-dev) with debhelper, and lintian; man-db renders the installed pages;
# the clients that must find the installed binary through the shipped configurations.
FSRUN_PACKAGE_PACKAGES=(dpkg-dev debhelper lintian man-db podman containerd docker.io)
# -------------------------------------------------------------------------------------------------

fsrun_note() { printf '%s\n' "$*"; }
fsrun_warn() { printf 'warning: %s\n' "$*" >&2; }
fsrun_die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

fsrun_is_root() { [ "$(id -u)" = 0 ]; }

fsrun_jobs() { nproc 2>/dev/null || echo 2; }

# fsrun_missing_packages PKG... : prints the packages that are not installed (one dpkg-query).
fsrun_missing_packages() {
  local installed
  installed=" $(dpkg-query -W -f='${db:Status-Status} ${Package}\n' "$@" 2>/dev/null |
    awk '$1 == "installed" { printf "%s ", $2 }')"
  local pkg
  for pkg in "$@"; do
    [[ $installed == *" ${pkg%%:*} "* ]] || printf '%s\n' "$pkg"
  done
}

# fsrun_ensure_packages LOGFILE PKG... : apt-get install whatever is missing (apt-get update once
# per process, and only when something is missing). Quiet; the apt output goes to LOGFILE.
fsrun_ensure_packages() {
  local log=$1
  shift
  local missing
  mapfile -t missing < <(fsrun_missing_packages "$@")
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! fsrun_is_root; then
    printf 'error: missing packages: %s\n  run as root, or: apt-get install %s\n' \
      "${missing[*]}" "${missing[*]}" >&2
    return 1
  fi
  command -v apt-get >/dev/null || {
    echo "error: apt-get not found: fsrun's scripts expect Debian 12" >&2
    return 1
  }
  fsrun_note "installing: ${missing[*]} (log: $log)"
  local apt_opts=(-q -y -o DPkg::Lock::Timeout=600)
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "${FSRUN_APT_UPDATED:-}" ]; then
    apt-get "${apt_opts[@]}" update >>"$log" 2>&1 || {
      tail -n 20 "$log" >&2
      return 1
    }
    FSRUN_APT_UPDATED=1
  fi
  apt-get "${apt_opts[@]}" install --no-install-recommends "${missing[@]}" >>"$log" 2>&1 || {
    tail -n 20 "$log" >&2
    return 1
  }
}

# fsrun_autogen LOGFILE : generate ./configure when it is missing or older than configure.ac.
# (Makefile.am changes are picked up by the generated Makefiles themselves.)
fsrun_autogen() {
  local log=$1
  if [ -x "$FSRUN_SRCDIR/configure" ] && [ ! "$FSRUN_SRCDIR/configure.ac" -nt "$FSRUN_SRCDIR/configure" ]; then
    return 0
  fi
  # Several builds may share one source tree: one autogen at a time.
  (
    flock 9
    if [ -x "$FSRUN_SRCDIR/configure" ] && [ ! "$FSRUN_SRCDIR/configure.ac" -nt "$FSRUN_SRCDIR/configure" ]; then
      exit 0
    fi
    "$FSRUN_SRCDIR/autogen.sh"
  ) 9<"$FSRUN_SRCDIR/configure.ac" >>"$log" 2>&1 || {
    tail -n 30 "$log" >&2
    return 1
  }
}

# fsrun_log_errors LOG [N]: the first N (default 15) lines of LOG that say what went wrong.
fsrun_log_errors() {
  grep -E 'error:|\*\*\*|undefined reference|No rule to make|^(FAIL|ERROR):|cannot|not found' "$1" | head -n "${2:-15}"
}

# fsrun_build BUILDDIR LOGFILE [CONFIGURE_ARG...] : configure (again when the arguments changed)
# and make in BUILDDIR, outside the source tree. Prints the log tail on failure.
fsrun_build() {
  local dir=$1 log=$2
  shift 2
  mkdir -p "$dir" || return 1
  local args_file="$dir/.fsrun-configure-args" want
  want=$(printf '%q ' "$@")
  fsrun_autogen "$log" || return 1
  if [ ! -f "$dir/Makefile" ] || [ "$(cat "$args_file" 2>/dev/null)" != "$want" ]; then
    rm -f "$args_file"
    (cd "$dir" && "$FSRUN_SRCDIR/configure" "$@") >>"$log" 2>&1 || {
      tail -n 30 "$log" >&2
      return 1
    }
    printf '%s' "$want" >"$args_file"
  fi
  make -C "$dir" -j"$(fsrun_jobs)" >>"$log" 2>&1 || {
    fsrun_log_errors "$log" 30 >&2
    return 1
  }
}

# fsrun_has_command FSRUN NAME : does `fsrun --help` list the subcommand NAME?
fsrun_has_command() {
  "$1" --help 2>&1 | grep -qE "^[[:space:]]*$2([[:space:]]|,|$)"
}

# fsrun_config_set_args CONFIG ARG... : process.args = [ARG...] in CONFIG, exactly, whatever the
# arguments contain (each goes in through --arg; one jq call). The file is written only on success.
fsrun_config_set_args() {
  local config=$1 jq_args=() list="" i=0 arg json
  shift
  for arg in "$@"; do
    jq_args+=(--arg "a$i" "$arg")
    list+="\$a$i,"
    i=$((i + 1))
  done
  json=$(jq "${jq_args[@]}" ".process.args = [${list%,}]" "$config") || return 1
  printf '%s\n' "$json" >"$config"
}

# fsrun_static_busybox : path of a statically linked busybox (Debian's busybox-static).
fsrun_static_busybox() {
  local bb
  for bb in "${FSRUN_BUSYBOX:-}" /bin/busybox /usr/bin/busybox; do
    [ -n "$bb" ] && [ -x "$bb" ] || continue
    # A dynamic busybox would not run inside a rootfs that has no libc.
    local linkage
    linkage=$(LC_ALL=C ldd "$bb" 2>&1) # exits 1 for a static binary
    if [[ $linkage == *"not a dynamic"* || $linkage == *"statically linked"* ]]; then
      printf '%s\n' "$bb"
      return 0
    fi
  done
  echo "error: no static busybox found (apt-get install busybox-static)" >&2
  return 1
}

# fsrun_make_busybox_rootfs DIR [--no-binary] : a minimal rootfs: /bin/busybox and its applets as
# symlinks, /etc/passwd and /etc/group (root, user 1000, nobody), and the usual empty mount points.
# With --no-binary the applet links are made but /bin/busybox itself is left for the caller to
# place (the test helpers hardlink one shared copy).
fsrun_make_busybox_rootfs() {
  local root=$1 bb d
  bb=$(fsrun_static_busybox) || return 1
  mkdir -p "$root" || return 1
  for d in bin sbin usr/bin usr/sbin etc proc sys dev tmp run var/tmp root home/user; do
    mkdir -p "$root/$d"
  done
  chmod 1777 "$root/tmp" "$root/var/tmp"
  chmod 0700 "$root/root"
  cp "$bb" "$root/bin/busybox" || return 1
  if fsrun_is_root && chroot "$root" /bin/busybox --install -s 2>/dev/null; then
    :
  else
    local applet
    while read -r applet; do
      [ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
    done < <("$bb" --list-full)
  fi
  [ "${2:-}" = --no-binary ] && rm -f "$root/bin/busybox"
  cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000:user:/home/user:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
  cat >"$root/etc/group" <<'EOF'
root:x:0:
user:x:1000:
nogroup:x:65534:
EOF
  printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"
  : >"$root/etc/resolv.conf"
  if fsrun_is_root; then chown 1000:1000 "$root/home/user"; fi
}

# fsrun_run_bats_file FILE TAPFILE [BATS_OPTION...] : run one bats file as TAP into TAPFILE, then
# sweep what it left behind and append a `not ok` line to TAPFILE for each leftover: containers in
# its state root, mounts or processes under its temporary directory. Bats' own cleanup is
# replaced by one that never deletes through a leaked mount.
# Needs FSRUN and FSRUN_TEST_STATE_BASE; BATS_FILE_TIMEOUT (seconds, default 2400).
# fsrun_report_leftover PID NAME: a "not ok" line for PID, left running after the file NAME
# ended, and PID killed. A process that has ended since it was found (gone, or a zombie: its exit
# was under way, e.g. a teardown's SIGKILL) is left out: it was not left running, and naming it
# failed a whole file ("process 8172 () was left running", the command line already gone).
fsrun_report_leftover() {
  local pid=$1 cmd stat
  { read -r stat <"/proc/$pid/stat" && cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline"); } 2>/dev/null || return 0
  stat=${stat##*) }
  case ${stat:0:1} in Z | X) return 0 ;; esac
  echo "not ok - $2: process $pid ($cmd) was left running"
  kill -9 "$pid" 2>/dev/null
}

# fsrun_wait_child PID: waits for PID (a child of this shell) to end, through the trapped signals
# that interrupt `wait`, and returns its exit status. FSRUN_CHILD is PID meanwhile: a TERM or INT
# trap (contrib/run-tests.sh's) passes the signal on to it.
fsrun_wait_child() {
  local rc
  FSRUN_CHILD=$1
  while :; do
    wait "$1"
    rc=$?
    kill -0 "$1" 2>/dev/null || break
  done
  FSRUN_CHILD=""
  return "$rc"
}

# fsrun_pids_under DIR: the processes whose root or cwd is under DIR, or, in another mount
# namespace, whose mount table shows a mount under DIR and whose root is not the host's. A process
# whose root is still the host's has not pivoted: it is no container, but a copy of the host's
# mount table taken while DIR's mounts existed (another suite's `unshare -m`, run in parallel by
# run-tests.sh), and killing it failed that suite.
fsrun_pids_under() {
  local dir=$1 own_ns host_root
  own_ns=$(readlink /proc/self/ns/mnt)
  host_root=$(stat -L -c %d:%i /proc/self/root)
  {
    find /proc -mindepth 2 -maxdepth 2 \( -name root -o -name cwd \) -lname "$dir/*" -printf '%h\n'
    grep -lF "$dir/" /proc/[0-9]*/mountinfo | while read -r f; do
      f=${f%/mountinfo}
      [ "$(readlink "$f/ns/mnt")" != "$own_ns" ] || continue
      [ "$(stat -L -c %d:%i "$f/root")" != "$host_root" ] && echo "$f"
    done
  } 2>/dev/null | cut -d/ -f3 | sort -u | grep -vx "$$"
}

fsrun_run_bats_file() {
  local file=$1 tap=$2
  shift 2
  local name=${file##*/}
  name=${name%.bats}
  local tmp rc=0 limit=${BATS_FILE_TIMEOUT:-2400}
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/fsrun-bats.XXXXXX") || return 1
  chmod 755 "$tmp" # container users must reach bundles under it
  # (contrib/run-tests.sh's check after all suites looks here for what the sweep below missed)
  [ -z "${FSRUN_BATS_TMP_LIST:-}" ] || echo "$tmp" >>"$FSRUN_BATS_TMP_LIST"
  # in the background, waited for: a TERM or INT trapped by the caller stops bats (its teardowns
  # run) and the sweep below still runs
  TMPDIR=$tmp FSRUN_SWEEP_CGROUPS=$tmp/sweep-cgroups timeout -k 10 "$limit" bats --tap --timing --print-output-on-failure \
    --no-tempdir-cleanup "$@" "$file" >"$tap" 2>&1 </dev/null &
  fsrun_wait_child $! || rc=$?
  [ "$rc" = 124 ] && echo "not ok - $name: timed out after ${limit}s (whole file)" >>"$tap"

  local dir id state_root="$FSRUN_TEST_STATE_BASE/$name"
  for dir in "$state_root"/*/; do
    [ -d "$dir" ] || continue
    dir=${dir%/}
    id=${dir##*/}
    echo "not ok - $name: container $id was left behind after the file ended" >>"$tap"
    "$FSRUN" --root "$state_root" delete --force "$id" >/dev/null 2>&1
  done
  rm -rf --one-file-system "$state_root"

  # Leftover processes: root or cwd under the tmp dir (before pivot_root), or a mount table that
  # shows a bundle under it (a container's root mount does)
  local pid mnt cg
  for pid in $(fsrun_pids_under "$tmp"); do
    fsrun_report_leftover "$pid" "$name" >>"$tap"
  done
  for mnt in $(awk -v dir="$tmp/" 'index($5, dir) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    echo "not ok - $name: mount $mnt was left behind" >>"$tap"
    umount -l "$mnt" 2>/dev/null
  done
  # cgroups the file made outside fsrun/ (their names, one a line, in $FSRUN_SWEEP_CGROUPS: a
  # docker daemon's cgroup parent), removed once empty
  if [ -s "$tmp/sweep-cgroups" ]; then
    while read -r cg; do
      [[ $cg =~ ^[A-Za-z0-9_.-]+$ && $cg != .* ]] || continue
      for dir in /sys/fs/cgroup/"$cg" /sys/fs/cgroup/*/"$cg"; do
        [ -d "$dir" ] || continue
        echo "not ok - $name: cgroup $dir was left behind" >>"$tap"
        find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null
      done
    done <"$tmp/sweep-cgroups"
  fi
  rm -rf --one-file-system "$tmp"
  return "$rc"
}
