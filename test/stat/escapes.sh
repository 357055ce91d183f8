#!/bin/sh
# SPDX-License-Identifier: MIT
# Every string fdrange stat prints from a target (comm, thread names, the
# library version, settings names and values) has its control and high
# bytes escaped, in text and in JSON, so a process cannot drive the
# terminal of the (root) shell that looks at it.  The JSON keeps the raw
# bytes recoverable: each byte is a \u00XX code point.
# usage: escapes.sh FDRANGE FAKE_BLOCK
. "$(dirname "$0")/lib.sh"
need_python

start_fake escapes
run_stat --color=never "$fpid"
[ "$rc" = 0 ] || { cat "$err"; fail "exit $rc"; }
# No ESC, BEL, CSI (0x9b) or any other byte outside printable ASCII.
if LC_ALL=C grep -q '[^ -~]' "$out"; then
	LC_ALL=C grep -n '[^ -~]' "$out" | cat -A | head
	fail "raw control or high bytes in the text report"
fi
grep -q '^pid [0-9]* (\\x1b\[31mred\\x1b\[0m)' "$out" || fail "comm not shown escaped"
grep -q '\\x1b\]0;t\\x07x' "$out" || fail "thread name not shown escaped"
grep -q '^libfdrange 1\\x1b\[5m\\xc2\\x9b,' "$out" || fail "version not shown escaped"
grep -q '^settings: FDRANGE_SLOTS=\\x1b\]52;c;cHduZWQ=\\x07$' "$out" || fail "setting value not escaped"
grep -q '^settings: FDRANGE_\\x1b\[8mX=64 (default) (an option' "$out" || fail "unknown setting name not escaped"
run_stat --json "$fpid"
[ "$rc" = 0 ] || fail "--json: exit $rc"
if LC_ALL=C grep -q '[^ -~]' "$out"; then fail "raw control or high bytes in the JSON"; fi
python3 - "$out" <<'PY' || fail "JSON does not give back the raw names"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["comm"] == "\x1b[31mred\x1b[0m", d["comm"]
assert d["block"]["lib_version"] == "1\x1b[5m\xc2\x9b", d["block"]["lib_version"]
s = d["block"]["settings"]
assert s[0]["value"] == "\x1b]52;c;cHduZWQ=\x07" and s[1]["name"] == "FDRANGE_\x1b[8mX"
assert not s[1]["known"] and s[0]["known"]
assert sorted(g["name"] for g in d["groups"]) == ["\x1b[2Jwipe", "\x1b]0;t\x07x"], d["groups"]
PY
# The error path too: a refused block's message is escaped.
echo "ok: escaped in text and JSON"
