#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# varnish 7.1 in front of a local nginx origin, with FDRANGE_THRESHOLD=0 alone,
# plain and under libfdrange: a short wrk load with no client errors
# either way.  One worker per pool blocks in accept() and hands each
# session to whichever worker is idle; idle sessions wait in a waiter
# epoll; backend connections are used by many workers: the serving thread
# cannot be predicted, so under the library, mid-load, fdrange stat of the
# child (comm cache-main) must say model=unpredictable.
# Usage: varnish.sh LIB FDRANGE
. "$(dirname "$0")/lib.sh"
need varnishd nginx wrk python3

start_origin
PORT=$(free_port)
ADMIN=$(free_port)
D=$TMP/varnish
mkdir -p "$D"
cat >"$D/default.vcl" <<EOF
vcl 4.1;
backend default { .host = "127.0.0.1"; .port = "$ORIGIN_PORT"; }
EOF

run_mode() {
	local mode=$1 errs child
	rm -rf "$D/work"
	launch "varnish-$mode" "$mode" varnishd -F -a "127.0.0.1:$PORT" -T "127.0.0.1:$ADMIN" \
		-n "$D/work" -f "$D/default.vcl" -s malloc,64m
	local pid=$PID
	wait_listen "$PORT" "$pid" 30 "varnish-$mode"
	child=""
	for _ in $(seq 100); do
		child=$(descendant_by_comm "$pid" cache-main) && break
		sleep 0.1
	done
	[ -n "$child" ] || fail "no cache-main child under varnishd $pid ($mode)"
	for _ in $(seq 50); do
		curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/index.html" && break
		sleep 0.2
	done
	wrk_load "http://127.0.0.1:$PORT/index.html" "$TMP/wrk-$mode.log" &
	local load=$!
	wait_conns "$PORT" "$CONNS" 10
	sleep 1
	take_stat "$child" "$TMP/stat-$mode.txt"
	wait "$load" || fail "wrk failed ($mode)"
	alive "$pid" "varnish-$mode"
	kill -0 "$child" 2>/dev/null || fail "varnish child $child died during the load ($mode)"
	grep -E 'Requests/sec|Socket errors|Non-2xx' "$TMP/wrk-$mode.log" || true
	errs=$(wrk_errors "$TMP/wrk-$mode.log")
	stop_group "$pid"
	record_errors "$mode" "$errs"
}

plain_then_lib
check_placement "$TMP/stat-lib.txt" unpredictable
result_line
