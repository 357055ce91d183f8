#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the hand-made seeds of fuzz/corpus/config (see fuzz_config.c for
the input layout).  The fuzzer's own finds are merged in by run.sh."""
import hashlib, os, struct, sys

def seed(limit, nr_open, ncpus, msglen, **vals):
    env = [("FDRANGE_" + k.upper() + "=").encode() + (v.encode() if isinstance(v, str) else v)
           for k, v in vals.items()]
    return struct.pack("<QQqBB", limit % 2**64, nr_open % 2**64, ncpus, msglen, 0) + b"\0".join(env)

SEEDS = [
    seed(1024, 1048576, 2, 255),
    seed(1024, 1048576, 4, 255, slots="4", base="64"),
    seed(20000, 1048576, 2, 255, slots="4", base="128", width="256"),
    seed(300, 1048576, 2, 255, slots="1", base="512", width="1024"),
    seed(1024, 1048576, 2, 255, slots="4", base="64", width="256"),  # straddles the limit
    seed(2**64 - 1, 0, 2**31, 255, slots="1024", width="auto"),
    seed(0, 1, -5, 255, slots="0"),
    seed(1024, 4096, 2, 255, slots="abc"),
    seed(1024, 4096, 2, 255, slots="-3"),
    seed(1024, 4096, 2, 255, slots="99999999999999999999"),
    seed(1024, 4096, 2, 255, slots="4x"),
    seed(1024, 4096, 2, 255, slots=""),
    seed(1024, 4096, 2, 255, base="100"),
    seed(1024, 4096, 2, 255, base="1048512"),
    seed(1024, 4096, 2, 255, width="64"),
    seed(1024, 4096, 2, 255, width="1048576"),
    seed(1024, 4096, 2, 10, width="63"),
    seed(1024, 4096, 2, 0, accept="roundrobin"),
    seed(1024, 4096, 2, 1, accept="round"),
    seed(1024, 4096, 2, 255, open="keep", disable="yes"),
    seed(1024, 4096, 2, 255, disable="maybe"),
    seed(1024, 4096, 2, 255, stats="stderr"),
    seed(1024, 4096, 2, 255, stats="none"),
    seed(1024, 4096, 2, 255, stats="/tmp/r.%p"),
    seed(1024, 4096, 2, 255, stats="x" * 600),
    seed(1024, 4096, 2, 255, stats="\x01\x7f\"\\"),
    seed(65, 1048576, 1, 255, slots="1", base="0"),
    seed(1048576 * 4, 1048576, 1024, 255, slots="1024", base="1048512", width="1048576"),
    seed(1024, 1048576, 4, 255, pregrow="4096"),
    seed(1024, 1048576, 4, 255, pregrow="x"),
    seed(1024, 1048576, 4, 255, unknown="1"),
]

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "config")
    os.makedirs(out, exist_ok=True)
    for s in SEEDS:
        with open(os.path.join(out, "seed-" + hashlib.sha1(s).hexdigest()[:16]), "wb") as f:
            f.write(s)

if __name__ == "__main__":
    main()
