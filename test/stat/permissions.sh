#!/bin/sh
# SPDX-License-Identifier: MIT
# Not root: fdrange stat reads a block of the user's own process through
# /proc/PID/mem (map_files needs CAP_SYS_ADMIN), and of another user's
# process says in one line why it cannot (exit 1).  Needs root to switch
# users (setpriv); skipped (77) otherwise.
# usage: permissions.sh FDRANGE FAKE_BLOCK
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null || { echo "SKIP: needs root and setpriv"; exit 77; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# The binaries must be reachable by nobody: copies in a world-readable dir.
chmod 755 "$tmp"
cp "$fdrange" "$tmp/fdrange" && cp "$fake" "$tmp/fake_block" && chmod 755 "$tmp/fdrange" "$tmp/fake_block"
as_nobody true 2>/dev/null || { echo "SKIP: cannot run as nobody here"; exit 77; }
# ASan's runtime and its options must not decide for nobody either.
fdrange=$tmp/fdrange

# Root reads through map_files.
start_fake valid
run_stat --color=never --no-map "$fpid"
[ "$rc" = 0 ] || { cat "$err"; fail "as root: exit $rc"; }
grep -q "read through map_files" "$out" || fail "as root: not through map_files: $(sed -n 2p "$out")"
# Another user's process: one line, exit 1.
rc=0
as_nobody "$fdrange" stat "$fpid" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "nobody on root's process: exit $rc, expected 1"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "run as the process's user or root" "$tmp/err" ||
	fail "nobody on root's process: '$(cat "$tmp/err")'"
stop_fake

# nobody's own process: through /proc/PID/mem.  The ready file still holds
# the last fake's line until the background shell truncates it: remove it
# first, so that the wait below cannot read the old pid.
rm -f "$tmp/ready"
as_nobody "$tmp/fake_block" valid >"$tmp/ready" 2>"$tmp/fake.err" &
fpid=$!
targets="$targets $fpid"
i=0
until grep -q "^ready [0-9][0-9]*\$" "$tmp/ready" 2>/dev/null; do
	i=$((i + 1)); [ $i -le 200 ] || fail "nobody's fake_block did not start"; sleep 0.05
done
fpid=$(awk '{print $2}' "$tmp/ready")
targets="$targets $fpid"
rc=0
as_nobody "$fdrange" stat --color=never --no-map "$fpid" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] || { cat "$tmp/err"; fail "nobody on its own process: exit $rc"; }
grep -q "read through /proc/PID/mem" "$tmp/out" || fail "nobody: not through /proc/PID/mem"
grep -q "^summary: .* library=yes .* model=rotation" "$tmp/out" || fail "nobody: block not read"
echo "ok: map_files as root, /proc/PID/mem as the owner, a clear refusal otherwise"
