#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Real servers from Debian 12 with FDRANGE_THRESHOLD=0 alone: each
# runs plain and under libfdrange with a short loopback load from a real
# client; see the scripts beside this one.  Installs the Debian packages
# (services are not started: a policy-rc.d is in place while installing),
# runs one server at a time and prints one line per server and a total.
#   test/servers/run-all.sh LIBPATH FDRANGE [NAME...]
# LIBPATH: libfdrange.so (made absolute here); FDRANGE: the fdrange
# command; NAMEs: only those lines of the table below.
# Exit status 0 only if nothing failed (skipped lines do not fail).
set -eu
[ $# -ge 2 ] || { echo "usage: $0 LIBPATH FDRANGE [NAME...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
lib=$(readlink -f "$1") fdrange=$(readlink -f "$2")
shift 2
[ -f "$lib" ] || { echo "no library at $lib" >&2; exit 2; }
[ -x "$fdrange" ] || { echo "no fdrange command at $fdrange" >&2; exit 2; }

# name, per-test time limit in seconds, script and its arguments.
table="memcached 90 memcached.sh
haproxy-mq-20000 60 haproxy.sh on 20000
haproxy-nomq-20000 60 haproxy.sh off 20000
haproxy-mq-1048576 60 haproxy.sh on 1048576
haproxy-nomq-1048576 60 haproxy.sh off 1048576
h2o 60 h2o.sh
h2o-move 60 h2o.sh move
trafficserver-accept1 90 trafficserver.sh 1
trafficserver-burst 90 trafficserver.sh 1 burst
trafficserver-accept0 90 trafficserver.sh 0
redis 60 redis.sh
varnish 90 varnish.sh
java 120 java.sh"

. "$here/../../tools/deps.sh"
pkgs="memcached libmemcached-tools haproxy h2o trafficserver redis-server redis-tools varnish
	nginx-light wrk nghttp2-client openjdk-17-jdk-headless python3 curl util-linux iproute2"
# shellcheck disable=SC2086
if [ -n "$(missing_packages $pkgs)" ]; then
	# Debian starts services on install where an init system runs; the
	# tests use their own ports and configurations, but a stray redis or
	# trafficserver would still take CPU from them.
	policy=""
	if [ "$(id -u)" = 0 ] && [ ! -e /usr/sbin/policy-rc.d ]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
	fi
	rc=0
	# shellcheck disable=SC2086
	need_packages $pkgs || rc=$?
	[ -z "$policy" ] || rm -f "$policy"
	[ "$rc" = 0 ] || exit "$rc"
fi

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
start=$(date +%s)
pass=0 failed=0 skipped=0
: >"$logs/table"
while read -r name limit script args; do
	if [ $# -gt 0 ]; then
		case " $* " in *" $name "*) ;; *) continue ;; esac
	fi
	echo "=== $name: $script $args"
	t0=$(date +%s)
	rc=0
	: >"$logs/$name.groups"
	# -k: time for the test's own clean-up (it stops its servers: ~2 s each).
	# shellcheck disable=SC2086
	SRV_GROUPS_FILE=$logs/$name.groups timeout -k 20 "$limit" \
		bash "$here/$script" "$lib" "$fdrange" $args >"$logs/$name.log" 2>&1 || rc=$?
	# Servers run in sessions of their own: stop any a killed test left.
	while read -r pg; do
		if kill -0 -- "-$pg" 2>/dev/null; then
			echo "# $name left process group $pg running: killed" >>"$logs/$name.log"
			kill -KILL -- "-$pg" 2>/dev/null || true
		fi
	done <"$logs/$name.groups"
	cat "$logs/$name.log"
	res=$(sed -n 's/^result: //p' "$logs/$name.log" | tail -n 1)
	case $rc in
	0) r=ok; pass=$((pass + 1)) ;;
	77) r=skip; skipped=$((skipped + 1)); res=$(grep -m 1 '^skipped:' "$logs/$name.log" || true) ;;
	124 | 137) r=FAIL; failed=$((failed + 1)); res="timed out after $limit s; $res" ;;
	*) r=FAIL; failed=$((failed + 1)) ;;
	esac
	[ "$r" = FAIL ] && echo "$name" >>"$logs/failed"
	# The table: purity, shared client lines, model, errors plain/library,
	# and the /proc cross-check of shared client lines (procfds.py).
	short=$(echo "$res" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(purity|client_lines|model|errors|proc_client_lines)=/) printf "%s ", $i }')
	printf '%-4s %-22s %-70s %4d s\n' "$r" "$name" "${short:-$res}" $(($(date +%s) - t0)) >>"$logs/table"
done <<<"$table"

if [ -f "$logs/failed" ]; then
	while read -r f; do
		echo "=== why $f failed"
		grep -E 'FAIL|FATAL|died|result:|left process group' "$logs/$f.log" | tail -n 8 ||
			tail -n 8 "$logs/$f.log"
	done <"$logs/failed"
fi
echo "=== servers plain and under $lib, FDRANGE_THRESHOLD=${SRV_THRESHOLD:-0} alone ($(($(date +%s) - start)) s)"
cat "$logs/table"
[ "$skipped" = 0 ] || echo "$skipped skipped"
echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
