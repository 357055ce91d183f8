#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Case 1: a thread-per-connection server that waits with select()/FD_SET
# (tpc_select.c, built -O2 -D_FORTIFY_SOURCE=2: FD_SET aborts on an fd
# >= 1024), 200 connections held at once by echo_client.py with echo
# traffic, soft RLIMIT_NOFILE 20000 and 4096, plain and under libfdrange.
# Asserts per limit: the server survives and exits 0, every echo comes back
# (0 client errors) in both runs, the fd bound holds at every sample, the
# highest fd stays below 1024 under the library as it does plain; and,
# from fdrange stat --json mid-load, that the library made fewer failed
# placement probes (extra_probes) than a quarter of the fds it placed, and
# fewer than one per accepted connection: no repeated probing per accept.
# Usage: tpc-select.sh LIB FDRANGE BIN [SOFTLIMIT...]
. "$(dirname "$0")/lib.sh"
need python3 prlimit
CONNS=${FAM_TPC_CONNS:-200}
LOAD_S=${FAM_LOAD_S:-3}
limits=${*:-20000 4096}
hard=$(ulimit -Hn)

run_mode() {
	local mode=$1 soft=$2 pid rc=0 crc=0 st
	rm -f "$TMP/port" "$TMP/ready"
	launch "tpc-$mode-$soft" "$mode" prlimit --nofile="$soft:" "$BIN/tpc_select" "$TMP/port"
	pid=$PID
	wait_file "$TMP/port" 10 "tpc_select ($mode)"
	watch_start "$TMP/w-$mode-$soft.json" "$pid"
	timeout --foreground $((LOAD_S + 40)) "$PY" "$HERE/echo_client.py" "$(cat "$TMP/port")" "$CONNS" "$LOAD_S" "$TMP/ready" \
		>"$TMP/client-$mode-$soft.log" 2>&1 &
	local load=$!
	for _ in $(seq 400); do [ -e "$TMP/ready" ] || ! kill -0 "$load" 2>/dev/null && break; sleep 0.05; done
	if [ "$mode" = lib ] && kill -0 "$pid" 2>/dev/null; then
		st=$(stat_json "$pid" "$TMP/stat-$soft.json")
		[ "$st" = 0 ] || soft_fail "fdrange stat --json $pid exited $st ($(head -c 200 "$TMP/stat-$soft.json"))"
	fi
	wait "$load" || crc=$?
	watch_stop
	tail -n 3 "$TMP/client-$mode-$soft.log"
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || rc=$?
	tail -n 3 "$TMP/tpc-$mode-$soft.log"
	[ "$rc" = 0 ] || soft_fail "tpc_select exited $rc ($mode, soft limit $soft)"
	[ "$crc" = 0 ] || soft_fail "echo client failed (exit $crc, $mode, soft limit $soft)"
	grep -q "^echo_client: conns=$CONNS .* errors=0$" "$TMP/client-$mode-$soft.log" ||
		soft_fail "echo client errors ($mode, soft limit $soft)"
}

for soft in $limits; do
	if [ "$soft" -gt "$hard" ]; then
		note "soft limit $soft is above the hard limit $hard: run with $hard"
		soft=$hard
	fi
	run_mode plain "$soft"
	run_mode lib "$soft"
	extra="limit=$soft"
	if [ -f "$TMP/stat-$soft.json" ]; then
		lib=$(jget "$TMP/stat-$soft.json" 'd["library"]')
		placed=$(jget "$TMP/stat-$soft.json" 'd["summary"]["placed"]')
		probes=$(jget "$TMP/stat-$soft.json" 'd["summary"]["extra_probes"]')
		acc=$(jget "$TMP/stat-$soft.json" 'd["block"]["handoff"]["accepted"]')
		fb=$(jget "$TMP/stat-$soft.json" 'd["summary"]["fallbacks"]')
		extra="$extra placed=$placed accepted=$acc extra_probes=$probes fallbacks=$fb"
		[ "$lib" = yes ] || soft_fail "library=$lib in fdrange stat (soft limit $soft)"
		case $probes$acc$placed in *[!0-9]*) soft_fail "no extra_probes/accepted/placed in the stat" ;; *)
			# The first accept comes while the process has one thread.
			[ "$acc" -ge $((CONNS - 1)) ] || soft_fail "the library saw $acc accepts, expected >= $((CONNS - 1))"
			{ [ $((probes * 4)) -lt "$placed" ] && [ "$probes" -lt "$acc" ]; } ||
				soft_fail "$probes failed probes for $placed placed fds and $acc accepts: repeated probing (soft limit $soft)" ;;
		esac
	fi
	smax=$(sed -n 's/^tpc_select:.* maxfd=\([0-9]*\).*/\1/p' "$TMP/tpc-lib-$soft.log" | tail -n 1)
	extra="$extra server_maxfd=${smax:-?}"
	verdict "tpc-select-$soft" "$TMP/w-plain-$soft.json" "$TMP/w-lib-$soft.json" \
		--min-open $((2 * CONNS)) --extra "$extra"
done
finish
