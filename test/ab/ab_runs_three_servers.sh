#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fdrange ab on three real servers with their own load tools, briefly:
# memcached with memcaslap, redis (io-threads) with redis-benchmark, h2o
# with h2load.  Each ends with a verdict that is not void (B placed fds),
# or with 3 rounds outside the A/A band "no verdict" and exit 3; the
# runner counted the server's threads, and the verdict has the few-CPUs
# note exactly when there are fewer CPUs; result.json parses and says the
# same, the profiled run (redis) carries the fd-path shares of A and B,
# and no server or load is left behind.
. "$(dirname "$0")/lib.sh"
needs gnuplot python3

# check NAME DIR RC: the run in DIR gave a verdict (or no verdict, exit
# 3), B placed fds, the JSON says the same, nothing is left.
check() {
	local name=$1 dir=$2 rc=$3 v left threads
	[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { cat "$dir.out" "$dir.err" >&2; fail "$name: exit $rc"; }
	v=$(verdict_of "$dir.out")
	case $v in *VOID*) fail "$name: void: $v" ;; esac
	case $v in
	"verdict: no verdict:"*) [ "$rc" -eq 3 ] || fail "$name: no verdict, but exit $rc" ;;
	*) [ "$rc" -eq 0 ] || fail "$name: a verdict, but exit $rc: $v" ;;
	esac
	threads=$(sed -n 's/^server_threads=//p' "$dir/run.conf")
	[ "${threads:-0}" -gt 0 ] || fail "$name: the server's threads were not counted: $(cat "$dir/run.conf")"
	if [ "$(getconf _NPROCESSORS_ONLN)" -lt "$threads" ]; then
		case $v in *"CPUs for $threads server threads: the fd-table effect is not expected here)") ;;
			*) fail "$name: $threads server threads on $(getconf _NPROCESSORS_ONLN) CPUs, no note: $v" ;; esac
	else
		case $v in *"not expected here"*) fail "$name: a few-CPUs note: $v" ;; esac
	fi
	grep -q '^B locality .* placed=[1-9]' "$dir.out" || fail "$name: B placed nothing: $(grep locality "$dir.out")"
	python3 - "$dir/result.json" "$v" <<'PY' || fail "$name: result.json (above)"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "fdrange-ab/1", r["schema"]
assert r["void"] is False and "verdict: " + r["verdict"] == sys.argv[2], (r["verdict"], sys.argv[2])
assert r["complete_rounds"] == 3 and r["compare"]["ops_per_s"]["ba_median"] > 0, r["compare"]
PY
	left=$(left_behind "$dir")
	[ -z "$left" ] || fail "$name: left behind: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)")"
	note "$name: $v"
}
ran=0

if command -v memcached >/dev/null && command -v memcaslap >/dev/null; then
	user=()
	[ "$(id -u)" -ne 0 ] || user=(-u root)
	rc=0
	ab -d 1 -r 3 --no-profile -o "$TMP/mc" --load 'memcaslap -s 127.0.0.1:{port} -T 2 -c 96 -t {seconds}s' \
		-- memcached "${user[@]}" -t 4 -m 64 -p '{port}' -U 0 -l 127.0.0.1 >"$TMP/mc.out" 2>"$TMP/mc.err" || rc=$?
	check memcached "$TMP/mc" $rc
	ran=$((ran + 1))
fi

if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
	rc=0
	ab -d 1 -r 3 -o "$TMP/redis" --load 'redis-benchmark -p {port} -t get -n 3000 -c 96 --csv' \
		-- redis-server --port '{port}' --bind 127.0.0.1 --save '' --appendonly no \
		--io-threads 2 --io-threads-do-reads yes >"$TMP/redis.out" 2>"$TMP/redis.err" || rc=$?
	check redis "$TMP/redis" $rc
	if grep -q '^profile_A=none' "$TMP/redis/run.conf"; then
		note "redis: fdrange profile could not sample here: $(grep '^profile_A' "$TMP/redis/run.conf")"
	else
		grep -Eq '^  A  plain +fd paths [0-9.]+% of CPU: lookup [0-9.]+%' "$TMP/redis.out" ||
			fail "redis: no fd-path line for A in the table"
		python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["fd_paths_pct"]["B"]["lookup"] >= 0, r["fd_paths_pct"]' \
			"$TMP/redis/result.json" || fail "redis: no fd-path shares in result.json"
	fi
	ran=$((ran + 1))
fi

if command -v h2o >/dev/null && command -v h2load >/dev/null; then
	mkdir -p "$TMP/www"
	echo hello >"$TMP/www/index.html"
	chmod -R a+rX "$TMP/www"
	printf '%s\n' 'user: nobody' 'num-threads: 4' 'listen:' '  host: 127.0.0.1' '  port: @PORT@' \
		'hosts:' '  default:' '    paths:' '      /:' "        file.dir: $TMP/www" >"$TMP/h2o.tmpl"
	rc=0
	ab -d 1 -r 3 --no-profile -o "$TMP/h2o" --load 'h2load -c 96 -t 2 -D {seconds} http://127.0.0.1:{port}/index.html' \
		-- sh -c 'sed "s/@PORT@/$2/" "$1.tmpl" >"$1.conf.$2" && exec h2o -c "$1.conf.$2"' sh "$TMP/h2o" '{port}' \
		>"$TMP/h2o.out" 2>"$TMP/h2o.err" || rc=$?
	check h2o "$TMP/h2o" $rc
	ran=$((ran + 1))
fi
[ $ran -gt 0 ] || { echo "none of memcached, redis, h2o with their load tools installed: skipping"; exit 77; }
[ $ran -eq 3 ] || note "only $ran of the 3 servers installed"
echo ok
