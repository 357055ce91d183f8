#!/bin/sh
# SPDX-License-Identifier: MIT
# fdrange stat never hangs: when a step blocks (here its output, into a
# pipe nobody reads, under --interval), the watchdog ends it after 10 s
# with one line and exit 1, instead of leaving a stuck root process.
# usage: watchdog.sh FDRANGE FAKE_BLOCK
. "$(dirname "$0")/lib.sh"

start_fake valid
mkfifo "$tmp/pipe"
# Opened for reading and writing by this shell, never read: writes block
# once the pipe's buffer is full.
exec 3<>"$tmp/pipe"
cap=$(python3 -c 'import fcntl; print(fcntl.fcntl(3, 1032))' 2>/dev/null) || cap=65536 # F_GETPIPE_SZ
page=$(getconf PAGESIZE)
for json in "" --json; do
	# Fill the pipe but its last page first, so that stat blocks within
	# a page of output: on a loaded machine filling the whole pipe at
	# stat's own pace took up to 28 s, and the watchdog's 10 s would be
	# lost in that.  A page, not nothing: stat's own frames then leave
	# the room in which the watchdog's short --json error line fits.
	# (timeout: in case the size read is wrong and dd would block.)
	timeout 5 dd if=/dev/zero bs="$page" count=$((cap / page - 1)) status=none >&3 || true
	t0=$(date +%s)
	rc=0
	# shellcheck disable=SC2086
	timeout 40 "$fdrange" stat $json --interval 0.001 "$fpid" >"$tmp/pipe" 2>"$tmp/err" || rc=$?
	t=$(($(date +%s) - t0))
	[ "$rc" = 1 ] || fail "${json:-text}: exit $rc after ${t}s, expected 1 from the watchdog (124: it hung)"
	[ "$t" -ge 9 ] && [ "$t" -le 25 ] || fail "${json:-text}: ended after ${t}s, expected the watchdog's 10 s plus start-up"
	# What is in the pipe, for the next round to start empty.
	timeout 1 cat <&3 >"$tmp/piped" || true
	msg="gave up after 10 s with pid $fpid: a read or write blocked"
	if [ -z "$json" ]; then
		[ "$(wc -l <"$tmp/err")" = 1 ] && grep -qx "fdrange stat: $msg" "$tmp/err" ||
			fail "text: message '$(cat "$tmp/err")'"
	# With --json the error goes to stdout as the last JSON line when the
	# pipe has room for it, else the text line to stderr says it.
	elif ! grep -qx "fdrange stat: $msg" "$tmp/err"; then
		[ ! -s "$tmp/err" ] || fail "--json: stderr '$(cat "$tmp/err")'"
		tail -n 1 "$tmp/piped" | grep -qx "{\"schema\":1,\"error\":\"$msg\",\"reason\":\"timeout\",\"pid\":$fpid}" ||
			fail "--json: no error, last line '$(tail -n 1 "$tmp/piped")'"
	fi
	echo "ok: ${json:-text}: a blocked write ended by the watchdog after ${t}s"
done
exec 3>&-
