#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# 10,000 connect/close cycles against memcached under libfdrange: afterwards
# curr_connections and the fd count in /proc are back where they started,
# and the placement is still worker-local.
. "$(dirname "$0")/lib.sh"

CYCLES=${CHURN_CYCLES:-10000}
start_mc placed -t 4
conns0=$("$MCCLIENT" stat "$MC_PORT" curr_connections)   # counts the asking one
# The asking connection is closed when its worker next runs: the baseline
# is the count once it has gone (the same in 3 samples 50 ms apart), not a
# count that still holds it (seen: 24 before, 23 after, under load).
fds0=$(fd_count "$MC_PID") same=0
for _ in $(seq 40); do
	sleep 0.05
	f=$(fd_count "$MC_PID")
	if [ "$f" = "$fds0" ]; then same=$((same + 1)); else fds0=$f same=0; fi
	[ $same -ge 2 ] && break
done
timeout 300 "$MCCLIENT" churn "$MC_PORT" "$CYCLES" >"$TMP/churn.out" || { cat "$TMP/churn.out"; fail "churn failed"; }
cat "$TMP/churn.out"
# memcached closes a connection when its worker next runs: allow a moment.
for _ in $(seq 100); do
	conns1=$("$MCCLIENT" stat "$MC_PORT" curr_connections)
	fds1=$(fd_count "$MC_PID")
	[ "$conns1" = "$conns0" ] && [ "$fds1" = "$fds0" ] && break
	sleep 0.05
done
note "curr_connections $conns0 -> $conns1, open fds $fds0 -> $fds1"
[ "$conns1" = "$conns0" ] || fail "curr_connections $conns1, was $conns0"
[ "$fds1" = "$fds0" ] || fail "$fds1 fds open, was $fds0"
total=$("$MCCLIENT" stat "$MC_PORT" total_connections)
[ "$total" -ge "$CYCLES" ] || fail "total_connections $total < $CYCLES"

# Still placed by worker after the churn: 128 held, past FDRANGE_THRESHOLD.
hold "$MC_PORT" 128
"$FDRANGE" stat --no-map --color=never "$MC_PID" >"$TMP/stat.txt"
grep '^summary' "$TMP/stat.txt"
p=$(summary_field "$TMP/stat.txt" min_purity)
awk -v p="$p" 'BEGIN { exit !(p != "-" && p >= 95) }' || fail "purity $p after churn, expected >= 95"
[ "$(summary_field "$TMP/stat.txt" shared_client_lines)" = 0 ] || fail "shared client lines after churn"
release
echo ok
