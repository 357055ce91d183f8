#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A thread that starts mid-run when no fd is left for its event is skipped
# and counted, the result marked PARTIAL (exit 4), instead of the run
# ending with nothing.  The fd limit that leaves none for the new threads
# depends on what the run itself holds, so a few limits are tried; each
# must end either so or, below what the first scan needs, with the one
# line about 'ulimit -n' (exit 1).
. "$(dirname "$0")/lib.sh"
can_profile
hit=0
for n in 6 7 8 9 10 11 12; do
	bash -c 'sleep 0.5; exec "$0" 4 2' "$FD_CHURN" >/dev/null 2>&1 &
	pid=$!
	PIDS="$pid"
	rc=0
	(ulimit -n "$n"; exec "$FDRANGE" profile --json --seconds 1.5 "$pid") >"$TMP/$n.json" 2>"$TMP/$n.err" || rc=$?
	wait "$pid" || true
	case $rc in
	0) ;;
	1) grep -q "raise 'ulimit -n'" "$TMP/$n.json" "$TMP/$n.err" ||
		fail "ulimit -n $n: exit 1 without the fd limit's line: $(cat "$TMP/$n.err" "$TMP/$n.json")" ;;
	4) u=$(json "$TMP/$n.json" 'd["processes"][0]["unsampled_threads"]')
	   p=$(json "$TMP/$n.json" 'd["processes"][0]["partial"]')
	   [ "$u" -gt 0 ] && [ "$p" = True ] || fail "ulimit -n $n: exit 4, but unsampled_threads $u, partial $p"
	   note "ulimit -n $n: $u threads skipped, PARTIAL"
	   hit=1; break ;;
	*) fail "ulimit -n $n: exit $rc: $(cat "$TMP/$n.err")" ;;
	esac
done
[ $hit = 1 ] || fail "no fd limit from 6 to 12 left threads started mid-run unsampled"
echo ok
