#!/bin/sh
# SPDX-License-Identifier: MIT
# The stats block of a process is /dev/shm/fdrange.NS.PID (NS: the inode of
# its pid namespace), mode 0600, and `fdrange stat` reads it; a process that
# exits removes its own; a process killed by a signal cannot, and the next
# start of the library removes it, but never a file of another pid namespace
# (whose pids mean nothing here).  Not parallel: another test's preloaded
# process would sweep the killed process's block before we look.
# usage: stats_block_lifecycle.sh FDRANGE PRELOAD
. "$(dirname "$0")/blocks.sh"

ns=$(pidns)
[ -n "$ns" ] || fail "cannot read /proc/self/ns/pid"

# start_cat: a preloaded cat that runs until fd 3, its fifo's writer, is
# closed; sets pid and blk once its block is mapped.
mkfifo "$tmp/in"
start_cat() {
	LD_PRELOAD=$preload cat <"$tmp/in" >/dev/null &
	pid=$!
	exec 3>"$tmp/in"
	blk=/dev/shm/fdrange.$ns.$pid
	wait_for maps_block "$pid" "$blk" || fail "$blk not mapped by $pid"
}

start_cat
mode=$(stat -c %a "$blk")
[ "$mode" = 600 ] || fail "$blk has mode $mode, expected 600"
stat_says "$pid" "^libfdrange .*stats block v1 ($blk)"
echo "ok: $blk created, mode 600, read by fdrange stat"

# A normal exit removes it.
exec 3>&-
wait "$pid"
[ ! -e "$blk" ] || fail "$blk left after a normal exit"
echo "ok: removed at exit"

# Killed: the block stays until the next start in this namespace.
start_cat
kill -KILL "$pid"
wait "$pid" 2>/dev/null
exec 3>&-
[ -e "$blk" ] || fail "$blk gone before any sweep (test assumption broken)"
# Another namespace's file with the same dead pid: not ours to judge.
foreign=/dev/shm/fdrange.1.$pid
remove_at_exit=$foreign
: >"$foreign"
env LD_PRELOAD="$preload" /bin/true || fail "preloaded /bin/true failed"
[ ! -e "$blk" ] || fail "stale $blk of a dead process not removed at the next start"
[ -e "$foreign" ] || fail "$foreign of another pid namespace removed"
echo "ok: a killed process's block removed by the next start; another namespace's kept"
