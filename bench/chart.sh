#!/bin/sh
# Bar chart of creation cost per call type, A (no library) against B
# (library), with "A + floor" (A plus one measured F_DUPFD + close pair: what
# B costs if the library adds exactly the move's two syscalls), from the
# TSV that `bench_create --tsv=FILE` writes.
#
# usage: chart.sh CREATE.TSV OUTPUT.PNG [TITLE]
set -eu
tsv=$1 png=$2
title=${3:-fd creation cost: ns per created-and-closed fd (median, bars: min..max)}
command -v gnuplot >/dev/null 2>&1 || { echo "chart: gnuplot is not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One row per call and thread count: label A med min max B med min max A+floor
awk -F'\t' '
	/^#/ { next }
	{ split($1, k, "/"); v[$1, $2] = $3 " " $4 " " $5; m[$1, $2] = $3
	  if (k[1] != "floor" && k[1] !~ /\+move/ && !seen[$1]++) keys[n++] = $1 }
	END {
		for (i = 0; i < n; i++) {
			split(keys[i], k, "/")
			f = m["floor/" k[2], "A"]
			printf "\"%s %s\" %s %s %.1f\n", k[1], k[2], v[keys[i], "A"], v[keys[i], "B"],
				m[keys[i], "A"] + f
		}
	}' "$tsv" >"$tmp/data"

gnuplot <<EOF
set terminal pngcairo size 1000,520 font "sans,10"
set output "$png"
set title "$title"
set ylabel "ns per fd"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics scale 0
set yrange [0:*]
set key top left
set grid ytics
plot "$tmp/data" using 2:3:4:xtic(1) title "A: no library" lc rgb "#4477aa", \
     "" using 5:6:7 title "B: LD\\\\_PRELOAD=libfdrange.so" lc rgb "#ee6677", \
     "" using 8:8:8 title "A + floor (one F\\\\_DUPFD + close)" lc rgb "#cccccc"
EOF
echo "chart: wrote $png"
