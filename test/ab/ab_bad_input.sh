#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fdrange ab's bad input and failures, each with one line naming what went
# wrong and what was expected: bad usage exits 2 and starts nothing; a load
# that fails or prints nothing parsable, a server that never becomes ready,
# exits at start or dies mid-run exit 1, with no process left behind and the
# rounds completed before a death kept in a report marked PARTIAL.
. "$(dirname "$0")/lib.sh"
needs gnuplot python3 memcached
user=()
[ "$(id -u)" -ne 0 ] || user=(-u root)
MC=(memcached "${user[@]}" -t 2 -m 64 -p '{port}' -U 0 -l 127.0.0.1)

# usage MESSAGE ARGS...: exit 2, one line on stderr with MESSAGE, nothing made.
usage() {
	local msg=$1 rc=0
	shift
	ab -o "$TMP/never" "$@" >"$TMP/out" 2>"$TMP/err" || rc=$?
	[ $rc -eq 2 ] || fail "ab $*: exit $rc, expected 2 ($(cat "$TMP/err"))"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "ab $*: not one line: $(cat "$TMP/err")"
	grep -qF -- "$msg" "$TMP/err" || fail "ab $*: '$(cat "$TMP/err")' does not say '$msg'"
	grep -q 'expected' "$TMP/err" || fail "ab $*: the line does not say what is expected"
	[ ! -e "$TMP/never" ] || fail "ab $*: created the output directory"
}
usage "--load: no load command given" -- "${MC[@]}"
usage "no server command after --" --load 'wrk http://127.0.0.1:{port}/'
usage "has no {port}" --load 'wrk http://127.0.0.1:{port}/' -- memcached -p 11211
usage "--load: 'wrk http://127.0.0.1/' has no {port}" --load 'wrk http://127.0.0.1/' -- "${MC[@]}"
usage "--load: no parser for 'curl'" --load 'curl http://127.0.0.1:{port}/' -- "${MC[@]}"
usage "--parser: 'siege' is not a known load tool" --parser siege --load 'x {port}' -- "${MC[@]}"
usage "--metric: 'TPS' has no (...) group" --metric TPS --load 'x {port}' -- "${MC[@]}"
usage "is not a valid regular expression" --metric 'TPS: ([0-9]+' --load 'x {port}' -- "${MC[@]}"
usage "--rounds: 0 is out of range" --rounds 0 --load 'wrk {port}' -- "${MC[@]}"
usage "--ready-timeout: the value is missing" --load 'wrk {port}' --ready-timeout
usage "'no-such-server-xyz' is not a command" --load 'wrk {port}' -- no-such-server-xyz '{port}'
usage "--lib-args: fdrange refuses them" --lib-args '--threshold=lots' --load 'wrk {port}' -- "${MC[@]}"
usage "--bogus: unknown option" --bogus --load 'wrk {port}' -- "${MC[@]}"

# failing NAME MESSAGE ARGS...: exit 1, MESSAGE in stderr's last line, and
# nothing of the run left.
failing() {
	local name=$1 msg=$2 rc=0 left
	shift 2
	ab -d 1 -r 6 --no-profile -o "$TMP/$name" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	[ $rc -eq 1 ] || { cat "$TMP/$name.err" >&2; fail "$name: exit $rc, expected 1"; }
	tail -n 1 "$TMP/$name.err" | grep -qE -- "$msg" ||
		fail "$name: '$(tail -n 1 "$TMP/$name.err")' does not say '$msg'"
	sleep 0.3
	left=$(left_behind "$TMP/$name")
	[ -z "$left" ] || fail "$name: left behind: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)")"
	note "$name: $(tail -n 1 "$TMP/$name.err")"
}
failing load_fails "the load failed \(exit 7\) in round 1 on A: " \
	--parser wrk --load 'echo connection refused; exit 7 # {port}' -- "${MC[@]}"
failing load_unparsable "no wrk result in the load's output in round 1 on A \(expected what wrk prints\)" \
	--parser wrk --load 'echo hello {port}' -- "${MC[@]}"
failing metric_unmatched "no line of the load's output in round 1 on A matches --metric 'TPS: \(\[0-9\]\+\)' with a number" \
	--metric 'TPS: ([0-9]+)' --load 'echo TPS: none {port}' -- "${MC[@]}"
failing never_ready "server A was not ready after 1 s on port [0-9]+ \(a TCP connect\)" \
	--ready-timeout 1 --parser wrk --load 'wrk {port}' -- sh -c 'exec sleep 30' sh '{port}'
failing ready_command "server A was not ready after 1 s on port [0-9]+ \(--ready false\)" \
	--ready-timeout 1 --ready false --parser wrk --load 'wrk {port}' -- "${MC[@]}"
failing exits_at_start "server A exited before it was ready, 3 times: no luck" \
	--parser wrk --load 'wrk {port}' -- sh -c 'echo no luck; exit 3' sh '{port}'
# A server that dies after the first round, whatever the machine's speed:
# each server writes its pid under its port, and the 4th load (round 2's
# first, on B) kills the server it is given, then prints a result.
die=$TMP/dies_mid_run.d
mkdir -p "$die"
failing dies_mid_run "server B died in round 2" \
	--parser memcaslap \
	--load "n=\$((\$(cat $die/calls 2>/dev/null || echo 0) + 1)); echo \$n >$die/calls;
		[ \$n -ne 4 ] || kill \$(cat $die/pid.{port}); sleep {seconds};
		echo 'Run time: 1.0s Ops: 5 TPS: 5'" \
	-- sh -c 'echo $$ >"$0/pid.$1"; shift; exec "$@"' "$die" '{port}' "${MC[@]}"
grep -q '^PARTIAL: server .* died' "$TMP/dies_mid_run/summary.txt" ||
	fail "dies_mid_run: no summary marked PARTIAL of the rounds before"
[ "$(wc -l <"$TMP/dies_mid_run/rounds.csv")" -ge 4 ] || fail "dies_mid_run: the completed round is not kept"
grep -q '^verdict: ' "$TMP/dies_mid_run/summary.txt" || fail "dies_mid_run: the partial summary has no verdict line"
echo ok
