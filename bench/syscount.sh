#!/bin/sh
# Syscalls per created fd, counted by strace -f -c: A (no library) against
# B (LD_PRELOAD of the library), for each call type of bench_create.
#
# Each side runs twice, with N create-and-close iterations and with none;
# the difference of the two counts is the per-fd work, free of start-up.
# B runs three ways (docs/design.md, "Which fds are moved"):
#   few      default settings, the process holds a handful of fds: every
#            created fd is numbered below FDRANGE_THRESHOLD (64) and left
#            there; the library must add nothing at all;
#   held     the default threshold, 64 fds held open first: created fds are
#            numbered past it and moved, with FDRANGE_BASE=128 so that the
#            kernel's number is never already in the thread's line (a lone
#            creating thread's line would otherwise start at the lowest free
#            fd, and an fd in place costs nothing); exactly one fcntl
#            (F_DUPFD) and one close more per fd, nothing else;
#   all      FDRANGE_THRESHOLD=0 (every fd moved), few fds held: the same.
# Also prints what the library adds once per process at start-up.
#
# SYSCOUNT_MOVES=0: the library's kernel-range path (a kernel with
# PR_SET_FD_RANGE, kernel/): past the threshold the kernel allocates in the
# thread's range, so 0 F_DUPFD and 0 close are expected per fd instead of 1.
#
# usage: syscount.sh [--smoke] BENCH_CREATE LIBRARY
set -eu
n=2000
moves=${SYSCOUNT_MOVES:-1}
if [ "${1:-}" = --smoke ]; then
	n=100
	shift
fi
exe=$1 lib=$2
if ! command -v strace >/dev/null 2>&1; then
	echo "syscount: strace is not installed: skipped"
	exit 77
fi
if ! strace -f -c -o /dev/null true 2>/dev/null; then
	echo "syscount: strace cannot trace here (ptrace refused): skipped"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# In a sanitizer build: LeakSanitizer cannot run under ptrace.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS

# count SIDE CALL N: syscall counts, "name calls" per line, in $tmp/SIDE-CALL-N.
# SIDE: A (no library), or B-few, B-held, B-all (above).
count() {
	side=$1 call=$2 k=$3
	case $side in
	A) env -u LD_PRELOAD strace -f -c -U name,calls -o "$tmp/raw" \
		"$exe" --child=0 --call="$call" --count="$k" ;;
	A-held) env -u LD_PRELOAD strace -f -c -U name,calls -o "$tmp/raw" \
		"$exe" --child=0 --call="$call" --count="$k" --hold=64 ;;
	B-few) env -u FDRANGE_THRESHOLD strace -f -c -U name,calls -o "$tmp/raw" -E "LD_PRELOAD=$lib" \
		"$exe" --child=1 --call="$call" --count="$k" ;;
	B-held) env -u FDRANGE_THRESHOLD strace -f -c -U name,calls -o "$tmp/raw" -E "LD_PRELOAD=$lib" \
		-E FDRANGE_BASE=128 "$exe" --child=1 --call="$call" --count="$k" --hold=64 ;;
	B-all) strace -f -c -U name,calls -o "$tmp/raw" -E "LD_PRELOAD=$lib" \
		-E FDRANGE_THRESHOLD=0 "$exe" --child=1 --call="$call" --count="$k" ;;
	esac
	awk 'NR > 2 && $1 !~ /^-/ && $1 != "total" { print $1, $2 }' "$tmp/raw" \
		>"$tmp/$side-$call-$k"
}

status=0
printf '== syscount: syscalls per created-and-closed fd (strace -f -c, %d iterations)\n' "$n"
printf '%-8s %-7s %-12s %10s %10s %10s\n' call B syscall A/fd B/fd added/fd
for call in open socket accept pipe eventfd; do
	for side in A A-held B-few B-held B-all; do
		count $side $call 0
		count $side $call $n
	done
	fds=$n
	[ $call = pipe ] && fds=$((2 * n))
	for b in few held all; do
		a=A
		[ $b = held ] && a=A-held
		want=$moves
		[ $b = few ] && want=0
		# per syscall: (B_n - B_0) - (A_n - A_0), over the fds created
		out=$(awk -v fds=$fds -v call=$call -v b=$b -v want=$want '
			FNR == 1 { f++ }
			{ c[$1, f] = $2; names[$1] = 1 }
			END {
				bad = 0
				for (s in names) {
					a = c[s, 2] - c[s, 1]; bb = c[s, 4] - c[s, 3]
					if (a == 0 && bb == 0) continue
					add = bb - a
					printf "%-8s %-7s %-12s %10.2f %10.2f %10.2f\n", call, b, s, a / fds, bb / fds, add / fds
					# Start-up work may vary by a few calls between runs:
					# judge the per-fd count, rounded.
					w = (s == "fcntl" || s == "close") ? want : 0
					if (int(add / fds + (add < 0 ? -0.5 : 0.5)) != w) bad = 1
				}
				exit bad
			}' "$tmp/$a-$call-0" "$tmp/$a-$call-$n" "$tmp/B-$b-$call-0" "$tmp/B-$b-$call-$n") || {
			status=1
			echo "$out"
			echo "FAIL: $call ($b): the library adds other than $want F_DUPFD and $want close per fd"
			continue
		}
		echo "$out" | sort -k3
	done
done
# strace -c cannot tell fcntl commands apart: check that every fcntl is F_DUPFD.
strace -f -e trace=fcntl -o "$tmp/fcntl" -E "LD_PRELOAD=$lib" -E FDRANGE_THRESHOLD=0 \
	"$exe" --child=1 --call=eventfd --count="$n"
other=$(grep -c 'fcntl(' "$tmp/fcntl" || true)
dupfd=$(grep -c 'F_DUPFD' "$tmp/fcntl" || true)
printf 'fcntl calls in B (eventfd, %d fds): %d, of which F_DUPFD: %d\n' "$n" "$other" "$dupfd"
if [ "$other" != "$dupfd" ]; then
	status=1
	echo "FAIL: the library makes fcntl calls other than F_DUPFD"
fi
echo "added once per process at start-up (B - A, no fd created):"
awk 'FNR == 1 { f++ } { c[$1, f] = $2; names[$1] = 1 }
	END { for (s in names) if (c[s, 2] != c[s, 1]) printf "  %-12s %+d\n", s, c[s, 2] - c[s, 1] }' \
	"$tmp/A-eventfd-0" "$tmp/B-few-eventfd-0" | sort
if [ $status -eq 0 ]; then
	echo "ok: per created fd the library adds nothing below FDRANGE_THRESHOLD, and exactly $moves fcntl (F_DUPFD) and $moves close past it, nothing else"
fi
exit $status
