#!/usr/bin/env bats
# `allowNetwork: true` (issue 11 section 4): the "egress" profile reaches the outside through
# slirp4netns from a network namespace of the sandbox's own, and never the host's loopback, its
# abstract unix sockets or its ports; "network": "host" is the old sharing of the host's network.
# Every check runs as root and as an ordinary user made for this file.
#
# No traffic leaves this machine. The "outside" is a network namespace made here (a veth pair in
# the benchmarking range 198.18.0.0/15, routed from the host) with a TCP and a UDP server and a
# DNS answerer for *.outside.test. fsrun runs in a private mount namespace (in_test_ns) whose
# /etc is a copy naming that answerer as the resolver, and whose /dev/net/tun is a 0666 node (as
# udev makes it; this host's is 0600, which an ordinary user's slirp4netns cannot open).

load helpers

bats_require_minimum_version 1.5.0

setup_file() {
  [ "$EUID" = 0 ] || return 0
  command -v ip >/dev/null && command -v socat >/dev/null && command -v perl >/dev/null || return 0
  export NET_TAG=fsn$$
  export NET_DIR=$BATS_FILE_TMPDIR/net
  mkdir -p "$NET_DIR"
  # the host's addresses below are this run's while the lock is held: parallel runs (the other
  # suite, another checkout's) each take a number that no interface of the host has
  exec {net_lock}>>"$SANDBOX_NET_LOCK"
  flock "$net_lock"
  NET_N=$(free_net_number) || return 1
  # a /24 of 198.18.0.0/15 of our own
  export NET_PREFIX=198.18.$NET_N
  export OUTSIDE=$NET_PREFIX.2
  ip netns add "$NET_TAG"
  ip link add "${NET_TAG}h" type veth peer name "${NET_TAG}p"
  ip link set "${NET_TAG}p" netns "$NET_TAG"
  ip addr add "$NET_PREFIX.1/24" dev "${NET_TAG}h"
  ip link set "${NET_TAG}h" up
  ip -n "$NET_TAG" addr add "$OUTSIDE/24" dev "${NET_TAG}p"
  ip -n "$NET_TAG" link set "${NET_TAG}p" up
  ip -n "$NET_TAG" link set lo up
  # the outside's servers; their pids for teardown_file
  ip netns exec "$NET_TAG" socat TCP-LISTEN:8080,fork,reuseaddr SYSTEM:'echo outside-tcp' &
  echo $! >>"$NET_DIR/pids"
  ip netns exec "$NET_TAG" socat TCP-LISTEN:8081,fork,reuseaddr SYSTEM:'echo outside-8081' &
  echo $! >>"$NET_DIR/pids"
  ip netns exec "$NET_TAG" socat UDP-RECVFROM:5353,fork SYSTEM:'echo outside-udp' &
  echo $! >>"$NET_DIR/pids"
  ip netns exec "$NET_TAG" perl "$BATS_TEST_DIRNAME/sandbox-net-dns.pl" "$OUTSIDE" outside.test \
    "$OUTSIDE" >"$NET_DIR/dns.out" 2>&1 &
  echo $! >>"$NET_DIR/pids"
  # a link-local and an RFC 1918 address of the host (/32s on its end of the veth, no route
  # changed), each with a listener: where a cloud's metadata service and a LAN's services would be
  export LINK_LOCAL=169.254.$NET_N.1 PRIVATE=10.254.$NET_N.1
  # and (review22 F3) carrier-grade NAT's shared space (a Tailscale peer) and a public address
  # (TEST-NET-3, documentation only): blockPrivateNetworks keeps the first out, never the second
  export CGNAT=100.64.$NET_N.1 PUBLIC=203.0.113.$NET_N
  ip addr add "$LINK_LOCAL/32" dev "${NET_TAG}h"
  ip addr add "$PRIVATE/32" dev "${NET_TAG}h"
  ip addr add "$CGNAT/32" dev "${NET_TAG}h"
  ip addr add "$PUBLIC/32" dev "${NET_TAG}h"
  flock -u "$net_lock"
  exec {net_lock}>&-
  socat TCP-LISTEN:8082,bind="$LINK_LOCAL",fork,reuseaddr SYSTEM:'echo link-local-tcp' &
  echo $! >>"$NET_DIR/pids"
  socat TCP-LISTEN:8082,bind="$PRIVATE",fork,reuseaddr SYSTEM:'echo private-tcp' &
  echo $! >>"$NET_DIR/pids"
  socat TCP-LISTEN:8082,bind="$CGNAT",fork,reuseaddr SYSTEM:'echo cgnat-tcp' &
  echo $! >>"$NET_DIR/pids"
  socat TCP-LISTEN:8082,bind="$PUBLIC",fork,reuseaddr SYSTEM:'echo public-tcp' &
  echo $! >>"$NET_DIR/pids"
  # the host's loopback services and an abstract unix socket: what the sandbox must not reach
  # (a stand-in for Fusion's dashboard on 4040). Their ports are the kernel's choice: a fixed one
  # may be held by any connection of the host (the ephemeral range), or by another run.
  socat TCP-LISTEN:0,bind=127.0.0.1,fork,reuseaddr SYSTEM:'echo host-loopback' &
  echo $! >>"$NET_DIR/pids"
  HOST_PORT=$(wait_listening_port $!) || return 1
  socat TCP6-LISTEN:0,bind=[::1],fork,reuseaddr SYSTEM:'echo host-loopback6' &
  echo $! >>"$NET_DIR/pids"
  HOST_PORT6=$(wait_listening_port $!) || return 1
  # and a port held with no listener, for a sandbox to listen on inside: the host refuses a
  # connection to it. Bound with SO_REUSEADDR: no connection of the host takes it, and yet a
  # listener of the host's network (reuseaddr, on 0.0.0.0) could, so that a sandbox on the host's
  # network would still be caught answering there.
  perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
    LocalPort => 0, Proto => "tcp", ReuseAddr => 1) or die "bind: $@\n"; print $s->sockport, "\n";
    close STDOUT; sleep' >"$NET_DIR/held-port" &
  echo $! >>"$NET_DIR/pids"
  wait_until test -s "$NET_DIR/held-port" || return 1
  HELD_PORT=$(cat "$NET_DIR/held-port")
  export HOST_PORT HOST_PORT6 HELD_PORT
  socat ABSTRACT-LISTEN:"$NET_TAG",fork SYSTEM:'echo host-abstract' &
  echo $! >>"$NET_DIR/pids"
  wait_listening "" tcp 8082 && wait_listening "$NET_TAG" tcp 8080 && wait_listening "$NET_TAG" tcp 8081 &&
    wait_listening "$NET_TAG" udp 5353 && wait_listening "$NET_TAG" udp 53 &&
    wait_listening "" abstract "$NET_TAG"
  # the user before the copy of /etc, so that the copy knows it
  if command -v useradd >/dev/null && command -v setpriv >/dev/null; then
    export TEST_USER=$NET_TAG
    useradd -m "$TEST_USER"
  fi
  # other tests add and remove users meanwhile: their lock and backup files may vanish mid-copy
  cp -a /etc "$NET_DIR/etc" 2>/dev/null || [ -s "$NET_DIR/etc/passwd" ]
  printf 'nameserver %s\n' "$OUTSIDE" >"$NET_DIR/etc/resolv.conf"
  make_tun_node "$NET_DIR"
}

