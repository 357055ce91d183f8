#!/bin/sh
# SPDX-License-Identifier: MIT
# Another user cannot switch off a victim's stats block by creating its
# name first.  The block used to be /dev/shm/fdrange.NS.PID, created with
# O_EXCL after unlinking any old file of that name; in sticky /dev/shm the
# unlink of another user's file fails, so anyone could create the names of
# many future pids and every libfdrange process that got one of them ran
# without a stats block (`fdrange stat` blind to it).  Here, in a new pid
# namespace (predictable pids, a name of its own, nobody else's files),
# nobody creates fdrange.NS.1 .. fdrange.NS.1000; then a victim running as
# another user (daemon, uid 1) starts with the library, and `fdrange stat`
# must find its block: a "libfdrange ..., stats block ..." line and
# library=yes (plain: library=no, no block).  Root only.
# usage: precreated_block_names_do_not_blind_stat.sh plain|placed PRELOAD FDRANGE
set -u
mode=$1 preload=$2 fdrange=$3
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null ||
   ! unshare --pid --fork --mount-proc true 2>/dev/null; then
	echo "SKIP: needs root, setpriv and unshare --pid --mount-proc"; exit 77
fi
[ "$mode" = placed ] || preload=
export ASAN_OPTIONS=detect_leaks=0
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2016
unshare --pid --fork --mount-proc sh -c '
	mode=$1 preload=$2 fdrange=$3 tmp=$4
	ns=$(readlink /proc/self/ns/pid | tr -cd 0-9)
	[ -n "$ns" ] || { echo "FAIL: cannot read the pid namespace"; exit 1; }
	victim=
	cleanup() {
		[ -n "$victim" ] && kill -KILL "$victim" 2>/dev/null
		rm -f /dev/shm/fdrange.$ns.*
	}
	trap cleanup EXIT
	# the attacker: nobody, before the victim exists
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "
		cd /dev/shm && i=1 && while [ \$i -le 1000 ]; do : >fdrange.$ns.\$i; i=\$((i + 1)); done" ||
		{ echo "FAIL: nobody could not create the names"; exit 1; }
	echo "nobody created /dev/shm/fdrange.$ns.1 .. .1000"
	setpriv --reuid=1 --regid=1 --clear-groups \
		env ${preload:+LD_PRELOAD="$preload"} sleep 60 &
	victim=$!
	[ "$victim" -le 1000 ] || { echo "SKIP: victim pid $victim not among the names"; exit 77; }
	[ -e "/dev/shm/fdrange.$ns.$victim" ] ||
		{ echo "FAIL: fdrange.$ns.$victim gone before the victim started"; exit 1; }
	# the victim runs as uid 1 once its maps show the program (exec done)
	i=0
	until grep -q "/sleep\$" /proc/$victim/maps 2>/dev/null; do
		i=$((i + 1)); [ $i -le 100 ] || { echo "FAIL: victim did not start"; exit 1; }
		sleep 0.1
	done
	if [ "$mode" = placed ]; then want=yes; else want=no; fi
	i=0
	while :; do
		rc=0
		timeout 20 "$fdrange" stat --color=never "$victim" >"$tmp/stat" 2>&1 || rc=$?
		grep -q "^summary: .* library=$want " "$tmp/stat" && break
		i=$((i + 1))
		if [ $i -gt 20 ]; then
			cat "$tmp/stat"
			echo "FAIL: fdrange stat $victim (pid $victim of uid 1, name pre-created by nobody):" \
			     "exit $rc, no library=$want ($mode)"
			exit 1
		fi
		sleep 0.1
	done
	if [ "$mode" = placed ] && ! grep -q "^libfdrange .*, stats block " "$tmp/stat"; then
		cat "$tmp/stat"; echo "FAIL: no stats block line"; exit 1
	fi
	grep -E "^(libfdrange|no stats block|summary)" "$tmp/stat"
	echo "ok: the victim (pid $victim) has its stats block despite fdrange.$ns.$victim by nobody ($mode)"
' sh "$mode" "$preload" "$fdrange" "$tmp"
