#!/bin/busybox sh
# SPDX-License-Identifier: MIT
# kernel/guest-families.sh BIN LIB: the program families of test/families
# (do no harm: thread per connection with select(), short-lived threads, a
# double-forking pre-fork daemon, seccomp sandboxes), run in the boot-test
# guest on the fd-range kernel, plain and under the library (which takes
# its kernel-range path there).  The guest has busybox and no python, so
# this is the families' core assertions in sh, not their harness: the same
# exit status plain and placed, the programs' own success lines, no fd at
# 1024 or above under the library where plain has none, and the library's
# fd bound (highest fd at most max(1023, 2 x open + 64)) in samples taken
# under load.  Where a case's fds would stay below the library's default
# threshold (threads, seccomp, pre-fork), the library runs with
# FDRANGE_THRESHOLD=0 so that it places them, through the kernel range.
# BIN holds the programs of test/families built on the host (kernel/test.sh),
# echo_load the C client that stands in for echo_client.py.
# Prints "FDFAM <case> ok|FAIL ..." lines; exit status 1 if any failed.
BIN=$1 LIB=$2
T=/tmp/fam
soft0=$(ulimit -S -n)
fails=0
rm -rf "$T"; mkdir -p "$T"

fail() { echo "FDFAM $CASE FAIL $*"; fails=$((fails + 1)); }
# begin CASE / done TEXT: "ok TEXT" only if the case had no FAIL
begin() { CASE=$1; case_fails=$fails; }
done_case() { [ $fails = $case_fails ] && echo "FDFAM $CASE ok $*"; }
# wait_file FILE TENTHS: the file exists; wait_full: and is not empty
# (written with fopen and fprintf, it can exist empty for a moment)
wait_test() {
	i=0
	while ! [ $1 "$2" ] && [ $i -lt "$3" ]; do sleep 0.1; i=$((i + 1)); done
	[ $1 "$2" ]
}
wait_file() { wait_test -e "$1" "$2"; }
wait_full() { wait_test -s "$1" "$2"; }
# launch MODE CMD...: PID of it, started with or without the library (and
# $SETTING), its output (both streams) in $T/$CASE-MODE.log; the library's
# exit report goes there too (FDRANGE_STATS=stderr), to show its path.
launch() {
	m=$1; shift
	if [ "$m" = lib ]; then
		env FDRANGE_STATS=stderr LD_PRELOAD="$LIB" $SETTING "$@" >"$T/$CASE-$m.log" 2>&1 &
	else
		"$@" >"$T/$CASE-$m.log" 2>&1 &
	fi
	PID=$!
}
# sample PID: "highest-fd open-count" of its table
sample() {
	mx=-1 n=0
	for f in $(ls /proc/"$1"/fd 2>/dev/null); do
		n=$((n + 1))
		[ "$f" -gt "$mx" ] && mx=$f
	done
	echo "$mx $n"
}
# bound MODE MAXFD OPEN
bound() {
	b=$((2 * $3 + 64))
	[ $b -lt 1023 ] && b=1023
	[ "$2" -le $b ] || fail "$1: highest fd $2 above the bound $b ($3 open)"
}
# path: the lib run took the kernel-range path (its exit report says so)
path() {
	grep -q "placement path: kernel range" "$T/$CASE-lib.log" ||
		fail "lib: no 'placement path: kernel range' in its exit report"
}

# --- thread per connection, select(), 200 connections held ------------------
# Each connection holds its socket and a /dev/null: 400 fds and more.
SETTING=""
for soft in 20000 4096; do
	begin tpc-select-$soft
	max_plain=-1 max_lib=-1
	for m in plain lib; do
		rm -f "$T/port" "$T/ready" "$T/go"
		ulimit -S -n "$soft"
		launch $m "$BIN/tpc_select" "$T/port"
		ulimit -S -n "$soft0"
		if ! wait_full "$T/port" 100; then
			fail "$m: no port file"
			kill -KILL $PID; wait $PID
			continue
		fi
		"$BIN/echo_load" "$(cat "$T/port")" 200 3 "$T/ready" "$T/go" >"$T/$CASE-$m.client" 2>&1 &
		cl=$!
		if wait_file "$T/ready" 200; then
			set -- $(sample $PID)
			eval "max_$m=$1"
			[ "$2" -ge 400 ] || fail "$m: $2 fds open under load, expected 400 or more"
			bound $m "$1" "$2"
		else
			fail "$m: the client never had all 200 connections echoed"
		fi
		touch "$T/go"
		wait $cl; crc=$?
		kill -TERM $PID; wait $PID; rc=$?
		[ $crc = 0 ] || fail "$m: client exit $crc: $(cat "$T/$CASE-$m.client")"
		[ $rc = 0 ] || fail "$m: server exit $rc: $(grep tpc_select "$T/$CASE-$m.log")"
		grep -q "tpc_select: accepted=200 served=200 maxfd=[0-9]* errors=0" "$T/$CASE-$m.log" ||
			fail "$m: $(grep tpc_select "$T/$CASE-$m.log")"
	done
	[ "$max_lib" -lt 1024 ] || fail "lib: highest fd $max_lib under load (plain $max_plain)"
	path
	done_case "highest fd under load plain $max_plain, lib $max_lib"