SANDBOX_NET_LOCK=/run/fsrun-tests-sandbox-net.lock

# free_net_number: N in 20..219 such that no address of the host is in 198.18.N.0/24,
# 169.254.N.0/24, 10.254.N.0/24, 100.64.N.0/24 or 203.0.113.N; the first from this run's pid
free_net_number() {
  local i n
  for ((i = 0; i < 200; i++)); do
    n=$((($$ + i) % 200 + 20))
    [ -z "$(ip -o addr show to "198.18.$n.0/24"; ip -o addr show to "169.254.$n.0/24"
      ip -o addr show to "10.254.$n.0/24"; ip -o addr show to "100.64.$n.0/24"
      ip -o addr show to "203.0.113.$n/32")" ] && echo "$n" && return 0
  done
  echo "no free 198.18.N.0/24 for this run" >&2
  return 1
}

# wait_listening_port PID: the TCP port process PID listens on, once it does (WAIT_MAX_S at most)
wait_listening_port() {
  local tries=$((WAIT_MAX_S * 10)) port
  while [ "$tries" -gt 0 ]; do
    port=$(ss -Htlnp | sed -n "s/^LISTEN .*:\([0-9]*\) .*pid=$1,.*/\1/p" | head -1)
    [ -n "$port" ] && echo "$port" && return 0
    sleep 0.1
    tries=$((tries - 1))
  done
  echo "process $1 does not listen" >&2
  return 1
}

# wait_listening NETNS|"" tcp|tcp6|udp|abstract PORT|NAME: waits (WAIT_MAX_S at most) until a socket
# listens there
wait_listening() {
  local ns=$1 proto=$2 port=$3 tries=$((WAIT_MAX_S * 10)) flags
  case $proto in tcp) flags=-4tln ;; tcp6) flags=-6tln ;; udp) flags=-4uln ;; esac
  while [ "$tries" -gt 0 ]; do
    if [ "$proto" = abstract ]; then
      ss -Hxl | grep -q "@$port " && return 0
    elif [ -n "$ns" ]; then
      ip netns exec "$ns" ss -H "$flags" "sport = :$port" | grep -q . && return 0
    else
      ss -H "$flags" "sport = :$port" | grep -q . && return 0
    fi
    sleep 0.1
    tries=$((tries - 1))
  done
  echo "nothing listens on $proto port $port${ns:+ in $ns}" >&2
  return 1
}

teardown_file() {
  local pid
  if [ -n "${NET_DIR:-}" ] && [ -f "$NET_DIR/pids" ]; then
    for pid in $(cat "$NET_DIR/pids"); do
      kill "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
    done
  fi
  if [ -n "${NET_TAG:-}" ]; then
    ip link del "${NET_TAG}h" 2>/dev/null
    ip netns del "$NET_TAG" 2>/dev/null
  fi
  if [ -n "${TEST_USER:-}" ] && id "$TEST_USER" >/dev/null 2>&1; then
    userdel -r "$TEST_USER" >/dev/null 2>&1 || true
  fi
}

