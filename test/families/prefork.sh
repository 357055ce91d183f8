#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Case 5: a pre-fork daemon (prefork.c): fork, setsid, fork the workers,
# the middle process and the program exit; each of the 3 workers (orphaned
# grandchildren) starts 4 threads that each create a socket, a socketpair,
# a pipe and open /dev/null and pass data through them.  Plain and under
# libfdrange.  Asserts: the program exits 0 and every worker reports "ok"
# in both runs, with the same number of threads and fds; the fd bound holds
# at every sample of every worker; under the library, every worker has a
# stats block of its own: `fdrange stat --json WORKER` exits 0 (not 3,
# "corrupt or forged"), says library=yes and placed > 0, and every fd its
# threads created is in a chunk (>= 64).  The workers hold a few dozen fds
# each, below the default FDRANGE_THRESHOLD (64), where nothing would be
# moved and the blocks would say reason=few_fds: this case, about whose
# block a worker writes, runs with the threshold off.
# Usage: prefork.sh LIB FDRANGE BIN
. "$(dirname "$0")/lib.sh"
FAM_LIB_SETTING=FDRANGE_THRESHOLD=0
need python3
WORKERS=3 THREADS=4

run_mode() {
	local mode=$1 d=$TMP/$1 rc=0 w pg st lib placed bad
	mkdir -p "$d"
	launch "prefork-$mode" "$mode" "$BIN/prefork" "$d" "$WORKERS" "$THREADS"
	wait "$PID" || rc=$?
	[ "$rc" = 0 ] || { cat "$TMP/prefork-$mode.log" >&2; fail "prefork exited $rc ($mode)"; }
	[ -s "$d/workers" ] || fail "no workers file ($mode)"
	WPIDS=$(cat "$d/workers")
	for w in $WPIDS; do
		pg=$(awk '{ print $5 }' "/proc/$w/stat" 2>/dev/null || true)
		[ -z "$pg" ] || { GROUPS_STARTED="$GROUPS_STARTED $pg"; [ -z "${FAM_GROUPS_FILE:-}" ] || echo "$pg" >>"$FAM_GROUPS_FILE"; }
	done
	for w in $WPIDS; do wait_file "$d/ready-$w" 10 "worker $w ($mode)"; done
	# shellcheck disable=SC2086
	watch_start "$TMP/w-$mode.json" --for 1 $WPIDS
	for w in $WPIDS; do
		st=$(stat_json "$w" "$d/stat-$w.json")
		lib=$(jget "$d/stat-$w.json" 'd["library"]')
		placed=$(jget "$d/stat-$w.json" 'd["summary"].get("placed", 0)')
		note "$mode: worker $w: fdrange stat exit $st library=$lib placed=$placed fds: $(cut -d' ' -f4- "$d/fds-$w" | tr '\n' ' ')"
		if [ "$mode" = lib ]; then
			[ "$st" = 0 ] || soft_fail "fdrange stat --json $w (worker) exited $st: $(head -c 160 "$d/stat-$w.json")"
			[ "$lib" = yes ] || soft_fail "worker $w: library=$lib"
			case $placed in ''|-|*[!0-9]*|0) soft_fail "worker $w: placed=$placed, expected > 0" ;; esac
			bad=$(awk '{ for (i = 4; i <= NF; i++) if ($i < 64) printf " %s", $i }' "$d/fds-$w")
			[ -z "$bad" ] || soft_fail "worker $w: its threads' fds$bad are below 64 (not placed in chunks;" \
				"fallbacks $(jget "$d/stat-$w.json" 'd["block"]["fallbacks"]')," \
				"single_kept $(jget "$d/stat-$w.json" 'd["block"]["geometry"]["single_kept"]'))"
		fi
	done
	watch_stop
	touch "$d/stop"
	for w in $WPIDS; do
		wait_file "$d/done-$w" 10 "worker $w ($mode)"
		grep -q '^ok$' "$d/done-$w" || soft_fail "worker $w ($mode): $(cat "$d/done-$w")"
		[ "$(wc -l <"$d/fds-$w")" = "$THREADS" ] || soft_fail "worker $w ($mode): $(wc -l <"$d/fds-$w") threads reported"
	done
}

run_mode plain
run_mode lib
verdict prefork "$TMP/w-plain.json" "$TMP/w-lib.json" --min-open $((THREADS * 6))
finish
