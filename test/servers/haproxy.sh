#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# haproxy 2.6 (nbthread 4, maxconn 4096, http frontend -> backend -> a local
# nginx origin) with FDRANGE_THRESHOLD=0 alone, plain and under libfdrange, with
# the soft RLIMIT_NOFILE at LIMIT: start, survive a short wrk load with no
# client errors either way.  haproxy sizes its fd-indexed tables by maxconn
# (maxsock 8216) and does not lower an inherited higher limit, so any fd the
# library places at or above maxsock kills it at start-up ("FATAL: bug
# condition fd >= global.maxsock", exit 139).
#   MQ=on  (default tune.listener.multi-queue): the accepting thread hands
#          the connection to the less loaded of two rotating threads, which
#          cannot be predicted: the library must say model=unpredictable
#          (or settle on a model after the burst's last accept, with no
#          client placed on it: see check_placement);
#   MQ=off: the accepting thread serves (model local): every connection
#          of the load kept where the kernel numbered it (FDRANGE_LOCAL=keep,
#          the default; see check_placement).
# Usage: haproxy.sh LIB FDRANGE on|off LIMIT
. "$(dirname "$0")/lib.sh"
MQ=${1:-on} LIMIT=${2:-20000}
need haproxy nginx wrk prlimit python3

hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=$LIMIT
[ "$hard" -ge "$LIMIT" ] || hard=$LIMIT
prlimit --nofile="$LIMIT:$hard" true 2>/dev/null ||
	skip "cannot set RLIMIT_NOFILE to $LIMIT:$hard here (hard limit $(ulimit -Hn))"

start_origin
PORT=$(free_port)
{
	echo "global"
	echo "  nbthread 4"
	echo "  maxconn 4096"
	[ "$MQ" = off ] && echo "  tune.listener.multi-queue off"
	cat <<-EOF
	defaults
	  mode http
	  timeout connect 5s
	  timeout client 30s
	  timeout server 30s
	frontend fe
	  bind 127.0.0.1:$PORT
	  default_backend be
	backend be
	  server origin 127.0.0.1:$ORIGIN_PORT
	EOF
} >"$TMP/haproxy.cfg"
haproxy -c -f "$TMP/haproxy.cfg" >/dev/null || fail "haproxy rejects the config"

run_mode() {
	local mode=$1 errs
	launch "haproxy-$mode" "$mode" prlimit --nofile="$LIMIT:$hard" haproxy -db -f "$TMP/haproxy.cfg"
	local pid=$PID
	wait_listen "$PORT" "$pid" 10 "haproxy-$mode"
	[ "$MQ" = on ] || warm_up "$PORT" http "$pid" "$mode"
	note "$mode: soft RLIMIT_NOFILE in haproxy: $(awk '/^Max open files/ { print $4 }' "/proc/$pid/limits")"
	wrk_load "http://127.0.0.1:$PORT/" "$TMP/wrk-$mode.log" &
	local load=$!
	wait_conns "$PORT" "$CONNS" 10
	sleep 1
	take_stat "$pid" "$TMP/stat-$mode.txt"
	wait "$load" || fail "wrk failed ($mode)"
	alive "$pid" "haproxy-$mode"
	grep -E 'Requests/sec|Socket errors|Non-2xx' "$TMP/wrk-$mode.log" || true
	errs=$(wrk_errors "$TMP/wrk-$mode.log")
	stop_group "$pid"
	record_errors "$mode" "$errs"
}

plain_then_lib
if [ "$MQ" = off ]; then
	check_placement "$TMP/stat-lib.txt" predictable local
else
	check_placement "$TMP/stat-lib.txt" unpredictable
fi
result_line