setup() {
  requires_root
  requires_fsrun_command sandbox
  requires_host_command git
  requires_host_command jq
  [ -n "${NET_TAG:-}" ] || skip "needs ip, socat and perl"
  requires_host_command slirp4netns
  TASK=net-$$-$RANDOM$RANDOM
  SBX_PREFIX=() # what runs fsrun (it execs it)
  MARK=fsnet-$$-$RANDOM$RANDOM
  # the worktree (a real `git worktree add` one), the policy and the user's state root, all owned
  # by the test user so that either caller can use them
  UDIR=$(mktemp -d /tmp/fsrun-net.XXXXXX)
  chmod 755 "$UDIR"
  mkdir -m 700 "$UDIR/run"
  git init -q "$UDIR/repo"
  git -C "$UDIR/repo" config user.email sandbox@example.invalid
  git -C "$UDIR/repo" config user.name sandbox
  echo hello >"$UDIR/repo/README"
  git -C "$UDIR/repo" add README
  git -C "$UDIR/repo" commit -qm "first commit"
  git -C "$UDIR/repo" worktree add -q -b "$TASK" "$UDIR/wt"
  WT=$UDIR/wt
  POLICY=$UDIR/policy.json
  write_policy '{"allowNetwork": true}'
  [ -z "${TEST_USER:-}" ] || chown -R "$TEST_USER:$TEST_USER" "$UDIR"
}

teardown() {
  local pid
  [ -n "${FSRUN_BG:-}" ] && kill -9 "$FSRUN_BG" 2>/dev/null
  for pid in $(marked_helpers); do
    kill -9 "$pid" 2>/dev/null
  done
  [ -n "${LEFTOVER_SLEEP:-}" ] && pkill -9 -f "^sleep $LEFTOVER_SLEEP\$"
  unpin_helpers
  # a SIGKILLed fsrun sandbox leaves its git run dir (not this file's concern; see sandbox-git)
  rm -rf --one-file-system "$FSRUN_ROOT"/.sandbox-git.sandbox-"$TASK"__* /dev/shm/fsrun-git.*.sandbox-"$TASK"__*
  rm -rf "$UDIR"
}

write_policy() {
  printf '%s\n' "$1" >"$POLICY"
  [ -z "${TEST_USER:-}" ] || chown "$TEST_USER:$TEST_USER" "$POLICY"
}

# in_test_ns CMD...: CMD in a private mount namespace with the test's /etc and /dev/net/tun
in_test_ns() {
  "${WITH_BINDS[@]}" "$NET_DIR/etc" /etc "$NET_DIR/tun" /dev/net/tun -- "$@"
}

# sbx_as root|user ARGS... -- COMMAND...: `fsrun sandbox` on the worktree with the policy, as
# root or as the test user; the environment carries MARK, by which its helper is found
sbx_as() {
  local who=$1
  shift
  if [ "$who" = root ]; then
    in_test_ns env FSNET_MARK="$MARK" ${FSRUN_SLIRP4NETNS:+FSRUN_SLIRP4NETNS=$FSRUN_SLIRP4NETNS} \
      "${SBX_PREFIX[@]}" "$FSRUN" --root "$FSRUN_ROOT" sandbox --policy "$POLICY" --worktree "$WT" \
      --task-id "$TASK" "$@"
  else
    [ -n "${TEST_USER:-}" ] || skip "needs useradd and setpriv"
    in_test_ns setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --init-groups \
      env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="/home/$TEST_USER" XDG_RUNTIME_DIR="$UDIR/run" \
      FSNET_MARK="$MARK" ${FSRUN_SLIRP4NETNS:+FSRUN_SLIRP4NETNS=$FSRUN_SLIRP4NETNS} \
      "${SBX_PREFIX[@]}" "$FSRUN" sandbox --policy "$POLICY" --worktree "$WT" --task-id "$TASK" "$@"
  fi
}

# The sandbox helpers (slirp4netns) whose environment has this test's MARK.
marked_helpers() {
  local pid
  for pid in $(pgrep -x slirp4netns); do
    { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qx "FSNET_MARK=$MARK" && echo "$pid"
  done
  return 0
}

state_root_of() {
  if [ "$1" = root ]; then echo "$FSRUN_ROOT"; else echo "$UDIR/run/fsrun"; fi
}

# Nothing of this test's sandbox is left: no state dir, no helper.
assert_nothing_left() {
  local entry root
  root=$(state_root_of "$1")
  for entry in "$root"/*; do
    [ -e "$entry" ] || continue
    if [[ ${entry##*/} == *"$TASK"* ]]; then
      echo "leftover: $entry" >&2
      return 1
    fi
  done
  [ -z "$(marked_helpers)" ] || {
    echo "leftover helper: $(marked_helpers)" >&2
    return 1
  }
}

check_egress_reaches_outside() {
  run sbx_as "$1" --json -- /bin/sh -c '
    getent hosts svc.outside.test
    socat -T30 -u TCP:svc.outside.test:8080 -
    # a datagram out and its answer back (UDP may lose one: sent again each second, 30 at most)
    perl -MIO::Socket::INET -MIO::Select -e '"'"'$s = IO::Socket::INET->new(PeerAddr => $ARGV[0],
      Proto => "udp") or die "socket: $!\n"; $sel = IO::Select->new($s);
      for (1 .. 30) { $s->send("ping\n"); if ($sel->can_read(1)) { $s->recv($b, 100); print $b; exit 0 } }
      exit 1'"'"' '"$OUTSIDE"':5353
    ls /sys/class/net'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r .exitCode <<<"$output")" = 0 ]
  [ "$(jq -r .limits.network <<<"$output")" = egress ]
  jq -r .stdout <<<"$output" >"$UDIR/out"
  # DNS end to end: the sandbox's resolver is slirp4netns's forwarder, the answer the outside's
  grep -Eq "^$OUTSIDE +svc\.outside\.test$" "$UDIR/out"
  grep -qx outside-tcp "$UDIR/out"
  grep -qx outside-udp "$UDIR/out"
  # its own devices, not the host's
  [ "$(grep -cv -e '^lo$' -e '^tap0$' -e "^$OUTSIDE" -e '^outside-' -e '^$' "$UDIR/out")" = 0 ]
  grep -qx tap0 "$UDIR/out"
  assert_nothing_left "$1"
}

