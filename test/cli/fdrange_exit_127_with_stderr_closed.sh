#!/bin/sh
# fdrange's exit status for a command it cannot run does not depend on
# whether its error line could be written: 127 for a missing command and
# 126 for one that is not executable, with stderr closed (2>&-) or full
# (/dev/full) too.  It used to read errno after printing, and printing to a
# closed stderr set errno to EBADF: 126 for a missing command.
# usage: fdrange_exit_127_with_stderr_closed.sh FDRANGE
set -u
exe=$1
fail=0 n=0
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
printf 'x' >"$tmpd/noexec"

check() { # DESCRIPTION WANTED GOT
	n=$((n + 1))
	if [ "$2" = "$3" ]; then echo "ok: $1: exit $3"
	else echo "FAIL: $1: exit $3, wanted $2"; fail=$((fail + 1)); fi
}

"$exe" -- "$tmpd/missing" 2>/dev/null; check "missing command" 127 $?
"$exe" -- "$tmpd/missing" 2>&-; check "missing command, stderr closed" 127 $?
"$exe" -- "$tmpd/missing" 2>/dev/full; check "missing command, stderr full" 127 $?
"$exe" -- no-such-command-fdrange-test 2>&-; check "missing command on PATH, stderr closed" 127 $?
"$exe" -- "$tmpd/noexec" 2>&-; check "not executable, stderr closed" 126 $?
"$exe" -- "$tmpd/noexec" 2>/dev/full; check "not executable, stderr full" 126 $?
echo "$((n - fail)) passed, $fail failed"
[ $fail -eq 0 ]
