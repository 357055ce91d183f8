# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: MIT
# Shared by the memcached tests: start memcached on a free 127.0.0.1 port
# (plain or under libfdrange), stop it, and stop everything on exit.
# Usage from a test: . lib.sh; the test's argv is LIB FDRANGE MCCLIENT [SRCROOT].
set -eu

LIB=$1 FDRANGE=$2 MCCLIENT=$3
SRCROOT=${4:-}
# Sanitizer builds pass LIB as "RUNTIME:libfdrange.so".  Programs started
# through the fdrange command need RUNTIME in LD_PRELOAD, which fdrange
# keeps in front of the library it adds.
RT_PRELOAD=""
case $LIB in *:*) RT_PRELOAD=${LIB%:*} ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fdrange-mc.XXXXXX")
MC_PIDS=""

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }

cleanup() {
	[ -z "${HOLD_PID:-}" ] || kill "$HOLD_PID" 2>/dev/null || true
	for p in $MC_PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $MC_PIDS; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v memcached >/dev/null || { echo "memcached not installed: skipping"; exit 77; }
MC_USER=""
[ "$(id -u)" -eq 0 ] && MC_USER="-u root"

# free_port: a port no socket here has.
. "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"

# start_mc MODE ARGS...: MODE plain | placed (FDRANGE_* from the caller's
# environment).  Sets MC_PID and MC_PORT.  Retries on a port taken meanwhile.
start_mc() {
	local mode=$1
	shift
	for try in 1 2 3 4 5; do
		MC_PORT=$(free_port) || fail "no free port"
		rm -f "$TMP/mc.pid"
		if [ "$mode" = placed ]; then
			LD_PRELOAD=$LIB "$MCCLIENT" closefds "$TMP/mc.pid" -- \
				memcached $MC_USER -p "$MC_PORT" -U 0 -l 127.0.0.1 "$@" \
				</dev/null >"$TMP/mc-$MC_PORT.log" 2>&1 &
		else
			env -u LD_PRELOAD "$MCCLIENT" closefds "$TMP/mc.pid" -- \
				memcached $MC_USER -p "$MC_PORT" -U 0 -l 127.0.0.1 "$@" \
				</dev/null >"$TMP/mc-$MC_PORT.log" 2>&1 &
		fi
		local launcher=$!
		for _ in $(seq 50); do
			[ -s "$TMP/mc.pid" ] && break
			sleep 0.05
		done
		MC_PID=$(cat "$TMP/mc.pid" 2>/dev/null || echo "$launcher")
		MC_PIDS="$MC_PIDS $MC_PID"
		for _ in $(seq 100); do
			kill -0 "$MC_PID" 2>/dev/null || break
			if "$MCCLIENT" stat "$MC_PORT" pid >/dev/null 2>&1; then
				return 0
			fi
			sleep 0.05
		done
		kill "$MC_PID" 2>/dev/null || true
		note "memcached did not start on $MC_PORT (try $try): $(tail -1 "$TMP/mc-$MC_PORT.log")"
	done
	fail "memcached would not start"
}

stop_mc() {
	kill "$MC_PID" 2>/dev/null || true
	for _ in $(seq 100); do kill -0 "$MC_PID" 2>/dev/null || return 0; sleep 0.05; done
	kill -9 "$MC_PID" 2>/dev/null || true
}

fd_count() { ls "/proc/$1/fd" | wc -l; }

# hold PORT N: N connections held open in the background until released.
# Sets HOLD_PID, and HOLD to the tally once all N are up (or refused).
# Not in $(...): HOLD_PID must reach the caller.
hold() {
	rm -f "$TMP/hold.out"
	"$MCCLIENT" hold "$1" "$2" 120 >"$TMP/hold.out" &
	HOLD_PID=$!
	for _ in $(seq 300); do
		[ -s "$TMP/hold.out" ] && break
		sleep 0.05
	done
	[ -s "$TMP/hold.out" ] || fail "holding $2 connections timed out"
	HOLD=$(cat "$TMP/hold.out")
}
release() { kill "$HOLD_PID" 2>/dev/null || true; wait "$HOLD_PID" 2>/dev/null || true; }

# summary_field FILE KEY: the value of KEY= on fdrange stat's summary line.
summary_field() {
	sed -n 's/^summary:.* '"$2"'=\([^ ]*\).*/\1/p' "$1"
}
