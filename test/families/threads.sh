#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Case 7: 1000 short-lived threads, at most 50 alive at once, each creating
# one fd (socket, /dev/null, eventfd, UDP socket in turn), holding it 40 ms,
# closing it and exiting (threads_churn.c); plain and under libfdrange.
# Asserts: every thread created and closed its fd and exits 0 in both
# runs; no leak: the open-fd count after the last thread is the count
# before the first (the program's own count, and a /proc sample taken then
# equals it); the fd bound holds at every sample taken while the threads
# come and go, and the highest fd stays below 1024 under the library as it
# does plain.
# Usage: threads.sh LIB FDRANGE BIN
. "$(dirname "$0")/lib.sh"
need python3
THREADS=1000 ALIVE=50 HOLD_MS=40

run_mode() {
	local mode=$1 d=$TMP/$1 pid rc=0 base now
	mkdir -p "$d"
	launch "churn-$mode" "$mode" "$BIN/threads_churn" "$d" "$THREADS" "$ALIVE" "$HOLD_MS"
	pid=$PID
	watch_start "$TMP/w-$mode.json" --every 0.02 --until-file "$d/done" "$pid"
	touch "$d/start"
	for _ in $(seq 600); do [ -e "$d/done" ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.05; done
	watch_stop
	if [ -e "$d/done" ]; then
		now=$("$PY" "$HERE/fdwatch.py" once "$pid" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["open"])')
	fi
	touch "$d/go"
	wait "$pid" 2>/dev/null || rc=$?
	cat "$TMP/churn-$mode.log"
	[ "$rc" = 0 ] || soft_fail "threads_churn exited $rc ($mode)"
	base=$(sed -n 's/^threads_churn:.* baseline=\([0-9]*\).*/\1/p' "$TMP/churn-$mode.log")
	{ [ -n "$base" ] && [ "${now:-x}" = "$base" ]; } ||
		soft_fail "$mode: ${now:-?} fds open in /proc after the threads, ${base:-?} before: a leak"
	grep -q "created=$THREADS " "$TMP/churn-$mode.log" || soft_fail "$mode: not every thread created its fd"
}

run_mode plain
run_mode lib
verdict threads-churn "$TMP/w-plain.json" "$TMP/w-lib.json" --min-open 20 --extra "threads=$THREADS alive<=$ALIVE"
finish
