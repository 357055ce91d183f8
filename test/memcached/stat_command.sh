#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `fdrange stat PID` on a live memcached with and without the library, and
# on bad PIDs; `fdrange -- stat` still runs a program named stat.
. "$(dirname "$0")/lib.sh"

# With the library: the stats block is found and read.
start_mc placed -t 4
hold "$MC_PORT" 32
"$FDRANGE" stat --color=never "$MC_PID" >"$TMP/with.txt" || fail "stat with the library: exit $?"
grep -q "^libfdrange .*stats block v3" "$TMP/with.txt" || fail "no stats block read"
grep -q "^map, one character per 8-fd line" "$TMP/with.txt" || fail "no map"
[ "$(summary_field "$TMP/with.txt" library)" = yes ] || fail "summary: library"
# Colour on request, none when asked not to.
"$FDRANGE" stat --color=always "$MC_PID" | grep -q $'\033\\[' || fail "--color=always has no colour"
if "$FDRANGE" stat --color=never "$MC_PID" | grep -q $'\033'; then fail "--color=never has colour"; fi
release
stop_mc

# Without the library: /proc alone, grouped by epoll instance.
start_mc plain -t 4
hold "$MC_PORT" 32
"$FDRANGE" stat --color=never "$MC_PID" >"$TMP/without.txt" || fail "stat without the library: exit $?"
sed -n '1,/^shared/p' "$TMP/without.txt"
grep -q "libfdrange is not loaded" "$TMP/without.txt" || fail "does not say the library is absent"
grep -q "serving thread of an fd cannot be known" "$TMP/without.txt" || fail "does not say what is unknown"
[ "$(summary_field "$TMP/without.txt" library)" = no ] || fail "summary: library"
groups=$(summary_field "$TMP/without.txt" groups)
[ "$groups" -ge 5 ] || fail "$groups epoll instances, expected the main thread's and 4 workers'"
[ "$(grep -c 'epoll fd [0-9]*  *[0-9]* fds\{0,1\} ' "$TMP/without.txt")" -ge 5 ] || fail "epoll instances not listed"
release
stop_mc

# Bad PIDs: clear message, non-zero exit.
set +e
"$FDRANGE" stat 999999999 >"$TMP/out" 2>"$TMP/err"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "missing pid: exit $rc, expected 1"
grep -q "no process with pid 999999999" "$TMP/err" || fail "missing pid: message '$(cat "$TMP/err")'"
[ ! -s "$TMP/out" ] || fail "missing pid: printed a report"
for bad in abc 12x -5 0 "" 99999999999999999999; do
	set +e
	"$FDRANGE" stat "$bad" >/dev/null 2>"$TMP/err"; rc=$?
	set -e
	[ "$rc" -eq 2 ] || fail "pid '$bad': exit $rc, expected 2"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "pid '$bad': not one line: $(cat "$TMP/err")"
done
set +e
"$FDRANGE" stat >/dev/null 2>&1; rc1=$?
"$FDRANGE" stat --bogus 1 >/dev/null 2>&1; rc2=$?
"$FDRANGE" stat --color=pink 1 >/dev/null 2>&1; rc3=$?
set -e
[ "$rc1" -eq 2 ] && [ "$rc2" -eq 2 ] && [ "$rc3" -eq 2 ] || fail "usage errors: exits $rc1 $rc2 $rc3"
"$FDRANGE" stat --help | grep -q "^Usage: fdrange stat" || fail "stat --help"
"$FDRANGE" --help | grep -q "fdrange stat" || fail "--help does not mention stat"

# After "--" (or an option), "stat" is the command to run.
LD_PRELOAD=$RT_PRELOAD "$FDRANGE" -- stat --version >"$TMP/coreutils" 2>&1 ||
	{ cat "$TMP/coreutils"; fail "fdrange -- stat --version failed"; }
grep -q "coreutils" "$TMP/coreutils" || fail "fdrange -- stat did not run coreutils' stat"
LD_PRELOAD=$RT_PRELOAD "$FDRANGE" --slots 2 stat -c %n / >"$TMP/c2" 2>&1 ||
	{ cat "$TMP/c2"; fail "fdrange --slots 2 stat failed"; }
[ "$(cat "$TMP/c2")" = / ] || fail "fdrange --slots 2 stat ran something else"
echo ok
