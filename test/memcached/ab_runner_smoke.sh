#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/ab-memcached, a real 4-round run: the table has throughput, p50 and
# p99 for A, A2 and B; the A/A band and the verdict line are there, and the
# verdict follows the documented rule from the run's own rounds (ab_rule.py
# recomputes it from result.json, apart from the runner's code); the JSON
# parses and matches the text; the PNG is one; no process is left behind,
# also after Ctrl-C.  AB_BUILD: the meson build directory (helpers).
. "$(dirname "$0")/lib.sh"
command -v gnuplot >/dev/null || { echo "gnuplot not installed: skipping"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed: skipping"; exit 77; }
AB=$SRCROOT/bench/ab-memcached
: "${AB_BUILD:?AB_BUILD must name the meson build directory}"
# In sanitizer builds the runtime goes first in LD_PRELOAD (the runner keeps
# it for all it starts); leak reports of uninstrumented tools are not ours.
# Only for the runner: other tools (pgrep) must not run under it.
AB_ENV=(env -u LD_PRELOAD)
[ -z "$RT_PRELOAD" ] || AB_ENV=(env "LD_PRELOAD=$RT_PRELOAD" ASAN_OPTIONS=detect_leaks=0)
run_ab() { "${AB_ENV[@]}" "$AB" --build "$AB_BUILD" --fdrange "$FDRANGE" "$@"; }
# left_behind DIR: pids of the servers and loads of the run in DIR still
# there, found by their ports (other tests on the machine run memcached too).
left_behind() {
	local f p
	for f in "$1"/server-*.cmd; do
		p=$(sed -n 's/.* -p \([0-9]*\) .*/\1/p' "$f")
		[ -n "$p" ] || fail "no port in $f"
		pgrep -f -- " -p $p -U 0 " || true
		pgrep -f -- "mcload .*--port $p( |\$)" || true
	done
}
run_ab -t 2 -T 2 -c 80 -d 1 -r 4 -o "$TMP/ab" >"$TMP/ab.out" 2>"$TMP/ab.err" ||
	{ cat "$TMP/ab.out" "$TMP/ab.err"; fail "the runner failed"; }
cat "$TMP/ab.out"
num='[0-9][0-9.]*'
cell="$num \[$num-$num\]"
grep -q '^server .*ops/s median.*p50 us median.*p99 us median' "$TMP/ab.out" || fail "no table header with ops/s, p50 and p99"
for row in 'A  plain' 'A2 plain \(A/A\)' 'B  libfdrange'; do
	grep -Eq "^$row +$cell +$cell +$cell\$" "$TMP/ab.out" || fail "no row '$row' with ops/s, p50 and p99"
done
for row in 'B/A  ops/s' 'A2/A ops/s' 'B/A  p99' 'A2/A p99'; do
	grep -Eq "^$row( +$num){4}\$" "$TMP/ab.out" || fail "no per-round line '$row' with 4 ratios"
done
grep -Eq "^ops/s +$num \[$num-$num\] +$num-$num \(\+-$num%\) " "$TMP/ab.out" || fail "no ops/s line with the A/A band"
grep -Eq "^p99 us +$num \[$num-$num\] +$num-$num \(\+-$num%\) " "$TMP/ab.out" || fail "no p99 line with the A/A band"
grep -q '^B locality .*library=yes' "$TMP/ab.out" || fail "no locality figures of B"
verdict=$(tail -n 1 "$TMP/ab.out")
case $verdict in "verdict: "*"A/A band"*) ;; *) fail "the last line is not a verdict with the A/A band: $verdict" ;; esac
# 2 vCPUs for 2 + 2 threads: the note must say so; more CPUs: it must not.
if [ "$(getconf _NPROCESSORS_ONLN)" -lt 4 ]; then
	case $verdict in *"the fd-table effect is not expected here"*) ;; *) fail "no few-CPUs note in: $verdict" ;; esac
else
	case $verdict in *"not expected here"*) fail "few-CPUs note on $(getconf _NPROCESSORS_ONLN) CPUs" ;; esac
fi
note "$verdict"

# The rule, recomputed from the rounds apart from the runner's code.
python3 "$SRCROOT/test/memcached/ab_rule.py" "$TMP/ab/result.json" --verdict "$verdict" ||
	fail "result.json does not follow the rule or the text (above)"
python3 - "$TMP/ab/result.json" <<'EOF' || fail "result.json: settings or locality (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["config"]["rounds"] == 4 and r["config"]["server_threads"] == 2, r["config"]
assert "library=yes" in r["locality"], r["locality"]
EOF

# --report redoes it from the files; --json prints one JSON document on stdout.
"$AB" --build "$AB_BUILD" --report "$TMP/ab" --json >"$TMP/report.json" 2>"$TMP/report.err" ||
	{ cat "$TMP/report.err"; fail "--report --json failed"; }
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["verdict"], d' "$TMP/report.json" ||
	fail "--report --json: stdout is not the JSON result"
cmp -s <(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["verdict"])' "$TMP/report.json") \
	<(echo "${verdict#verdict: }") || fail "--report gives another verdict than the run"

png=$TMP/ab/chart.png
[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "chart.png is not a PNG"
# IHDR: width and height, as the runner draws them (4 panels).
[ "$(od -An -tu4 -j16 -N8 --endian=big "$png" | awk '{ print $1 "x" $2 }')" = 1200x820 ] ||
	fail "chart.png is not 1200x820"
[ "$(stat -c %s "$png")" -gt 20000 ] || fail "chart.png is too small to hold four panels"
head -1 "$TMP/ab/rounds.csv" | grep -q '^round,position,server,ops_per_s,avg_us,p50_us,p90_us,p99_us' || fail "CSV header"
[ "$(wc -l <"$TMP/ab/rounds.csv")" -eq 13 ] || fail "CSV has $(wc -l <"$TMP/ab/rounds.csv") lines, expected header + 12"
left=$(left_behind "$TMP/ab")
[ -z "$left" ] || fail "processes left behind: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)")"

# Ctrl-C mid-run: everything it started is stopped.  Job control on, or
# the shell starts the background runner with SIGINT ignored.
# Not through run_ab: $! must be the runner, not a subshell around it.
set -m
"${AB_ENV[@]}" "$AB" --build "$AB_BUILD" --fdrange "$FDRANGE" -t 2 -T 2 -c 8 -d 5 -r 3 \
	-o "$TMP/ab2" >"$TMP/ab2.out" 2>&1 &
ab=$!
set +m
for _ in $(seq 100); do [ -s "$TMP/ab2/rounds.csv" ] && break; sleep 0.1; done
sleep 1
kill -INT "$ab"
set +e; wait "$ab"; rc=$?; set -e
[ "$rc" -ne 0 ] || fail "interrupted runner exited 0"
sleep 0.5
[ "$(ls "$TMP"/ab2/server-*.cmd | wc -l)" -eq 3 ] || fail "interrupted before all three servers were up"
left=$(left_behind "$TMP/ab2")
[ -z "$left" ] || fail "after Ctrl-C: processes left behind: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)")"
echo ok
