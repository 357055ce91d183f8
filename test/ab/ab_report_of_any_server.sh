#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `fdrange ab --report` on made-up runs of any server: with fewer CPUs
# than the server's threads the verdict carries the memcached preset's
# caveat, worded for unknown client threads; a run of 1 round outside the
# A/A band is no verdict, exit 3, its header naming only the order it ran
# in.  And one short real run of a server of 8 threads: the runner counts
# them into run.conf, and the caveat follows the CPUs online.
. "$(dirname "$0")/lib.sh"
needs gnuplot python3

# run DIR CPUS SERVER-THREADS "B/A per round": a run of a web server whose
# A2/A is 1.01, 0.99, 1.01...; B placed fds.
run() {
	local i ba
	mkdir -p "$TMP/$1"
	printf '%s\n' preset= name=web 'server_cmd=web --port {port}' 'load_cmd=wrk http://127.0.0.1:{port}/' \
		parser=wrk duration_s=1 "rounds=$(echo "$4" | wc -w)" lib_args= server_cpus= client_cpus= \
		${3:+"server_threads=$3"} "cpus_online=$2" aa=0 \
		'locality=pid=1 library=yes open_fds=200 groups=4 placed=150 fallbacks=0 threshold=64 reason=-' \
		>"$TMP/$1/run.conf"
	echo "round,position,server,ops_per_s,avg_us,p50_us,p90_us,p99_us,p999_us,max_us,errors" >"$TMP/$1/rounds.csv"
	i=0
	for ba in $4; do
		i=$((i + 1))
		awk -v i=$i -v ba="$ba" 'BEGIN {
			aa = i % 2 ? 1.01 : 0.99
			printf "%d,1,A,10000,100,90,150,200,300,400,0\n", i
			printf "%d,2,B,%.3f,100,90,150,200,300,400,0\n", i, 10000 * ba
			printf "%d,3,A2,%.3f,100,90,150,200,300,400,0\n", i, 10000 * aa }' >>"$TMP/$1/rounds.csv"
	done
}
# report DIR EXPECTED-EXIT: the verdict line.
report() {
	local rc=0
	ab --report "$TMP/$1" >"$TMP/$1.out" 2>"$TMP/$1.err" || rc=$?
	[ "$rc" -eq "$2" ] || { cat "$TMP/$1.out" "$TMP/$1.err" >&2; fail "$1: exit $rc, expected $2"; }
	verdict_of "$TMP/$1.out"
}

run few_cpus 2 8 "1.0 1.0 1.0 1.0"
v=$(report few_cpus 0)
case $v in *"inside the A/A band"*" (2 CPUs for 8 server threads: the fd-table effect is not expected here)") ;;
	*) fail "2 CPUs, 8 server threads: no few-CPUs note: $v" ;; esac
note "$v"
run many_cpus 64 8 "1.0 1.0 1.0 1.0"
v=$(report many_cpus 0)
case $v in *"not expected here"*) fail "64 CPUs, 8 server threads: a few-CPUs note: $v" ;; esac

run one_round 64 8 "1.30"
v=$(report one_round 3)
case $v in "verdict: no verdict: throughput B/A 1.300 "*"but 1 round cannot show a difference"*) ;;
	*) fail "1 round outside the band: $v" ;; esac
grep -q '^1 round of 1 s per server, order A B A2; ' "$TMP/one_round.out" ||
	fail "1 round: the header names orders not run: $(grep ' per server' "$TMP/one_round.out")"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["compare"]["ops_per_s"]["decision"] == "too_few_rounds", r["compare"]' \
	"$TMP/one_round/result.json" || fail "1 round: result.json does not say too_few_rounds"
note "$v"

# A server of 8 threads (main and 7 asleep), a "load" that prints a number.
cat >"$TMP/srv.py" <<'PY'
import socket, sys, threading, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
for _ in range(7):
    threading.Thread(target=time.sleep, args=(1e6,), daemon=True).start()
while True:
    s.accept()[0].close()
PY
rc=0
ab -d 1 -r 1 --no-profile -o "$TMP/real" --metric 'ops ([0-9]+)' --load 'echo ops 1000 {port}' \
	-- python3 "$TMP/srv.py" '{port}' >"$TMP/real.out" 2>"$TMP/real.err" || rc=$?
# B holds too few fds to place any: void, exit 3.
[ $rc -eq 3 ] || { cat "$TMP/real.out" "$TMP/real.err" >&2; fail "real run: exit $rc, expected 3"; }
grep -qx 'server_threads=8' "$TMP/real/run.conf" || fail "real run: server threads not counted: $(cat "$TMP/real/run.conf")"
v=$(verdict_of "$TMP/real.out")
if [ "$(getconf _NPROCESSORS_ONLN)" -lt 8 ]; then
	case $v in *"($(getconf _NPROCESSORS_ONLN) CPUs for 8 server threads: the fd-table effect is not expected here)") ;;
		*) fail "real run on $(getconf _NPROCESSORS_ONLN) CPUs: no few-CPUs note: $v" ;; esac
else
	case $v in *"not expected here"*) fail "real run: a few-CPUs note: $v" ;; esac
fi
left=$(left_behind "$TMP/real")
[ -z "$left" ] || fail "real run: left behind: $left"
echo ok
