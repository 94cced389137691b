#!/bin/bash
# net-helpers.sh [ROUNDS]: the two user-mode network helpers the sandbox's egress profile could use,
# side by side: slirp4netns (the one fsrun uses) and pasta (Debian's passt). For each: the time from
# its start to a configured namespace (its ready fd / pid file), the time to download 20 MB over
# TCP from a server outside, and whether a connection the client half-closes first gets the
# server's reply once. Medians in ms. No traffic leaves the machine: the "outside" is a network
# namespace made here (a veth pair in 198.18.0.0/15). Needs root. Not a pass/fail test.
set -eu

rounds=${1:-10}
[ "$(id -u)" = 0 ] || { echo "net-helpers.sh: needs root" >&2; exit 1; }
for c in slirp4netns pasta socat unshare nsenter ip; do
  command -v "$c" >/dev/null || { echo "net-helpers.sh: needs $c" >&2; exit 1; }
done

tag=fsnb$$
prefix=198.19.$(($$ % 200 + 20))
work=$(mktemp -d /tmp/fsrun-netbench.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  ip link del "${tag}h" 2>/dev/null || true
  ip netns del "$tag" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$tag"
ip link add "${tag}h" type veth peer name "${tag}p"
ip link set "${tag}p" netns "$tag"
ip addr add "$prefix.1/24" dev "${tag}h"
ip link set "${tag}h" up
ip -n "$tag" addr add "$prefix.2/24" dev "${tag}p"
ip -n "$tag" link set "${tag}p" up
head -c 20000000 /dev/urandom >"$work/blob"
want=$(sha256sum <"$work/blob")
ip netns exec "$tag" socat TCP-LISTEN:8081,fork,reuseaddr OPEN:"$work/blob",rdonly &
pids+=($!)
ip netns exec "$tag" socat TCP-LISTEN:8080,fork,reuseaddr SYSTEM:'echo reply' &
pids+=($!)
sleep 0.5 # the servers' listen (a benchmark, not a test)

now_ms() { echo $(($(date +%s%N) / 1000000)); }
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# one_round HELPER: prints "startup_ms download_ms replies"
one_round() {
  local helper=$1 target hp t0 t1 t2 replies got
  unshare -n sleep 300 &
  target=$!
  rm -f "$work/ready" "$work/pid"
  mkfifo "$work/ready"
  t0=$(now_ms)
  if [ "$helper" = slirp4netns ]; then
    slirp4netns --configure --mtu=65520 --disable-host-loopback --enable-sandbox --enable-seccomp \
      --ready-fd=3 "$target" tap0 3>"$work/ready" >/dev/null 2>&1 &
    hp=$!
    head -c1 "$work/ready" >/dev/null
  else
    pasta --config-net -q -f --netns-only --runas 0 --netns /proc/self/fd/5 -t none -u none \
      -T none -U none --no-map-gw -P /proc/self/fd/6 5<"/proc/$target/ns/net" 6>"$work/ready" \
      >/dev/null 2>&1 &
    hp=$!
    head -c1 "$work/ready" >/dev/null
  fi
  t1=$(now_ms)
  got=$(nsenter -t "$target" -n socat -u TCP:$prefix.2:8081 - | sha256sum)
  t2=$(now_ms)
  [ "$got" = "$want" ] || echo "net-helpers.sh: $helper: the download differs" >&2
  replies=$(nsenter -t "$target" -n timeout 5 socat -T2 - TCP:$prefix.2:8080 </dev/null | grep -c reply || true)
  kill "$hp" "$target" 2>/dev/null || true
  wait "$hp" "$target" 2>/dev/null || true
  echo "$((t1 - t0)) $((t2 - t1)) $replies"
}

for helper in slirp4netns pasta; do
  : >"$work/$helper.txt"
done
for ((i = 0; i < rounds; i++)); do
  for helper in slirp4netns pasta; do
    one_round "$helper" >>"$work/$helper.txt"
  done
done
echo "user-mode network helpers, $rounds rounds, medians:"
printf '  %-12s %12s %14s %s\n' helper "start-up ms" "20 MB TCP ms" "replies to a half-closed connection (1 is right)"
for helper in slirp4netns pasta; do
  printf '  %-12s %12s %14s %s\n' "$helper" "$(cut -d' ' -f1 "$work/$helper.txt" | median)" \
    "$(cut -d' ' -f2 "$work/$helper.txt" | median)" "$(cut -d' ' -f3 "$work/$helper.txt" | sort -n | uniq -c | awk '{printf "%s%sx%s", (NR > 1 ? ", " : ""), $1, $2}')"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
