#!/bin/sh
# SPDX-License-Identifier: MIT
# A full /dev/shm must not kill a program with SIGBUS.  The stats block
# used to be a sparse file in /dev/shm: creating and mapping it succeeds on
# a full tmpfs, and the first write to one of its pages -- at start-up, when
# an fd is created or registered, in a forked child -- raises SIGBUS.  In a
# private mount namespace a 1 MB tmpfs is mounted on /dev/shm and filled;
# then /bin/true, a program making 2000 eventfds + epoll_ctl(ADD) from two
# threads, and its fork() child must all exit 0; and a fork() child must
# exit 0 when /dev/shm fills up after its parent started.  The namespace
# is made as root or else inside a user namespace; exit 77 only where
# neither unshare nor the mount is possible.
# usage: shm_full_no_sigbus.sh plain|placed PRELOAD PROGRAM
set -u
mode=$1 preload=$2 prog=$3
# A mount namespace of our own: as root, or else inside a user namespace.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	newns="unshare -m"
elif unshare --user --map-root-user -m true 2>/dev/null; then
	newns="unshare --user --map-root-user -m"
else
	echo "SKIP: cannot create a mount namespace here (unshare -m, also in a user namespace)"
	exit 77
fi
[ "$mode" = placed ] || preload=
# sanitizer builds preload their runtime first: no leak checks
export ASAN_OPTIONS=detect_leaks=0
# Everything below happens in the new mount namespace; the machine's
# /dev/shm is never touched.
# shellcheck disable=SC2016
exec $newns sh -c '
	mode=$1 preload=$2 prog=$3
	mount --make-rprivate / 2>/dev/null
	if ! mount -t tmpfs -o size=1m,mode=1777 fdrange-test-full /dev/shm; then
		echo "SKIP: cannot mount a tmpfs on /dev/shm"; exit 77
	fi
	fail=0
	run() { # DESCRIPTION CMD...
		desc=$1; shift
		env ${preload:+LD_PRELOAD="$preload"} "$@"
		rc=$?
		if [ $rc = 0 ]; then echo "ok: $desc ($mode): exit 0"
		else
			[ $rc -gt 128 ] && desc="$desc: killed by signal $((rc - 128)) (SIGBUS is 7)"
			echo "FAIL: $desc ($mode): exit $rc"; fail=1
		fi
	}
	run "/dev/shm fills between start and fork" "$prog" "$mode" fill=/dev/shm/fill-late
	rm -f /dev/shm/fill-late
	dd if=/dev/zero of=/dev/shm/fill bs=4k 2>/dev/null
	free=$(df -k --output=avail /dev/shm | tail -1 | tr -d " ")
	[ "$free" = 0 ] || { echo "FAIL: /dev/shm not full ($free KiB free)"; exit 1; }
	echo "/dev/shm is now a full 1 MB tmpfs"
	run "/bin/true" /bin/true
	run "2000 eventfds + epoll_ctl from 2 threads, then fork" "$prog" "$mode"
	exit $fail' sh "$mode" "$preload" "$prog"
