#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGTERM to 'fdrange profile -- COMMAND' stops the command too: it is sent
# SIGTERM and reaped, what was sampled is printed, and fdrange exits 143.
. "$(dirname "$0")/lib.sh"
can_profile
"$FDRANGE" profile -- sh -c 'echo $$ >"$0"; exec sleep 60' "$TMP/cmd.pid" >"$TMP/out" 2>&1 &
prof=$!
PIDS="$prof"
for _ in $(seq 100); do [ -s "$TMP/cmd.pid" ] && break; sleep 0.05; done
[ -s "$TMP/cmd.pid" ] || fail "the command did not start: $(cat "$TMP/out")"
cmd=$(cat "$TMP/cmd.pid")
PIDS="$prof $cmd"
sleep 0.3
kill -TERM "$prof"
rc=0
wait "$prof" || rc=$?
[ $rc -eq 143 ] || fail "exit $rc after SIGTERM, expected 143: $(tail -n 1 "$TMP/out")"
! kill -0 "$cmd" 2>/dev/null || fail "the command (pid $cmd) still runs after fdrange got SIGTERM"
grep -q 'samples' "$TMP/out" || fail "no report of what was sampled: $(cat "$TMP/out")"
echo ok
