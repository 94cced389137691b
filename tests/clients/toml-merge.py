#!/usr/bin/python3
"""toml-merge.py BASE DROPIN [--replace DOTTED.KEY JSON]... : BASE with DROPIN read over it, as
podman reads a containers.conf.d drop-in (a key of the drop-in replaces BASE's, tables merge),
printed as TOML. --replace sets a key that the drop-in must itself have (a renamed key fails)."""
import json
import sys
import tomllib


def merge(into, over):
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value


def replace(doc, dropin, dotted, value):
    *tables, key = dotted.split(".")
    for name in tables:
        dropin = dropin.get(name, {})
        doc = doc[name]
    if key not in dropin:
        sys.exit(f"toml-merge.py: the drop-in has no {dotted}")
    doc[key] = value


def scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(scalar(v) for v in value) + "]"
    sys.exit(f"toml-merge.py: cannot write {value!r}")


def write(doc, path=()):
    tables = {k: v for k, v in doc.items() if isinstance(v, dict)}
    if path and len(tables) < len(doc):
        print("[" + ".".join(json.dumps(p) if not p.isidentifier() else p for p in path) + "]")
    for key, value in doc.items():
        if not isinstance(value, dict):
            print(f"{key} = {scalar(value)}")
    for key, value in tables.items():
        write(value, path + (key,))


def main(argv):
    if len(argv) < 3 or (len(argv) - 3) % 3:
        sys.exit(__doc__)
    with open(argv[1], "rb") as f:
        doc = tomllib.load(f)
    with open(argv[2], "rb") as f:
        dropin = tomllib.load(f)
    merge(doc, dropin)
    for i in range(3, len(argv), 3):
        if argv[i] != "--replace":
            sys.exit(__doc__)
        replace(doc, dropin, argv[i + 1], json.loads(argv[i + 2]))
    write(doc)


main(sys.argv)
