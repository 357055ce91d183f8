#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fdrange profile's bad input, each with one line naming what was wrong and
# its exit status: usage 2, nothing profiled 1, not allowed 3, a process
# that exits while sampled 4 (its result printed, marked PARTIAL).  No
# process is left behind.
. "$(dirname "$0")/lib.sh"

# expect RC PATTERN ARGS...: exit RC, one line on stderr matching PATTERN.
expect() {
	local rc=$1 pat=$2 got=0
	shift 2
	"$FDRANGE" profile "$@" >"$TMP/out" 2>"$TMP/err" || got=$?
	[ "$got" -eq "$rc" ] || fail "profile $*: exit $got, expected $rc ($(head -n 2 "$TMP/err"))"
	grep -q -- "$pat" "$TMP/err" || fail "profile $*: stderr '$(cat "$TMP/err")' lacks '$pat'"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "profile $*: more than one line: $(cat "$TMP/err")"
}

expect 2 "no PID or command given"
expect 2 "unknown option '--bogus'" --bogus 1
expect 2 "'12x' is not a process id" 12x
expect 2 "'0' is not a process id" 0
expect 2 "--seconds: 'abc' is not seconds, a number from 0.1 to 3600" --seconds abc 1
expect 2 "--seconds: '0' is not seconds, a number" --seconds 0 1
expect 2 "--seconds: the value is missing" --seconds
expect 2 "--hz: '5' is not an integer from 10 to 20000" --hz 5 1
expect 2 "--json takes no value" --json=yes 1
expect 2 "--perf-data: cannot read '$TMP/none'" --perf-data "$TMP/none"
expect 2 "--output: cannot write" --output /nonexistent/dir/x 1
expect 2 "--perf-data FILE takes no PID" --perf-data /dev/null 1
# --seconds with a command, which is sampled as long as it runs: refused,
# the command not started.
expect 2 "--seconds is for PIDs: with -- COMMAND the sampling lasts as long as the command runs" \
	--seconds 1 -- touch "$TMP/ran"
[ ! -e "$TMP/ran" ] || fail "--seconds with -- COMMAND: the command ran"

# A pid that does not exist: the highest possible one, never in use.
max=$(cat /proc/sys/kernel/pid_max)
expect 1 "no process $max" "$max"
# Every PID gone: one line naming them all, exit 1.
true &
dead=$!
wait "$dead"
expect 1 "no process $max, $dead\$" "$max" "$dead"

# A command that does not exist: 127, as a shell says.
expect 127 "no-such-command-xyz: No such file or directory" -- no-such-command-xyz

can_profile
# A process that exits while sampled: exit 4, its result kept and marked.
"$FD_CHURN" 2 1 >/dev/null &
churn=$!
PIDS="$churn"
got=0
"$FDRANGE" profile --seconds 5 "$churn" >"$TMP/out" 2>"$TMP/err" || got=$?
[ "$got" -eq 4 ] || fail "a pid exiting while sampled: exit $got, expected 4 ($(cat "$TMP/err"))"
grep -q "PARTIAL: the process exited after" "$TMP/out" || fail "no PARTIAL mark: $(cat "$TMP/out")"
grep -q "^fd paths .* of CPU" "$TMP/out" || fail "the partial result lacks its last line: $(cat "$TMP/out")"
# One PID gone among others: skipped with one line naming it, the others
# profiled, the result marked PARTIAL (exit 4).
"$FD_CHURN" 2 30 >/dev/null &
churn=$!
PIDS="$churn"
got=0
"$FDRANGE" profile --seconds 1 "$max" "$churn" >"$TMP/out" 2>"$TMP/err" || got=$?
[ "$got" -eq 4 ] || fail "a gone pid among others: exit $got, expected 4 ($(cat "$TMP/err"))"
[ "$(cat "$TMP/err")" = "fdrange profile: no process $max: skipped, the other PIDs profiled (PARTIAL)" ] ||
	fail "a gone pid among others: stderr '$(cat "$TMP/err")'"
