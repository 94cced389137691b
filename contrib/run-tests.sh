#!/bin/bash
# Installs what is missing, builds fsrun and runs every test suite. Run as root on Debian 12; safe to
# run again (installs and builds are incremental). CI runs it through .ci/run.
#
#   contrib/run-tests.sh [--suites LIST] [--no-install] [--bats-filter REGEX] [-h]
#
# Suites (default: all, in this order):
#   unit format bats asan valgrind vm fuzz distcheck clients fusion package
#   unit       `make check` (TAP unit tests) in the plain and the ASan build
#   format     `make format-check`
#   bats       tests/integration/*.bats against the plain binary
#   asan       tests/integration/*.bats against the ASan+UBSan binary: an ASan or LeakSanitizer
#              report fails the test that caused it, even a test that expected fsrun to fail.
#              (GCC's UBSan ignores log_path: a UBSan finding makes fsrun exit 1 with the report on
#              its stderr, which fails the test only if the test expected success.)
#   valgrind   the CLI under valgrind's memcheck (tests/valgrind/cli.sh) on a dynamically linked build
#              (build/dynamic: memcheck cannot follow a static binary's heap): no error, no leak
#   vm         the bats tests tagged cgroupv2 or kernel61 inside the cgroup v2 VM, which boots Debian
#              12's kernel 6.1 (tests/vm/run.sh), started
#              once the builds are done and run beside the other suites (it shares nothing with them);
#              BATS_FILES and --bats-filter narrow it as they narrow bats
#   fuzz       tests/fuzz/run-fuzzers.sh, FUZZ_SECONDS per target (default 20)
#   distcheck  `make distcheck`
#   clients    tests/clients/*.bats (podman, containerd, docker), when that folder exists
#   fusion     contrib/fusion/run-tests.sh: the TypeScript Fusion adapter (npm ci, tsc, node --test, as
#              root and as an ordinary user it makes)
#   package    tests/package/*.bats: `make install` of the plain build (DESTDIR, prefix, uninstall),
#              and the Debian package built, installed, used and removed in a throw-away root
#
# Environment: FSRUN_BUILD_ROOT (default: build/ in the repo), FUZZ_SECONDS, BATS_FILES (a list of
# .bats files instead of tests/integration/*.bats), BATS_FILE_TIMEOUT (default 2400 s per file on
# the host: under ASan at load 25-30 exec-git.bats took 1273 s and sandbox-git.bats 1081 s, each
# split in three since; a file past half of its limit is named in the summary, to be split; the VM
# keeps its own 900 s),
# FSRUN_TEST_STATE_PREFIX (default /run/fsrun-tests: where the bats state roots go, so that two runs
# at once on one machine keep apart), FSRUN_TEST_TIME_BUDGET (default 4800 s: past it, the suites
# not yet started are skipped, so that the summary still comes out before CI's 90-minute limit).
# Logs: $FSRUN_BUILD_ROOT/test-logs. The last line is `N passed, N failed, N skipped`; the exit
# status is 1 when anything failed.
# After all suites, a check lists what they left, each a failure by name, and removes it: only what
# this run made (its state dirs under FSRUN_TEST_STATE_PREFIX, its bats files' and the fusion
# suite's temporary dirs with their mounts and the processes in them, those processes' cgroups,
# test users made during the run by a process that has ended). A TERM or INT stops the bats file
# or the fusion suite that is running (their teardowns and sweeps run), skips the rest, and still
# runs that check and the summary.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1
export FSRUN_SRCDIR=$repo
# shellcheck source=lib.sh
source "$repo/contrib/lib.sh"

ALL_SUITES="unit format bats asan valgrind vm fuzz distcheck clients fusion package"
suites=$ALL_SUITES
install=1
bats_filter=()
while [ $# -gt 0 ]; do
  case $1 in
    --suites) suites=${2//,/ }; shift 2 ;;
    --suites=*) suites=${1#*=}; suites=${suites//,/ }; shift ;;
    --no-install) install=0; shift ;;
    --bats-filter) bats_filter=(--filter "$2"); shift 2 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-tests.sh: unknown argument: $1 (try --help)" >&2; exit 2 ;;
  esac
done
for s in $suites; do
  [[ " $ALL_SUITES " == *" $s "* ]] || { echo "run-tests.sh: unknown suite: $s (one of: $ALL_SUITES)" >&2; exit 2; }
done
wanted() { [[ " $suites " == *" $1 "* ]]; }
TIME_BUDGET=${FSRUN_TEST_TIME_BUDGET:-4800}
FILE_TIMEOUT=${BATS_FILE_TIMEOUT:-2400}
budget_left() { echo $((TIME_BUDGET - SECONDS)); }
# limit SECONDS: SECONDS, or less when the time budget runs out sooner (a minute kept for the summary)
limit() {
  local left=$(($(budget_left) - 60))
  [ "$left" -lt "$1" ] && echo $((left > 1 ? left : 1)) || echo "$1"
}

