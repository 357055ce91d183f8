#!/bin/sh
# SPDX-License-Identifier: MIT
# A process that starts as root and drops to nobody leaves nothing behind
# in /dev/shm.  The stats block used to be the file
# /dev/shm/fdrange.NS.PID, created as root; /dev/shm is sticky, so after
# setuid(nobody) the destructor could not remove it, and a process ended
# by SIGTERM never tries: every such daemon (memcached -u nobody, sshd's
# children) left a file behind.  Checked for a program that drops and
# exits or is killed by SIGTERM, itself or in a forked child, and for
# memcached -u nobody stopped by SIGTERM (where installed).  Root only.
# usage: drop_privileges_leaves_nothing.sh plain|placed PRELOAD PROGRAM
set -u
mode=$1 preload=$2 prog=$3
if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root"; exit 77; fi
[ "$mode" = placed ] || preload=
export ASAN_OPTIONS=detect_leaks=0
tmp=$(mktemp -d)
mcpid=
trap '[ -n "$mcpid" ] && kill -KILL "$mcpid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0

# left PID...: the /dev/shm entries named after one of the PIDs.
left() {
	for p in "$@"; do
		ls -d /dev/shm/fdrange.*."$p" /dev/shm/fdrange."$p" 2>/dev/null
	done | sort -u
}

for how in exit sigterm fork-exit fork-sigterm; do
	env ${preload:+LD_PRELOAD="$preload"} "$prog" "$mode" "$how" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	wait "$pid"
	rc=$?
	want=0
	[ "$how" = sigterm ] && want=143
	[ "$rc" = 77 ] && { cat "$tmp/out"; exit 77; }
	# shellcheck disable=SC2046  # a pid per word
	files=$(left "$pid" $(cat "$tmp/out"))
	if [ "$rc" = "$want" ] && [ -z "$files" ]; then
		echo "ok: $how ($mode): exit $rc, nothing left in /dev/shm"
	else
		echo "FAIL: $how ($mode): exit $rc (wanted $want), left: ${files:-nothing}"
		cat "$tmp/err"
		fail=1
		# ours to clean up: the test made them
		# shellcheck disable=SC2086  # one /dev/shm path per word
		[ -n "$files" ] && rm -f $files
	fi
done

memcached=$(command -v memcached)
if [ -n "$memcached" ]; then
	mkdir "$tmp/mc" && chown nobody "$tmp/mc" && chmod 755 "$tmp"
	env ${preload:+LD_PRELOAD="$preload"} "$memcached" -u nobody -s "$tmp/mc/sock" -U 0 -t 2 \
		>"$tmp/mc.out" 2>&1 &
	mcpid=$!
	i=0
	until [ -S "$tmp/mc/sock" ] && grep -q '^Uid:[[:space:]]*65534' "/proc/$mcpid/status" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$mcpid" 2>/dev/null; then
			echo "FAIL: memcached -u nobody did not start ($mode)"; cat "$tmp/mc.out"; fail=1; break
		fi
		sleep 0.1
	done
	kill -TERM "$mcpid"
	wait "$mcpid"
	rc=$?
	files=$(left "$mcpid")
	if [ -z "$files" ]; then
		echo "ok: memcached -u nobody, SIGTERM ($mode): exit $rc, nothing left in /dev/shm"
	else
		echo "FAIL: memcached -u nobody, SIGTERM ($mode): exit $rc, left: $files"
		fail=1
		# shellcheck disable=SC2086  # one /dev/shm path per word
		rm -f $files
	fi
	mcpid=
else
	echo "note: memcached not installed; its case not run"
fi
exit $fail
