#!/bin/sh
# SPDX-License-Identifier: MIT
# fdrange stat's cost is linear in the number of fds: a target
# with 150,000 open fds is reported, map included, in under 5 s, with and
# without a stats block.  The map used to restart its scan for every 8-fd
# line: the same target took 25 s (the old code, measured on the 2-core CI
# machine); 5 s leaves room for a loaded machine and the sanitizers.
# usage: linear_map.sh FDRANGE FAKE_BLOCK
. "$(dirname "$0")/lib.sh"

n=150000
limit_s=${STAT_LINEAR_LIMIT_S:-5}
# The target raises its own RLIMIT_NOFILE: the hard limit must allow it,
# or CAP_SYS_RESOURCE (root in a container may lack it).  Where neither
# does, render_scale (the same renderer on 1,000,000 synthetic fds) still
# checks the linearity.
if ! sh -c "ulimit -n $((n + 4096))" 2>/dev/null; then
	hard=$(ulimit -Hn)
	[ "$hard" != unlimited ] && [ "$hard" -ge 14096 ] ||
		{ echo "SKIP: RLIMIT_NOFILE cannot be raised to $((n + 4096)) here (hard limit $hard)"; exit 77; }
	# Still the whole path end to end, with as many fds as allowed; the
	# time limit only tells linear from quadratic near 150,000.
	n=$((hard - 4096))
	echo "note: hard RLIMIT_NOFILE $hard: $n fds only (render_scale checks linearity)"
fi
nr_open=$(cat /proc/sys/fs/nr_open)
[ "$nr_open" -ge $((n + 4096)) ] || { echo "SKIP: fs.nr_open $nr_open too small"; exit 77; }

for mode in plain valid; do
	start_fake "$mode" -n $n
	t0=$(date +%s%N)
	run_stat --color=never "$fpid"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$rc" = 0 ] || { cat "$err"; fail "$mode: exit $rc"; }
	fds=$(summary_field "$out" open_fds)
	[ "$fds" -ge $n ] || fail "$mode: open_fds=$fds, expected at least $n"
	grep -q '^map, one character' "$out" || fail "$mode: no map"
	echo "$mode: $fds fds in $ms ms ($(wc -c <"$out") bytes of report)"
	[ "$ms" -lt $((limit_s * 1000)) ] || fail "$mode: $ms ms for $fds fds, limit ${limit_s}s"
	stop_fake
done
echo "ok: linear"
