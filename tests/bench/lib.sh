# shellcheck shell=bash
# Shared by the benchmarks in tests/bench/: rounds that alternate (the order rotates each round),
# and medians of the wall and CPU time timeit reports. Source it; it defines functions only.

# bench_rounds ROUNDS RUN NAME...: ROUNDS rounds of every NAME, `RUN NAME ROUND` printing timeit's
# "wall cpu status". Fills the global associative arrays wall and cpu (space-separated samples);
# exits when a run fails.
bench_rounds() {
  local rounds=$1 run=$2 i k n r real c status
  shift 2
  local names=("$@")
  n=${#names[@]}
  declare -gA wall=() cpu=()
  for ((i = 0; i < rounds; i++)); do
    for ((k = 0; k < n; k++)); do
      r=${names[$(((i + k) % n))]}
      read -r real c status _ < <("$run" "$r" "$i")
      [ "$status" = 0 ] || { echo "$(basename "$0"): $r exited with $status" >&2; exit 1; }
      wall[$r]+="$real "
      cpu[$r]+="$c "
    done
  done
}

bench_median() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# bench_report WIDTH NAME...: the medians of each NAME (into the global mwall and mcpu).
bench_report() {
  local width=$1 r
  shift
  declare -gA mwall=() mcpu=()
  for r in "$@"; do
    mwall[$r]=$(bench_median <<<"${wall[$r]}")
    mcpu[$r]=$(bench_median <<<"${cpu[$r]}")
    printf "  %-${width}s %7.1f ms wall  %7.1f ms cpu\n" "$r" "${mwall[$r]}" "${mcpu[$r]}"
  done
}

# bench_ratio A B: A's medians over B's, when both ran.
bench_ratio() {
  [ -n "${mwall[$1]:-}" ] && [ -n "${mwall[$2]:-}" ] || return 0
  printf '  %s / %s = %.2f wall, %.2f cpu\n' "$1" "$2" "$(bc -l <<<"${mwall[$1]} / ${mwall[$2]}")" \
    "$(bc -l <<<"${mcpu[$1]} / ${mcpu[$2]}")"
}

# bench_make_worktree REPO: a repository with one commit and a linked worktree of it in Fusion's
# layout, REPO/.worktrees/task (branch task), the worktree the benchmarks run in.
bench_make_worktree() {
  git init -q "$1" && git -C "$1" -c user.name=b -c user.email=b@b commit -q --allow-empty -m init &&
    git -C "$1" worktree add -q "$1/.worktrees/task" -b task
}

# bench_bwrap_args WORKTREE [COMMON_DIR]: bwrap's options for the sandbox's shape, one a line: new
# namespaces, no capabilities, read-only /usr and /etc (and the host's /bin etc. links), tmpfs /tmp,
# the worktree and the repository's git common dir read-write (after /tmp: they may be under it),
# /dev, /proc.
bench_bwrap_args() {
  local d
  printf '%s\n' --unshare-all --die-with-parent --cap-drop ALL --ro-bind /usr /usr
  for d in bin sbin lib lib32 lib64; do
    [ -L "/$d" ] && printf '%s\n' --symlink "$(readlink "/$d")" "/$d"
  done
  printf '%s\n' --ro-bind /etc /etc --tmpfs /tmp --bind "$1" "$1"
  [ -n "${2:-}" ] && printf '%s\n' --bind "$2" "$2"
  printf '%s\n' --dev /dev --proc /proc --chdir "$1"
}