@test "sandbox-net: egress reaches the outside by TCP, UDP and DNS from a namespace of its own (root)" {
  check_egress_reaches_outside root
}

@test "sandbox-net: egress reaches the outside by TCP, UDP and DNS from a namespace of its own (user)" {
  check_egress_reaches_outside user
}

# tap0 is IPv4 only (egress has no IPv6: slirp4netns runs without --enable-ipv6): fsrun turns
# IPv6 off on it before slirp4netns brings it up, so the kernel starts no link-local address,
# duplicate address detection or router solicitation there. And the command starts with the
# network configured: tap0's default route is there at its first instruction.
check_tap_ipv4_only() {
  run sbx_as "$1" --json -- /bin/sh -c '
    awk '"'"'$1 == "tap0" && $2 == "00000000" { print "default route via " $3 }'"'"' /proc/net/route
    echo "disable_ipv6=$(cat /proc/sys/net/ipv6/conf/tap0/disable_ipv6)"
    echo "tap0 IPv6 addresses: $(grep -c " tap0$" /proc/net/if_inet6)"'
  echo "$output"
  [ "$status" -eq 0 ]
  jq -r .stdout <<<"$output" >"$UDIR/out"
  cat "$UDIR/out"
  # 10.0.2.2, slirp4netns's gateway (little-endian hex as /proc/net/route writes it)
  grep -qx "default route via 0202000A" "$UDIR/out"
  grep -qx "disable_ipv6=1" "$UDIR/out"
  grep -qx "tap0 IPv6 addresses: 0" "$UDIR/out"
  assert_nothing_left "$1"
}

@test "sandbox-net: egress: tap0 is IPv4 only (IPv6 off before it is up) and configured before the command starts (root)" {
  check_tap_ipv4_only root
}

@test "sandbox-net: egress: tap0 is IPv4 only (IPv6 off before it is up) and configured before the command starts (user)" {
  check_tap_ipv4_only user
}

check_host_out_of_reach() {
  # controls: the host's services answer on the host
  [ "$(socat -T30 -u TCP:127.0.0.1:$HOST_PORT -)" = host-loopback ]
  [ "$(socat -T30 -u TCP6:[::1]:$HOST_PORT6 -)" = host-loopback6 ]
  [ "$(socat -T30 -u ABSTRACT-CONNECT:"$NET_TAG" -)" = host-abstract ]
  run sbx_as "$1" -- /bin/sh -c '
    try() { if out=$(socat -T30 -u "$2" - 2>&1); then echo "$1 reached: $out"; else echo "$1 refused"; fi; }
    try loopback TCP:127.0.0.1:'"$HOST_PORT"'
    try loopback6 TCP6:[::1]:'"$HOST_PORT6"'
    try abstract ABSTRACT-CONNECT:'"$NET_TAG"'
    try gateway TCP:10.0.2.2:'"$HOST_PORT"'
    try host-address TCP:'"$NET_PREFIX.1:$HOST_PORT"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "loopback refused" ]
  [ "${lines[1]}" = "loopback6 refused" ]
  [ "${lines[2]}" = "abstract refused" ]
  # --disable-host-loopback: the gateway address does not lead to the host's loopback
  [ "${lines[3]}" = "gateway refused" ]
  # nor does another address of the host lead to what listens on its loopback
  [ "${lines[4]}" = "host-address refused" ]
  assert_nothing_left "$1"
}

@test "sandbox-net: egress never reaches the host's 127.0.0.1, ::1 or abstract unix sockets (root)" {
  check_host_out_of_reach root
}

@test "sandbox-net: egress never reaches the host's 127.0.0.1, ::1 or abstract unix sockets (user)" {
  check_host_out_of_reach user
}

check_bind_stays_inside() {
  local port=$HELD_PORT result
  # where either caller's sandbox can tell us it listens, and we tell it we are done
  mkdir -m 777 "$WT/sig"
  # the sandbox listens on every address of its own, says so, and waits (bounded) for our verdict
  sbx_as "$1" -- /bin/sh -c '
    socat TCP-LISTEN:'"$port"',bind=0.0.0.0,fork,reuseaddr SYSTEM:"echo inside" & l=$!
    i=0; until socat -T30 -u TCP:127.0.0.1:'"$port"' - >/dev/null 2>&1 || [ $i -ge 600 ]; do sleep 0.1; i=$((i+1)); done
    echo listening > "$PWD/sig/listening"
    i=0; until [ -e "$PWD/sig/done" ] || [ $i -ge 600 ]; do sleep 0.1; i=$((i+1)); done
    kill $l' >"$UDIR/sbx.out" 2>&1 &
  FSRUN_BG=$!
  wait_for_file "$WT/sig/listening" || {
    cat "$UDIR/sbx.out"
    false
  }
  if result=$(socat -T30 -u TCP:127.0.0.1:$port - 2>&1); then result="reached: $result"; fi
  touch "$WT/sig/done"
  wait "$FSRUN_BG"
  FSRUN_BG=
  echo "host connect: $result"
  cat "$UDIR/sbx.out"
  [[ $result != reached* ]]
  [[ $result == *"Connection refused"* ]]
  assert_nothing_left "$1"
}

