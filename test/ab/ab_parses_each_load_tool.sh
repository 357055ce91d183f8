#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fdrange ab --parse: what each parser reads from real outputs of its tool
# (test/ab/samples, saved from runs on this machine), --metric, and the
# outputs that must be refused: nothing parsable, several redis tests.
. "$(dirname "$0")/lib.sh"
S=$SRCROOT/test/ab/samples
# expect PARSER FILE LINE
expect() {
	local got
	got=$(ab --parser "$1" --parse "$S/$2") || fail "--parser $1 --parse $2 failed"
	[ "$got" = "$3" ] || fail "--parser $1 on $2: '$got', expected '$3'"
}
expect wrk wrk.txt "ops_per_s=22676.77 avg_us=12650 p50_us=2510 p90_us=43480 p99_us=137890 p999_us=nan max_us=181330 errors=0"
expect h2load h2load.txt "ops_per_s=14844 avg_us=5130 p50_us=nan p90_us=nan p99_us=nan p999_us=nan max_us=115480 errors=0"
expect ab ab.txt "ops_per_s=838.88 avg_us=4768 p50_us=4000 p90_us=9000 p99_us=16000 p999_us=nan max_us=21000 errors=0"
expect memcaslap memcaslap.txt "ops_per_s=46626 avg_us=nan p50_us=nan p90_us=nan p99_us=nan p999_us=nan max_us=nan errors=0"
expect memaslap memcaslap.txt "ops_per_s=46626 avg_us=nan p50_us=nan p90_us=nan p99_us=nan p999_us=nan max_us=nan errors=0"
expect mcload mcload.txt "ops_per_s=44460.0 avg_us=89.8 p50_us=78.3 p90_us=125.4 p99_us=201.7 p999_us=1302.5 max_us=7201.3 errors=0"
expect redis-benchmark redis-benchmark.txt "ops_per_s=26881.72 avg_us=186 p50_us=143 p90_us=nan p99_us=567 p999_us=nan max_us=13767 errors=0"
expect redis-benchmark redis-benchmark-q.txt "ops_per_s=8264.46 avg_us=nan p50_us=175 p90_us=nan p99_us=nan p999_us=nan max_us=nan errors=0"
expect redis-benchmark redis-benchmark-csv.txt "ops_per_s=2375.86 avg_us=41034 p50_us=39711 p90_us=nan p99_us=106047 p999_us=nan max_us=155903 errors=0"
got=$(ab --metric 'TPS: ([0-9]+)' --parse "$S/memcaslap.txt") || fail "--metric failed"
[ "$got" = "ops_per_s=46626 avg_us=nan p50_us=nan p90_us=nan p99_us=nan p999_us=nan max_us=nan errors=0" ] ||
	fail "--metric: $got"
# refused FILE MESSAGE ARGS...: exit 1 and one line saying MESSAGE.
refused() {
	local rc=0 file=$1 msg=$2
	shift 2
	ab "$@" --parse "$S/$file" >"$TMP/out" 2>"$TMP/err" || rc=$?
	[ $rc -eq 1 ] || fail "$* --parse $file: exit $rc, expected 1"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qF -- "$msg" "$TMP/err" ||
		fail "$* --parse $file: '$(cat "$TMP/err")' does not say '$msg'"
}
refused redis-benchmark-two.txt "ran several tests; expected one" --parser redis-benchmark
refused wrk.txt "no metric result in it (no line matches --metric 'TPS: ([0-9]+)'" --metric 'TPS: ([0-9]+)'
for p in wrk h2load ab memcaslap mcload redis-benchmark; do
	other=h2load.txt
	[ $p != h2load ] || other=wrk.txt
	refused "$other" "no $p result in it" --parser "$p"
done
echo ok
