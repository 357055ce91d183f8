#!/bin/sh
# Run every benchmark, A (no library) against B (LD_PRELOAD of the library),
# and print their tables, the syscall count per created fd (strace), the
# user-space instructions per created fd (valgrind, if installed), the
# exported symbol check and a summary table.
#
# usage: bench/run-all.sh [--smoke] [--chart=PNG] [BUILDDIR]
#   BUILDDIR  the meson build directory (default: build, beside bench/)
#   --smoke   a fraction of a second per program: checks that all run
#   --chart   also draw the creation-cost chart (gnuplot) into PNG
# BENCH_OUT=DIR keeps the raw TSV files there.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
mode= chart= builddir=$src/build
for arg; do
	case $arg in
	--smoke) mode=--smoke ;;
	--chart=*) chart=${arg#--chart=} ;;
	-*) echo "usage: $0 [--smoke] [--chart=PNG] [BUILDDIR]" >&2; exit 2 ;;
	*) builddir=$arg ;;
	esac
done
lib=$builddir/lib/libfdrange.so
bin=$builddir/bench
for f in "$lib" "$bin/bench_create"; do
	[ -e "$f" ] || { echo "run-all: $f missing: meson setup build && ninja -C build" >&2; exit 1; }
done
if [ -n "${BENCH_OUT:-}" ]; then
	out=$BENCH_OUT
	mkdir -p "$out"
else
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
fi

status=0
started=$(date +%s)
for b in create datapath fdtable growth scale; do
	"$bin/bench_$b" $mode --lib="$lib" --tsv="$out/$b.tsv" || status=1
	echo
done
sh "$src/bench/syscount.sh" $mode "$bin/bench_create" "$lib" || status=1
echo
rc=0
sh "$src/bench/instructions.sh" $mode "$bin/bench_create" "$lib" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
echo

echo "== exported symbols of $lib"
nm -D --defined-only "$lib" | awk '$2 ~ /[TW]/ { print $3 }' | sed 's/@.*//' | sort >"$out/exports"
echo "$(wc -l <"$out/exports") exported: $(tr '\n' ' ' <"$out/exports")"
bad=$(grep -xE 'read|write|readv|writev|recv|send|recvfrom|sendto|recvmsg|sendmsg|close|dup|dup2|dup3|fcntl|ioctl|poll|select|epoll_wait|epoll_pwait|splice' "$out/exports" || true)
if [ -n "$bad" ]; then
	echo "FAIL: data-path calls exported: $bad"
	status=1
else
	echo "ok: no data-path call among them (read, write, recv, send, close, dup*, fcntl, poll, epoll_wait, ...)"
fi
echo

# The figures that matter, from the TSV files: median (min..max) and B/A.
echo "== summary (medians; B/A = ratio of medians)"
printf '%-10s %-24s %22s %22s %7s\n' bench metric 'A median (min..max)' 'B median (min..max)' B/A
for b in create datapath fdtable growth scale; do
	[ -s "$out/$b.tsv" ] || continue
	awk -F'\t' -v b=$b '
		function f(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.3g", x) }
		function cell(k, s) {
			if (!((k, s) in med)) return "-"
			if (lo[k, s] == hi[k, s]) return f(med[k, s])
			return f(med[k, s]) " (" f(lo[k, s]) ".." f(hi[k, s]) ")"
		}
		function row(label, k, s) {
			r = ((k, "A") in med) && ((k, s) in med) && med[k, "A"] > 0 ? \
				sprintf("%.2f", med[k, s] / med[k, "A"]) : "-"
			printf "%-10s %-24s %22s %22s %7s\n", b, label, cell(k, "A"), cell(k, s), r
		}
		/^#/ { next }
		{ if (!($1 in seen)) { seen[$1] = 1; keys[n++] = $1 }
		  med[$1, $2] = $3; lo[$1, $2] = $4; hi[$1, $2] = $5 }
		END {
			for (i = 0; i < n; i++) {
				k = keys[i]
				if (k ~ /\+move/) continue
				if (b == "scale" && k !~ /-ns$/) continue
				if (b == "growth" && k !~ /first|exec-us|grow-1thread/) continue
				if (k ~ /grow-1thread/) {
					# only side Kp grows the table by hand while single-threaded
					row(k " Kp", k, "Kp")
					continue
				}
				if (b == "growth") {
					# the kernel alone (K), the library without (B0) and with pregrow (B)
					row(k " K", k, "K")
					row(k " B0", k, "B0")
				}
				row(k, k, "B")
			}
		}' "$out/$b.tsv"
done
echo "(full tables above; in growth rows marked K, B0 or Kp the B column is that side)"
echo "total: $(( $(date +%s) - started )) s"

if [ -n "$chart" ]; then
	sh "$src/bench/chart.sh" "$out/create.tsv" "$chart" || status=1
fi
[ $status -eq 0 ] || echo "run-all: SOME BENCHMARKS FAILED"
exit $status