@test "sandbox-net: egress: a port bound inside is not a port of the host (root)" {
  check_bind_stays_inside root
}

@test "sandbox-net: egress: a port bound inside is not a port of the host (user)" {
  check_bind_stays_inside user
}

check_network_host() {
  write_policy '{"allowNetwork": true, "network": "host"}'
  run sbx_as "$1" --json -- socat -T30 -u TCP:127.0.0.1:$HOST_PORT -
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r .limits.network <<<"$output")" = host ]
  [ "$(jq -r .stdout <<<"$output")" = host-loopback ]
  assert_nothing_left "$1"
}

@test "sandbox-net: network host is the host's network: the loopback listener answers (root)" {
  check_network_host root
}

@test "sandbox-net: network host is the host's network: the loopback listener answers (user)" {
  check_network_host user
}

# review22 F13: Landlock restricts TCP only; UDP to any address and port left the sandbox. With
# allowedTcpPorts, egress's namespace keeps TCP and UDP to its DNS forwarder (10.0.2.3:53) and
# makes everything else unreachable (policy rules: connect fails inside, no datagram leaves); DNS
# still resolves. Seen to fail with sandbox_net_tcp_only returning NULL: `udp reached:
# outside-udp`. The host's network is not fsrun's: there it is a limit not enforced.
check_allowed_tcp_ports() {
  write_policy '{"allowNetwork": true, "allowedTcpPorts": [8080]}'
  run sbx_as "$1" --json -- /bin/sh -c '
    socat -T30 -u TCP:'"$OUTSIDE"':8080 -
    socat -T30 -u TCP:'"$OUTSIDE"':8081 - 2>&1 || echo "8081 refused"
    if out=$(echo ping | socat -T5 - UDP:'"$OUTSIDE"':5353 2>&1); then echo "udp reached: $out"
    else case $out in *"Network is unreachable"* | *"No route to host"*) echo "udp unreachable" ;;
      *) echo "udp failed: $out" ;; esac; fi
    getent hosts svc.outside.test'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq -r .limits.network <<<"$output")" = egress ]
  jq -r .stdout <<<"$output" >"$UDIR/out"
  grep -qx outside-tcp "$UDIR/out"
  grep -qx "udp unreachable" "$UDIR/out"
  grep -Eq "^$OUTSIDE +svc\.outside\.test$" "$UDIR/out"
  # the host profile: said, and refused under limitsMode require
  write_policy '{"allowNetwork": true, "network": "host", "allowedTcpPorts": [8080]}'
  run --separate-stderr sbx_as "$1" --json -- true
  echo "$output"
  echo "$stderr"
  [ "$status" -eq 0 ]
  [[ $stderr == *"limits not enforced: allowedTcpPorts"* ]]
  [[ $(jq -r '.limitsNotEnforced[] | select(.limit == "allowedTcpPorts") | .reason' <<<"$output") == *"UDP and ICMP"* ||
    $(jq -r '.limitsNotEnforced[] | select(.limit == "allowedTcpPorts") | .reason' <<<"$output") == *"cannot restrict TCP"* ]]
  write_policy '{"allowNetwork": true, "network": "host", "allowedTcpPorts": [8080], "limitsMode": "require"}'
  run sbx_as "$1" -- touch "$WT/ran-host"
  echo "$output"
  [ "$status" -eq 125 ]
  [[ $output == *allowedTcpPorts* ]]
  [ ! -e "$WT/ran-host" ]
  if grep -q "TCP is not restricted" "$UDIR/out"; then
    skip "the kernel's Landlock cannot restrict TCP"
  fi
  grep -q "Permission denied" "$UDIR/out"
  grep -qx "8081 refused" "$UDIR/out"
  ! grep -q outside-8081 "$UDIR/out" || false
}

@test "sandbox-net: egress keeps allowedTcpPorts (Landlock) on top, and UDP only to its DNS forwarder (root)" {
  check_allowed_tcp_ports root
}

@test "sandbox-net: egress keeps allowedTcpPorts (Landlock) on top, and UDP only to its DNS forwarder (user)" {
  check_allowed_tcp_ports user
}

# review19 #10: egress went to link-local addresses (169.254.169.254: a cloud's metadata service and
# its credentials) through slirp4netns's host sockets. The sandbox's network namespace now has an
# `unreachable` route for 169.254.0.0/16 (connect fails at once: no packet leaves), unless
# allowLinkLocal; blockPrivateNetworks adds RFC 1918, 100.64.0.0/10 and (review22 F3) 198.18.0.0/15,
# where the outside lives: a public address, the sandbox's own loopback and slirp4netns's
# 10.0.2.0/24 (DNS) still work. Seen to fail on the binary before: `link-local reached:
# link-local-tcp`; and with sandbox-net.c's PRIVATE_RANGES back to RFC 1918 only: `cgnat reached:
# cgnat-tcp`, `outside reached: outside-tcp` under blockPrivateNetworks. What allowLinkLocal
# reaches is the test's own link-local address: 169.254.169.254 is connected to only while a
# route makes it unreachable (before, with allowLinkLocal, socat reached this cloud host's real
# metadata service).
reach_script() {
  # shellcheck disable=SC2016 # expanded in the sandbox
  echo 'try() { if out=$(socat -T30 -u "$2" - 2>&1); then echo "$1 reached: $out"; else
      case $out in *"Network is unreachable"* | *"No route to host"*) echo "$1 unreachable" ;;
      *) echo "$1 failed: $out" ;; esac; fi; }
    # listening before the parent exits: the connect after it finds the socket
    perl -MIO::Socket::INET -e "\$l = IO::Socket::INET->new(Listen => 1, LocalAddr => q(127.0.0.1:9999))
      or die qq(listen: \$!\n); exit 0 if fork; print { \$l->accept } qq(inside-tcp\n)"
    try loopback TCP:127.0.0.1:9999
    # a cloud metadata service is tried only where the table makes it unreachable (connect fails
    # in the namespace): routed, the connect would leave this machine for the real one
    if ip -4 route get 169.254.169.254 >/dev/null 2>&1; then echo "metadata routed out (not tried)"
    else try metadata TCP:169.254.169.254:80; fi
    try link-local TCP:'"$LINK_LOCAL"':8082
    try private TCP:'"$PRIVATE"':8082
    try cgnat TCP:'"$CGNAT"':8082
    try public TCP:'"$PUBLIC"':8082
    try outside TCP:svc.outside.test:8080'
}

