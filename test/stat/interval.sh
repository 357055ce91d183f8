#!/bin/sh
# SPDX-License-Identifier: MIT
# fdrange stat --interval SECONDS [--count N]: one summary line (with
# --json one JSON object per line) per interval, N of them; exit 0 when the
# process exits meanwhile; bad values are one line and exit 2.
# usage: interval.sh FDRANGE FAKE_BLOCK
. "$(dirname "$0")/lib.sh"
need_python

start_fake valid
run_stat --interval 0.2 --count 3 "$fpid"
[ "$rc" = 0 ] || { cat "$err"; fail "--count 3: exit $rc"; }
[ "$(wc -l <"$out")" = 3 ] && [ "$(grep -c "^summary: pid=$fpid library=yes " "$out")" = 3 ] ||
	{ cat "$out"; fail "--count 3: not 3 summary lines"; }
run_stat --json --interval=0.2 --count=2 "$fpid"
[ "$rc" = 0 ] || fail "--json --count 2: exit $rc"
python3 - "$out" "$fpid" <<'PY' || fail "--json --interval: $(cat "$out")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, lines
docs = [json.loads(l) for l in lines]
for d in docs:
    assert d["schema"] == 1 and d["pid"] == int(sys.argv[2]) and d["library"] == "yes", d
    assert d["model"] == "rotation" and "min_purity" in d, d
assert docs[1]["time"] >= docs[0]["time"] + 0.15, docs
PY
# The process exits during the run: exit 0 after its last sample.
( sleep 0.7; kill "$fpid" ) &
start=$(date +%s)
run_stat --interval 0.2 "$fpid"
[ "$rc" = 0 ] || { cat "$err"; fail "exit of the target: exit $rc, expected 0"; }
[ "$(wc -l <"$out")" -ge 2 ] || fail "exit of the target: $(wc -l <"$out") samples"
[ $(($(date +%s) - start)) -le 5 ] || fail "did not stop when the target exited"
[ ! -s "$err" ] || fail "exit of the target: said '$(cat "$err")'"
echo "ok: samples, JSON lines, stops when the process exits"

for bad in "--interval 0" "--interval -1" "--interval abc" "--interval 1e9" "--interval nan" \
	   "--interval 1 --count 0" "--interval 1 --count x" "--count 3" "--interval"; do
	# shellcheck disable=SC2086
	run_stat $bad 1
	[ "$rc" = 2 ] || fail "'$bad': exit $rc, expected 2"
	[ "$(wc -l <"$err")" = 1 ] || fail "'$bad': not one line: $(cat "$err")"
done
echo "ok: bad values refused"
