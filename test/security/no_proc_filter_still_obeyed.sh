#!/bin/sh
# SPDX-License-Identifier: MIT
# Without /proc the library cannot read Seccomp: from /proc/self/status,
# so it cannot know whether the program started under a filter; it must
# then stay out of the way.  It used to take "unreadable" for "no filter"
# and die of SIGSYS at the first move under an inherited filter that kills
# fcntl(F_DUPFD).  In a private mount namespace an empty tmpfs hides
# /proc; seccomp_filter_in_threads MODE exec installs the filter and
# re-executes itself (through argv[0], /proc/self/exe being gone), and its
# threads create fds: it must exit 0 with kernel numbers, as plain.
# Root only (exit 77 elsewhere), and not under a sanitizer runtime (it
# reads /proc at start-up itself).
# usage: no_proc_filter_still_obeyed.sh plain|placed PRELOAD PROGRAM
set -u
mode=$1 preload=$2 prog=$3
case $preload in *asan*|*tsan*|*ubsan*)
	echo "SKIP: a sanitizer runtime cannot start without /proc"; exit 77 ;;
esac
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
	echo "SKIP: needs root for a mount namespace"; exit 77
fi
[ "$mode" = placed ] || preload=
# shellcheck disable=SC2016
exec unshare -m sh -c '
	mode=$1 preload=$2 prog=$3
	mount --make-rprivate / 2>/dev/null
	mount -t tmpfs -o size=64k fdrange-test-noproc /proc ||
		{ echo "SKIP: cannot mount a tmpfs on /proc"; exit 77; }
	[ -e /proc/self/status ] && { echo "FAIL: /proc still there"; exit 1; }
	rc=0
	env ${preload:+LD_PRELOAD="$preload"} "$prog" "$mode" exec || rc=$?
	if [ $rc != 0 ]; then
		echo "FAIL: exit $rc without /proc under an inherited filter ($mode; 159 is SIGSYS)"
		exit 1
	fi
	echo "ok: no /proc, inherited filter, threads created fds: exit 0 ($mode)"
' sh "$mode" "$preload" "$prog"