check_link_local() {
  local who=$1
  run sbx_as "$who" -- /bin/sh -c "$(reach_script)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "loopback reached: inside-tcp
metadata unreachable
link-local unreachable
private reached: private-tcp
cgnat reached: cgnat-tcp
public reached: public-tcp
outside reached: outside-tcp" ]
  write_policy '{"allowNetwork": true, "allowLinkLocal": true}'
  run sbx_as "$who" -- /bin/sh -c "$(reach_script)"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"metadata routed out (not tried)"*"link-local reached: link-local-tcp"*"private reached: private-tcp"* ]]
  write_policy '{"allowNetwork": true, "blockPrivateNetworks": true}'
  run sbx_as "$who" -- /bin/sh -c "$(reach_script)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "loopback reached: inside-tcp
metadata unreachable
link-local unreachable
private unreachable
cgnat unreachable
public reached: public-tcp
outside unreachable" ]
  # bad input: for a network that is off, or the host's (whose routes are not the sandbox's)
  for policy in '{"allowNetwork": false, "allowLinkLocal": true}' \
    '{"allowNetwork": true, "network": "host", "blockPrivateNetworks": true}'; do
    write_policy "$policy"
    run sbx_as "$who" -- touch "$WT/ran"
    echo "$output"
    [ "$status" -eq 1 ] || [ "$status" -eq 125 ]
    [ "${#lines[@]}" -eq 1 ]
    [[ $output == *"Link"*"only applies with \"allowNetwork\": true and the egress profile"* ||
      $output == *"blockPrivateNetworks: only applies with"* ]]
  done
  [ ! -e "$WT/ran" ]
  assert_nothing_left "$who"
}

@test "sandbox-net: egress: link-local is unreachable unless allowLinkLocal, RFC 1918 with blockPrivateNetworks (root)" {
  check_link_local root
}

@test "sandbox-net: egress: link-local is unreachable unless allowLinkLocal, RFC 1918 with blockPrivateNetworks (user)" {
  check_link_local user
}

# review21 L2: Azure's WireServer (168.63.129.16: its firewall lets host uid 0 in, which a root
# caller's slirp4netns is) and Alibaba's metadata service (100.100.100.200) are outside 169.254/16
# and went out. egress has an `unreachable` /32 for each unless allowLinkLocal. No packet leaves
# this machine: the script connects only to an address the namespace's table makes unreachable
# (connect fails there, in the namespace), and otherwise says so. Seen to fail with the two /32s
# left out of sandbox-net.c's list: `168.63.129.16 routed out (not tried)`, no route lines.
cloud_script() {
  # shellcheck disable=SC2016 # expanded in the sandbox
  echo 'routes=$(ip -4 route show type unreachable | sort)
    for a in 168.63.129.16 100.100.100.200; do
      case $routes in *"unreachable $a "*) ;; *) echo "$a routed out (not tried)"; continue ;; esac
      if out=$(socat -T5 -u TCP:$a:80 - 2>&1); then echo "$a reached"
      else case $out in *"No route to host"*) echo "$a unreachable" ;; *) echo "$a failed: $out" ;; esac; fi
    done
    echo "$routes"'
}

check_cloud_services() {
  local who=$1
  run sbx_as "$who" -- /bin/sh -c "$(cloud_script)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "168.63.129.16 unreachable
100.100.100.200 unreachable
unreachable 100.100.100.200 proto static 
unreachable 168.63.129.16 proto static 
unreachable 169.254.0.0/16 proto static " ]
  write_policy '{"allowNetwork": true, "allowLinkLocal": true}'
  run sbx_as "$who" -- /bin/sh -c "$(cloud_script)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "168.63.129.16 routed out (not tried)
100.100.100.200 routed out (not tried)" ]
  write_policy '{"allowNetwork": true, "blockPrivateNetworks": true}'
  run sbx_as "$who" -- /bin/sh -c "$(cloud_script)"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ $output == *"168.63.129.16 unreachable"*"100.100.100.200 unreachable"*"unreachable 100.64.0.0/10 "*"unreachable 168.63.129.16 "*"unreachable 169.254.0.0/16 "*"unreachable 192.168.0.0/16 "*"unreachable 198.18.0.0/15 "* ]]
  # the block wins over allowLinkLocal for 100.100.100.200, inside 100.64.0.0/10
  write_policy '{"allowNetwork": true, "allowLinkLocal": true, "blockPrivateNetworks": true}'
  # shellcheck disable=SC2016 # expanded in the sandbox
  run sbx_as "$who" -- /bin/sh -c 'for a in 168.63.129.16 100.100.100.200; do
      if ip -4 route get $a >/dev/null 2>&1; then echo "$a routed"; else echo "$a unreachable"; fi
    done'
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = "168.63.129.16 routed
100.100.100.200 unreachable" ]
  assert_nothing_left "$who"
}

