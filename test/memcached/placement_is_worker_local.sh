#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memcached -t 4 -c 4096 under libfdrange with NO settings: with 160 client
# connections open, the ones the kernel numbered below FDRANGE_THRESHOLD
# (64) stay there, as without the library; every connection at or above 64
# lies on an 8-fd line of its worker's own and, beyond its first line (in
# the lines pool's chunk, a line per worker), in 64-fd chunks of its own
# (except the few the library placed alone on a line while it learned the
# rotation), the highest connection fd stays below 1024, checked from
# /proc alone (which epoll instance watches each fd) and from `fdrange
# stat` (purity, shared lines above the threshold, model).
. "$(dirname "$0")/lib.sh"

env | grep -q '^FDRANGE_' && fail "FDRANGE_* set in the environment: this test is about the defaults"
start_mc placed -t 4 -c 4096
hold "$MC_PORT" 160
[ "$HOLD" = "held 160 rejected 0 failed 0" ] || fail "connections: $HOLD"

"$FDRANGE" stat --color=never "$MC_PID" >"$TMP/stat.txt" || fail "fdrange stat failed"
cat "$TMP/stat.txt"

# /proc alone: the epoll instance watching each connection.
declare -A watcher line_ep chunk_ep chunk_n per_ep
for info in /proc/"$MC_PID"/fdinfo/*; do
	ep=${info##*/}
	[ "$(readlink "/proc/$MC_PID/fd/$ep" 2>/dev/null)" = "anon_inode:[eventpoll]" ] || continue
	while read -r _ tfd _; do watcher[$tfd]=$ep; done < <(grep '^tfd:' "$info")
done
conns=0 top=0 alone=0 low=0
for f in /proc/"$MC_PID"/fd/*; do
	fd=${f##*/}
	case $(readlink "$f") in socket:*) ;; *) continue ;; esac
	ep=${watcher[$fd]:-}
	[ -n "$ep" ] || fail "socket fd $fd is watched by no epoll"
	# Below the threshold the kernel's numbers stand (and the listener,
	# watched by the main thread's epoll, is there too).
	if [ "$fd" -lt 64 ]; then low=$((low + 1)); continue; fi
	conns=$((conns + 1))
	[ "$fd" -gt "$top" ] && top=$fd
	l=$((fd / 8)) c=$(( (fd - 64) / 64 ))
	if [ -n "${line_ep[$l]:-}" ] && [ "${line_ep[$l]}" != "$ep" ]; then
		fail "8-fd line $l holds connections of epoll ${line_ep[$l]} and epoll $ep"
	fi
	line_ep[$l]=$ep
	if [ $((fd % 8)) = 0 ]; then
		alone=$((alone + 1))     # maybe placed alone on its line while learning
		continue
	fi
	chunk_n[$c.$ep]=$(( ${chunk_n[$c.$ep]:-0} + 1 ))
	[ -n "${chunk_ep[$c]:-}" ] && [ "${chunk_ep[$c]}" != "$ep" ] && chunk_ep[$c]=mixed
	[ -n "${chunk_ep[$c]:-}" ] || chunk_ep[$c]=$ep
	per_ep[$ep]=$(( ${per_ep[$ep]:-0} + 1 ))
done
# A chunk of several workers' connections is the lines pool's: at most one
# line (8 fds) of each worker there.
for key in "${!chunk_n[@]}"; do
	c=${key%%.*}
	[ "${chunk_ep[$c]}" = mixed ] && [ "${chunk_n[$key]}" -gt 8 ] &&
		fail "64-fd chunk $c holds ${chunk_n[$key]} connections of epoll ${key#*.} beside another worker's"
done
# 160 held (plus the start-up check's connection if memcached has not
# closed it yet, and the listener), split at fd 64.
[ $((conns + low)) -ge 161 ] && [ $((conns + low)) -le 162 ] ||
	fail "$conns connection fds at or above 64 and $low below, expected 161 in all"
[ "$low" -ge 30 ] && [ "$conns" -ge 96 ] ||
	fail "$low socket fds below 64, $conns at or above: expected fds 0-63 filled by the kernel, the rest placed"
[ "$top" -lt 1024 ] || fail "highest connection fd $top, expected below 1024"
[ "${#per_ep[@]}" -eq 4 ] || fail "connections in the chunks of ${#per_ep[@]} epoll instances, expected 4"
note "from /proc: $conns connections on lines of their own, highest fd $top, $alone at line starts; $low socket fds below 64 left by the threshold"

# The locality report agrees.
[ "$(summary_field "$TMP/stat.txt" library)" = yes ] || fail "no stats block"
[ "$(summary_field "$TMP/stat.txt" model)" = rotation ] || fail "model not learned as a rotation"
[ "$(summary_field "$TMP/stat.txt" threshold)" = 64 ] || fail "threshold not 64 in the summary"
[ "$(summary_field "$TMP/stat.txt" shared_client_lines)" = 0 ] || fail "shared client lines"
[ "$(summary_field "$TMP/stat.txt" shared_socket_lines)" = 0 ] || fail "shared socket lines"
p=$(summary_field "$TMP/stat.txt" min_purity)
awk -v p="$p" 'BEGIN { exit !(p != "-" && p >= 95) }' || fail "min purity $p, expected >= 95"
[ "$(summary_field "$TMP/stat.txt" fallbacks)" = 0 ] || fail "fallbacks"
release
echo "ok"
