#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Case 6 (a, b): a two-thread program under a seccomp filter that kills (or
# traps) every fcntl but F_GETFD/F_SETFD/F_GETFL/F_SETFL (seccomp_fcntl.c),
# in three variants: the filter installed with seccomp(2) (kill), with
# prctl(PR_SET_SECCOMP) (trap), and inherited across execve() (installed,
# then the program re-executes itself: under LD_PRELOAD the library starts
# inside the filter).  Plain and under libfdrange.  Asserts per variant:
# the program proves its filter is in force (a forked child's F_DUPFD dies
# of SIGSYS), both threads create their fds, and it exits 0 plain and
# exits 0 under the library too (not 159, SIGSYS); the fd bound holds at
# the samples taken while both threads hold their fds.
# Usage: seccomp.sh LIB FDRANGE BIN [VARIANT...]
. "$(dirname "$0")/lib.sh"
need python3
variants=${*:-seccomp prctl exec}

run_mode() {
	local variant=$1 mode=$2 d=$TMP/$1-$2 pid rc=0
	mkdir -p "$d"
	launch "sc-$variant-$mode" "$mode" "$BIN/seccomp_fcntl" "$variant" "$d"
	pid=$PID
	for _ in $(seq 200); do [ -e "$d/held" ] || ! kill -0 "$pid" 2>/dev/null && break; sleep 0.05; done
	if [ -e "$d/held" ]; then
		watch_start "$TMP/w-$variant-$mode.json" --for 0.3 "$pid"
		wait "$WATCH_PID" || true
		WATCH_PID=""
	fi
	touch "$d/go"
	wait "$pid" 2>/dev/null || rc=$?
	EXIT_CODE=$rc
	note "$variant $mode: exit $rc: $(tail -n 2 "$TMP/sc-$variant-$mode.log" | tr '\n' ' ')"
}

for v in $variants; do
	run_mode "$v" plain
	plain=$EXIT_CODE
	[ "$plain" = 77 ] && skip "seccomp_fcntl: no filter for this architecture"
	run_mode "$v" lib
	lib=$EXIT_CODE
	[ "$plain" = 0 ] || soft_fail "$v: exit $plain plain, expected 0"
	grep -q "^seccomp_fcntl .*: ok fds=" "$TMP/sc-$v-plain.log" || soft_fail "$v: plain run did not report its fds"
	[ "$lib" = "$plain" ] || soft_fail "$v: exit $plain plain, $lib under the library$( [ "$lib" = 159 ] && echo ' (SIGSYS: killed by the filter)')"
	verdict "seccomp-$v" "$TMP/w-$v-plain.json" "$TMP/w-$v-lib.json" --min-open 13 \
		--extra "exit=$plain/$lib"
done
finish