grep -q "^fdrange profile: pid $max: PARTIAL: no such process" "$TMP/out" || fail "the gone pid is not marked: $(cat "$TMP/out")"
grep -q "^fdrange profile: pid $churn (fd_churn), " "$TMP/out" || fail "the live pid was not profiled: $(cat "$TMP/out")"
got=0
"$FDRANGE" profile --json --seconds 1 "$churn" "$max" >"$TMP/out.json" 2>"$TMP/err" || got=$?
[ "$got" -eq 4 ] || fail "--json, a gone pid among others: exit $got, expected 4"
[ "$(json "$TMP/out.json" '[(p["pid"], p["skipped"], p["partial"]) for p in d["processes"]]')" = \
	"[($churn, False, False), ($max, True, True)]" ] || fail "JSON of a gone pid among others: $(cat "$TMP/out.json")"
[ "$(json "$TMP/out.json" 'd["processes"][1]["advice"]')" = "no such process when the sampling began: not sampled" ] ||
	fail "JSON advice of a gone pid: $(cat "$TMP/out.json")"
kill "$churn"
wait "$churn" 2>/dev/null || true
# A gone pid beside one that runs nothing: no sample at all is a failure
# (exit 1), not a partial profile.
sleep 30 &
idle=$!
# Idle only once it has exec'd sleep and sleeps: a sample of its start-up
# (the fork, the exec) made this flaky (a clean-clone run, exit 4).
for _ in $(seq 50); do
	[ "$(cat "/proc/$idle/comm" 2>/dev/null)" = sleep ] &&
		[ "$(awk '{ print $3 }' "/proc/$idle/stat" 2>/dev/null)" = S ] && break
	sleep 0.1
done
got=0
"$FDRANGE" profile --seconds 0.5 "$max" "$idle" >"$TMP/out" 2>"$TMP/err" || got=$?
kill "$idle"
wait "$idle" 2>/dev/null || true
[ "$got" -eq 1 ] || fail "a gone pid beside an idle one: exit $got, expected 1 ($(cat "$TMP/err"))"
"$FD_CHURN" 2 1 >/dev/null &
churn=$!
PIDS="$churn"
got=0
"$FDRANGE" profile --json --seconds 5 "$churn" >"$TMP/out.json" 2>"$TMP/err" || got=$?
[ "$got" -eq 4 ] || fail "--json, a pid exiting while sampled: exit $got, expected 4"
[ "$(json "$TMP/out.json" 'd["processes"][0]["partial"]')" = True ] || fail "JSON: partial is not true"

# Permission: an unprivileged user, where perf_event_paranoid keeps it
# from kernel stacks (Debian's default, 2 or more).
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" -eq 0 ] && [ "$paranoid" -ge 2 ] && id nobody >/dev/null 2>&1 &&
	command -v setpriv >/dev/null; then
	cp "$FDRANGE" "$TMP/fdrange"
	chmod 755 "$TMP" "$TMP/fdrange"
	setpriv --reuid=nobody --regid=nogroup --clear-groups sleep 10 &
	PIDS="$PIDS $!"
	sleep 0.2
	got=0
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$TMP/fdrange" profile --seconds 1 "$!" >"$TMP/out" 2>"$TMP/err" || got=$?
	[ "$got" -eq 3 ] || fail "as nobody: exit $got, expected 3 ($(cat "$TMP/err"))"
	grep -Eq "kptr_restrict|perf_event_paranoid is $paranoid" "$TMP/err" ||
		fail "as nobody: '$(cat "$TMP/err")' names neither setting"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "as nobody: more than one line"
	note "as nobody: $(cat "$TMP/err")"
else
	note "permission case not run: needs root, perf_event_paranoid >= 2 (is $paranoid), nobody, setpriv"
fi
echo "ok"
