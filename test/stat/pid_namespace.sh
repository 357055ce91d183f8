#!/bin/sh
# SPDX-License-Identifier: MIT
# A process in its own pid namespace (a container) seen from outside: its
# block names its pid as it sees it (1 here) and its threads by their tids
# there; fdrange stat matches the pid through NSpid and names the threads
# through their NSpid, not by our numbers.  A forged pid is still refused.
# Needs a pid namespace: root, or a user namespace (skipped, 77, else).
# usage: pid_namespace.sh FDRANGE FAKE_BLOCK
. "$(dirname "$0")/lib.sh"

if unshare --pid --fork true 2>/dev/null; then
	newns="unshare --pid --fork"
elif unshare --user --map-root-user --pid --fork true 2>/dev/null; then
	newns="unshare --user --map-root-user --pid --fork"
else
	echo "SKIP: cannot create a pid namespace here"
	exit 77
fi

# pid 1 of a pid namespace ignores SIGTERM from outside (it has no
# handler): the namespaced targets are killed with SIGKILL, also at exit.
nstargets=""
trap 'for p in $nstargets; do kill -KILL "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

ns_fake() { # MODE: starts fake_block as pid 1 of a new pid namespace
	# The last fake's "ready 1" must not be read before the new one's
	# shell truncates the file.
	rm -f "$tmp/ready"
	# shellcheck disable=SC2086
	$newns "$fake" "$1" >"$tmp/ready" 2>"$tmp/fake.err" &
	i=0
	until grep -q "^ready 1\$" "$tmp/ready" 2>/dev/null; do
		i=$((i + 1)); [ $i -le 200 ] || { cat "$tmp/fake.err"; fail "$1: did not start"; }; sleep 0.05
	done
	fpid=$(pgrep -n -P "$!" -x fake_block)
	[ -n "$fpid" ] || fail "$1: cannot find the namespaced fake_block"
	nstargets="$nstargets $fpid"
	grep -q "^NSpid:.*[[:space:]]1\$" "/proc/$fpid/status" || fail "$1: not pid 1 in its namespace"
}

ns_fake valid
run_stat --color=never "$fpid"
[ "$rc" = 0 ] || { cat "$err"; fail "namespaced: exit $rc"; }
[ "$(summary_field "$out" library)" = yes ] || fail "namespaced: block not read: $(sed -n 2p "$out")"
grep -q "^  A  tid [0-9]* *worker-a " "$out" && grep -q "^  B  tid [0-9]* *worker-b " "$out" ||
	{ grep -A3 '^serving threads' "$out"; fail "namespaced: threads not named through NSpid"; }
kill -KILL "$fpid"
echo "ok: block of pid 1 in its namespace read, threads named"

ns_fake wrong_pid
run_stat --color=never "$fpid"
[ "$rc" = 3 ] && grep -q "pid 2 is not the process's own (1 in its namespace)" "$err" ||
	fail "namespaced forged pid: exit $rc, '$(cat "$err")'"
echo "ok: a forged pid refused in a namespace too"
