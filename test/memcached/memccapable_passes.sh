#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memccapable's ASCII and binary protocol checks pass against memcached
# running under libfdrange with no settings.
. "$(dirname "$0")/lib.sh"
command -v memccapable >/dev/null || { echo "memccapable not installed: skipping"; exit 77; }

start_mc placed -t 4
memccapable -h 127.0.0.1 -p "$MC_PORT" >"$TMP/capable.log" 2>&1 || { cat "$TMP/capable.log"; fail "memccapable failed"; }
tail -3 "$TMP/capable.log"
grep -q "All tests passed" "$TMP/capable.log" || fail "memccapable did not report 'All tests passed'"
kill -0 "$MC_PID" || fail "memcached died"
echo ok