done

# --- 1000 short-lived threads, 50 alive -------------------------------------
SETTING=FDRANGE_THRESHOLD=0
begin threads
for m in plain lib; do
	d=$T/threads-$m; mkdir -p "$d"
	launch $m "$BIN/threads_churn" "$d" 1000 50 40
	touch "$d/start"
	mx=-1 samples=0
	while [ ! -e "$d/done" ] && kill -0 $PID 2>/dev/null; do
		set -- $(sample $PID)
		bound $m "$1" "$2"
		[ "$1" -gt $mx ] && mx=$1
		samples=$((samples + 1))
		sleep 0.05
	done
	[ $samples -ge 3 ] || fail "$m: $samples samples while the threads ran, expected 3 or more"
	touch "$d/go"
	wait $PID; rc=$?
	[ $rc = 0 ] || fail "$m: exit $rc: $(grep threads_churn "$T/$CASE-$m.log")"
	eval "max_$m=$mx"
done
[ "$max_lib" -lt 1024 ] || fail "lib: highest fd $max_lib (plain $max_plain)"
path
done_case "highest fd sampled plain $max_plain, lib $max_lib"

# --- double fork, pre-fork workers --------------------------------------------
# (The workers' exit reports race their done files: no path check here.)
begin prefork
for m in plain lib; do
	d=$T/prefork-$m; mkdir -p "$d"
	launch $m "$BIN/prefork" "$d" 3 4
	wait $PID; rc=$?
	[ $rc = 0 ] && [ -s "$d/workers" ] || { fail "$m: prefork exit $rc, workers file empty or absent"; continue; }
	for w in $(cat "$d/workers"); do
		wait_file "$d/ready-$w" 100 || fail "$m: worker $w never ready"
		[ "$(wc -l < "$d/fds-$w")" = 4 ] || fail "$m: worker $w: $(wc -l < "$d/fds-$w") threads"
		if [ $m = lib ]; then
			low=$(awk '{ for (i = 4; i <= NF; i++) if ($i < 64) printf " %s", $i }' "$d/fds-$w")
			[ -z "$low" ] || fail "lib: worker $w: its threads' fds$low not placed"
		fi
	done
	touch "$d/stop"
	for w in $(cat "$d/workers"); do
		wait_full "$d/done-$w" 100 && grep -q '^ok$' "$d/done-$w" ||
			fail "$m: worker $w: $(cat "$d/done-$w" 2>/dev/null)"
	done
done
done_case "3 workers x 4 threads, plain and placed"

# --- seccomp sandboxes --------------------------------------------------------
for v in seccomp prctl exec; do
	begin seccomp-$v
	for m in plain lib; do
		d=$T/sc-$v-$m; mkdir -p "$d"
		launch $m "$BIN/seccomp_fcntl" "$v" "$d"
		if wait_file "$d/held" 100; then
			set -- $(sample $PID)
			bound $m "$1" "$2"
		else
			fail "$m: never held its fds"
		fi
		touch "$d/go"
		wait $PID; eval "rc_$m=$?"
	done
	[ "$rc_plain" = 0 ] || fail "plain exit $rc_plain"
	[ "$rc_lib" = "$rc_plain" ] || fail "exit $rc_plain plain, $rc_lib under the library"
	grep -q "^seccomp_fcntl .*: ok fds=" "$T/$CASE-lib.log" || fail "lib: $(tail -n 2 "$T/$CASE-lib.log")"
	done_case "exit $rc_plain plain and placed"
done

echo "FDFAM END failures=$fails"
[ $fails = 0 ]
