#!/usr/bin/python3
"""A minimal CRI (runtime.v1) client for fsrun's containerd tests.

    cri.py --socket SOCK [--gen-dir DIR] [--timeout SECONDS] RPC [REQUEST_JSON | -]

Calls RuntimeService/RPC on containerd's CRI plugin at the unix socket SOCK with the request given
as JSON (protobuf's JSON mapping, field names as in runtime.proto; "-" reads stdin; none means an
empty request) and prints the response as one JSON object, with every field, enums by name and
proto field names (ExecSync's stdout/stderr as text). A failed call prints
"cri: RPC: CODE: details" on stderr and exits 1; bad usage exits 2.

runtime.proto (next to this file) is compiled with grpc_tools.protoc into --gen-dir (reused when it
is up to date) or a temporary directory. Run it with Debian's /usr/bin/python3 (packages
python3-grpcio, python3-grpc-tools, python3-protobuf).
"""

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "runtime.proto")


def compile_proto(gen_dir):
    """Generates runtime_pb2.py and runtime_pb2_grpc.py in gen_dir unless they are newer than the proto."""
    outputs = [os.path.join(gen_dir, name) for name in ("runtime_pb2.py", "runtime_pb2_grpc.py")]
    proto_mtime = os.stat(PROTO).st_mtime
    if all(os.path.exists(p) and os.stat(p).st_mtime >= proto_mtime for p in outputs):
        return
    from grpc_tools import protoc  # imported late: it is slow and not needed when cached

    os.makedirs(gen_dir, exist_ok=True)
    # protoc writes next to each other; a private dir then a rename keeps concurrent callers safe
    work = tempfile.mkdtemp(dir=gen_dir)
    try:
        args = ["protoc", "-I", HERE, "--python_out", work, "--grpc_python_out", work, PROTO]
        if protoc.main(args) != 0:
            raise SystemExit("cri: protoc failed on %s" % PROTO)
        for path in outputs:
            os.replace(os.path.join(work, os.path.basename(path)), path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description="Call one CRI RuntimeService RPC.")
    parser.add_argument("--socket", required=True, help="containerd's gRPC unix socket")
    parser.add_argument("--gen-dir", help="where to keep the generated Python modules")
    parser.add_argument("--timeout", type=float, default=60.0, help="deadline of the call, seconds")
    parser.add_argument("rpc", help="e.g. Version, RunPodSandbox, ExecSync")
    parser.add_argument("request", nargs="?", default="{}", help="the request as JSON, or - for stdin")
    opts = parser.parse_args()

    temp_dir = None
    gen_dir = opts.gen_dir
    if not gen_dir:
        gen_dir = temp_dir = tempfile.mkdtemp(prefix="fsrun-cri-")
    try:
        compile_proto(gen_dir)
        sys.path.insert(0, gen_dir)
        pb2 = importlib.import_module("runtime_pb2")
        pb2_grpc = importlib.import_module("runtime_pb2_grpc")
    finally:
        if temp_dir:
            shutil.rmtree(temp_dir, ignore_errors=True)

    import grpc
    from google.protobuf import json_format

    service = pb2.DESCRIPTOR.services_by_name["RuntimeService"]
    method = service.methods_by_name.get(opts.rpc)
    if method is None:
        print("cri: unknown RPC %s (runtime.proto has: %s)"
              % (opts.rpc, ", ".join(sorted(service.methods_by_name))), file=sys.stderr)
        return 2
    request_class = getattr(pb2, method.input_type.name)
    text = sys.stdin.read() if opts.request == "-" else opts.request
    try:
        request = json_format.Parse(text, request_class())
    except json_format.ParseError as e:
        print("cri: bad %s: %s" % (method.input_type.name, e), file=sys.stderr)
        return 2

    with grpc.insecure_channel("unix://" + opts.socket) as channel:
        stub = pb2_grpc.RuntimeServiceStub(channel)
        try:
            response = getattr(stub, opts.rpc)(request, timeout=opts.timeout)
        except grpc.RpcError as e:
            print("cri: %s: %s: %s" % (opts.rpc, e.code().name, e.details()), file=sys.stderr)
            return 1

    result = json_format.MessageToDict(response, preserving_proto_field_name=True,
                                       including_default_value_fields=True)
    if opts.rpc == "ExecSync":
        # bytes fields come out as base64 in the JSON mapping; the tests want the text
        result["stdout"] = response.stdout.decode("utf-8", "replace")
        result["stderr"] = response.stderr.decode("utf-8", "replace")
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
