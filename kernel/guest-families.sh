#!/bin/busybox sh
# SPDX-License-Identifier: MIT
# kernel/guest-families.sh BIN LIB: the program families of test/families
# (do no harm: thread per connection with select(), short-lived threads, a
# double-forking pre-fork daemon, seccomp sandboxes), run in the boot-test
# guest on the fd-range kernel, plain and under the library (which takes
# its kernel-range path there).  The guest has busybox and no python, so
# this is the families' core assertions in sh, not their harness: the same
# exit status and output plain and placed, no fd at 1024 or above where
# plain has none, and the library's fd bound (highest fd at most
# max(1023, 2 x open + 64)) in samples taken under load.  BIN holds the
# programs of test/families built on the host (kernel/test.sh), echo_load
# the C client that stands in for echo_client.py.
# Prints "FDFAM <case> ok|FAIL ..." lines; exit status 1 if any failed.
BIN=$1 LIB=$2
T=/tmp/fam
fails=0
rm -rf "$T"; mkdir -p "$T"

fail() { echo "FDFAM $CASE FAIL $*"; fails=$((fails + 1)); }
ok() { echo "FDFAM $CASE ok $*"; }
# wait_file FILE TENTHS
wait_file() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt "$2" ]; do sleep 0.1; i=$((i + 1)); done
	[ -e "$1" ]
}
# launch MODE CMD...: PID of it, started with or without the library, its
# output (both streams) in $T/$CASE-MODE.log; the library's exit report goes
# there too (FDRANGE_STATS=stderr), to show which path it took.
launch() {
	m=$1; shift
	if [ "$m" = lib ]; then
		env FDRANGE_STATS=stderr LD_PRELOAD="$LIB" ${FAM_SETTING:-} "$@" >"$T/$CASE-$m.log" 2>&1 &
	else
		"$@" >"$T/$CASE-$m.log" 2>&1 &
	fi
	PID=$!
}
# sample PIDS...: the highest fd and the count over their tables, checked
# against the bound; prints "maxfd open".
sample() {
	mx=-1 n=0
	for p in "$@"; do
		for f in $(ls /proc/"$p"/fd 2>/dev/null); do
			n=$((n + 1))
			[ "$f" -gt "$mx" ] && mx=$f
		done
	done
	echo "$mx $n"
}
# bound MODE MAXFD OPEN [PROCS]: the bound of one process holding OPEN fds
# (OPEN is the sum over PROCS processes: the bound is checked on the worst)
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

# --- thread per connection, select(), 200 connections held --------------------
for soft in 20000 4096; do
	CASE=tpc-select-$soft
	for m in plain lib; do
		rm -f "$T/port" "$T/ready" "$T/go"
		ulimit -S -n "$soft"
		launch $m "$BIN/tpc_select" "$T/port"
		wait_file "$T/port" 100 || { fail "$m: no port file"; continue; }
		"$BIN/echo_load" "$(cat "$T/port")" 200 3 "$T/ready" "$T/go" >"$T/$CASE-$m.client" 2>&1 &
		cl=$!
		if wait_file "$T/ready" 200; then
			set -- $(sample $PID)
			eval "max_$m=$1"
			bound $m "$1" "$2"
		else
			fail "$m: the client never had all 200 connections echoed"
		fi
		touch "$T/go"
		wait $cl; crc=$?
		kill -TERM $PID; wait $PID; rc=$?
		ulimit -S -n 65536
		[ $crc = 0 ] || fail "$m: client exit $crc: $(cat "$T/$CASE-$m.client")"
		[ $rc = 0 ] || fail "$m: server exit $rc: $(grep tpc_select "$T/$CASE-$m.log")"
		grep -q "tpc_select: accepted=200 served=200 maxfd=[0-9]* errors=0" "$T/$CASE-$m.log" ||
			fail "$m: $(grep tpc_select "$T/$CASE-$m.log")"
	done
	eval "mp=\$max_plain ml=\$max_lib"
	[ "${ml:-0}" -lt 1024 ] || fail "lib: highest fd $ml under load (plain $mp)"
	path
	ok "highest fd under load plain $mp, lib $ml"
done

# --- 1000 short-lived threads, 50 alive ---------------------------------------
CASE=threads
for m in plain lib; do
	d=$T/threads-$m; mkdir -p "$d"
	launch $m "$BIN/threads_churn" "$d" 1000 50 40
	touch "$d/start"
	mx=-1
	while [ ! -e "$d/done" ] && kill -0 $PID 2>/dev/null; do
		set -- $(sample $PID)
		bound $m "$1" "$2"
		[ "$1" -gt $mx ] && mx=$1
		sleep 0.05
	done
	touch "$d/go"
	wait $PID; rc=$?
	[ $rc = 0 ] || fail "$m: exit $rc: $(grep threads_churn "$T/$CASE-$m.log")"
	eval "max_$m=$mx"
done
[ "$max_lib" -lt 1024 ] || fail "lib: highest fd $max_lib (plain $max_plain)"
path
ok "highest fd sampled plain $max_plain, lib $max_lib"

# --- double fork, pre-fork workers (threshold 0: the threads' fds placed) ------
CASE=prefork
for m in plain lib; do
	d=$T/prefork-$m; mkdir -p "$d"
	FAM_SETTING=FDRANGE_THRESHOLD=0
	launch $m "$BIN/prefork" "$d" 3 4
	FAM_SETTING=
	wait $PID; rc=$?
	[ $rc = 0 ] || { fail "$m: prefork exit $rc"; continue; }
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
		wait_file "$d/done-$w" 100 && grep -q '^ok$' "$d/done-$w" ||
			fail "$m: worker $w: $(cat "$d/done-$w" 2>/dev/null)"
	done
done
ok "3 workers x 4 threads, plain and placed"

# --- seccomp sandboxes --------------------------------------------------------
for v in seccomp prctl exec; do
	CASE=seccomp-$v
	for m in plain lib; do
		d=$T/sc-$v-$m; mkdir -p "$d"
		launch $m "$BIN/seccomp_fcntl" "$v" "$d"
		wait_file "$d/held" 100
		[ -e "$d/held" ] && set -- $(sample $PID) && bound $m "$1" "$2"
		touch "$d/go"
		wait $PID; eval "rc_$m=$?"
	done
	eval "p=\$rc_plain l=\$rc_lib"
	[ "$p" = 77 ] && { ok "skipped: no filter for this architecture"; continue; }
	[ "$p" = 0 ] || fail "plain exit $p"
	[ "$l" = "$p" ] || fail "exit $p plain, $l under the library"
	grep -q "^seccomp_fcntl .*: ok fds=" "$T/$CASE-lib.log" || fail "lib: $(tail -n 2 "$T/$CASE-lib.log")"
	[ "$l" = "$p" ] && ok "exit $p plain and placed"
done

echo "FDFAM END failures=$fails"
[ $fails = 0 ]
