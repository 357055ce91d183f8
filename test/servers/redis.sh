#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# redis 7 (io-threads 4, io-threads-do-reads yes) with FDRANGE_THRESHOLD=0
# alone, plain and under libfdrange: redis-benchmark (48 connections,
# SET and GET) with no errors either way (client-side error lines, the
# server's total_error_replies and rejected_connections).  The main thread
# accepts and registers every connection in its one epoll (io threads take
# clients per event-loop pass, no stable serving thread): under the
# library, mid-load: model local, every connection of the load kept where
# the kernel numbered it (FDRANGE_LOCAL=keep, the default).
# Usage: redis.sh LIB FDRANGE
. "$(dirname "$0")/lib.sh"
need redis-server redis-benchmark redis-cli python3

D=$TMP/redis
mkdir -p "$D"
PORT=$(free_port)
cat >"$D/redis.conf" <<EOF
bind 127.0.0.1
port $PORT
save ""
appendonly no
daemonize no
dir $D
io-threads 4
io-threads-do-reads yes
EOF

info() { redis-cli -p "$PORT" info stats | tr -d '\r' | awk -F: -v k="$1" '$1 == k { print $2 }'; }

run_mode() {
	local mode=$1 errs
	launch "redis-$mode" "$mode" redis-server "$D/redis.conf"
	local pid=$PID
	wait_listen "$PORT" "$pid" 10 "redis-$mode"
	warm_up "$PORT" redis "$pid" "$mode"
	# Bounded by time, not by count: io-threads 4 on 2 cores runs at about
	# 1000 requests/s (the io threads busy-wait on each other), a fast
	# machine at 100 times that.  SIGINT ends the client after LOAD_S s;
	# the server's counters say how many commands it ran and failed.
	timeout --foreground -s INT "$LOAD_S" redis-benchmark -p "$PORT" -c "$CONNS" -n 100000000 -t set -q \
		>"$TMP/bench-$mode.log" 2>&1 &
	local load=$! rc=0
	wait_conns "$PORT" "$CONNS" 10
	sleep 0.5
	take_stat "$pid" "$TMP/stat-$mode.txt"
	wait "$load" || rc=$?
	[ "$rc" = 124 ] || { tail -c 2000 "$TMP/bench-$mode.log" >&2; fail "redis-benchmark ended early (exit $rc, $mode)"; }
	alive "$pid" "redis-$mode"
	local cmds
	cmds=$(info total_commands_processed)
	note "$mode: $cmds commands, io_threaded_reads_processed=$(info io_threaded_reads_processed) io_threaded_writes_processed=$(info io_threaded_writes_processed)"
	[ "$cmds" -ge 500 ] || fail "only $cmds commands processed in $LOAD_S s ($mode)"
	[ "$(redis-cli -p "$PORT" get key:__rand_int__ | wc -c)" -gt 1 ] || fail "the benchmark's key is not set ($mode)"
	errs=$(( $(tr '\r' '\n' <"$TMP/bench-$mode.log" | grep -Eic 'error' || true) \
		+ $(info total_error_replies) + $(info rejected_connections) ))
	stop_group "$pid"
	record_errors "$mode" "$errs"
}

plain_then_lib
check_placement "$TMP/stat-lib.txt" predictable local
result_line
