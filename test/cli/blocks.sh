# SPDX-License-Identifier: MIT
# Sourced by the stats-block tests, each run as SCRIPT FDRANGE PRELOAD.
# Sets fdrange, preload and tmp (removed at exit, with the files listed in
# $remove_at_exit); fds 3 and 4, the tests' fifo writers, close at exit.
set -u
fdrange=$1 preload=$2
# The preloaded programs are coreutils' cat and /bin/true, behind the ASan
# runtime in sanitizer builds: their own leaks are not ours to report.
export ASAN_OPTIONS=detect_leaks=0
tmp=$(mktemp -d)
remove_at_exit=""
# shellcheck disable=SC2086
trap 'exec 3>&- 4>&- 2>/dev/null; rm -rf "$tmp" $remove_at_exit' EXIT

fail() { echo "FAIL: $*"; exit 1; }

# wait_for CMD...: up to 10 s, until CMD succeeds.
wait_for() {
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -le 100 ] || return 1
		sleep 0.1
	done
}

# maps_block PID PATH: PID maps PATH, so its block is complete (created,
# sized and filled: the mapping comes last).
maps_block() {
	grep -q " $2\$" "/proc/$1/maps" 2>/dev/null
}

# pidns [PID]: the inode number of the pid namespace of PID (default: ours).
pidns() {
	readlink "/proc/${1:-self}/ns/pid" | tr -cd 0-9
}

# stat_says PID PATTERN: `fdrange stat PID` ends within 20 s, exit 0, with a
# line matching the grep PATTERN.
stat_says() {
	rc=0
	timeout 20 "$fdrange" stat --color=never "$1" >"$tmp/stat" 2>&1 || rc=$?
	[ $rc = 0 ] || { cat "$tmp/stat"; fail "fdrange stat $1: exit $rc (124: it hung)"; }
	grep -q "$2" "$tmp/stat" || { cat "$tmp/stat"; fail "fdrange stat $1 printed no '$2'"; }
}

# new_namespaces UNSHARE_FLAGS...: sets newns to an unshare command making
# those namespaces, as root or else through a user namespace; exit 77
# (skipped) where neither is allowed.
new_namespaces() {
	if unshare "$@" true 2>/dev/null; then
		newns="unshare $*"
	elif unshare --user --map-root-user "$@" true 2>/dev/null; then
		newns="unshare --user --map-root-user $*"
	else
		echo "SKIP: cannot create namespaces here (unshare $* failed as this user)"
		exit 77
	fi
}
