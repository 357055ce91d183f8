#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Apache Traffic Server 9.2 as a reverse proxy (4 net threads) to a local
# nginx origin, with FDRANGE_THRESHOLD=0 alone, plain and under libfdrange: a
# short wrk load with no client errors either way; under the library,
# mid-load:
#   ACCEPT=1: one ACCEPT thread deals connections to the net threads in
#             strict rotation (the default): min_purity >= 95 and no 8-fd
#             line shared by client sockets of two threads;
#   ACCEPT=0: accept_threads 0 with exec_thread.listen 1: a listener per
#             net thread (SO_REUSEPORT), each serves what it accepts (model
#             local): every connection of the load kept where the kernel
#             numbered it (FDRANGE_LOCAL=keep, the default).
#   burst (second argument): no warm-up, so wrk's 48 connections all come
#             while the library is still learning, and the net threads
#             register them in batches, out of order: each must go alone
#             on an 8-fd line (no shared client line), and the model must
#             still come out right.
# Everything stays on loopback: its own config directory, port
# PORT:ip-in=127.0.0.1, and a resolv.conf naming 127.0.0.1 only (otherwise
# ATS keeps a UDP socket to the machine's nameserver).
# Usage: trafficserver.sh LIB FDRANGE 1|0 [burst]
. "$(dirname "$0")/lib.sh"
ACCEPT=${1:-1} KIND=predictable
[ "${2:-}" = burst ] && SRV_WARMUP=0 KIND=burst
need traffic_server nginx wrk python3
[ -d /etc/trafficserver ] || skip "/etc/trafficserver missing"

start_origin
PORT=$(free_port)
D=$TMP/ats
mkdir -p "$D/log" "$D/run" "$D/cache"
cp -r /etc/trafficserver "$D/etc"
echo "nameserver 127.0.0.1" >"$D/resolv.conf"
echo "$D/cache 64M" >"$D/etc/storage.config"
echo "map http://127.0.0.1:$PORT/ http://127.0.0.1:$ORIGIN_PORT/" >"$D/etc/remap.config"
: >"$D/etc/plugin.config"
set_rec() {
	local name=$1 type=$2 value=$3
	sed -i "/^CONFIG $name /d" "$D/etc/records.config"
	echo "CONFIG $name $type $value" >>"$D/etc/records.config"
}
set_rec proxy.config.exec_thread.autoconfig INT 0
set_rec proxy.config.exec_thread.limit INT 4
set_rec proxy.config.accept_threads INT "$ACCEPT"
[ "$ACCEPT" = 0 ] && set_rec proxy.config.exec_thread.listen INT 1
set_rec proxy.config.http.server_ports STRING "$PORT:ip-in=127.0.0.1"
set_rec proxy.config.admin.user_id STRING '#-1'
set_rec proxy.config.log.logfile_dir STRING "$D/log"
set_rec proxy.config.local_state_dir STRING "$D/run"
set_rec proxy.config.dns.resolv_conf STRING "$D/resolv.conf"

run_mode() {
	local mode=$1 errs
	rm -rf "$D/cache"/* "$D/run"/*
	launch "ats-$mode" "$mode" env PROXY_CONFIG_CONFIG_DIR="$D/etc" traffic_server
	local pid=$PID
	wait_listen "$PORT" "$pid" 30 "ats-$mode"
	# The configuration took: one listener, or one per net thread.
	local want=1
	[ "$ACCEPT" = 0 ] && want=4
	sleep 0.5
	[ "$(listeners "$PORT")" = "$want" ] || fail "$(listeners "$PORT") listening sockets, expected $want"
	# The remap answers before the load starts (and warms the origin path).
	for _ in $(seq 50); do
		curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/index.html" && break
		sleep 0.2
	done
	warm_up "$PORT" http "$pid" "$mode"
	wrk_load "http://127.0.0.1:$PORT/index.html" "$TMP/wrk-$mode.log" &
	local load=$!
	wait_conns "$PORT" "$CONNS" 10
	sleep 1
	take_stat "$pid" "$TMP/stat-$mode.txt"
	wait "$load" || fail "wrk failed ($mode)"
	alive "$pid" "ats-$mode"
	grep -E 'Requests/sec|Socket errors|Non-2xx' "$TMP/wrk-$mode.log" || true
	errs=$(wrk_errors "$TMP/wrk-$mode.log")
	stop_group "$pid"
	record_errors "$mode" "$errs"
}

plain_then_lib
if [ "$ACCEPT" = 1 ]; then
	check_placement "$TMP/stat-lib.txt" "$KIND" rotation
else
	check_placement "$TMP/stat-lib.txt" "$KIND" local
fi
result_line
