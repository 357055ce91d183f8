#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# With a small -c, memcached under libfdrange (no settings) refuses
# connections exactly where plain memcached does, and keeps serving
# afterwards.  -c 48 leaves room for no chunk above fd 64 (nothing is
# moved); with -c 400 the chunks below the limit fill up, so later
# connections fall back to the kernel's numbers.  Rejections make the
# learned rotation drift from memcached's hand-off: after them, new
# connections must land in their worker's chunks again (realignment).
. "$(dirname "$0")/lib.sh"

run() { # MODE MAXCONNS N -> "held H rejected R failed F | after: ..."
	start_mc "$1" -t 4 -c "$2"
	hold "$MC_PORT" "$3"
	local first=$HOLD rej
	release
	# Wait until memcached has closed them all.
	for _ in $(seq 100); do
		[ "$("$MCCLIENT" stat "$MC_PORT" curr_connections 2>/dev/null)" = 1 ] && break
		sleep 0.05
	done
	rej=$("$MCCLIENT" stat "$MC_PORT" rejected_connections)
	hold "$MC_PORT" 20
	local second=$HOLD
	if [ "$1" = placed ] && [ "$2" -ge 400 ]; then
		"$FDRANGE" stat --no-map --color=never "$MC_PID" >"$TMP/stat-$2.txt"
		grep -E '^(accepted|summary)' "$TMP/stat-$2.txt" >&2
	fi
	release
	kill -0 "$MC_PID" || fail "memcached ($1, -c $2) died"
	stop_mc
	echo "$first (rejected_connections $rej) / then $second"
}

for c in 48 400; do
	n=$((c + 23))   # 23: not a multiple of 4, so the counters drift apart
	plain=$(run plain "$c" "$n")
	placed=$(run placed "$c" "$n")
	note "-c $c, $n connections: plain: $plain"
	note "-c $c, $n connections: placed: $placed"
	[ "$plain" = "$placed" ] || fail "-c $c: libfdrange changed which connections are refused"
	case ${plain%% /*} in *"rejected 0 "*) fail "-c $c: nothing was rejected; the test needs rejections" ;; esac
	case $plain in *"then held 20 rejected 0 failed 0") ;; *) fail "-c $c: not serving after rejections" ;; esac
done
# After the drift, the 20 new connections were placed by worker again.
s=$TMP/stat-400.txt
[ "$(summary_field "$s" fallbacks)" != "" ] || fail "no report"
r=$(summary_field "$s" realignments)
m=$(summary_field "$s" misplaced)
[ "$r" -ge 1 ] || fail "the drift was not noticed (realignments=$r)"
[ "$m" -le 4 ] || fail "$m connections misplaced after the drift"
echo ok
