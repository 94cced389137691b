#!/bin/bash
# clean-root.sh DIR DEB : installs DEB in a throw-away copy of this machine's root and uses it there.
# Run it under `unshare -m --propagation private`: the copy is an overlay over / whose upper layer is
# a tmpfs on DIR/ovl, so apt, dpkg, the test user and everything the package does are gone with the
# mount namespace. Each step prints `step NAME ok|FAILED` on stdout; the details go to DIR/log.
# The package is removed (purge) at the end, and the upper layer is then searched for anything of
# it that stayed.
set -u
dir=$1 deb=$2
log=$dir/log
: >"$log"
ovl=$dir/ovl
R=$ovl/root

step() { # step NAME COMMAND...
  local name=$1
  shift
  echo "== $name: $*" >>"$log"
  local start=$SECONDS rc=0
  "$@" >>"$log" 2>&1 || rc=$?
  echo "-- $name: status $rc after $((SECONDS - start)) s" >>"$log"
  if [ "$rc" = 0 ]; then echo "step $name ok"; else echo "step $name FAILED"; fi
}
# in_root COMMAND...: COMMAND with the copy as its root: pivot_root in a mount namespace of its
# own, not chroot, so that it may still make user namespaces (a chrooted process may not)
in_root() {
  unshare -m --propagation private -- sh -c 'cd "$1" && pivot_root . .old-root && umount -l /.old-root &&
    cd / && shift && exec /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"' sh "$R" "$@"
}

mkdir -p "$ovl" && mount -t tmpfs -o mode=0755 fsrun-clean-root "$ovl" || exit 1
mkdir -p "$ovl/upper" "$ovl/work" "$R"
mount -t overlay fsrun-clean-root -o "lowerdir=/,upperdir=$ovl/upper,workdir=$ovl/work" "$R" || exit 1
mount -t proc proc "$R/proc" && mount --rbind /sys "$R/sys" && mount --rbind /dev "$R/dev" &&
  mount -t tmpfs tmpfs "$R/run" && mount -t tmpfs -o mode=1777 tmpfs "$R/tmp" || exit 1
