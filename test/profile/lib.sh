# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: MIT
# Shared by the fdrange profile tests: argv is FDRANGE FD_CHURN.  Everything
# a test starts is stopped on exit.
set -eu
FDRANGE=$1 FD_CHURN=$2
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fdrange-profile.XXXXXX")
PIDS=""
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $PIDS; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Sampling kernel stacks needs root or CAP_PERFMON, or paranoid <= 1.
can_profile() {
	local rc=0
	"$FDRANGE" profile --seconds 0.2 $$ >/dev/null 2>"$TMP/can.err" || rc=$?
	[ $rc -ne 3 ] || { echo "not allowed to sample here: $(cat "$TMP/can.err"): skipping"; exit 77; }
	# A kernel or VM without perf events: nothing this machine can test.
	if [ $rc -eq 1 ] && grep -q 'offers no perf events' "$TMP/can.err"; then
		echo "no perf events here: $(cat "$TMP/can.err"): skipping"
		exit 77
	fi
}

# free_port: a port no socket here has.
. "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"

# json FILE EXPR: a value of fdrange profile's JSON, as Python prints it.
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
