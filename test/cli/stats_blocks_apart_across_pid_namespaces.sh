#!/bin/sh
# SPDX-License-Identifier: MIT
# Two processes with the same pid (1) in two pid namespaces that share one
# /dev/shm, as two containers of a pod do: each keeps a stats block of its
# own, `fdrange stat` run from here finds each by its host pid, and each is
# removed when its process exits.  Needs unshare(CLONE_NEWPID): root, or user namespaces
# (skipped, exit 77, where neither is allowed).
# usage: stats_blocks_apart_across_pid_namespaces.sh FDRANGE PRELOAD
set -u
fdrange=$1 preload=$2
export ASAN_OPTIONS=detect_leaks=0
tmp=$(mktemp -d)
cleanup() {
	exec 3>&- 4>&- 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

if unshare --pid --fork true 2>/dev/null; then
	newns="unshare --pid --fork"
elif unshare --user --map-root-user --pid --fork true 2>/dev/null; then
	newns="unshare --user --map-root-user --pid --fork"
else
	echo "SKIP: cannot create a pid namespace here (unshare --pid failed as this user)"
	exit 77
fi
hostns=$(readlink /proc/self/ns/pid | tr -cd 0-9)

# start FIFO FD: a preloaded cat as pid 1 of a new pid namespace.
mkfifo "$tmp/a" "$tmp/b"
# shellcheck disable=SC2086
$newns env LD_PRELOAD="$preload" cat <"$tmp/a" >/dev/null &
u1=$!
exec 3>"$tmp/a"
# shellcheck disable=SC2086
$newns env LD_PRELOAD="$preload" cat <"$tmp/b" >/dev/null &
u2=$!
exec 4>"$tmp/b"

# child_block UNSHARE_PID: "HOSTPID PATH" once the child (pid 1 of the
# new namespace, unshare's only child) maps its block.
child_block() {
	i=0
	while [ $i -lt 100 ]; do
		c=$(pgrep -P "$1" | head -n 1)
		if [ -n "$c" ]; then
			ns=$(readlink "/proc/$c/ns/pid" | tr -cd 0-9)
			if grep -q " /dev/shm/fdrange.$ns.1\$" "/proc/$c/maps" 2>/dev/null; then
				echo "$c /dev/shm/fdrange.$ns.1"
				return 0
			fi
		fi
		i=$((i + 1))
		sleep 0.1
	done
	return 1
}
set -- $(child_block $u1) $(child_block $u2)
[ $# -eq 4 ] || fail "the two namespaced processes did not both make a block: $*"
c1=$1 b1=$2 c2=$3 b2=$4
[ "$b1" != "$b2" ] || fail "both processes use $b1"
case "$b1$b2" in *".$hostns."*) fail "a namespaced block carries this namespace: $b1 $b2";; esac
for pair in "$c1 $b1" "$c2 $b2"; do
	set -- $pair
	rc=0
	"$fdrange" stat --color=never "$1" >"$tmp/stat" || rc=$?
	[ $rc = 0 ] || { cat "$tmp/stat"; fail "fdrange stat $1: exit $rc"; }
	grep -q "^libfdrange .*stats block v1 ($2)" "$tmp/stat" ||
		{ cat "$tmp/stat"; fail "fdrange stat $1 did not read $2"; }
	echo "ok: host pid $1 (pid 1 in its namespace): fdrange stat reads $2"
done

exec 3>&- 4>&-
wait $u1 $u2
[ ! -e "$b1" ] && [ ! -e "$b2" ] || fail "blocks left after their processes exited"
echo "ok: both removed at exit"
