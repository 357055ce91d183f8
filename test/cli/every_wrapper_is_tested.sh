#!/bin/sh
# Every name the library exports is exercised by a test, so a new wrapper
# cannot ship untested: an fd-creating wrapper must have a row in the
# per-call table of test/prog/common.h (the programs that check
# close-on-exec, errno, leaks and placement for every row), and every other
# export must be called by the test named for it below.
# usage: every_wrapper_is_tested.sh SRCDIR
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sed -n '/^global:/,/^local:/p' "$src/lib/libfdrange.map" | tr ' \t;' '\n\n\n' |
	grep -E '^[a-z_0-9]+$' | grep -v '^global$\|^local$' | sort -u >"$tmp/exported"
sed -n '/static const struct maker makers\[\] = {/,/^};/p' "$src/test/prog/common.h" |
	grep -o '{ "[a-z_0-9]*"' | sed 's/{ "\(.*\)"/\1/' | sort -u >"$tmp/table"
[ -s "$tmp/exported" ] && [ -s "$tmp/table" ] || { echo "FAIL: cannot read the map or the table"; exit 1; }

# Exports that create no fd, and the test that calls each (NAME FILE).
others="epoll_ctl test/prog/handoff_is_learned.c
prctl test/security/seccomp_filter_in_threads.c
syscall test/security/seccomp_filter_in_threads.c
setrlimit test/prog/lowered_limit_moves_ranges.c
setrlimit64 test/prog/lowered_limit_moves_ranges.c
prlimit test/prog/lowered_limit_moves_ranges.c
prlimit64 test/prog/lowered_limit_moves_ranges.c
fdrange_version test/check.h
fdrange_active test/prog/passthrough_is_lowest_free.c
fdrange_thread_range test/prog/threads_get_disjoint_ranges.c
fdrange_range_of_fd test/prog/handoff_is_learned.c
fdrange_report test/prog/common.h"

fail=0
while read -r name; do
	grep -qx "$name" "$tmp/table" && continue
	file=$(printf '%s\n' "$others" | awk -v n="$name" '$1 == n { print $2 }')
	if [ -z "$file" ]; then
		echo "FAIL: $name is exported but neither in the per-call table of test/prog/common.h nor in this script's list"
		fail=1
	elif ! grep -q "\\b$name\\b" "$src/$file"; then
		echo "FAIL: $name: $file does not call it"
		fail=1
	fi
done <"$tmp/exported"
# And the table names nothing the library does not export.
for name in $(comm -13 "$tmp/exported" "$tmp/table"); do
	echo "FAIL: the per-call table tests $name, which the library does not wrap"
	fail=1
done
[ $fail = 0 ] && echo "ok: $(wc -l <"$tmp/exported") exports, $(wc -l <"$tmp/table") in the per-call table, the rest called by their tests"
exit $fail
