#!/bin/sh
# `fdrange -v` shows the geometry the library will compute, which is
# capped by fs.nr_open as well as by RLIMIT_NOFILE: -v used to assume the
# kernel default (1048576) instead of reading /proc/sys/fs/nr_open.  In a
# private mount namespace a file saying 2048 is bound over
# /proc/sys/fs/nr_open (nothing outside sees it), the soft limit is 8192,
# and with 2 slots from fd 64 -v must name no fd beyond 2048: today's -v
# and the library's own report say ranges of 960 fds, 64-1983
# ((2048 - 1 - 64) / 2 rounded down to 64); -v used to say 4032, 64-8127.
# Exit 77 where no mount namespace can be made (as root or in a user namespace).
# usage: fdrange_verbose_uses_nr_open.sh FDRANGE
set -u
exe=$1
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
echo 2048 >"$tmpd/nr_open"
# A mount namespace of our own: as root, or else inside a user namespace.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	newns="unshare -m"
elif unshare --user --map-root-user -m true 2>/dev/null; then
	newns="unshare --user --map-root-user -m"
else
	echo "SKIP: cannot create a mount namespace here (unshare -m, also in a user namespace)"
	exit 77
fi
# shellcheck disable=SC3045  # dash, bash and busybox sh all have ulimit -H
[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 8192 ] ||
	{ echo "SKIP: hard RLIMIT_NOFILE below 8192"; exit 77; }
# shellcheck disable=SC2016
$newns sh -c '
	mount --make-rprivate / 2>/dev/null
	mount --bind "$1/nr_open" /proc/sys/fs/nr_open || exit 77
	ulimit -Sn 8192
	exec "$2" -v --slots 2 --base 64 --stats stderr -- true' sh "$tmpd" "$exe" 2>"$tmpd/err"
rc=$?
[ $rc = 77 ] && { echo "SKIP: cannot bind-mount over /proc/sys/fs/nr_open"; exit 77; }
cat "$tmpd/err"
fail=0
[ $rc = 0 ] || { echo "FAIL: exit $rc"; fail=1; }
# -v's geometry lines (those of fdrange: naming fds, not the settings'
# FDRANGE_*= lines) may name the limit, 8192, but no fd at or above 2048.
grep '^fdrange: ' "$tmpd/err" | grep -v '^fdrange: FDRANGE_' | grep -v '^fdrange: library ' |
	grep 'fds' >"$tmpd/geom"
[ -s "$tmpd/geom" ] || { echo "FAIL: -v printed no geometry"; fail=1; }
for n in $(tr -c '0-9' ' ' <"$tmpd/geom"); do
	if [ "$n" != 8192 ] && [ "$n" -gt 2048 ]; then
		echo "FAIL: -v names $n, beyond fs.nr_open 2048: $(cat "$tmpd/geom")"; fail=1; break
	fi
done
# today's wording, exactly
grep -q "^fdrange: with RLIMIT_NOFILE 8192 now: 2 ranges of 960 fds, fds 64-1983" "$tmpd/err" ||
	grep -q "ranges of" "$tmpd/geom" || echo "note: -v's wording changed; only the bound was checked"
# the library itself agrees (if its report still words it this way)
if grep -q "range width" "$tmpd/err"; then
	grep -q "range width 960, ranges cover fds 64-1983" "$tmpd/err" ||
		{ echo "FAIL: the library's report disagrees"; fail=1; }
fi
[ $fail = 0 ] && echo "ok: -v and the library agree on fs.nr_open 2048"
exit $fail
