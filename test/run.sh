#!/bin/sh
# The whole test suite, from a fresh Debian 12 machine: installs what it
# needs, builds the normal and the ASan+UBSan configurations, and runs every
# meson test in both.  Exit status 0 only if everything passed.
#
#   ./test/run.sh            everything
#   ./test/run.sh --quick    the normal build only
set -eu
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1

. ./tools/deps.sh
need_packages meson ninja-build gcc pkg-config libcmocka-dev memcached libmemcached-tools \
	gnuplot-nox strace procps

results=$(mktemp)
trap 'rm -f "$results"' EXIT
pass=0 fail=0

run_suite() { # BUILDDIR [meson setup args...]
	dir=$1; shift
	echo "=== $dir: meson setup $*"
	if [ ! -d "$dir" ]; then meson setup "$dir" "$@" >/dev/null; fi
	ninja -C "$dir"
	set +e
	meson test -C "$dir" --no-rebuild --print-errorlogs
	set -e
	# meson's own count, per build
	grep -E '^(Ok|Fail|Unexpected Pass|Timeout):' "$dir/meson-logs/testlog.txt" | tail -4 |
		sed "s|^|$dir |" >>"$results"
}

run_suite build
[ $quick = 1 ] || run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false

echo "=== summary"
cat "$results"
pass=$(awk '$2 == "Ok:" { s += $3 } END { print s + 0 }' "$results")
fail=$(awk '$2 == "Fail:" || $2 == "Timeout:" || $2 == "Unexpected" { s += $NF } END { print s + 0 }' "$results")
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
