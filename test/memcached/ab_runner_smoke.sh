#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/ab-memcached: a 2-round smoke run prints the table and writes the
# CSV and a valid PNG; bad options are refused before anything starts; no
# process is left behind.
. "$(dirname "$0")/lib.sh"
for c in memcaslap gnuplot; do
	command -v "$c" >/dev/null || { echo "$c not installed: skipping"; exit 77; }
done
AB=$SRCROOT/bench/ab-memcached
# In sanitizer builds the runtime goes first in LD_PRELOAD (the runner keeps
# it for all it starts); leak reports of uninstrumented tools are not ours.
# Only for the runner: other tools (pgrep) must not run under it.
AB_ENV=(env -u LD_PRELOAD)
[ -z "$RT_PRELOAD" ] || AB_ENV=(env "LD_PRELOAD=$RT_PRELOAD" ASAN_OPTIONS=detect_leaks=0)

for bad in "--rounds 0" "--rounds x" "--conns 5 --client-threads 2" "--get-ratio 1.5" \
	   "--value-size 0" "--bogus" "--duration" "--server-args -p1" "stray"; do
	set +e
	# shellcheck disable=SC2086
	"${AB_ENV[@]}" "$AB" --fdrange "$FDRANGE" -o "$TMP/bad" $bad >"$TMP/out" 2>"$TMP/err"; rc=$?
	set -e
	[ "$rc" -eq 2 ] || fail "'$bad': exit $rc, expected 2"
	[ -s "$TMP/err" ] || fail "'$bad': no message"
	[ ! -e "$TMP/bad/rounds.csv" ] || fail "'$bad': started a run"
done
note "bad options refused: $(head -1 "$TMP/err")"

before=$(pgrep -c -x memcached || true)
"${AB_ENV[@]}" "$AB" --fdrange "$FDRANGE" -t 2 -T 2 -c 8 -d 1 -r 2 -o "$TMP/ab" >"$TMP/ab.out" 2>&1 ||
	{ cat "$TMP/ab.out"; fail "the runner failed"; }
cat "$TMP/ab.out"
grep -q '^A plain  *[0-9]' "$TMP/ab.out" || fail "no A row"
grep -q '^B libfdrange  *[0-9]' "$TMP/ab.out" || fail "no B row"
grep -q '^B/A median [0-9.]*, min [0-9.]*, max [0-9.]*' "$TMP/ab.out" || fail "no ratio line"
grep -q '^B locality .*library=yes' "$TMP/ab.out" || fail "no locality figures"
[ "$(wc -l <"$TMP/ab/rounds.csv")" -eq 5 ] || fail "CSV has $(wc -l <"$TMP/ab/rounds.csv") lines, expected header + 4"
head -1 "$TMP/ab/rounds.csv" | grep -q '^variant,round,ops_per_s,avg_latency_us' || fail "CSV header"
[ "$(head -c 8 "$TMP/ab/throughput.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "not a PNG"
[ "$(stat -c %s "$TMP/ab/throughput.png")" -gt 2000 ] || fail "PNG too small"
after=$(pgrep -c -x memcached || true)
[ "$after" = "$before" ] || fail "memcached processes left behind: $before before, $after after"

# Ctrl-C mid-run: everything it started is stopped.  Job control on, or
# the shell starts the background runner with SIGINT ignored.
set -m
"${AB_ENV[@]}" "$AB" --fdrange "$FDRANGE" -t 2 -T 2 -c 8 -d 5 -r 3 -o "$TMP/ab2" >"$TMP/ab2.out" 2>&1 &
ab=$!
set +m
for _ in $(seq 100); do [ -s "$TMP/ab2/rounds.csv" ] && break; sleep 0.1; done
sleep 1
kill -INT "$ab"
set +e; wait "$ab"; rc=$?; set -e
[ "$rc" -ne 0 ] || fail "interrupted runner exited 0"
sleep 0.5
after=$(pgrep -c -x memcached || true)
[ "$after" = "$before" ] || fail "after Ctrl-C: memcached processes left behind"
if pgrep -x memcaslap >/dev/null; then fail "after Ctrl-C: memcaslap left behind"; fi
echo ok