BUILD_ROOT=${FSRUN_BUILD_ROOT:-$repo/build}
mkdir -p "$BUILD_ROOT" && BUILD_ROOT=$(cd "$BUILD_ROOT" && pwd)
LOG_DIR=$BUILD_ROOT/test-logs
rm -rf "$LOG_DIR"
mkdir -p "$LOG_DIR"
PLAIN=$BUILD_ROOT/plain
ASAN=$BUILD_ROOT/asan
# what the run makes outside the build root, for the check after all suites
export FSRUN_BATS_TMP_LIST=$LOG_DIR/bats-tmp-dirs
state_bases=() # the suites' state dirs under FSRUN_TEST_STATE_PREFIX
other_tmps=()  # TEST_CACHE dirs, the fusion suite's TMPDIR
users_before=$(cut -d: -f1 /etc/passwd | sort)
# a TERM or INT: the bats file or fusion suite that runs is stopped (fsrun_wait_child), the rest
# skipped; the leftover check and the summary still run
interrupted="" FSRUN_CHILD=""
on_signal() {
  interrupted=$1
  [ -z "$FSRUN_CHILD" ] || kill -TERM "$FSRUN_CHILD" 2>/dev/null
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
DYNAMIC=$BUILD_ROOT/dynamic # the plain build, linked dynamically: valgrind cannot follow a static one
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
export FUZZ_SECONDS

# ---- results ------------------------------------------------------------------------------------
passed=0 failed=0 skipped=0
failures=() # "name<TAB>log<TAB>detail"
skips=()    # "name (reason)"
timings=()  # "suite<TAB>seconds<TAB>cpu seconds<TAB>summary"
file_timings=() # "seconds<TAB>cpu seconds<TAB>suite: file" of each bats file (the slowest are listed at the end)
near_limit=()   # "suite: file: N s of its M s limit" for each bats file past half of its time limit

pass() { passed=$((passed + 1)); }
fail() { # fail NAME LOG [DETAIL]
  failed=$((failed + 1))
  failures+=("$1"$'\t'"${2:-}"$'\t'"${3:-}")
}
skip() { # skip NAME REASON
  skipped=$((skipped + 1))
  skips+=("$1 ($2)")
}
rel() { printf '%s' "${1#"$repo"/}"; }

# out_of_time NAME: NAME is skipped for want of time; running out of time is itself one failure.
out_of_time() {
  skip "$1" "time budget of ${TIME_BUDGET}s used up"
  if [ -z "${budget_failed:-}" ]; then
    budget_failed=1
    fail "time budget: ${TIME_BUDGET}s used up before everything ran (FSRUN_TEST_TIME_BUDGET)"
  fi
}

# runnable SUITE: asked for, and time left (otherwise the suite is a named skip).
runnable() {
  wanted "$1" || return 1
  if [ -n "$interrupted" ]; then
    skip "$1" "the run was stopped by SIG$interrupted"
    return 1
  fi
  if [ "$(budget_left)" -lt 180 ]; then
    out_of_time "$1"
    return 1
  fi
}

# children_cpu: CPU time (user + system, in clock ticks) of the children this script has waited for,
# and so of everything they waited for. The difference over a suite or a file is what it cost,
# whatever else ran on the machine meanwhile (wall time on a loaded machine says little).
children_cpu() {
  local stat fields
  read -r stat <"/proc/$$/stat"
  read -ra fields <<<"${stat##*) }"
  echo $((fields[13] + fields[14]))
}
CLK_TCK=$(getconf CLK_TCK)
cpu_since() { echo $((($(children_cpu) - $1) / CLK_TCK)); } # cpu_since TICKS: seconds

suite_start() {
  suite_name=$1
  suite_t0=$SECONDS
  suite_cpu0=$(children_cpu) suite_cpu_extra=0
  suite_p0=$passed suite_f0=$failed suite_s0=$skipped
}
suite_end() {
  local secs=$((SECONDS - suite_t0)) summary=${1:-}
  [ -n "$summary" ] || summary="$((passed - suite_p0)) passed, $((failed - suite_f0)) failed, $((skipped - suite_s0)) skipped"
  local cpu
  cpu=$(($(cpu_since "$suite_cpu0") + suite_cpu_extra))
  timings+=("$suite_name"$'\t'"$secs"$'\t'"$cpu"$'\t'"$summary")
  printf '[%4ds, cpu %4ds] %-14s %s\n' "$secs" "$cpu" "$suite_name" "$summary"
}

# parse_tap SUITE FILE_LABEL TAPFILE [SANITIZER_PREFIX]: count ok / not ok / # skip lines. With a
# sanitizer prefix, a test that passed but left a report PREFIX.N.* counts as failed.
parse_tap() {
  local suite=$1 label=$2 tap=$3 san=${4:-}
  local line plan="" results=0 name reason num detail="" detail_lines=0 current="" reports
  flush() {
    [ -n "$current" ] && fail "$current" "$(rel "$tap")" "$detail"
    current="" detail="" detail_lines=0
  }
  while IFS= read -r line || [ -n "$line" ]; do
    case $line in
      1..*)
        plan=${line#1..}
        plan=${plan%% *}
        ;;
      "ok "* | "not ok "*)
        flush
        results=$((results + 1))
        local rest=${line#ok }
        [[ $line == "not ok "* ]] && rest=${line#not ok }
        num=${rest%% *}
        [[ $num =~ ^[0-9]+$ ]] && rest=${rest#"$num"} || num=""
        rest=${rest# }
        rest=${rest#- }
        reason=""
        shopt -s nocasematch
        if [[ $rest =~ ^(.*)\ \#\ skip(\ (.*))?$ ]]; then
          rest=${BASH_REMATCH[1]}
          reason=${BASH_REMATCH[3]:-no reason given}
        fi
        shopt -u nocasematch
        [[ $rest =~ ^(.*)\ in\ [0-9]+ms$ ]] && rest=${BASH_REMATCH[1]}
        name="$suite: $label: $rest"
        if [[ $line == "not ok "* ]]; then
          current=$name
        elif [ -n "$reason" ]; then
          skip "$name" "$reason"
        elif [ -n "$san" ] && [ -n "$num" ] && compgen -G "$san.$num.*" >/dev/null; then
          reports=$(compgen -G "$san.$num.*" | head -n 3 | while read -r r; do rel "$r"; echo; done)
          fail "$name" "$(rel "$tap")" "# sanitizer report(s): $reports"
        else
          pass
        fi
        ;;
      "#"*)
        # diagnostics of the failure just seen (bounded: summaries, not megabytes)
        if [ -n "$current" ] && [ "$detail_lines" -lt 25 ]; then
          detail+="$line"$'\n'
          detail_lines=$((detail_lines + 1))
        fi
        ;;
    esac
  done <"$tap"
  flush
  if [ -n "$san" ] && compgen -G "$san.file.*" >/dev/null; then
    fail "$suite: $label: sanitizer report outside any test" "$(rel "$(compgen -G "$san.file.*" | head -n 1)")"
  fi
  if [ -z "$plan" ] && [ "$results" = 0 ]; then
    fail "$suite: $label: no TAP output" "$(rel "$tap")" "$(tail -n 5 "$tap")"
  elif [ -n "$plan" ] && [ "$results" -lt "$plan" ]; then
    fail "$suite: $label: only $results of $plan tests reported" "$(rel "$tap")" "$(tail -n 5 "$tap")"
  fi
}

# parse_make_check SUITE LOG BUILDDIR STATUS: automake's TAP driver writes PASS:/FAIL:/SKIP:/...
# lines into each test's .log (next to its .trs).
parse_make_check() {
  local suite=$1 log=$2 dir=$3 status=$4 line kind rest results=0 had_fail=0
  while IFS= read -r line; do
    kind=${line%%:*}
    rest=${line#*: }
    case $kind in
      PASS | XFAIL) pass; results=$((results + 1)) ;;
      FAIL | XPASS | ERROR)
        results=$((results + 1)) had_fail=1
        local prog=${rest%% *}
        fail "$suite: $rest" "$(rel "$dir/$prog.log")"
        ;;
      SKIP)
        results=$((results + 1))
        if [[ $rest == *"# SKIP"* ]]; then
          skip "$suite: ${rest%% # SKIP*}" "$(r=${rest#*# SKIP}; r=${r# }; echo "${r:-no reason given}")"
        else
          skip "$suite: $rest" "skipped"
        fi
        ;;
    esac
  done < <(find "$dir" -name '*.trs' -print0 | sort -z | while IFS= read -r -d '' trs; do
    # Each test's own log: the console output of `make -j check` interleaves lines.
    grep -hE '^(PASS|FAIL|XFAIL|XPASS|SKIP|ERROR): ' "${trs%.trs}.log"
  done)
  if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    fail "$suite: make check timed out (a unit test hung)" "$(rel "$log")"
  elif [ "$status" != 0 ] && [ "$had_fail" = 0 ]; then
    fail "$suite: make check failed (build of the tests?)" "$(rel "$log")" "$(fsrun_log_errors "$log")"
  elif [ "$results" = 0 ]; then
    fsrun_note "  ($suite: no unit tests yet)"
  fi
}

# one_check NAME LOG COMMAND...: a step that is one test.
one_check() {
  local name=$1 log=$2
  shift 2
  if "$@" >>"$log" 2>&1; then
    pass
    return 0
  fi
  fail "$name" "$(rel "$log")" "$(fsrun_log_errors "$log")"
  return 1
}

# ---- bats ----------------------------------------------------------------------------------------
bats_files() {
  if [ -n "${BATS_FILES:-}" ]; then
    printf '%s\n' $BATS_FILES
  else
    # harness.bats first: when the helpers are broken, everything else is noise.
    ls tests/integration/harness.bats 2>/dev/null
    ls tests/integration/*.bats 2>/dev/null | grep -v '/harness\.bats$'
  fi
}

# run_bats_suite SUITE FSRUN_BINARY [SANITIZER_DIR]; SUITE is e.g. bats:plain (logs in bats-plain/)
run_bats_suite() {
  local suite=$1 binary=$2 san_dir=${3:-} file label tap
  local out=$LOG_DIR/${suite//:/-}
  mkdir -p "$out"
  export FSRUN=$binary
  export FSRUN_TEST_STATE_BASE=${FSRUN_TEST_STATE_PREFIX:-/run/fsrun-tests}/${suite//:/-}
  mkdir -p "$FSRUN_TEST_STATE_BASE"
  state_bases+=("$FSRUN_TEST_STATE_BASE")
  export TEST_CACHE
  TEST_CACHE=$(mktemp -d /tmp/fsrun-test-cache.XXXXXX)
  other_tmps+=("$TEST_CACHE")
  while read -r file; do
    [ -n "$file" ] || continue
    if [ -n "$interrupted" ]; then
      skip "$suite: ${file#tests/}" "the run was stopped by SIG$interrupted"
      continue
    fi
    label=${file#tests/}
    tap=$out/$(basename "$file" .bats).tap
    if [ "$(budget_left)" -lt 120 ]; then
      out_of_time "$suite: $label"
      continue
    fi
    export BATS_FILE_TIMEOUT
    BATS_FILE_TIMEOUT=$(limit "$FILE_TIMEOUT")
    local file_t0=$SECONDS file_cpu0
    file_cpu0=$(children_cpu)
    if [ -n "$san_dir" ]; then
      FSRUN_SANITIZER_LOG_DIR=$san_dir fsrun_run_bats_file "$file" "$tap" "${bats_filter[@]}"
      parse_tap "$suite" "$label" "$tap" "$san_dir/$(basename "$file")"
    else
      fsrun_run_bats_file "$file" "$tap" "${bats_filter[@]}"
      parse_tap "$suite" "$label" "$tap"
    fi
    file_timings+=("$((SECONDS - file_t0))"$'\t'"$(cpu_since "$file_cpu0")"$'\t'"$suite: $label")
    # a correct run must never be cut by the limit: one past half of it is named, to be split
    [ $((2 * (SECONDS - file_t0))) -le "$BATS_FILE_TIMEOUT" ] ||
      near_limit+=("$suite: $label: $((SECONDS - file_t0)) s of its ${BATS_FILE_TIMEOUT} s limit")
    printf '%s\n' "${file_timings[-1]}" >>"$LOG_DIR/bats-file-times.tsv"
  done < <(bats_files)
  if [ -n "$san_dir" ] && compgen -G "$san_dir/other.*" >/dev/null; then
    fail "$suite: sanitizer reports from fsrun runs outside the test helpers" "$(rel "$san_dir")"
  fi
  rm -rf "$TEST_CACHE"
  # (each file's state root went with its sweep)
  rmdir "$FSRUN_TEST_STATE_BASE" 2>/dev/null
  unset FSRUN TEST_CACHE FSRUN_TEST_STATE_BASE
}

# ================================================================================================
echo "fsrun run-tests: source $repo, builds in $(rel "$BUILD_ROOT"), logs in $(rel "$LOG_DIR")"
echo "suites: $suites"
total_t0=$SECONDS
total_cpu0=$(children_cpu)
fsrun_is_root || fsrun_warn "not root: installs are impossible and the root-only tests will be skipped"

# ---- install ------------------------------------------------------------------------------------
suite_start install
if [ "$install" = 1 ]; then
  packages=("${FSRUN_BUILD_PACKAGES[@]}" "${FSRUN_TEST_PACKAGES[@]}")
  wanted clients && packages+=("${FSRUN_CLIENT_PACKAGES[@]}")
  wanted package && packages+=("${FSRUN_PACKAGE_PACKAGES[@]}")
  if fsrun_ensure_packages "$LOG_DIR/apt.log" "${packages[@]}"; then
    suite_end "ok"
  else
    fail "install: apt-get install" "$(rel "$LOG_DIR/apt.log")"
    suite_end "FAILED"
  fi
else
  suite_end "not asked (--no-install)"
fi

# ---- builds -------------------------------------------------------------------------------------
build_ok() { # build_ok NAME DIR LOG CONFIGURE_ARG...
  local name=$1 dir=$2 log=$3
  shift 3
  suite_start "build:$name"
  if fsrun_build "$dir" "$log" "$@" >/dev/null 2>&1 && [ -x "$dir/fsrun" ]; then
    pass
    suite_end "ok"
    return 0
  fi
  fail "build:$name" "$(rel "$log")" "$(fsrun_log_errors "$log")"
  suite_end "FAILED (log: $(rel "$log"))"
  return 1
}

plain_ok=0 asan_ok=0 dynamic_ok=0
if wanted unit || wanted format || wanted bats || wanted valgrind || wanted vm || wanted distcheck || wanted clients || wanted fusion || wanted package; then
  build_ok plain "$PLAIN" "$LOG_DIR/build-plain.log" --enable-werror && plain_ok=1
fi
if wanted asan || wanted unit; then
  build_ok asan "$ASAN" "$LOG_DIR/build-asan.log" --enable-sanitizers --enable-werror && asan_ok=1
fi
if wanted valgrind; then
  build_ok dynamic "$DYNAMIC" "$LOG_DIR/build-dynamic.log" --disable-static-binary --enable-werror && dynamic_ok=1
fi

# ---- cgroup v2 VM: started here, collected in its place in the order ----------------------------
# The VM suite shares nothing with the host's suites: it has its own kernel, cgroups, /tmp and /run,
# and of the host it writes only its staging folder in the repository. So it runs beside them from
# here on (the bats suites are one chain of processes, which leaves the second core mostly idle).
# It runs in a session of its own that is not this script's child, so that its CPU time is its own
# line and not added to whichever suite was running when it ended; it is ended with the script.
vm_job=""
vm_launch() {
  vm_log=$LOG_DIR/vm
  mkdir -p "$vm_log"
  [ "$plain_ok" = 1 ] && tests/vm/run.sh --locate >/dev/null 2>"$vm_log/locate.err" || return 0
  vm_job=$vm_log/job
  mkdir -p "$vm_job"
  # run-in-vm's own bound (3000 s: the emulated VM took 2261-2283 s beside the bats suites, 94-95 %
  # of the 2400 s it had) and time to install and stage, within the time budget
  vm_deadline=$((SECONDS + $(limit 3000) + 300))
  [ "$vm_deadline" -le $((TIME_BUDGET - 60)) ] || vm_deadline=$((TIME_BUDGET - 60))
  # BATS_FILES and --bats-filter narrow the VM's files and tests as they narrow the host's
  local vm_args=("${bats_filter[@]}")
  [ -n "${BATS_FILES:-}" ] && vm_args+=(--among "$BATS_FILES")
  VM_TIMEOUT=$(limit 3000) setsid --fork bash -c '
    echo "$$" >"$1/pid"
    t0=$(date +%s) status=0
    tests/vm/run.sh --fsrun "$2" --log-dir "$3" "${@:5}" >"$3/run.out" 2>&1 </dev/null || status=$?
    read -r stat <"/proc/$$/stat"
    read -ra f <<<"${stat##*) }"
    echo "$status $(($(date +%s) - t0)) $(((f[13] + f[14]) / $4))" >"$1/result.tmp" && mv "$1/result.tmp" "$1/result"
  ' vm-job "$vm_job" "$PLAIN/fsrun" "$vm_log" "$CLK_TCK" "${vm_args[@]}" </dev/null >/dev/null 2>&1
}
vm_stop() { # ends a VM run still going (the script was interrupted or gave up waiting)
  local pid
  [ -n "$vm_job" ] && [ ! -e "$vm_job/result" ] && read -r pid 2>/dev/null <"$vm_job/pid" && kill -- -"$pid" 2>/dev/null
}
trap vm_stop EXIT

# vm_collect: waits for the VM run started by vm_launch and counts its results
vm_collect() {
  [ -n "${vm_asked:-}" ] || return 0
  suite_start vm
  if [ "$plain_ok" != 1 ]; then
    skip vm "build:plain failed"
  elif [ -z "$vm_job" ]; then
    if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
      # a native cgroup v2 host: the cgroupv2-tagged files ran on it in the bats suites
      skip vm "$(cat "$vm_log/locate.err"); this host has cgroup v2 itself, so the cgroupv2-tagged files ran on it in bats:plain and bats:asan; only tests/vm/vm-env.bats (the VM's own checks) did not run, and the kernel61-tagged tests ran on this host's kernel, not on 6.1"
    else
      skip vm "$(cat "$vm_log/locate.err"); the cgroup v2 tests (requires_cgroup_v2) were skipped on this $(stat -fc %T /sys/fs/cgroup 2>/dev/null | sed 's/tmpfs/v1 or hybrid/') host, and the kernel61-tagged ones ran on its kernel, not on 6.1"
    fi
  else
    while [ ! -e "$vm_job/result" ] && [ "$SECONDS" -lt "$vm_deadline" ]; do sleep 1; done
    local status=stopped secs=$((SECONDS - suite_t0)) cpu=0 tap tap_name n_tap=0
    if [ -e "$vm_job/result" ]; then
      read -r status secs cpu <"$vm_job/result"
    else
      vm_stop
      fail "vm: the VM run did not end by its deadline" "$(rel "$vm_log/run.out")" "$(tail -n 10 "$vm_log/run.out")"
    fi
    sed 's/^/  /' "$vm_log/run.out" | grep -E '^  vm: ' | head -n 40
    for tap in "$vm_log"/*.tap; do
      [ -e "$tap" ] || continue
      n_tap=$((n_tap + 1))
      tap_name=$(basename "$tap" .tap)
      if [ -f "tests/vm/$tap_name.bats" ]; then tap_name=vm/$tap_name.bats; else tap_name=integration/$tap_name.bats; fi
      parse_tap vm "$tap_name" "$tap"
    done
    case $status in
      0 | 1 | stopped) ;;
      3) skip vm "$(tail -n 1 "$vm_log/run.out")" ;;
      124) fail "vm: the VM run timed out" "$(rel "$vm_log/run.out")" "$(tail -n 10 "$vm_log/run.out")" ;;
      *) fail "vm: the VM run failed (status $status)" "$(rel "$vm_log/run.out")" "$(tail -n 10 "$vm_log/run.out")" ;;
    esac
    [ "$status" = 1 ] && [ "$n_tap" = 0 ] && fail "vm: no results" "$(rel "$vm_log/run.out")" "$(tail -n 10 "$vm_log/run.out")"
    # its own time, beside the suites it overlapped, and its CPU (not this script's child)
    suite_t0=$((SECONDS - secs)) suite_cpu_extra=$cpu vm_cpu=$cpu
  fi
  suite_end
}
vm_cpu=0
if runnable vm; then
  vm_asked=1
  vm_launch
fi

# Sanitizer settings for everything that runs the ASan build. Reports make the process exit 1 and
# are written to files so that a test expecting failure cannot hide them.
ASAN_BASE_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:exitcode=1:strict_string_checks=1:detect_stack_use_after_return=0
UBSAN_BASE_OPTIONS=print_stacktrace=1:halt_on_error=1

# ---- unit tests ---------------------------------------------------------------------------------
if runnable unit; then
  for variant in plain asan; do
    suite_start "unit:$variant"
    dir=$PLAIN ok=$plain_ok
    [ "$variant" = asan ] && dir=$ASAN ok=$asan_ok
    if [ "$ok" != 1 ]; then
      skip "unit:$variant" "build:$variant failed"
    else
      log=$LOG_DIR/unit-$variant.log
      status=0
      find "$dir" -name '*.trs' -delete # results of tests that no longer exist must not count
      # a hung unit test must not take the whole time budget (the unit tests take seconds)
      ASAN_OPTIONS=$ASAN_BASE_OPTIONS UBSAN_OPTIONS=$UBSAN_BASE_OPTIONS \
        timeout -k 10 "$(limit 900)" \
        make -C "$dir" -j"$(fsrun_jobs)" check AM_COLOR_TESTS=no >"$log" 2>&1 || status=$?
      parse_make_check "unit:$variant" "$log" "$dir" "$status"
    fi
    suite_end
  done
fi

# ---- format-check -------------------------------------------------------------------------------
if runnable format; then
  suite_start format-check
  if [ "$plain_ok" = 1 ] || [ -f "$PLAIN/Makefile" ]; then
    if make -C "$PLAIN" format-check >"$LOG_DIR/format-check.log" 2>&1; then
      pass
    else
      fail format-check "$(rel "$LOG_DIR/format-check.log")" "not clang-formatted (make format fixes them): $(
        grep -oE '^[^ :]+\.[ch]:[0-9]+:[0-9]+: error' "$LOG_DIR/format-check.log" | cut -d: -f1 | sort -u | tr '\n' ' ')"
    fi
  else
    skip format-check "no configured build"
  fi
  suite_end
fi

# ---- integration (bats) -------------------------------------------------------------------------
if runnable bats; then
  suite_start bats:plain
  if [ "$plain_ok" = 1 ]; then
    run_bats_suite bats:plain "$PLAIN/fsrun"
  else
    skip "bats:plain" "build:plain failed"
  fi
  suite_end
fi

if runnable asan; then
  suite_start bats:asan
  if [ "$asan_ok" = 1 ]; then
    san_dir=$LOG_DIR/bats-asan/sanitizer
    mkdir -p "$san_dir"
    ASAN_OPTIONS="$ASAN_BASE_OPTIONS:log_path=$san_dir/other" \
      UBSAN_OPTIONS="$UBSAN_BASE_OPTIONS:log_path=$san_dir/other" \
      run_bats_suite bats:asan "$ASAN/fsrun" "$san_dir"
  else
    skip "bats:asan" "build:asan failed"
  fi
  suite_end
fi

# ---- valgrind -----------------------------------------------------------------------------------
if runnable valgrind; then
  suite_start valgrind
  if [ "$dynamic_ok" != 1 ]; then
    skip valgrind "build:dynamic failed"
  elif ! command -v valgrind >/dev/null; then
    skip valgrind "valgrind is not installed (Debian package valgrind)"
  else
    vg_tap=$LOG_DIR/valgrind.tap
    timeout -k 10 "$(limit 900)" tests/valgrind/cli.sh "$DYNAMIC/fsrun" >"$vg_tap" 2>&1 </dev/null
    parse_tap valgrind valgrind/cli.sh "$vg_tap"
  fi
  suite_end
fi

# ---- cgroup v2 VM -------------------------------------------------------------------------------
vm_collect

# ---- fuzzers ------------------------------------------------------------------------------------
# tests/fuzz/run-fuzzers.sh [SECONDS] builds the libFuzzer targets (clang) and prints
# `run-fuzzers: TARGET ok` or `run-fuzzers: TARGET FAILED` per target: one test each.
if runnable fuzz; then
  suite_start fuzz
  if [ -f tests/fuzz/run-fuzzers.sh ]; then
    fuzz_log=$LOG_DIR/fuzz.log
    status=0
    FSRUN_FUZZ_BUILD=$BUILD_ROOT/fuzz FSRUN_FUZZ_WORK=$BUILD_ROOT/fuzz-work \
      timeout -k 10 "$(limit 2400)" bash tests/fuzz/run-fuzzers.sh "$FUZZ_SECONDS" >"$fuzz_log" 2>&1 </dev/null || status=$?
    targets=0
    while read -r _ target result _; do
      targets=$((targets + 1))
      if [ "$result" = ok ]; then
        pass
      else
        fail "fuzz: $target" "$(rel "$fuzz_log")" "$(grep -E 'ERROR|SUMMARY|inputs in' "$fuzz_log" | head -n 10)"
      fi
    done < <(grep -E '^run-fuzzers: [^ ]+ (ok|FAILED)' "$fuzz_log")
    if [ "$status" != 0 ] && ! grep -q '^run-fuzzers: [^ ]* FAILED' "$fuzz_log"; then
      fail "fuzz: run-fuzzers.sh exited $status" "$(rel "$fuzz_log")" "$(tail -n 15 "$fuzz_log")"
    elif [ "$targets" = 0 ] && [ "$status" = 0 ]; then
      pass # a script without per-target lines: its exit status is the one result
    fi
  else
    skip fuzz "tests/fuzz/run-fuzzers.sh does not exist yet"
  fi
  suite_end
fi

# ---- distcheck ----------------------------------------------------------------------------------
if runnable distcheck; then
  suite_start distcheck
  if [ -f "$PLAIN/Makefile" ]; then
    if ! one_check distcheck "$LOG_DIR/distcheck.log" timeout -k 10 "$(limit 2400)" \
      make -C "$PLAIN" -j"$(fsrun_jobs)" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror; then
      # The usual cause: a file that no Makefile.am list names. Say which.
      distdir=$(ls -d "$PLAIN"/fsrun-[0-9]*/ 2>/dev/null | head -n 1)
      if [ -n "$distdir" ] && git rev-parse --git-dir >/dev/null 2>&1; then
        missing=$(git ls-files -co --exclude-standard | grep -vE '^(\.ci/|\.gitignore$|configure~$|build)' |
          while read -r f; do [ -e "$distdir/$f" ] || echo "$f"; done | head -n 20 | tr '\n' ' ')
        [ -n "$missing" ] &&
          failures[-1]+=$'\n'"not in the tarball (add them to a SOURCES list, noinst_HEADERS or EXTRA_DIST): $missing"
      fi
    fi
  else
    skip distcheck "no configured build"
  fi
  suite_end
fi

# ---- client suites (podman / containerd / docker) -----------------------------------------------
# Added by the client-integration issue: put its packages in FSRUN_CLIENT_PACKAGES (contrib/lib.sh),
# start the daemons it needs here, and put its bats files in tests/clients/.
if runnable clients; then
  suite_start clients
  if compgen -G "tests/clients/*.bats" >/dev/null; then
    if [ "$plain_ok" = 1 ]; then
      BATS_FILES="$(ls tests/clients/*.bats | tr '\n' ' ')" run_bats_suite clients "$PLAIN/fsrun"
    else
      skip clients "build:plain failed"
    fi
  else
    fsrun_note "  (no tests/clients/*.bats yet)"
  fi
  suite_end
fi

# ---- the Fusion adapter (contrib/fusion: TypeScript, node's test runner) ------------------------
if runnable fusion; then
  suite_start fusion
  # no skip for a missing node or npm: contrib/fusion/run-tests.sh fails and says which
  if [ "$plain_ok" != 1 ]; then
    skip fusion "build:plain failed"
  else
    # its TMPDIR: one of this run's, for the check after all suites (the ordinary user's runs in it)
    fusion_tmp=$(mktemp -d /tmp/fsrun-fusion-run.XXXXXX) && chmod 755 "$fusion_tmp"
    other_tmps+=("$fusion_tmp")
    TMPDIR=$fusion_tmp FSRUN_FUSION_OUT=$BUILD_ROOT/fusion timeout -k 10 "$(limit 900)" \
      contrib/fusion/run-tests.sh "$PLAIN/fsrun" >"$LOG_DIR/fusion.tap" 2>&1 </dev/null &
    fsrun_wait_child $!
    parse_tap fusion contrib/fusion "$LOG_DIR/fusion.tap"
  fi
  suite_end
fi

# ---- install and package (tests/package) --------------------------------------------------------
if runnable package; then
  suite_start package
  if [ "$plain_ok" = 1 ]; then
    BATS_FILES="$(ls tests/package/*.bats | tr '\n' ' ')" run_bats_suite package "$PLAIN/fsrun"
  else
    skip package "build:plain failed"
  fi
  suite_end
fi

# ---- leftovers: what the suites made and left (this run's own only) -----------------------------
# left NAME: one failure per leftover
left() { fail "leftovers: $1 was left after all suites"; }
leftover_check() {
  local base dir id pid cg mnt user said
  for base in "${state_bases[@]}"; do
    for dir in "$base"/*/*/; do # SUITE/FILE/ID: a container's state
      [ -d "$dir" ] || continue
      dir=${dir%/}
      id=${dir##*/}
      left "container $id (state in ${dir%/*})"
      "$PLAIN/fsrun" --root "${dir%/*}" delete --force "$id" >/dev/null 2>&1
    done
    [ -d "$base" ] || continue
    left "state dir $base"
    rm -rf --one-file-system "$base"
  done
  local dirs=("${other_tmps[@]}")
  [ -s "$FSRUN_BATS_TMP_LIST" ] && mapfile -t -O "${#dirs[@]}" dirs <"$FSRUN_BATS_TMP_LIST"
  for dir in "${dirs[@]}"; do
    [ -e "$dir" ] || continue
    for pid in $(fsrun_pids_under "$dir"); do
      for cg in $(awk -F: '$3 ~ /\/fsrun\// { print $3 }' "/proc/$pid/cgroup" 2>/dev/null | sort -u); do
        left "cgroup $cg (of process $pid)"
      done
      said=$(fsrun_report_leftover "$pid" leftovers) # (killed; nothing said of one that has ended)
      [ -z "$said" ] || fail "leftovers: ${said#not ok - leftovers: } after all suites"
    done
    for mnt in $(awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
      left "mount $mnt"
      umount -l "$mnt" 2>/dev/null
    done
    # (a fusion TMPDIR is left empty by its suite; a TEST_CACHE's content is the cache)
    [[ $dir == */fsrun-fusion-run.* ]] && [ -z "$(ls -A "$dir")" ] || [[ $dir == */fsrun-test-cache.* ]] ||
      left "directory $dir"
    rm -rf --one-file-system "$dir"
  done
  # a test user made during the run (named PREFIX<pid of its maker>) whose maker has ended
  for user in $(comm -13 <(echo "$users_before") <(cut -d: -f1 /etc/passwd | sort)); do
    [[ $user =~ [a-z]([0-9]+)$ ]] || continue
    [ -e "/proc/${BASH_REMATCH[1]}" ] && continue
    id "$user" >/dev/null 2>&1 || continue
    left "test user $user"
  done
}
if wanted bats || wanted asan || wanted clients || wanted fusion || wanted package; then
  suite_start leftovers
  leftover_check
  [ "$failed" != "$suite_f0" ] || pass # one check: nothing was left
  suite_end
fi
[ -z "$interrupted" ] || fail "the run was stopped by SIG$interrupted: the suites after it did not run"

# ================================================================================================
echo
if [ ${#failures[@]} -gt 0 ]; then
  echo "== failed (${#failures[@]})"
  shown=0
  for f in "${failures[@]}"; do
    IFS=$'\t' read -r name log detail <<<"$f"
    echo "FAIL: $name${log:+  [log: $log]}"
    if [ "$shown" -lt 20 ]; then
      # the detail of the first failures only; all of it is in the logs
      detail=$(printf '%s' "${f#*$'\t'*$'\t'}")
      [ -n "$detail" ] && printf '%s\n' "$detail" | head -n 15 | sed 's/^/    /'
    fi
    shown=$((shown + 1))
  done
  echo
fi
if [ ${#skips[@]} -gt 0 ]; then
  for s in "${skips[@]}"; do echo "skipped: $s"; done
  echo
fi
if [ ${#near_limit[@]} -gt 0 ]; then
  echo "== bats files past half of their time limit (BATS_FILE_TIMEOUT): split them before a loaded run reaches it"
  printf '  %s\n' "${near_limit[@]}"
  echo
fi
# Where the time went: the slowest bats files and tests (bats --timing), for whoever makes it faster.
if [ ${#file_timings[@]} -gt 0 ]; then
  echo "== slowest bats files (wall, and CPU of everything they ran; all in $(rel "$LOG_DIR")/bats-file-times.tsv)"
  printf '%s\n' "${file_timings[@]}" | sort -rn | head -n 10 | while IFS=$'\t' read -r secs cpu name; do
    printf '  %5ds  cpu %4ds  %s\n' "$secs" "$cpu" "$name"
  done
  echo "== slowest tests"
  find "$LOG_DIR" -name '*.tap' -print0 | xargs -0r grep -HE '^(not )?ok .* in [0-9]+ms' |
    sed -E 's#^'"$LOG_DIR"'/##; s#\.tap:(not )?ok [0-9]+ #: #; s#^(.*) in ([0-9]+)ms.*$#\2\t\1#' |
    sort -rn | head -n 10 | while IFS=$'\t' read -r ms name; do
      printf '  %5ds  %s\n' $((ms / 1000)) "${name:0:140}"
    done
  echo
fi
echo "== timings (wall, and CPU of everything the suite ran)"
for t in "${timings[@]}"; do
  IFS=$'\t' read -r name secs cpu summary <<<"$t"
  printf '  %-14s %5ds  cpu %5ds  %s\n' "$name" "$secs" "$cpu" "$summary"
done
total=$((SECONDS - total_t0))
printf '  %-14s %5ds  cpu %5ds  (%dm%02ds)\n' total "$total" $(($(cpu_since "$total_cpu0") + vm_cpu)) $((total / 60)) $((total % 60))
echo "logs: $LOG_DIR"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
