#!/bin/sh
# Generates ./configure from configure.ac (needs autoconf, automake, pkg-config).
set -e
cd "$(dirname "$0")"
mkdir -p build-aux m4
autoreconf -fi
