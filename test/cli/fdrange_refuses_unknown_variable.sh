#!/bin/sh
# An FDRANGE_* variable that names no setting (FDRANGE_SLOT=4,
# FDRANGE_ACEPT=roundrobin) is a typo that would silently run with the
# default: fdrange refuses it before starting anything, exit 2, one line
# naming the variable and the closest setting, or listing the known ones
# when none is close.  Known variables, other variables and the allowed
# non-option FDRANGE_BENCH_LIB still run.
# usage: fdrange_refuses_unknown_variable.sh FDRANGE
set -u
exe=$1
fail=0 n=0
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT

refused() { # VAR=VALUE EXPECTED-LINE
	n=$((n + 1))
	rc=0
	env "$1" "$exe" -- touch "$tmpd/started" >"$tmpd/out" 2>"$tmpd/err" || rc=$?
	if [ $rc = 2 ] && [ ! -e "$tmpd/started" ] && [ "$(cat "$tmpd/err")" = "$2" ]; then
		echo "ok: $1: $(cat "$tmpd/err")"
	else
		echo "FAIL: $1: exit $rc (wanted 2), command $( [ -e "$tmpd/started" ] && echo started ||
			echo 'not started'), stderr:"
		cat "$tmpd/err"
		echo "wanted: $2"
		fail=$((fail + 1))
	fi
	rm -f "$tmpd/started"
}
runs() { # VAR=VALUE...
	n=$((n + 1))
	rc=0
	env "$@" "$exe" -- touch "$tmpd/started" >"$tmpd/out" 2>"$tmpd/err" || rc=$?
	if [ $rc = 0 ] && [ -e "$tmpd/started" ] && [ ! -s "$tmpd/err" ]; then echo "ok: $* runs"
	else echo "FAIL: $*: exit $rc"; cat "$tmpd/err"; fail=$((fail + 1)); fi
	rm -f "$tmpd/started"
}

refused FDRANGE_SLOT=4 "fdrange: unknown variable FDRANGE_SLOT; did you mean FDRANGE_SLOTS?"
refused FDRANGE_ACEPT=roundrobin "fdrange: unknown variable FDRANGE_ACEPT; did you mean FDRANGE_ACCEPT?"
refused FDRANGE_slots=4 "fdrange: unknown variable FDRANGE_slots; did you mean FDRANGE_SLOTS?"
# Nothing close: the line lists the known names, each of which fdrange
# must then know (an empty value is refused, but as a bad value).
n=$((n + 1))
rc=0
FDRANGE_THREADS=4 "$exe" -- true >"$tmpd/out" 2>"$tmpd/err" || rc=$?
line=$(cat "$tmpd/err")
known=${line#"fdrange: unknown variable FDRANGE_THREADS; known: "}
if [ $rc != 2 ] || [ "$known" = "$line" ] || [ -z "$known" ]; then
	echo "FAIL: FDRANGE_THREADS=4: exit $rc, '$line'"; fail=$((fail + 1))
else
	bad=
	for v in $(echo "$known" | tr -d ','); do
		case $v in FDRANGE_[A-Z]*) ;; *) bad="$bad $v";; esac
		env "$v=" "$exe" -- true 2>&1 | grep -q "unknown variable" && bad="$bad $v"
	done
	if [ -z "$bad" ]; then echo "ok: FDRANGE_THREADS=4: $line"
	else echo "FAIL: listed as known but not:$bad"; fail=$((fail + 1)); fi
fi
grep -q "FDRANGE_SLOTS, FDRANGE_BASE" "$tmpd/err" ||
	echo "note: the known list changed: $known"
# the value is never echoed (it may be anything)
refused "FDRANGE_STAT=$tmpd/secret" "fdrange: unknown variable FDRANGE_STAT; did you mean FDRANGE_STATS?"
runs FDRANGE_SLOTS=2 FDRANGE_ACCEPT=roundrobin FDRANGE_STATS=none
runs FDRANGE_BENCH_LIB=/nonexistent.so MY_FDRANGE_SLOT=1 fdrange_slot=1
echo "$((n - fail)) passed, $fail failed"
[ $fail -eq 0 ]
