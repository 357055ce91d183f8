#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A Java NIO echo server with Netty's boss/worker shape (java/EchoServer:
# one acceptor deals connections in strict rotation to 4 worker Selector
# threads, each registering its channels from its own thread), compiled
# here with javac, run with FDRANGE_THRESHOLD=0 alone, plain and under
# libfdrange: java/EchoClient opens 128 connections and checks every echoed
# byte for a few seconds, no errors either way; under the library,
# mid-load: min_purity >= 95 and no 8-fd line shared by client sockets of
# two threads.
# Usage: java.sh LIB FDRANGE
. "$(dirname "$0")/lib.sh"
need java javac python3
CONNS=128
JOPTS="-Djava.net.preferIPv4Stack=true -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1"

mkdir -p "$TMP/classes"
timeout --foreground 120 javac -d "$TMP/classes" "$HERE/java/EchoServer.java" "$HERE/java/EchoClient.java" ||
	fail "javac failed"

run_mode() {
	local mode=$1 errs port rc=0
	port=$(free_port)
	# shellcheck disable=SC2086
	launch "java-$mode" "$mode" java $JOPTS -cp "$TMP/classes" EchoServer "$port" 4
	local pid=$PID
	wait_listen "$port" "$pid" 30 "java-$mode"
	warm_up "$port" echo "$pid" "$mode"
	# shellcheck disable=SC2086
	timeout --foreground $((LOAD_S + 30)) env -u LD_PRELOAD java $JOPTS -cp "$TMP/classes" EchoClient "$port" "$CONNS" 4 "$LOAD_S" \
		>"$TMP/client-$mode.log" 2>&1 &
	local load=$!
	wait_conns "$port" "$CONNS" 20
	sleep 1
	take_stat "$pid" "$TMP/stat-$mode.txt"
	wait "$load" || rc=$?
	alive "$pid" "java-$mode"
	head -n 5 "$TMP/client-$mode.log"
	grep -q "^client: conns=$CONNS connected=$CONNS echoes=[1-9]" "$TMP/client-$mode.log" ||
		{ tail -n 20 "$TMP/client-$mode.log" >&2; fail "the echo client did not finish (exit $rc, $mode)"; }
	errs=$(sed -n 's/^client:.* errors=\([0-9]*\)$/\1/p' "$TMP/client-$mode.log")
	errs=$((errs + $(grep -c '^error' "$TMP/java-$mode.log" || true)))
	stop_group "$pid"
	record_errors "$mode" "$errs"
}

plain_then_lib
check_placement "$TMP/stat-lib.txt" predictable rotation
result_line
