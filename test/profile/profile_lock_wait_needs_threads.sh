#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Threads creating and closing fds on one table as fast as they can wait for
# its lock: fdrange profile's lock-wait line is above zero with 4 threads,
# and exactly zero with one (nothing else takes that table's lock).
. "$(dirname "$0")/lib.sh"
can_profile
# Waiting needs two threads on CPUs at once: on a 2-vCPU machine that other
# jobs keep busy that can fail to happen in one run (CI, beside a kernel
# build), so up to three runs, and one with a wait is enough.
for try in 1 2 3; do
	"$FDRANGE" profile --hz 4999 --json --output "$TMP/four.json" -- "$FD_CHURN" 4 6 >"$TMP/four.out" 2>&1 ||
		fail "fdrange profile -- fd_churn 4 6 failed: $(tail -n 1 "$TMP/four.out")"
	[ "$(json "$TMP/four.json" 'd["processes"][0]["samples"]["lock_wait"]')" -gt 0 ] && break
	note "run $try: no lock-wait sample with 4 threads"
done
"$FDRANGE" profile --hz 4999 --json --output "$TMP/one.json" -- "$FD_CHURN" 1 3 >"$TMP/one.out" 2>&1 ||
	fail "fdrange profile -- fd_churn 1 3 failed: $(tail -n 1 "$TMP/one.out")"
four=$(json "$TMP/four.json" 'd["processes"][0]["samples"]["lock_wait"]')
one=$(json "$TMP/one.json" 'd["processes"][0]["samples"]["lock_wait"]')
made=$(json "$TMP/four.json" 'd["processes"][0]["samples"]["create"] + d["processes"][0]["samples"]["close"]')
note "lock-wait samples: 4 threads $four, 1 thread $one; create+close samples with 4: $made"
[ "$made" -gt 0 ] || fail "no create or close sample with 4 threads churning fds"
[ "$four" -gt 0 ] || fail "4 threads churning one table: no lock-wait sample"
[ "$one" -eq 0 ] || fail "1 thread: $one lock-wait samples, expected none"
# Each thread has a line of its own, and the command's line carries its name.
threads=$(json "$TMP/four.json" 'sum(1 for t in d["processes"][0]["threads"] if sum(t["samples"].values()) > 0)')
[ "$threads" -ge 4 ] || fail "4 churning threads, but $threads with samples"
echo "ok"
