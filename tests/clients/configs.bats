#!/usr/bin/env bats
# The client configurations fsrun ships (contrib/configs/, installed to
# /usr/share/doc/fsrun/examples/): each parses as its client reads it, and all of them name the
# same handler, "fsrun", and the binary the package installs, /usr/bin/fsrun. podman.bats,
# containerd.bats and docker.bats run the clients with these files; CRI-O (not in Debian 12) and
# the RuntimeClass are checked here only.

CONFIGS=$BATS_TEST_DIRNAME/../../contrib/configs

toml() { # toml FILE PYTHON_EXPR: the expression over the parsed file `d`
  /usr/bin/python3 -c 'import sys, tomllib; d = tomllib.load(open(sys.argv[1], "rb")); print(eval(sys.argv[2]))' "$1" "$2"
}

@test "podman drop-in: runtime fsrun at /usr/bin/fsrun, and in runtime_supports_json" {
  run toml "$CONFIGS/podman/fsrun.conf" 'd["engine"]["runtimes"]["fsrun"][0]'
  [ "$status" -eq 0 ]
  [ "$output" = /usr/bin/fsrun ]
  run toml "$CONFIGS/podman/fsrun.conf" '"fsrun" in d["engine"]["runtime_supports_json"]'
  [ "$output" = True ]
}

@test "containerd entry: handler fsrun is the runc shim v2 running /usr/bin/fsrun" {
  local f=$CONFIGS/containerd/fsrun.toml
  local r='d["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["fsrun"]'
  run toml "$f" "$r[\"runtime_type\"]"
  [ "$status" -eq 0 ]
  [ "$output" = io.containerd.runc.v2 ]
  run toml "$f" "$r[\"options\"][\"BinaryName\"]"
  [ "$output" = /usr/bin/fsrun ]
  # appended to the config.toml of a version 2 config, it is still one valid document
  printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  snapshotter = "overlayfs"\n' \
    >"$BATS_TEST_TMPDIR/config.toml"
  cat "$f" >>"$BATS_TEST_TMPDIR/config.toml"
  run toml "$BATS_TEST_TMPDIR/config.toml" "$r[\"options\"][\"Root\"]"
  [ "$status" -eq 0 ]
  [ "$output" = /run/containerd/fsrun ]
}

@test "CRI-O drop-in: handler fsrun, an OCI runtime at /usr/bin/fsrun" {
  local r='d["crio"]["runtime"]["runtimes"]["fsrun"]'
  run toml "$CONFIGS/crio/10-fsrun.conf" "$r[\"runtime_path\"], $r[\"runtime_type\"]"
  [ "$status" -eq 0 ]
  [ "$output" = "('/usr/bin/fsrun', 'oci')" ]
}

@test "RuntimeClass: node.k8s.io/v1, name and handler fsrun" {
  local f=$CONFIGS/kubernetes/runtimeclass.yaml
  [ "$(sed -n 's/^apiVersion: *//p' "$f")" = node.k8s.io/v1 ]
  [ "$(sed -n 's/^kind: *//p' "$f")" = RuntimeClass ]
  [ "$(sed -n 's/^  name: *//p' "$f")" = fsrun ]
  [ "$(sed -n 's/^handler: *//p' "$f")" = fsrun ]
  # no tabs, no other keys at the top level than these four
  run grep -c $'\t' "$f"
  [ "$output" = 0 ]
  [ "$(grep -cE '^[a-zA-Z]' "$f")" = 4 ]
}

@test "Docker daemon.json: runtime fsrun at /usr/bin/fsrun" {
  run jq -r '.runtimes.fsrun.path' "$CONFIGS/docker/daemon.json"
  [ "$status" -eq 0 ]
  [ "$output" = /usr/bin/fsrun ]
}
