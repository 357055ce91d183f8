#!/bin/sh
# User-space instructions the library adds per created fd, counted by
# valgrind (callgrind): exact and free of the timing noise of a shared VM.
# Each side runs with N create-and-close iterations and with none; the
# difference is the per-fd work.  The kernel's work (the two syscalls) is
# not counted: this is the library's own code, the wrapper and libc's
# syscall() included.
#
# usage: instructions.sh [--smoke] BENCH_CREATE LIBRARY
set -eu
n=10000
if [ "${1:-}" = --smoke ]; then
	n=500
	shift
fi
exe=$1 lib=$2
if ! command -v valgrind >/dev/null 2>&1; then
	echo "instructions: valgrind is not installed: skipped"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ir SIDE CALL N: instructions executed by the whole process
ir() {
	if [ "$1" = B ]; then
		env LD_PRELOAD="$lib" valgrind --tool=callgrind --callgrind-out-file="$tmp/out" \
			"$exe" --child=1 --call="$2" --count="$3" 2>"$tmp/log"
	else
		env -u LD_PRELOAD valgrind --tool=callgrind --callgrind-out-file="$tmp/out" \
			"$exe" --child=0 --call="$2" --count="$3" 2>"$tmp/log"
	fi
	sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$tmp/log"
}

printf '== instructions: user-space instructions per created-and-closed fd (callgrind, %d iterations)\n' "$n"
printf '%-8s %8s %8s %8s\n' call A B added
for call in open socket accept pipe eventfd; do
	a0=$(ir A $call 0) a1=$(ir A $call $n) b0=$(ir B $call 0) b1=$(ir B $call $n)
	fds=$n
	[ $call = pipe ] && fds=$((2 * n))
	awk -v c=$call -v a0="$a0" -v a1="$a1" -v b0="$b0" -v b1="$b1" -v f=$fds 'BEGIN {
		a = (a1 - a0) / f; b = (b1 - b0) / f
		printf "%-8s %8.1f %8.1f %8.1f\n", c, a, b, b - a }'
done
