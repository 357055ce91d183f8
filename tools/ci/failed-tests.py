#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print the end of what each failed meson test printed.

usage: failed-tests.py BUILDDIR/meson-logs/testlog.json [LINES]

test/run.sh keeps a failed check's last lines for the CI summary; a test's
FAIL: line alone rarely says why (the sshd test's reason was in the sshd log
it printed after it).  Each failed test gets a header and its last LINES
(default 15) lines of output, at most 8 tests.
"""
import json
import sys

BAD = {"FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"}


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: failed-tests.py TESTLOG.json [LINES]")
    lines = int(sys.argv[2]) if len(sys.argv) == 3 else 15
    shown = 0
    try:
        log = open(sys.argv[1], encoding="utf-8", errors="replace")
    except OSError as e:
        sys.exit(f"failed-tests.py: {e}")
    with log:
        for raw in log:
            try:
                t = json.loads(raw)
            except ValueError:
                continue
            if t.get("result") not in BAD:
                continue
            shown += 1
            if shown > 8:
                print("--- (more failed tests: see testlog.txt)")
                break
            print(f"--- {t.get('name')}: {t.get('result')}, exit {t.get('returncode')}")
            out = (t.get("stdout") or "") + (t.get("stderr") or "")
            for line in out.rstrip("\n").splitlines()[-lines:]:
                print("  " + line[:300])


if __name__ == "__main__":
    main()
