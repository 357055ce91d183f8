#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memcached -t 4 under libfdrange with the documented settings
# (FDRANGE_ACCEPT=roundrobin, FDRANGE_SLOTS = -t): with 64 client
# connections open, each worker's connections lie in a range of their own,
# checked from /proc alone (which epoll instance watches each fd) and from
# the locality report (purity 100%, no shared lines among sockets).
. "$(dirname "$0")/lib.sh"

export FDRANGE_SLOTS=4 FDRANGE_ACCEPT=roundrobin
start_mc placed -t 4
unset FDRANGE_SLOTS FDRANGE_ACCEPT
hold "$MC_PORT" 64
[ "$HOLD" = "held 64 rejected 0 failed 0" ] || fail "connections: $HOLD"

"$FDRANGE" stat --color=never "$MC_PID" >"$TMP/stat.txt" || fail "fdrange stat failed"
cat "$TMP/stat.txt"
read -r slots width base <<<"$(sed -n 's/^geometry: \([0-9]*\) ranges of \([0-9]*\) fds from fd \([0-9]*\);.*/\1 \2 \3/p' "$TMP/stat.txt")"
[ "$slots" = 4 ] && [ "$width" -ge 64 ] || fail "geometry: slots=$slots width=$width"
limit=$(awk '/^Max open files/ { print $4 }' "/proc/$MC_PID/limits")

# /proc alone: the epoll instance watching each connection.
declare -A watcher
for info in /proc/"$MC_PID"/fdinfo/*; do
	ep=${info##*/}
	[ "$(readlink "/proc/$MC_PID/fd/$ep" 2>/dev/null)" = "anon_inode:[eventpoll]" ] || continue
	while read -r _ tfd _; do watcher[$tfd]=$ep; done < <(grep '^tfd:' "$info")
done
declare -A range_ep ep_range count
conns=0
for f in /proc/"$MC_PID"/fd/*; do
	fd=${f##*/}
	[ "$fd" -lt "$limit" ] || fail "fd $fd is not below RLIMIT_NOFILE $limit"
	case $(readlink "$f") in socket:*) ;; *) continue ;; esac
	[ "$fd" -ge "$base" ] || continue          # the listener stays below BASE
	r=$(( (fd - base) / width ))
	[ "$r" -lt "$slots" ] || fail "socket fd $fd beyond the ranges"
	ep=${watcher[$fd]:-}
	[ -n "$ep" ] || fail "socket fd $fd is watched by no epoll"
	if [ -n "${range_ep[$r]:-}" ] && [ "${range_ep[$r]}" != "$ep" ]; then
		fail "range $r holds fds of epoll ${range_ep[$r]} and epoll $ep"
	fi
	if [ -n "${ep_range[$ep]:-}" ] && [ "${ep_range[$ep]}" != "$r" ]; then
		fail "epoll $ep has fds in ranges ${ep_range[$ep]} and $r"
	fi
	range_ep[$r]=$ep ep_range[$ep]=$r
	count[$r]=$(( ${count[$r]:-0} + 1 ))
	conns=$((conns + 1))
done
[ "$conns" -eq 64 ] || fail "$conns connection fds in the ranges, expected 64"
for r in 0 1 2 3; do
	[ "${count[$r]:-0}" -eq 16 ] || fail "range $r holds ${count[$r]:-0} connections, expected 16"
done
note "from /proc: 4 ranges x 16 connections, one epoll instance per range"

# The locality report agrees.
[ "$(summary_field "$TMP/stat.txt" min_purity)" = 100.0 ] || fail "purity below 100%"
[ "$(summary_field "$TMP/stat.txt" shared_socket_lines)" = 0 ] || fail "shared socket lines"
[ "$(summary_field "$TMP/stat.txt" fallbacks)" = 0 ] || fail "fallbacks"
[ "$(summary_field "$TMP/stat.txt" library)" = yes ] || fail "no stats block"
for r in 0 1 2 3; do
	grep -Eq "^$r +[0-9]+-[0-9]+ +[0-9]+ +[0-9]+ +0 +16 +100.0%  [A-Z]:16$" "$TMP/stat.txt" ||
		fail "range $r is not 16 fds of one thread at 100%"
done
release
echo "ok"
