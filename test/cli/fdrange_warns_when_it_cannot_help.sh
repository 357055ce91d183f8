#!/bin/sh
# SPDX-License-Identifier: MIT
# fdrange -- PROGRAM says in one line on stderr when libfdrange cannot help
# PROGRAM, and runs it all the same (its exit status, 3, comes back): a
# statically linked program (no PT_INTERP: nothing is preloaded) and a Go
# program (a .go.buildinfo section, or the Go build id note, also with the
# section headers stripped).  A dynamic program, a script and a program
# found through PATH get no warning unless they are such a program.
# usage: fdrange_warns_when_it_cannot_help.sh FDRANGE PROG_EXIT3 PROG_GO_BUILDINFO PROG_GO_NOTE [PROG_STATIC]
set -u
exe=$1 dyn=$2 gobi=$3 gonote=$4 static=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run WHAT PATTERN PROGRAM...: exit 3, and stderr one line matching
# PATTERN (or empty for "").
run() {
	what=$1 want=$2
	shift 2
	rc=0
	"$exe" -- "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" != 3 ]; then
		echo "FAIL: $what: exit $rc, expected 3 (the program's own)"; cat "$tmp/err"; fail=1
	elif [ -z "$want" ] && [ -s "$tmp/err" ]; then
		echo "FAIL: $what: a warning: $(cat "$tmp/err")"; fail=1
	elif [ -n "$want" ] && { [ "$(grep -c '' "$tmp/err")" != 1 ] || ! grep -q "^fdrange: warning: $want" "$tmp/err"; }; then
		echo "FAIL: $what: stderr '$(cat "$tmp/err")', expected one line '$want'"; fail=1
	else
		echo "ok: $what${want:+: $(cat "$tmp/err")}"
	fi
}

run "dynamic program" "" "$dyn"
printf '#!/bin/sh\nexit 3\n' >"$tmp/script"
chmod +x "$tmp/script"
run "script" "" "$tmp/script"
run "Go program (.go.buildinfo)" ".* is a Go program: its runtime makes its own syscalls" "$gobi"
run "Go program (build id note)" ".* is a Go program" "$gonote"
# The note alone, as strip --strip-section-headers leaves it: the
# section header table's offset, count and name index zeroed.
if command -v python3 >/dev/null; then
	python3 - "$gonote" "$tmp/gonote-nosh" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
if b[4] == 2:   # ELFCLASS64: e_shoff at 40, e_shnum at 60, e_shstrndx at 62
    b[40:48] = bytes(8); b[60:64] = bytes(4)
else:           # ELFCLASS32: e_shoff at 32, e_shnum at 48, e_shstrndx at 50
    b[32:36] = bytes(4); b[48:52] = bytes(4)
open(sys.argv[2], "wb").write(b)
PY
	chmod +x "$tmp/gonote-nosh"
	run "Go program (note only, no section headers)" ".* is a Go program" "$tmp/gonote-nosh"
fi
if [ -n "$static" ]; then
	run "static program" ".* is statically linked: no dynamic loader runs for it" "$static"
	# Found through PATH as execvp finds it, by its bare name.
	mkdir "$tmp/bin" && cp "$static" "$tmp/bin/staticprog"
	oldpath=$PATH
	PATH=$tmp/bin:$PATH
	run "static program found in PATH" "staticprog is statically linked" staticprog
	PATH=$oldpath
else
	echo "note: no static linking here: the static case is not run"
fi
[ $fail = 0 ]