mkdir -p "$R/.old-root" && cp "$deb" "$R/tmp/" || exit 1
pkg=/tmp/${deb##*/}

# clean: no fsrun installed, none on PATH
step clean in_root sh -c '! dpkg -s fsrun 2>/dev/null | grep -q "^Status: install ok" && ! command -v fsrun'
step install in_root apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=60 "$pkg"
step binary in_root sh -c '[ "$(command -v fsrun)" = /usr/bin/fsrun ] && fsrun --version'
# the package's version is the commit line, as Debian's runc has it
version=$(dpkg-deb -f "$deb" Version)
step version in_root sh -c '[ "$(fsrun --version | sed -n "s/^commit: //p")" = "$1" ]' sh "$version"
step man in_root sh -c 'page=$(man -w fsrun-sandbox); echo "$page"
  [ "$page" = /usr/share/man/man8/fsrun-sandbox.8.gz ] && man -P cat fsrun-bundle | grep -E "fsrun-bundle +- +write"'
step completion in_root bash --norc -c '. /usr/share/bash-completion/completions/fsrun &&
  [ "$(complete -p fsrun)" = "complete -F _fsrun fsrun" ] &&
  COMP_WORDS=(fsrun sa) COMP_CWORD=1 && _fsrun && [ "${COMPREPLY[*]}" = sandbox ]'
step examples in_root sh -c 'for f in podman/fsrun.conf containerd/fsrun.toml kubernetes/runtimeclass.yaml \
  crio/10-fsrun.conf docker/daemon.json; do grep -q /usr/bin/fsrun "/usr/share/doc/fsrun/examples/$f" ||
  grep -q "handler: fsrun" "/usr/share/doc/fsrun/examples/$f" || exit 1; done'
step fusion in_root test -f /usr/share/fsrun/fusion/package.json
# the clients find the installed binary through the shipped files alone (where they are installed)
if [ -x "$R/usr/bin/podman" ]; then
  step podman in_root sh -c 'mkdir -p /etc/containers/containers.conf.d &&
    cp /usr/share/doc/fsrun/examples/podman/fsrun.conf /etc/containers/containers.conf.d/ &&
    printf "[storage]\ndriver = \"vfs\"\ngraphroot = \"/tmp/graph\"\nrunroot = \"/tmp/run\"\n" >/tmp/storage.conf &&
    out=$(CONTAINERS_STORAGE_CONF=/tmp/storage.conf podman --runtime fsrun info --format "{{.Host.OCIRuntime.Path}}") &&
    echo "$out" && rm /etc/containers/containers.conf.d/fsrun.conf && [ "$out" = /usr/bin/fsrun ]'
else
  echo "step podman skipped"
fi
if [ -x "$R/usr/bin/containerd" ]; then
  step containerd in_root sh -c '{ echo "version = 2"; cat /usr/share/doc/fsrun/examples/containerd/fsrun.toml; } >/tmp/ctrd.toml &&
    containerd --config /tmp/ctrd.toml config dump | grep -A3 "runtimes.fsrun.options" | grep "BinaryName = \"/usr/bin/fsrun\""'
else
  echo "step containerd skipped"
fi

# Docker: a dockerd of the copy's own whose only configuration is the shipped daemon.json, as
# /etc/docker/daemon.json. It runs in network, pid and mount namespaces of its own: its bridge,
# sysctls and iptables state are the namespace's and go with it, every process of it dies with the
# namespace's first process (and `timeout` bounds that), and its mounts (a tmpfs for
# /var/lib/docker: overlay2 cannot keep its layers on the copy's overlayfs) are that namespace's.
# The flags are the test's isolation, not configuration of fsrun: a cgroup parent of this run's own
# (the host's cgroup hierarchy is shared; removed below), no iptables rules at all.
dk_image=$dir/docker-image.tar
if [ -x "$R/usr/sbin/dockerd" ] && [ -x "$R/usr/bin/docker" ] &&
  "$(dirname "$0")/../clients/image.sh" "$dk_image" localhost/fsrun-test/busybox:latest >>"$log" 2>&1; then
  cp "$dk_image" "$R/tmp/busybox.tar"
  dk_cgparent=/fsrun-pkg-docker-$$
  step docker in_root timeout -k 10 240 unshare --net --pid --fork --mount-proc --kill-child sh -c '
    set -e
    readlink /proc/self/ns/pid /proc/self/ns/net >/tmp/docker-ns
    ip link set lo up
    mkdir -p /etc/docker /var/lib/docker && mount -t tmpfs fsrun-pkg-docker /var/lib/docker
    cp /usr/share/doc/fsrun/examples/docker/daemon.json /etc/docker/daemon.json
    dockerd --cgroup-parent "$1" --iptables=false --ip6tables=false </dev/null >/tmp/dockerd.log 2>&1 &
    pid=$!
    trap "echo dockerd: >&2; tail -n 20 /tmp/dockerd.log >&2" EXIT
    i=0
    until docker version >/dev/null 2>&1; do
      i=$((i + 1))
      [ "$i" -le 600 ] && ! grep -q "^State:.*zombie" "/proc/$pid/status" || exit 1
      sleep 0.2
    done
    # docker info names the shipped path, and `docker run --runtime fsrun` runs a container with it
    docker info --format "{{json .Runtimes}}" | jq -e ".fsrun.path == \"/usr/bin/fsrun\""
    docker load -i /tmp/busybox.tar
    out=$(docker run --runtime fsrun --rm localhost/fsrun-test/busybox echo hello from docker)
    echo "$out" && [ "$out" = "hello from docker" ]
    # it was fsrun that made the container: its state is in fsrun'"'"'s format under the state root
    # Docker gives its runtimes
    id=$(docker run -d --runtime fsrun localhost/fsrun-test/busybox sleep 600)
    fsrun --root /run/docker/runtime-runc/moby list -q | grep -qx "$id"
    [ "$(fsrun --root /run/docker/runtime-runc/moby state "$id" | jq -r .status)" = running ]
    docker rm -f "$id" >/dev/null
    [ -z "$(docker ps -aq)" ] && [ -z "$(fsrun --root /run/docker/runtime-runc/moby list -q)" ]
    rm /etc/docker/daemon.json
    trap - EXIT
    kill -TERM "$pid" && wait "$pid" || true' sh "$dk_cgparent"
  # the containers' cgroups (made under our parent in the host's hierarchy), then: no process is
  # left in the daemon's pid or network namespace, and no cgroup of it
  for d in /sys/fs/cgroup/*"$dk_cgparent"; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  step docker-nothing-left sh -c 'ns=$(cat "$1"/tmp/docker-ns) && [ -n "$ns" ] && for p in /proc/[0-9]*; do
      for n in pid net; do l=$(readlink "$p/ns/$n" 2>/dev/null) || continue
        if printf "%s\n" "$ns" | grep -qxF "$l"; then echo "left: ${p#/proc/} $(tr "\0" " " <"$p/cmdline")"; exit 1; fi
      done
    done
    ! ls -d /sys/fs/cgroup/*"$2" 2>/dev/null' sh "$R" "$dk_cgparent"
else
  echo "step docker skipped"
fi

# the quickstart's container: a busybox bundle from `fsrun spec`, run to completion
bb=$(command -v busybox)
step container in_root sh -c '
  set -e
  mkdir -p /tmp/demo/rootfs/bin && cp "$1" /tmp/demo/rootfs/bin/busybox && ln -s busybox /tmp/demo/rootfs/bin/sh
  cd /tmp/demo && fsrun spec
  jq ".process.args = [\"/bin/sh\", \"-c\", \"echo hello from \$(/bin/busybox hostname)\"] | .process.terminal = false" \
    config.json >c && mv c config.json
  out=$(fsrun run quickstart-run)
  echo "$out"
  [ "$out" = "hello from $(jq -r .hostname config.json)" ]
  [ -z "$(fsrun list -q)" ]' sh "$bb"

# the quickstart's sandbox: a command on a git worktree, as root and as an ordinary user
sandbox_demo='
  set -e
  cd "$HOME" && git init -q repo && cd repo && git config user.email t@example.invalid &&
    git config user.name t && echo hello >README && git add README && git commit -qm first &&
    git worktree add -q -b task ../worktree
  out=$(fsrun sandbox --worktree ../worktree -- /bin/sh -c "cat README; id -u; ls /sys/class/net")
  echo "$out"
  [ "$out" = "$(printf "hello\n%s\nlo" "$(id -u)")" ]'
step sandbox-root in_root sh -c "$sandbox_demo"
step sandbox-user in_root sh -c 'useradd -m fsrun-pkg-user &&
  setpriv --reuid=fsrun-pkg-user --regid=fsrun-pkg-user --init-groups env -i PATH="$PATH" \
    HOME=/home/fsrun-pkg-user sh -c "$1"' sh "$sandbox_demo"

# The Fusion adapter as installed (its sources under /usr/share/fsrun/fusion): packed as its README
# says (npm ci installs TypeScript from the lockfile, npm pack's prepack builds), the tarball
# installed into an empty project, and a backend made there with no setting but `backend: fsrun`
# runs a command in a sandbox. The only fsrun in the copy is /usr/bin/fsrun, found in PATH.
step fusion-pack in_root timeout -k 10 600 sh -c '
  set -e
  cp -r /usr/share/fsrun/fusion /tmp/fusion-src && cd /tmp/fusion-src
  npm ci --no-audit --no-fund --prefer-offline
  mkdir /tmp/fusion-pack && npm pack --silent --pack-destination /tmp/fusion-pack
  mkdir /tmp/fusion-project && cd /tmp/fusion-project
  echo "{\"name\": \"empty-project\", \"version\": \"1.0.0\", \"private\": true}" >package.json
  npm install --offline --no-audit --no-fund /tmp/fusion-pack/*.tgz
  chmod -R a+rX /tmp/fusion-project'
# the worktree of the sandbox steps; the command sees it, and no network interface but lo
fusion_demo='
  set -e
  cd /tmp/fusion-project
  out=$(node -e "
    const { createSandboxBackend } = require(\"@fsrun/fusion-sandbox\");
    const events = [];
    const b = createSandboxBackend({ defaults: [{ sandbox: { backend: \"fsrun\" } }], onAudit: (e) => events.push(e) });
    const wt = process.env.HOME + \"/worktree\";
    b.prepare({ taskId: \"t\", runId: \"r\", worktreePath: wt, policy: { allowNetwork: false, allowedPaths: [] } })
      .then(() => b.run(\"cat README; ls /sys/class/net\", { cwd: wt, timeoutMs: 60000, maxBuffer: 65536 }))
      .then(async (r) => {
        await b.dispose();
        const run = events.find((e) => e.event === \"sandbox:run\");
        console.log(JSON.stringify({ id: b.id, backendName: run && run.backendName, stdout: r.stdout, exitCode: r.exitCode }));
      });")
  printf "%s\n" "$out"
  [ "$out" = "{\"id\":\"custom\",\"backendName\":\"fsrun\",\"stdout\":\"hello\\nlo\\n\",\"exitCode\":0}" ]'
step fusion-root in_root sh -c "$fusion_demo"
step fusion-user in_root setpriv --reuid=fsrun-pkg-user --regid=fsrun-pkg-user --init-groups \
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/home/fsrun-pkg-user sh -c "$fusion_demo"

step remove in_root apt-get purge -y -q -o DPkg::Lock::Timeout=60 fsrun
step removed in_root sh -c '! command -v fsrun && ! dpkg -s fsrun >/dev/null 2>&1 && [ ! -e /usr/share/fsrun ] &&
  [ ! -e /usr/share/doc/fsrun ] && [ -z "$(ls /usr/share/man/man8/fsrun* 2>/dev/null)" ]'
# nothing of the package in the upper layer (what the copy changed), apt's own logs aside
step nothing-left sh -c '! find "$1" -name "*fsrun*" ! -path "$1/var/log/*" ! -path "$1/var/cache/*" \
  ! -path "$1/home/fsrun-pkg-user*" | grep .' sh "$ovl/upper"
