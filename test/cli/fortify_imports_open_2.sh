#!/bin/sh
# The fortify test is only meaningful if the compiler really turned open()
# into __open_2(): check the binary's imports.
set -eu
syms=$(nm -D --undefined-only "$1")
echo "$syms" | grep -qw __open_2 || { echo "FAIL: $1 does not import __open_2"; exit 1; }
echo "$syms" | grep -qw __openat_2 || { echo "FAIL: $1 does not import __openat_2"; exit 1; }
echo "ok: $1 imports __open_2 and __openat_2"
