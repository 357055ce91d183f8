#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A short memcaslap run against memcached under libfdrange completes with
# no errors, and its connections were placed: 96 of them, so that the
# process holds more than FDRANGE_THRESHOLD (64) fds and the connections
# numbered past it are moved.
. "$(dirname "$0")/lib.sh"
command -v memcaslap >/dev/null || { echo "memcaslap not installed: skipping"; exit 77; }

start_mc placed -t 2 -m 1024
printf 'key\n64 64 1\nvalue\n1024 1024 1\ncmd\n0 0.1\n1 0.9\n' >"$TMP/ms.cfg"
timeout 60 memcaslap -s "127.0.0.1:$MC_PORT" -T 2 -c 96 -t 2s -S 2s -F "$TMP/ms.cfg" \
	>"$TMP/ms.log" 2>&1 || { cat "$TMP/ms.log"; fail "memcaslap exited non-zero"; }
tail -1 "$TMP/ms.log"
tps=$(awk '/^Run time:/ { for (i = 1; i <= NF; i++) if ($i == "TPS:") print $(i + 1) }' "$TMP/ms.log")
[ -n "$tps" ] && [ "$tps" -gt 0 ] || fail "no throughput reported"
if grep -Eiq "error|fail|out of memory" "$TMP/ms.log"; then
	grep -Ei "error|fail|out of memory" "$TMP/ms.log" | head
	fail "memcaslap reported errors"
fi
[ "$("$MCCLIENT" stat "$MC_PORT" get_misses)" = 0 ] || note "get misses: $("$MCCLIENT" stat "$MC_PORT" get_misses)"
"$FDRANGE" stat --no-map --color=never "$MC_PID" >"$TMP/stat.txt"
placed=$(summary_field "$TMP/stat.txt" placed)
[ "${placed:-0}" -ge 16 ] || fail "only ${placed:-0} connections placed"
[ "$(summary_field "$TMP/stat.txt" low_shared_client_lines)" != "" ] || fail "no low_shared_client_lines in the summary"
echo ok
