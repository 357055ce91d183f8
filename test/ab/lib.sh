# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: MIT
# Shared by the tests of fdrange ab (bench/ab-server): argv is FDRANGE
# SRCROOT; the fdrange of a build tree runs the build's runner and helpers.
# Everything a test starts is stopped on exit; the runner's own servers and
# loads are looked for by port afterwards (left_behind).
set -eu
FDRANGE=$1 SRCROOT=$2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fdrange-abt.XXXXXX")
chmod 755 "$TMP"
PIDS=""
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# needs COMMAND...: skip the test (77) unless each is installed.
needs() {
	local c
	for c; do command -v "$c" >/dev/null || { echo "$c not installed: skipping"; exit 77; }; done
}
# Sanitizer builds (AB_PRELOAD, the runtime): it goes first in LD_PRELOAD
# for what the runner starts; its leak reports on uninstrumented tools are
# not ours, nor is mawk's memcmp past the end of a string it compares
# (strict_memcmp=0 checks only the bytes memcmp needs; the default flags
# mawk's parsers at random).  Only for the runner: the test's own tools
# run without it.
AB_ENV=(env -u LD_PRELOAD)
[ -z "${AB_PRELOAD:-}" ] || AB_ENV=(env "LD_PRELOAD=$AB_PRELOAD" ASAN_OPTIONS=detect_leaks=0:strict_memcmp=0)
ab() { "${AB_ENV[@]}" "$FDRANGE" ab "$@"; }
# left_behind DIR: processes of the run in DIR still there, found by the
# ports in its server command lines.
left_behind() {
	local f p
	for f in "$1"/server-*.cmd; do
		[ -e "$f" ] || continue
		for p in $(grep -o 'port [0-9]*\|:[0-9]\{4,5\}\b\|conf\.[0-9]*\|-p [0-9]*\|--port [0-9]*' "$f" | grep -o '[0-9]*$'); do
			pgrep -f -- "[^0-9]$p([^0-9]|\$)" || true
		done
	done
}
# verdict_of FILE: the last line, which must be the verdict.
verdict_of() {
	local v
	v=$(tail -n 1 "$1")
	case $v in "verdict: "*) echo "$v" ;; *) fail "the last line is not a verdict: $v" ;; esac
}
