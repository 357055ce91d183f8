#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The density effect inside a real server: memcached -t 4 with thousands
# of connections per worker, plain (A), plain again (A2, the A/A control)
# and with LD_PRELOAD of the library (B), driven in turn by mcspread (few
# requests in flight, each on a random one of all the connections), the
# order rotating from round to round.  The table and the verdict against
# the A/A band come from ab-report, bench/ab-memcached's report (same
# rounds.csv, same rule: bench/ab_stats.h).
#
# usage: density-memcached.sh [--smoke] [--rounds=N] [--seconds=S]
#            [--per-worker=C] [--inflight=K] [--out=DIR] [BUILDDIR]
#   BUILDDIR      the meson build directory (default: build, beside bench/)
#   --per-worker  connections per memcached worker (default 2048; 4 workers)
#   --inflight    requests in flight (default 32)
#   --rounds      rounds of A, A2 and B (default 6)
#   --seconds     seconds of load per server and round (default 10)
#   --out=DIR     results: summary.txt, result.json, rounds.csv, run.conf,
#                 stat-B.txt, logs (default: density-memcached-DATE)
#   --smoke       1 round of 1 s with 64 connections per worker: checks that
#                 it runs (exit 77 when memcached is not installed)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build rounds=6 seconds=10 per_worker=2048 inflight=32 out= smoke=0 workers=4

bad_arg() { echo "density-memcached: $1: $2; expected $3" >&2; exit 2; }
int_arg() { # OPTION VALUE MIN MAX
	[[ $2 =~ ^[0-9]{1,7}$ ]] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] ||
		bad_arg "$1" "'$2' is not an integer from $3 to $4" "one"
}
for arg; do
	case $arg in
	--smoke) smoke=1 rounds=1 seconds=1 per_worker=64 ;;
	--rounds=*) int_arg --rounds "${arg#*=}" 1 100; rounds=${arg#*=} ;;
	--seconds=*) int_arg --seconds "${arg#*=}" 1 3600; seconds=${arg#*=} ;;
	--per-worker=*) int_arg --per-worker "${arg#*=}" 1 100000; per_worker=${arg#*=} ;;
	--inflight=*) int_arg --inflight "${arg#*=}" 1 10000; inflight=${arg#*=} ;;
	--out=*) out=${arg#*=}; [ -n "$out" ] || bad_arg --out "the directory name is empty" "a directory" ;;
	-h|--help) sed -n '/^# usage:/,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) bad_arg "$arg" "unknown option" "one of the options in --help" ;;
	*) build=$arg ;;
	esac
done
conns=$((per_worker * workers))
[ "$inflight" -le "$conns" ] || bad_arg --inflight "$inflight requests in flight over $conns connections" "at most one per connection"

if ! command -v memcached >/dev/null; then
	echo "density-memcached: memcached is not installed${smoke:+: skipped}" >&2
	[ $smoke = 1 ] && exit 77
	exit 1
fi
lib=$build/lib/libfdrange.so spread=$build/bench/mcspread report=$build/bench/ab-report
for f in "$lib" "$spread" "$report"; do
	[ -e "$f" ] || { echo "density-memcached: $f missing: meson setup $build && ninja -C $build" >&2; exit 1; }
done
# Thousands of connections: the limit raised to the hard one, for the
# servers and the client alike; memcached -c with room for its own fds.
ulimit -n "$(ulimit -Hn)"
limit=$(ulimit -n)
[ $((conns + 64)) -le "$limit" ] ||
	bad_arg --per-worker "$conns connections need $((conns + 64)) fds, the hard limit is $limit" "fewer"
maxconns=$((conns + 32))

if [ -z "$out" ]; then
	[ $smoke = 1 ] && out=$(mktemp -d) || out=density-memcached-$(date +%Y%m%d-%H%M%S)
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/rounds.csv" "$out/summary.txt" "$out/result.json"

declare -A port pid
cleanup() {
	for v in "${!pid[@]}"; do kill "${pid[$v]}" 2>/dev/null || true; done
	for v in "${!pid[@]}"; do wait "${pid[$v]}" 2>/dev/null || true; done
	pid=()
}
trap cleanup EXIT

