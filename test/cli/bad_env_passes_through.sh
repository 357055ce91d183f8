#!/bin/sh
# A malformed or out-of-range FDRANGE_* value: exactly one line on stderr
# naming the variable, the value and what is accepted; the program runs
# normally with every call passed through (lowest-free fds).
# usage: bad_env_passes_through.sh PRELOAD PROGRAM
set -u
preload=$1 prog=$2
fail=0 n=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT

check() { # VAR VALUE
	n=$((n + 1))
	env "$1=$2" LD_PRELOAD="$preload" "$prog" placed >/dev/null 2>"$err"
	rc=$?
	lines=$(grep -c '' "$err")
	if [ $rc -ne 0 ] || [ "$lines" -ne 1 ] || ! grep -q "^libfdrange: $1=" "$err" ||
	   ! grep -q "accepted: " "$err" || ! grep -q "passing all calls through" "$err"; then
		echo "FAIL: $1='$2' (exit $rc, $lines lines):"; cat "$err"
		fail=$((fail + 1))
	else
		echo "ok: $1='$2': $(cat "$err")"
	fi
}

check FDRANGE_SLOTS abc
check FDRANGE_SLOTS 0
check FDRANGE_SLOTS -3
check FDRANGE_SLOTS 99999999999999999999
check FDRANGE_SLOTS 4abc
check FDRANGE_SLOTS ''
check FDRANGE_BASE 100
check FDRANGE_WIDTH 32
check FDRANGE_WIDTH 1x
check FDRANGE_ACCEPT roundrobbin
check FDRANGE_OPEN ''
check FDRANGE_DISABLE maybe
check FDRANGE_STATS ''
echo "$((n - fail)) passed, $fail failed"
[ $fail -eq 0 ]
