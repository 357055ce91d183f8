#!/bin/sh
# SPDX-License-Identifier: MIT
# Two processes with the same pid (1) in two pid namespaces that share one
# /dev/shm, as two containers of a pod do: each keeps a stats block of its
# own, `fdrange stat` run from here finds each by its host pid, and each is
# removed when its process exits.  Needs unshare(CLONE_NEWPID): root, or user
# namespaces (skipped, exit 77, where neither is allowed).
# usage: stats_blocks_apart_across_pid_namespaces.sh FDRANGE PRELOAD
. "$(dirname "$0")/blocks.sh"

new_namespaces --pid --fork
hostns=$(pidns)

# Two preloaded cats, each pid 1 of a new pid namespace.
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
child_maps_block() {
	c=$(pgrep -P "$1" | head -n 1)
	[ -n "$c" ] && maps_block "$c" "/dev/shm/fdrange.$(pidns "$c").1"
}
child_block() {
	wait_for child_maps_block "$1" || return 1
	echo "$c /dev/shm/fdrange.$(pidns "$c").1"
}
set -- $(child_block $u1) $(child_block $u2)
[ $# -eq 4 ] || fail "the two namespaced processes did not both make a block: $*"
c1=$1 b1=$2 c2=$3 b2=$4
[ "$b1" != "$b2" ] || fail "both processes use $b1"
case "$b1$b2" in *".$hostns."*) fail "a namespaced block carries this namespace: $b1 $b2";; esac
stat_says "$c1" "^libfdrange .*stats block v1 ($b1)"
stat_says "$c2" "^libfdrange .*stats block v1 ($b2)"
echo "ok: host pids $c1 and $c2 (pid 1 each in its namespace): fdrange stat reads $b1 and $b2"

exec 3>&- 4>&-
wait $u1 $u2
[ ! -e "$b1" ] && [ ! -e "$b2" ] || fail "blocks left after their processes exited"
echo "ok: both removed at exit"
