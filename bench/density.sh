#!/bin/sh
# The density benchmark's sweep: bench_density (one fd lookup on a thread's
# own fds, packed against interleaved fd numbers, no library) over N fds
# per thread, T owner threads, M measuring threads and P KB of memory
# touched between lookups; writes the table, the CSVs and a chart of
# packed/interleaved against P, one line per N, a panel per T and M.
# About 5 minutes on 2 cores.
#
# usage: density.sh [--smoke] [--out=DIR] [BUILDDIR | BENCH_DENSITY] [-- OPTION...]
#   BUILDDIR      the meson build directory (default: build, beside bench/),
#                 or the bench_density program itself
#   --out=DIR     where density.txt, density.csv, density-rounds.csv and
#                 density.png go (default: density-DATE)
#   --smoke       a short run that checks the table's shape and that every
#                 ratio is a number (a smoke check, not a performance test);
#                 writes nothing unless --out is given
#   -- OPTION...  passed on to bench_density (e.g. --rounds=5 --n=2048)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
smoke=0 out= target=$src/build
usage() { sed -n 's/^# \{0,1\}//; 2,/^$/p' "$0" | sed -n '/^usage:/,$p'; }
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1 ;;
	--out=*) out=${1#--out=}; [ -n "$out" ] || { echo "density: --out=: the directory name is empty; expected a directory" >&2; exit 2; } ;;
	--help|-h) usage; exit 0 ;;
	--) shift; break ;;
	-*) echo "density: $1: unknown option; expected --smoke, --out=DIR, a build directory or -- and bench_density options" >&2; exit 2 ;;
	*) target=$1 ;;
	esac
	shift
done
if [ -d "$target" ]; then exe=$target/bench/bench_density; else exe=$target; fi
[ -x "$exe" ] || { echo "density: $exe: no bench_density there (meson setup build && ninja -C build)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$out" ]; then
	mkdir -p "$out"
elif [ $smoke = 1 ]; then
	out=$tmp/out
	mkdir -p "$out"
else
	out=density-$(date +%Y%m%d-%H%M%S)
	mkdir -p "$out"
fi

# The chart: packed/interleaved against P, a line per N, a panel per (T, M);
# grey: the range of the control's ratio (two packed layouts) over the N of
# the panel, what equal densities differ by here.
draw() { # CSV PNG
	awk -F, -v d="$tmp" -v png="$2" '
		NR == 1 { next }
		{
			n = $1; t = $2; m = $3; p = $4; ratio = $17; aa = $21
			if (!(p in pi)) { pi[p] = np + 0; plabel[np++] = p }
			if (!(t in ti)) { ti[t] = nt + 0; tval[nt++] = t }
			if (!(m in mi)) { mi[m] = nm + 0; mval[nm++] = m }
			if (!((t, m, n) in seen)) { seen[t, m, n] = 1; ns[t, m] = ns[t, m] " " n }
			f = d "/line-" t "-" m "-" n ".dat"
			print pi[p], ratio > f
			k = t SUBSEP m SUBSEP pi[p]
			if (!(k in lo) || aa < lo[k]) lo[k] = aa
			if (!(k in hi) || aa > hi[k]) hi[k] = aa
		}
		END {
			g = d "/chart.gp"
			print "set terminal pngcairo size " (nm > 1 ? 1200 : 700) "," 380 * nt + 60 " font \"sans,9\"" > g
			print "set output \"" png "\"" > g
			print "set multiplot layout " nt "," nm " title \"one fd lookup (fcntl F\\\\_GETFD): packed / interleaved fd numbers, median of the rounds (below 1: packing is cheaper)\"" > g
			xt = ""
			for (i = 0; i < np; i++) xt = xt (i ? ", " : "") "\"" plabel[i] "\" " i
			print "set xtics (" xt ")" > g
			print "set xrange [-0.3:" np - 0.7 "]" > g
			print "set xlabel \"P: KB of other memory touched between two lookups\"" > g
			print "set ylabel \"packed / interleaved\"" > g
			print "set grid ytics" > g
			print "set key bottom left" > g
			print "set style fill transparent solid 0.3 noborder" > g
			for (a = 0; a < nt; a++)
				for (b = 0; b < nm; b++) {
					t = tval[a]; m = mval[b]
					band = d "/band-" t "-" m ".dat"
					for (i = 0; i < np; i++) {
						k = t SUBSEP m SUBSEP i
						if (k in lo) print i, lo[k], hi[k] > band
					}
					close(band)
					print "set title \"T = " t " owner threads, M = " m " measuring\"" > g
					cmd = "plot \"" band "\" using 1:2:3 with filledcurves lc rgb \"#aaaaaa\" title \"control/packed (A/A), range over N\", 1 with lines lc rgb \"#555555\" dt 3 notitle"
					split(ns[t, m], list, " ")
					for (j = 1; j in list; j++)
						cmd = cmd ", \"" d "/line-" t "-" m "-" list[j] ".dat\" using 1:2 with linespoints lw 2 pt 7 title \"N = " list[j] " fds per thread\""
					print cmd > g
				}
			print "unset multiplot" > g
		}' "$1"
	gnuplot "$tmp/chart.gp"
}

if [ $smoke = 1 ]; then
	"$exe" --smoke --csv="$out/density.csv" --rounds-csv="$out/density-rounds.csv" "$@" >"$out/density.txt"
else
	"$exe" --csv="$out/density.csv" --rounds-csv="$out/density-rounds.csv" "$@" | tee "$out/density.txt"
fi
cat_out() { [ $smoke = 0 ] || cat "$out/density.txt"; }

# The table's shape: one CSV line and one table line per point, as many
# points as the run's lists give less the skipped N x T, and a positive
# number in every ratio.
status=0
points=$(awk -F, 'NR > 1' "$out/density.csv" | wc -l)
rows=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+\/[0-9]+ /' "$out/density.txt" | wc -l)
skipped=$(grep -c '^skipped:' "$out/density.txt" || true)
if [ "$points" -eq 0 ] || [ "$points" -ne "$rows" ]; then
	echo "density: FAIL: $points CSV lines but $rows table lines" >&2
	status=1
fi
bad=$(awk -F, '
	NR == 1 { if ($17 != "ratio" || $21 != "aa_ratio" || NF != 24) print "header: " $0; next }
	NF != 24 { print "line " NR ": " NF " fields"; next }
	{ for (i = 17; i <= 23; i++) if (i != 20 && ($i !~ /^[0-9]+(\.[0-9]+)?$/ || $i + 0 <= 0)) print "line " NR ": field " i " is " $i }
	' "$out/density.csv")
if [ -n "$bad" ]; then
	echo "density: FAIL: ratios that are not numbers: $bad" >&2
	status=1
fi
if [ $smoke = 1 ]; then
	# The smoke run's lists: 2 N x 1 T x 1 M x 2 P, less 2 points per skipped N x T.
	if [ "$points" -ne $(( (2 - skipped) * 2 )) ]; then
		echo "density: FAIL: $points points, expected $(( (2 - skipped) * 2 )) ($skipped N x T skipped)" >&2
		status=1
	fi
fi
if command -v gnuplot >/dev/null 2>&1; then
	draw "$out/density.csv" "$out/density.png" || status=1
elif [ $smoke = 0 ]; then
	echo "density: gnuplot is not installed: no chart" >&2
	status=1
fi
cat_out
if [ $status = 0 ]; then
	echo "density: ok: $points points, every ratio a number"
	[ -n "${keep:-}" ] || [ $smoke = 1 ] || echo "density: wrote $out/density.txt, density.csv, density-rounds.csv, density.png"
fi
exit $status
