#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A verdict never compares plain with plain unawares: when B placed no fd
# the verdict line says so first and the exit status is 3.  A real one:
# nginx, whose processes are single-threaded, so the library passes every
# call through (reason=single_threaded).  And the memcached preset's report
# of a run whose B held too few fds (reason=few_fds), which names the
# threshold; the preset's default connections are enough for it to act.
# And where a local model's kept connections make it a verdict after all.
. "$(dirname "$0")/lib.sh"
needs gnuplot python3

if command -v nginx >/dev/null && command -v wrk >/dev/null; then
	mkdir -p "$TMP/nginx.d"
	printf '%s\n' 'daemon off;' 'worker_processes 2;' "pid $TMP/nginx.d/nginx.pid;" 'error_log stderr;' \
		'events { worker_connections 1024; }' 'http {' '  access_log off;' \
		"  client_body_temp_path $TMP/nginx.d; proxy_temp_path $TMP/nginx.d; fastcgi_temp_path $TMP/nginx.d;" \
		"  uwsgi_temp_path $TMP/nginx.d; scgi_temp_path $TMP/nginx.d;" \
		'  server { listen 127.0.0.1:@PORT@; location / { return 200 "hello\n"; } }' '}' >"$TMP/nginx.tmpl"
	rc=0
	ab -d 1 -r 1 --no-profile -o "$TMP/ngx" --load 'wrk --latency -t 2 -c 96 -d {seconds} http://127.0.0.1:{port}/' \
		-- sh -c 'sed "s/@PORT@/$2/" "$1.tmpl" >"$1.conf.$2" && exec nginx -p "$1.d" -c "$1.conf.$2"' \
		sh "$TMP/nginx" '{port}' >"$TMP/ngx.out" 2>"$TMP/ngx.err" || rc=$?
	[ $rc -eq 3 ] || { cat "$TMP/ngx.out" "$TMP/ngx.err" >&2; fail "nginx: exit $rc, expected 3 (void)"; }
	v=$(verdict_of "$TMP/ngx.out")
	case $v in "verdict: VOID, B placed no fd (reason=single_threaded), so A and B both ran plain"*) ;;
		*) fail "nginx: the verdict does not begin with the void: $v" ;; esac
	python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["void"] is True' "$TMP/ngx/result.json" ||
		fail "nginx: result.json does not say void"
	left=$(left_behind "$TMP/ngx")
	[ -z "$left" ] || fail "nginx: left behind: $left"
	note "nginx: $v"
else
	note "nginx or wrk not installed: the real case not run"
fi

# The preset's report, from a made-up run of 4 rounds whose B placed nothing.
mkdir -p "$TMP/few"
printf '%s\n' preset=memcached server_threads=4 client_threads=2 conns=8 duration_s=1 rounds=4 \
	cpus_online=64 aa=0 \
	'locality=pid=1 library=yes open_fds=30 groups=4 placed=0 fallbacks=0 threshold=64 reason=few_fds' \
	>"$TMP/few/run.conf"
{
	echo "round,position,server,ops_per_s,avg_us,p50_us,p90_us,p99_us,p999_us,max_us,errors"
	for i in 1 2 3 4; do
		echo "$i,1,A,$((50000 + i * 100)),20,15,30,40,60,90,0"
		echo "$i,2,B,$((50010 + i * 100)),20,15,30,41,60,90,0"
		echo "$i,3,A2,$((50020 + i * 100)),20,15,30,42,60,90,0"
	done
} >"$TMP/few/rounds.csv"
rc=0
"$SRCROOT/bench/ab-memcached" --build "$(dirname "$(dirname "$FDRANGE")")" --report "$TMP/few" \
	>"$TMP/few.out" 2>"$TMP/few.err" || rc=$?
[ $rc -eq 3 ] || { cat "$TMP/few.out" "$TMP/few.err" >&2; fail "few_fds: exit $rc, expected 3"; }
v=$(verdict_of "$TMP/few.out")
case $v in "verdict: VOID, B placed no fd (reason=few_fds), so A and B both ran plain and this compares plain with plain (the library acts once the process holds 64 fds"*) ;;
	*) fail "few_fds: $v" ;; esac
# B's placement unknown (fdrange stat failed): void as well, said first.
mkdir -p "$TMP/unknown"
cp "$TMP/few/rounds.csv" "$TMP/unknown/"
sed 's/^locality=.*/locality=(fdrange stat failed; see stat-B.txt)/' "$TMP/few/run.conf" >"$TMP/unknown/run.conf"
rc=0
"$SRCROOT/bench/ab-memcached" --build "$(dirname "$(dirname "$FDRANGE")")" --report "$TMP/unknown" \
	>"$TMP/unknown.out" 2>"$TMP/unknown.err" || rc=$?
[ $rc -eq 3 ] || { cat "$TMP/unknown.out" "$TMP/unknown.err" >&2; fail "unknown placement: exit $rc, expected 3"; }
v=$(verdict_of "$TMP/unknown.out")
case $v in "verdict: VOID, B's placement unknown (fdrange stat failed; see stat-B.txt), so B may have run plain: "*) ;;
	*) fail "unknown placement: $v" ;; esac
python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["void"] is True' "$TMP/unknown/result.json" ||
	fail "unknown placement: result.json does not say void"
# A server whose threads serve what they accept, on the dup path: its
# connections kept where the kernel numbered them (FDRANGE_LOCAL=keep, the
# default) are the library's decision, so no void: a verdict that says B
# moved nothing.  kept by any other model (fds 0-2, in any process) is
# still void.
for m in local:0 rotation:3 local-move:3; do
	model=${m%:*} want=${m#*:}
	mkdir -p "$TMP/kept-$model"
	cp "$TMP/few/rounds.csv" "$TMP/kept-$model/"
	kept=40
	[ "$model" = local-move ] && model=local kept=0
	sed "s/^locality=.*/locality=pid=1 library=yes open_fds=90 groups=4 placed=0 inplace=0 kept=$kept fallbacks=0 model=$model realignments=0 threshold=64 path=dup reason=-/" \
		"$TMP/few/run.conf" >"$TMP/kept-${m%:*}/run.conf"
	rc=0
	"$SRCROOT/bench/ab-memcached" --build "$(dirname "$(dirname "$FDRANGE")")" --report "$TMP/kept-${m%:*}" \
		>"$TMP/kept.out" 2>"$TMP/kept.err" || rc=$?
	[ $rc -eq "$want" ] || { cat "$TMP/kept.out" "$TMP/kept.err" >&2; fail "kept, ${m%:*}: exit $rc, expected $want"; }
	v=$(verdict_of "$TMP/kept.out")
	if [ "$want" = 0 ]; then
		case $v in "verdict: B moved no fd: its threads serve what they accept (model=local), and it kept 40 where the kernel numbered them (FDRANGE_LOCAL=keep, the default), so B differs from A by the library's calls only: "*) ;;
			*) fail "kept, ${m%:*}: $v" ;; esac
		python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["void"] is False' \
			"$TMP/kept-${m%:*}/result.json" || fail "kept, ${m%:*}: result.json says void"
	else
		case $v in "verdict: VOID, B placed no fd (reason=-)"*) ;; *) fail "kept, ${m%:*}: $v" ;; esac
	fi
done
"$SRCROOT/bench/ab-memcached" --help | grep -A1 -- '--conns N' | grep -q 'default 96' ||
	fail "ab-memcached's default connections are not 96"
echo ok
