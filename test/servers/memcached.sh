#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memcached -t 4 -c 4096 with FDRANGE_THRESHOLD=0 alone, plain and under
# libfdrange: memcaslap with 64 connections for a few seconds, no client
# errors either way; under the library, mid-load, the hand-off (main thread
# deals connections to the 4 workers in strict rotation) is learned:
# min_purity >= 95, no 8-fd line shared by client sockets of two threads,
# every connection fd below 1024 (compact numbering), and memccapable's
# protocol checks pass.
# Usage: memcached.sh LIB FDRANGE
. "$(dirname "$0")/lib.sh"
need memcached memcaslap memccapable memcstat python3
CONNS=64

printf 'key\n64 64 1\nvalue\n1024 1024 1\ncmd\n0 0.1\n1 0.9\n' >"$TMP/ms.cfg"

run_mode() {
	local mode=$1 port errs rejected
	port=$(free_port)
	launch "mc-$mode" "$mode" memcached -u nobody -t 4 -c 4096 -m 1024 -p "$port" -U 0 -l 127.0.0.1
	local pid=$PID
	wait_listen "$port" "$pid" 10 "mc-$mode"
	timeout --foreground $((LOAD_S + 20)) memcaslap -s "127.0.0.1:$port" -T 2 -c "$CONNS" -t "${LOAD_S}s" \
		-F "$TMP/ms.cfg" >"$TMP/ms-$mode.log" 2>&1 &
	local load=$!
	wait_conns "$port" "$CONNS" 10
	sleep 1
	take_stat "$pid" "$TMP/stat-$mode.txt"
	wait "$load" || { cat "$TMP/ms-$mode.log" >&2; fail "memcaslap exited non-zero ($mode)"; }
	alive "$pid" "mc-$mode"
	tail -n 1 "$TMP/ms-$mode.log"
	grep -q '^Run time:.*TPS: [1-9]' "$TMP/ms-$mode.log" || { cat "$TMP/ms-$mode.log" >&2; fail "memcaslap reported no throughput ($mode)"; }
	errs=$(grep -Eic 'error|fail|out of memory' "$TMP/ms-$mode.log" || true)
	rejected=$(memcstat --servers="127.0.0.1:$port" | awk '$1 == "rejected_connections:" { print $2 }')
	errs=$((errs + ${rejected:-0}))
	timeout --foreground 60 memccapable -h 127.0.0.1 -p "$port" >"$TMP/capable-$mode.log" 2>&1 ||
		{ tail -n 20 "$TMP/capable-$mode.log" >&2; fail "memccapable failed ($mode)"; }
	grep -q "All tests passed" "$TMP/capable-$mode.log" || fail "memccapable did not pass ($mode)"
	alive "$pid" "mc-$mode"
	stop_group "$pid"
	note "$mode: memccapable passed"
	record_errors "$mode" "$errs"
}

plain_then_lib
maxfd=$(pfield "$TMP/stat-lib.txt" max_client_fd)
R_MORE="$R_MORE max_client_fd=$maxfd"
[ "$maxfd" -lt 1024 ] || fail "highest connection fd $maxfd is not below 1024"
check_placement "$TMP/stat-lib.txt" predictable rotation
result_line
