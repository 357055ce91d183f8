#!/bin/bash
# bench/coherence/sweep.sh - the coherence model over connection counts and
# reconnect rates: one run.sh per (connections, requests per connection),
# then one table (report.py --sweep) with the full count (every listed
# function, every line) beside the fd-table lookups, relative to plain.
# See docs/coherence.md ("The full count").
#
#   bench/coherence/sweep.sh [options]
# Options:
#   --conns "32 128 1000"   client connections (default as shown)
#   --churn "5 50 1000"     requests per connection before it reconnects
#   --variants "plain lib"  as run.sh's --variants
#   --smp "4"               vCPU counts (workers = vCPUs)
#   --shapes "mc"           server shapes, run.sh --shape: mc (memcached's
#                           hand-off), ac (accept per thread)
#   --rounds 2              boots per variant, point and vCPU count
#   --lib PATH              libfdrange.so (default: build this tree's)
#   --out DIR               results (default $COH_WORK/sweep); one
#                           subdirectory per point, sweep.csv, sweep.txt
# The first point boots the validation microbenchmark for each vCPU count
# (run.sh); the later points reuse its verdict (COH_VALIDATED); the fdcache
# counter boot is skipped. With more than one shape or vCPU count it also
# writes the thread-count table (report.py --manycore: manycore.txt, .csv,
# .png). On 2 host cores a boot takes about 15-35 s at -smp 2 to 8, 40-120 s
# at 16, up to 3.5 minutes at 16 with 1000 connections. Exit status: 1 if a
# point failed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CONNS="32 128 1000" CHURNS="5 50 1000" VARIANTS="plain lib" SMPS=4 ROUNDS=2 LIB=() OUT="" SHAPES=mc
while [ $# -gt 0 ]; do
	case $1 in
	--conns) CONNS=$2; shift ;;
	--churn) CHURNS=$2; shift ;;
	--variants) VARIANTS=$2; shift ;;
	--smp) SMPS=$2; shift ;;
	--shapes) SHAPES=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--lib) LIB=(--lib "$(realpath "$2")"); shift ;;
	--out) OUT=$2; shift ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
	*) echo "sweep.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
OUT=${OUT:-${COH_WORK:-/var/tmp/fdrange-coherence}/sweep}
mkdir -p "$OUT"
status=0 dirs=() first=""
for sh in $SHAPES; do
	for c in $CONNS; do
		for k in $CHURNS; do
			d=$OUT/$sh-c$c-k$k
			[ "$SHAPES" != mc ] || d=$OUT/c$c-k$k
			dirs+=("$d")
			echo "[sweep] shape=$sh conns=$c churn=$k -> $d" >&2
			COH_VALIDATED=$first COH_COUNTERS=0 "$HERE/run.sh" --smp "$SMPS" --rounds "$ROUNDS" \
				--variants "$VARIANTS" --shape "$sh" --conns "$c" --churn "$k" --out "$d" "${LIB[@]}" \
				> "$d.log" 2>&1 || {
				echo "[sweep] shape=$sh conns=$c churn=$k failed; see $d.log" >&2
				status=1
			}
			[ -n "$first" ] || first=$d
		done
	done
done
python3 "$HERE/report.py" --sweep "${dirs[@]}" | tee "$OUT/sweep.txt" || status=1
if [ "$SHAPES" != mc ] || [ "$(echo $SMPS | wc -w)" -gt 1 ]; then
	python3 "$HERE/report.py" --manycore "$OUT/manycore" "${dirs[@]}" || status=1
fi
exit $status
