#!/bin/sh
# SPDX-License-Identifier: MIT
# `fdrange stat` (often run as root) opens only the very file a process
# maps as its stats block: a process that mounts over its /dev/shm and puts
# a FIFO under its block's name (the mapping still shows the old path, not
# "(deleted)") gets a clear "no longer the file" message, no hang and no
# read of the FIFO.  Needs mount and pid namespaces: root, or user
# namespaces (skipped, exit 77, where neither is allowed).
# usage: stat_refuses_a_replaced_block.sh FDRANGE PRELOAD
. "$(dirname "$0")/blocks.sh"

new_namespaces --mount --propagation private --pid --fork --mount-proc

# In the new namespaces: a preloaded cat (pid 2) maps its block; then a
# fresh tmpfs over /dev/shm, and a FIFO where the block was.
mkfifo "$tmp/in"
cat >"$tmp/inner.sh" <<'INNER'
env LD_PRELOAD="$1" cat <"$2/in" >/dev/null &
ns=$(readlink /proc/self/ns/pid | tr -cd 0-9)
i=0
until grep -q " /dev/shm/fdrange.$ns.2\$" "/proc/$!/maps" 2>/dev/null; do
	i=$((i + 1)); [ $i -le 100 ] || exit 1; sleep 0.1
done
mount -t tmpfs none /dev/shm || exit 1
mkfifo "/dev/shm/fdrange.$ns.2" || exit 1
: >"$2/ready"
wait
INNER
# shellcheck disable=SC2086
$newns sh "$tmp/inner.sh" "$preload" "$tmp" &
u=$!
exec 3>"$tmp/in"
wait_for test -e "$tmp/ready" || fail "the namespaced process did not set up its FIFO"
sh_pid=$(pgrep -P "$u" | head -n 1)
c=$(pgrep -P "$sh_pid" -x cat | head -n 1)
[ -n "$c" ] || fail "cannot find the namespaced cat"
blk=$(grep -o ' /dev/shm/fdrange\.[0-9]*\.2$' "/proc/$c/maps" | tr -d ' ')
[ -n "$blk" ] || fail "the cat maps no block"

stat_says "$c" "^no stats block: cannot open $blk: it is no longer the file the process maps"
echo "ok: $blk replaced by a FIFO under a new /dev/shm: refused, no hang"
exec 3>&-
wait "$u"
# The cat's exit removed the FIFO in its own /dev/shm; its real block, in
# ours, has no process left to remove it.
rm -f "$blk"