user=()
[ "$(id -u)" -ne 0 ] || user=(-u root)
first_port=$((20000 + $$ % 20000))
start() { # A|A2|B PORT: memcached with no fd of ours above 2
	local v=$1 p=$2 env=(env -u LD_PRELOAD)
	[ "$v" != B ] || env=(env "LD_PRELOAD=$lib")
	echo "${env[*]} memcached ${user[*]} -t $workers -c $maxconns -m 256 -p $p -U 0 -l 127.0.0.1" >"$out/server-$v.cmd"
	(
		for f in /proc/$BASHPID/fd/*; do f=${f##*/}; [ "$f" -le 2 ] || eval "exec $f>&-"; done 2>/dev/null
		exec "${env[@]}" memcached "${user[@]}" -t $workers -c $maxconns -m 256 -p "$p" -U 0 -l 127.0.0.1
	) </dev/null >"$out/server-$v.log" 2>&1 &
	pid[$v]=$!
	for _ in $(seq 50); do
		if "$spread" --port "$p" --conns 1 --inflight 1 --keys 1 --seconds 0 --preload 2>/dev/null; then
			port[$v]=$p
			return 0
		fi
		kill -0 "${pid[$v]}" 2>/dev/null || break
		sleep 0.1
	done
	echo "density-memcached: memcached $v did not come up on port $p; see $out/server-$v.log" >&2
	exit 1
}
i=0
for v in A A2 B; do
	start $v $((first_port + i))
	i=$((i + 1))
	"$spread" --port "${port[$v]}" --preload --seconds 0 || { echo "density-memcached: setting the keys on $v failed" >&2; exit 1; }
done

{
	echo "server_threads=$workers"
	echo "client_threads=1"
	echo "conns=$conns"
	echo "duration_s=$seconds"
	echo "rounds=$rounds"
	echo "get_ratio=0.9"
	echo "value_size=64"
	echo "key_size=12"
	echo "keys=10000"
	echo "memory_mb=256"
	echo "server_args=-c $maxconns (load: mcspread, $inflight requests in flight, each on a random connection)"
	echo "cpus_online=$(getconf _NPROCESSORS_ONLN)"
	echo "aa=0"
	echo "library=$lib"
	echo "memcached=$(memcached -V 2>&1 | head -n 1)"
	echo "kernel=$(uname -r)"
	echo "started=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$out/run.conf"
echo "round,position,server,ops_per_s,avg_us,p50_us,p90_us,p99_us,p999_us,max_us,errors" >"$out/rounds.csv"

load() { # SERVER ROUND POSITION
	local v=$1 log=$out/load-$1-$2.log line
	local -A f
	kill -0 "${pid[$v]}" 2>/dev/null || { echo "density-memcached: server $v died; see $out/server-$v.log" >&2; exit 1; }
	"$spread" --port "${port[$v]}" --conns "$conns" --inflight "$inflight" --seconds "$seconds" >"$log" 2>&1 ||
		{ echo "density-memcached: the load failed on $v in round $2: $(tail -n 1 "$log")" >&2; exit 1; }
	line=$(grep '^ops=' "$log")
	for kv in $line; do f[${kv%%=*}]=${kv#*=}; done
	echo "$2,$3,$v,${f[ops_per_s]},${f[avg_us]},${f[p50_us]},${f[p90_us]},${f[p99_us]},${f[p999_us]},${f[max_us]},${f[errors]}" >>"$out/rounds.csv"
	[ $smoke = 1 ] || echo "round $2 $v: ${f[ops_per_s]} ops/s, p50 ${f[p50_us]} us, p99 ${f[p99_us]} us" >&2
}
orders=("A B A2" "B A2 A" "A2 A B")
for r in $(seq 1 "$rounds"); do
	p=0
	for v in ${orders[$(((r - 1) % 3))]}; do
		p=$((p + 1))
		load "$v" "$r" "$p"
	done
done

# Where B's fds were, while an unmeasured load holds the connections open.
fdrange=$build/tools/fdrange
if [ -x "$fdrange" ]; then
	"$spread" --port "${port[B]}" --conns "$conns" --inflight "$inflight" --seconds 3 >/dev/null 2>&1 &
	lp=$!
	sleep 2
	"$fdrange" stat --color=never "${pid[B]}" >"$out/stat-B.txt" 2>&1 || true
	wait $lp || true
	echo "locality=$(sed -n 's/^summary: //p' "$out/stat-B.txt")" >>"$out/run.conf"
fi
cleanup
"$report" "$out" >"$out/report.out" 2>"$out/report.err" ||
	{ echo "density-memcached: ab-report: $(head -n 1 "$out/report.err")" >&2; exit 1; }
cat "$out/report.out"
if [ $smoke = 1 ]; then
	grep -q '^verdict: ' "$out/summary.txt" || { echo "density-memcached: FAIL: no verdict line" >&2; exit 1; }
	rm -rf "$out"
	echo "density-memcached: ok (smoke)"
else
	echo "density-memcached: wrote $out/summary.txt, result.json, rounds.csv, run.conf, stat-B.txt" >&2
fi
