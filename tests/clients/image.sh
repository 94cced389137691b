#!/bin/bash
# Writes a busybox image as a docker-archive (the `docker save` format) for the client suites.
#
#   tests/clients/image.sh OUT.tar [REF]
#
# REF defaults to localhost/fsrun-test/busybox:latest. The image has one layer: Debian's
# busybox-static as /bin/busybox, a symlink per applet at the path `busybox --list-full` gives
# (/bin/sh, /bin/sleep, /usr/bin/env, ...), /etc/passwd and /etc/group with root and nobody, and
# empty /proc /sys /dev /tmp /root /run /var. Config: Cmd ["sh"], Env PATH.
# The archive holds manifest.json, repositories, the config JSON named by its sha256 and
# <layer sha256>/layer.tar; `ctr images import`, `docker load` and `podman load` accept it.
#
# Environment:
#   FSRUN_IMAGE_CMD         JSON array for the config's Cmd (default ["sh"])
#   FSRUN_IMAGE_ENTRYPOINT  JSON array for the config's Entrypoint (default: none)
#   BUSYBOX                 the static busybox to copy (default /bin/busybox)
#
# Everything is built here with tar, jq and sha256sum, no downloads. The output is byte-for-byte
# the same for the same busybox, REF and environment (fixed mtimes, owners and file order), so
# callers may cache it by those inputs.
set -euo pipefail

usage() {
  echo "usage: $0 OUT.tar [REF]" >&2
  exit 2
}
if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
out=$1
ref=${2:-localhost/fsrun-test/busybox:latest}
busybox=${BUSYBOX:-/bin/busybox}
cmd_json=${FSRUN_IMAGE_CMD:-'["sh"]'}
entrypoint_json=${FSRUN_IMAGE_ENTRYPOINT:-null}

for tool in jq tar sha256sum; do
  command -v "$tool" >/dev/null || {
    echo "$0: $tool is missing" >&2
    exit 1
  }
done
[ -x "$busybox" ] || {
  echo "$0: $busybox is missing (Debian package busybox-static)" >&2
  exit 1
}
# The image has no libc: a dynamically linked busybox would not start in it.
if command -v file >/dev/null && [[ $(LC_ALL=C file -L "$busybox") != *"statically linked"* ]]; then
  echo "$0: $busybox is not statically linked (install busybox-static)" >&2
  exit 1
fi
jq -e 'type == "array" and all(type == "string")' <<<"$cmd_json" >/dev/null ||
  { echo "$0: FSRUN_IMAGE_CMD must be a JSON array of strings" >&2; exit 2; }
jq -e 'type == "null" or (type == "array" and all(type == "string"))' <<<"$entrypoint_json" >/dev/null ||
  { echo "$0: FSRUN_IMAGE_ENTRYPOINT must be a JSON array of strings" >&2; exit 2; }

case $(uname -m) in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) arch=$(uname -m) ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/fsrun-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
umask 022

# ---- the root filesystem ------------------------------------------------------------------------
rootfs=$work/rootfs
mkdir -p "$rootfs"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,root,run,var/tmp}
mkdir -m 1777 "$rootfs/tmp"
chmod 1777 "$rootfs/var/tmp"
cp "$busybox" "$rootfs/bin/busybox"
chmod 0755 "$rootfs/bin/busybox"
# One symlink per applet (not linuxrc, the boot-time init, nor bin/busybox itself). Forks are slow
# on small machines: perl (Essential on Debian) makes all of them in one process.
applets=$("$busybox" --list-full | grep / | grep -vx bin/busybox)
if command -v perl >/dev/null; then
  perl -e 'use File::Path qw(make_path); chdir shift or die;
    for (split /\n/, shift) { (my $d = $_) =~ s{/[^/]*$}{}; make_path($d);
      symlink("/bin/busybox", $_) or die "symlink $_: $!\n" }' "$rootfs" "$applets"
else
  while IFS= read -r applet; do
    mkdir -p "$rootfs/${applet%/*}"
    ln -s /bin/busybox "$rootfs/$applet"
  done <<<"$applets"
fi
[ -L "$rootfs/bin/sh" ] || {
  echo "$0: $busybox has no sh applet" >&2
  exit 1
}
printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
  >"$rootfs/etc/passwd"
printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$rootfs/etc/group"

# Fixed mtime, owner and order: the layer's bytes (and so every digest) depend only on the inputs.
layer=$work/layer.tar
tar --create --file "$layer" --directory "$rootfs" --format=gnu --sort=name \
  --mtime=@946684800 --owner=0 --group=0 --numeric-owner --no-acls --no-xattrs --no-selinux .
layer_sha=$(sha256sum "$layer" | cut -d' ' -f1)

# ---- the image config -----------------------------------------------------------------------------
created=2000-01-01T00:00:00Z
jq -cn --arg arch "$arch" --arg created "$created" --arg diff "sha256:$layer_sha" \
  --argjson cmd "$cmd_json" --argjson entrypoint "$entrypoint_json" '{
    architecture: $arch,
    os: "linux",
    created: $created,
    config: ({
      Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
      Cmd: $cmd,
      WorkingDir: "/"
    } + (if $entrypoint == null then {} else {Entrypoint: $entrypoint} end)),
    rootfs: {type: "layers", diff_ids: [$diff]},
    history: [{created: $created, created_by: "fsrun tests/clients/image.sh (busybox-static)"}]
  }' >"$work/config.json"
config_sha=$(sha256sum "$work/config.json" | cut -d' ' -f1)

# ---- the archive ----------------------------------------------------------------------------------
archive=$work/archive
mkdir -p "$archive/$layer_sha"
mv "$layer" "$archive/$layer_sha/layer.tar"
mv "$work/config.json" "$archive/$config_sha.json"
jq -cn --arg config "$config_sha.json" --arg ref "$ref" --arg layer "$layer_sha/layer.tar" \
  '[{Config: $config, RepoTags: [$ref], Layers: [$layer]}]' >"$archive/manifest.json"
# The legacy index older loaders read: {"name": {"tag": "top layer id"}}
repo_name=${ref%:*} tag=${ref##*:}
if [[ $ref != *:* || $tag == */* ]]; then
  repo_name=$ref tag=latest
fi
jq -cn --arg name "$repo_name" --arg tag "$tag" --arg id "$layer_sha" '{($name): {($tag): $id}}' \
  >"$archive/repositories"

tmp_out=$out.tmp.$$
tar --create --file "$tmp_out" --directory "$archive" --format=gnu --sort=name \
  --mtime=@946684800 --owner=0 --group=0 --numeric-owner \
  manifest.json repositories "$config_sha.json" "$layer_sha"
mv -f "$tmp_out" "$out"