@test "sandbox-net: egress: Azure's WireServer and Alibaba's metadata are unreachable unless allowLinkLocal (root)" {
  check_cloud_services root
}

@test "sandbox-net: egress: Azure's WireServer and Alibaba's metadata are unreachable unless allowLinkLocal (user)" {
  check_cloud_services user
}

# record_helpers: FSRUN_SLIRP4NETNS becomes a wrapper that writes, per helper started, its pid,
# its start time (field 22 of /proc/PID/stat: a reused pid has another), the network namespace it
# configures (`net:[INODE]`) and the pid of a `sleep` it leaves holding that namespace's fd to
# $HELPERS, then becomes slirp4netns (same pid; named otherwise so that neither it nor its
# subshells pass for the helper in marked_helpers). The pin keeps the namespace, and so its inode
# number, its own: what is in it afterwards is exactly what the run left (a freed namespace's
# number is soon another's, other sandboxes running meanwhile)
record_helpers() {
  local real
  real=$(command -v slirp4netns)
  HELPERS=$UDIR/helpers.list
  mkdir -m 755 "$UDIR/wrap"
  cat >"$UDIR/wrap/slirp-recorder" <<EOF
#!/bin/sh
for a; do case \$a in /proc/self/fd/*) fd=\${a#/proc/self/fd/} netns=\$(readlink "\$a") ;; esac; done
# the pin keeps only the namespace's fd: not the ready pipe, the exit pipe or the user namespace
sleep 600 </dev/null >/dev/null 2>&1 3<&- 5>&- 6<&- &
echo "\$\$ \$(cut -d' ' -f22 /proc/\$\$/stat) \$netns \$! \$fd" >>"$HELPERS"
exec "$real" "\$@"
EOF
  chmod 755 "$UDIR/wrap/slirp-recorder"
  : >"$HELPERS"
  chmod 666 "$HELPERS"
  FSRUN_SLIRP4NETNS=$UDIR/wrap/slirp-recorder
}

# unpin_helpers: the pins' sleeps end (teardown)
unpin_helpers() {
  local pid start netns pin fd
  [ -n "${HELPERS:-}" ] && [ -f "$HELPERS" ] || return 0
  while read -r pid start netns pin fd; do
    kill -9 "$pin" 2>/dev/null
  done <"$HELPERS"
  return 0
}

# netns_holders NET:[INODE] PIN: the processes in that network namespace or holding an fd of it
# but the pin, and the namespace's devices but lo and a tap0 no process holds (persistent, it goes
# with the namespace; the pin keeps it, detached: no carrier, so no LOWER_UP among its flags)
netns_holders() {
  local pattern=${1//[/\\[} fd=$3
  pattern=${pattern//]/\\]}
  find /proc/[0-9]*/ns/net /proc/[0-9]*/fd -maxdepth 1 -lname "$pattern" 2>/dev/null |
    grep -v "^/proc/$2/"
  nsenter --net="/proc/$2/fd/$fd" ip -o link show |
    awk -F': ' '$2 != "lo" && !($2 == "tap0" && $3 ~ /^<[^>]*>/ && $3 !~ /^<[^>]*LOWER_UP/) {
      print "device " $2 ": " $3
    }'
  return 0
}

# helpers_left: the recorded helpers still there (running, dying or a zombie), and what is left
# in their network namespaces
helpers_left() {
  local pid start netns pin fd
  while read -r pid start netns pin fd; do
    [ "$(cut -d' ' -f22 "/proc/$pid/stat" 2>/dev/null)" != "$start" ] ||
      echo "helper $pid: $(grep -E '^(Name|State|PPid):' "/proc/$pid/status" 2>/dev/null | tr '\n' ' ')"
    netns_holders "$netns" "$pin" "$fd"
  done <"$HELPERS"
}

# assert_helpers_gone N: N helpers were started and nothing of any is left
assert_helpers_gone() {
  local left
  [ "$(grep -c 'net:\[' "$HELPERS")" = "$1" ] || {
    cat "$HELPERS" >&2
    return 1
  }
  left=$(helpers_left)
  [ -z "$left" ] || {
    echo "left: $left" >&2
    return 1
  }
}

