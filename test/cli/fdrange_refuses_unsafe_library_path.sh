#!/bin/sh
# fdrange in a build tree or install prefix whose path holds a space or a
# colon: ld.so splits LD_PRELOAD at both, so such a path would preload
# nothing (the command running without the library while fdrange says
# nothing and exits with its status) and would load a relative fragment
# ("space/lib/libfdrange.so") from the current directory.  fdrange must
# refuse before starting anything: exit 126, one line naming the path.
# usage: fdrange_refuses_unsafe_library_path.sh FDRANGE LIBFDRANGE
set -u
exe=$1 lib=$2
fail=0 n=0
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT

for dir in "with space" "with:colon"; do
	n=$((n + 1))
	# fdrange finds the library at ../lib/libfdrange.so beside itself
	mkdir -p "$tmpd/$dir/tools" "$tmpd/$dir/lib"
	cp "$exe" "$tmpd/$dir/tools/fdrange"
	cp "$lib" "$tmpd/$dir/lib/libfdrange.so"
	rc=0
	(cd "$tmpd" && "$tmpd/$dir/tools/fdrange" -- touch "$tmpd/started") \
		>"$tmpd/out" 2>"$tmpd/err" || rc=$?
	lines=$(grep -c '' "$tmpd/err")
	if [ $rc = 126 ] && [ "$lines" = 1 ] && [ ! -e "$tmpd/started" ] &&
	   grep -qF "$tmpd/$dir/lib/libfdrange.so" "$tmpd/err" &&
	   grep -q "spaces and colons" "$tmpd/err"; then
		echo "ok: '$dir': exit 126, command not started: $(cat "$tmpd/err")"
	else
		echo "FAIL: '$dir': exit $rc (wanted 126), $lines lines on stderr," \
		     "command $( [ -e "$tmpd/started" ] && echo started || echo 'not started')"
		cat "$tmpd/err"
		fail=$((fail + 1))
	fi
	rm -f "$tmpd/started"
done
# and a safe path still works (the copy is not broken)
n=$((n + 1))
mkdir -p "$tmpd/plain/tools" "$tmpd/plain/lib"
cp "$exe" "$tmpd/plain/tools/fdrange"
cp "$lib" "$tmpd/plain/lib/libfdrange.so"
# shellcheck disable=SC2016  # expanded by the inner shell
out=$("$tmpd/plain/tools/fdrange" -- sh -c 'echo "$LD_PRELOAD"' 2>&1)
# (sanitizer builds set TEST_PRELOAD_FIRST to the runtime that must lead)
if [ "$out" = "${TEST_PRELOAD_FIRST:+$TEST_PRELOAD_FIRST:}$tmpd/plain/lib/libfdrange.so" ]; then echo "ok: a path without them preloads: $out"
else echo "FAIL: copy at a safe path printed '$out'"; fail=$((fail + 1)); fi
echo "$((n - fail)) passed, $fail failed"
[ $fail -eq 0 ]
