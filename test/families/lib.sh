# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: MIT
# Shared by the program-family cases (test/families/*.sh): run a program
# plain and under libfdrange with NO FDRANGE_* variable, sample its fd
# table while it works (fdwatch.py), and stop everything the case started
# on exit.  Usage from a case: . lib.sh; its argv is LIB FDRANGE BIN [ARGS].
# LIB: absolute path of libfdrange.so; FDRANGE: the fdrange command; BIN:
# the folder run-all.sh compiled the C programs of this folder into.
# Exit status: 0 ok, 1 failed, 77 skipped.  A case prints one line
#   family=NAME plain_max=.. lib_max=.. open=.. bound=.. ... ok|FAIL
# per run pair (fdwatch.py verdict), which run-all.sh puts in its table.
set -eu

LIB=$1 FDRANGE=$2 BIN=$3
shift 3
case $LIB in /*) ;; *) echo "LIB must be an absolute path: $LIB" >&2; exit 2 ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
# Debian's interpreter (a python3 earlier in PATH may be a pyenv shim, a
# shell script): the http.server case runs it, the helpers use it too.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fdrange-fam.XXXXXX")
chmod 755 "$TMP"
GROUPS_STARTED=""
WATCH_PID=""
FAILED=0

fail() { echo "FAIL: $*" >&2; exit 1; }
# soft_fail: a failed assertion that lets the case finish its other runs
# (the case exits 1 at the end, see finish).
soft_fail() { echo "FAIL: $*" >&2; FAILED=1; PAIR_FAILED=1; }
PAIR_FAILED=0
finish() { [ "$FAILED" = 0 ] || exit 1; exit 0; }
note() { echo "# $*"; }
skip() { echo "skipped: $*"; exit 77; }
need() {
	local c
	for c in "$@"; do command -v "$c" >/dev/null || skip "$c not installed"; done
}

# Every program runs in a session of its own (setsid): stopping the group
# also stops what it forked (apache's child, the pre-fork workers).
stop_group() {
	local pg=$1 sig=${2:-TERM}
	kill -"$sig" -- "-$pg" 2>/dev/null || return 0
	for _ in $(seq 50); do kill -0 -- "-$pg" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL -- "-$pg" 2>/dev/null || true
	for _ in $(seq 20); do kill -0 -- "-$pg" 2>/dev/null || return 0; sleep 0.1; done
}
cleanup() {
	local pg
	trap '' INT TERM
	[ -z "$WATCH_PID" ] || kill "$WATCH_PID" 2>/dev/null || true
	for pg in $GROUPS_STARTED; do stop_group "$pg"; done
	for pg in $(jobs -p); do
		# shellcheck disable=SC2046
		kill $(cat /proc/"$pg"/task/*/children 2>/dev/null) "$pg" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_port: a port no socket here has.
. "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"

# envcmd MODE: the env(1) command line of a run: no LD_PRELOAD and no
# FDRANGE_* variable; MODE lib adds LD_PRELOAD=$LIB, and FAM_LIB_SETTING
# (one NAME=VALUE) where a case sets one.
envcmd() {
	local v
	ENVCMD=(env -u LD_PRELOAD)
	for v in $(compgen -v FDRANGE_ || true); do ENVCMD+=(-u "$v"); done
	if [ "$1" = lib ]; then
		ENVCMD+=("LD_PRELOAD=$LIB")
		[ -z "${FAM_LIB_SETTING:-}" ] || ENVCMD+=("$FAM_LIB_SETTING")
	fi
	return 0
}

# launch NAME MODE CMD...: start CMD in the background in a session of its
# own, with every fd above 2 closed, stdin /dev/null and stdout/stderr in
# $TMP/NAME.log.  Sets PID (the program's pid, also its process group).
launch() {
	local name=$1 mode=$2
	shift 2
	envcmd "$mode"
	# One line: bash names the command when a job dies of a signal.
	# shellcheck disable=SC2016
	setsid "${ENVCMD[@]}" bash -c 'for f in /proc/self/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"; done; exec "$@"' \
		prog "$@" </dev/null >"$TMP/$name.log" 2>&1 &
	PID=$!
	GROUPS_STARTED="$GROUPS_STARTED $PID"
	[ -z "${FAM_GROUPS_FILE:-}" ] || echo "$PID" >>"$FAM_GROUPS_FILE"
}

listening() { [ "$(ss -Hltn "( sport = :$1 )" | wc -l)" -gt 0 ]; }
# wait_listen PORT PID SECS NAME: fail if PID dies or PORT does not listen in time.
wait_listen() {
	local port=$1 pid=$2 secs=$3 what=$4 rc
	for _ in $(seq $((secs * 10))); do
		if ! kill -0 "$pid" 2>/dev/null; then
			rc=0; wait "$pid" 2>/dev/null || rc=$?
			tail -n 8 "$TMP/$what.log" >&2 || true
			fail "$what died at start-up (exit $rc)"
		fi
		listening "$port" && return 0
		sleep 0.1
	done
	tail -n 8 "$TMP/$what.log" >&2 || true
	fail "$what did not listen on 127.0.0.1:$port within $secs s"
}
# wait_file FILE SECS WHAT: wait until FILE exists.
wait_file() {
	for _ in $(seq $(($2 * 20))); do [ -e "$1" ] && return 0; sleep 0.05; done
	fail "$3: $1 did not appear within $2 s"
}
# alive PID NAME: fail if the program is gone.
alive() {
	local rc=0
	kill -0 "$1" 2>/dev/null && return 0
	wait "$1" 2>/dev/null || rc=$?
	tail -n 8 "$TMP/$2.log" >&2 || true
	fail "$2 died during the load (exit $rc)"
}

# watch_start OUT [fdwatch options] PID...: sample in the background until
# watch_stop (or until the processes are gone); waits for the first sample.
watch_start() {
	local out=$1
	shift
	rm -f "$out" "$out.ready"
	"$PY" "$HERE/fdwatch.py" watch "$out" "$@" >"$out.ready" &
	WATCH_PID=$!
	for _ in $(seq 100); do
		grep -q ready "$out.ready" 2>/dev/null && return 0
		kill -0 "$WATCH_PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "fdwatch did not start"
}
watch_stop() {
	[ -n "$WATCH_PID" ] || return 0
	kill -TERM "$WATCH_PID" 2>/dev/null || true
	wait "$WATCH_PID" 2>/dev/null || true
	WATCH_PID=""
}
# verdict FAMILY PLAIN.json LIB.json [fdwatch verdict options]: the case's
# line; a failed bound is a soft failure (the case goes on).  The line says
# FAIL too when another assertion of this run pair failed (soft_fail).
verdict() {
	local more=()
	[ "$PAIR_FAILED" = 0 ] || more=(--other-failed)
	"$PY" "$HERE/fdwatch.py" verdict "$@" "${more[@]}" || FAILED=1
	PAIR_FAILED=0
}

# stat_json PID FILE: fdrange stat --json of PID into FILE; prints its exit status.
stat_json() {
	local rc=0
	"$FDRANGE" stat --json "$1" >"$2" 2>"$2.err" || rc=$?
	echo "$rc"
}
# jget FILE EXPR: a value from a JSON file (EXPR in Python over d), or "-".
jget() {
	"$PY" -c 'import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print(eval(sys.argv[2]))
except Exception:
    print("-")' "$1" "$2"
}