check_helper_dies() {
  local tries helper fsrun_pid root
  record_helpers
  # a run, a failing command, then a timeout: the helper, reaped, and its network namespace with
  # its tap device are gone when fsrun returns
  run sbx_as "$1" -- true
  [ "$status" -eq 0 ]
  assert_helpers_gone 1
  run sbx_as "$1" -- sh -c 'exit 3'
  [ "$status" -eq 3 ]
  assert_helpers_gone 2
  run sbx_as "$1" --json -- sh -c 'exit 3'
  [ "$status" -eq 3 ]
  [ "$(jq -r .exitCode <<<"$output")" = 3 ]
  assert_helpers_gone 3
  LEFTOVER_SLEEP=1$$$RANDOM$RANDOM
  run sbx_as "$1" --timeout-ms 2000 -- sleep "$LEFTOVER_SLEEP"
  [ "$status" -eq 124 ]
  assert_helpers_gone 4
  assert_nothing_left "$1"
  # a SIGKILL of fsrun while the command runs: the helper goes with it
  sbx_as "$1" -- sleep "$LEFTOVER_SLEEP" &
  FSRUN_BG=$!
  tries=$((WAIT_MAX_S * 10))
  until [ -n "$(marked_helpers)" ] && pgrep -f "^sleep $LEFTOVER_SLEEP\$" >/dev/null || [ "$tries" = 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  helper=$(marked_helpers)
  [ -n "$helper" ]
  # the helper is fsrun's child
  fsrun_pid=$(awk '{print $4}' "/proc/$helper/stat")
  [ "$(cat "/proc/$fsrun_pid/comm")" = fsrun ]
  kill -9 "$fsrun_pid"
  wait "$FSRUN_BG" || true
  FSRUN_BG=
  # the watchdog kills the init and removes the container (its state dir) after the killed fsrun
  root=$(state_root_of "$1")
  tries=$((WAIT_MAX_S * 10))
  until ! compgen -G "$root/sandbox-${TASK}__*" >/dev/null || [ "$tries" = 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  ! compgen -G "$root/sandbox-${TASK}__*" || false
  # the helper died of its parent-death signal; its orphaned zombie is reaped by another
  tries=$((WAIT_MAX_S * 10))
  until [ -z "$(helpers_left)" ] || [ "$tries" = 0 ]; do
    sleep 0.1
    tries=$((tries - 1))
  done
  assert_helpers_gone 5
}

@test "sandbox-net: the helper, its namespace and tap end with the sandbox: a run, a failure, a timeout, a SIGKILL of fsrun (root)" {
  check_helper_dies root
}

@test "sandbox-net: the helper, its namespace and tap end with the sandbox: a run, a failure, a timeout, a SIGKILL of fsrun (user)" {
  check_helper_dies user
}

# fsrun started by a parent that left SIGCHLD ignored (a daemon's child, `nohup`-like wrappers):
# the kernel would reap fsrun's children behind its back, freeing slirp4netns's pid while fsrun
# still kills it by that pid, and the sandbox's init never hears of its command's end. Before,
# the run did not end (the `timeout` below ends it: 124) and the command inherited the ignored
# SIGCHLD; now fsrun puts it back to its default first, as runc's Go runtime does.
check_sigchld_ignored() {
  local mask
  record_helpers
  SBX_PREFIX=(timeout -k 10 120 perl -e '$SIG{CHLD} = "IGNORE"; exec { $ARGV[0] } @ARGV or die "exec: $!\n"')
  run sbx_as "$1" --json -- sh -c 'grep "^SigIgn:" /proc/$$/status; exit 3'
  SBX_PREFIX=()
  echo "$output"
  [ "$status" -eq 3 ]
  [ "$(jq -r .exitCode <<<"$output")" = 3 ]
  mask=$(jq -r .stdout <<<"$output" | sed -n 's/^SigIgn:[[:space:]]*//p')
  [ -n "$mask" ]
  # SIGCHLD (17) is bit 16
  [ $((16#$mask & 0x10000)) = 0 ]
  assert_helpers_gone 1
  assert_nothing_left "$1"
}

@test "sandbox-net: egress from a parent that ignores SIGCHLD: the run ends with its command, its helper is reaped, the command's SIGCHLD is at its default (root)" {
  check_sigchld_ignored root
}

@test "sandbox-net: egress from a parent that ignores SIGCHLD: the run ends with its command, its helper is reaped, the command's SIGCHLD is at its default (user)" {
  check_sigchld_ignored user
}

check_setup_failures() {
  # no helper: a set-up failure (125), one line naming it, nothing run, nothing left
  FSRUN_SLIRP4NETNS=/nonexistent/slirp4netns
  if [ "$1" = root ]; then
    run in_test_ns env FSRUN_SLIRP4NETNS="$FSRUN_SLIRP4NETNS" "$FSRUN" --root "$FSRUN_ROOT" sandbox \
      --policy "$POLICY" --worktree "$WT" --task-id "$TASK" -- touch "$WT/ran"
  else
    run sbx_as user -- touch "$WT/ran"
  fi
  FSRUN_SLIRP4NETNS=
  echo "$output"
  [ "$status" -eq 125 ]
  [ "${#lines[@]}" -eq 1 ]
  [[ ${lines[0]} == *"FSRUN_SLIRP4NETNS"*"/nonexistent/slirp4netns"* ]]
  [ ! -e "$WT/ran" ]
  assert_nothing_left "$1"
  # a network profile fsrun does not know, or one for a network that is off: bad input naming
  # the key (exit 1; 125 once bad policies are set-up failures, issue 11 section 5)
  write_policy '{"allowNetwork": true, "network": "hosts"}'
  run sbx_as "$1" -- touch "$WT/ran"
  echo "$output"
  [ "$status" -eq 1 ] || [ "$status" -eq 125 ]
  [[ $output == *"network: unknown network profile \"hosts\""* ]]
  write_policy '{"allowNetwork": false, "network": "host"}'
  run sbx_as "$1" -- touch "$WT/ran"
  echo "$output"
  [ "$status" -eq 1 ] || [ "$status" -eq 125 ]
  [[ $output == *"network: only applies with \"allowNetwork\": true"* ]]
  [ ! -e "$WT/ran" ]
  assert_nothing_left "$1"
}

@test "sandbox-net: no slirp4netns is a set-up failure (125); a bad network profile is bad input (root)" {
  check_setup_failures root
}

@test "sandbox-net: no slirp4netns is a set-up failure (125); a bad network profile is bad input (user)" {
  check_setup_failures user
}
