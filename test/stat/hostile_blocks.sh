#!/bin/sh
# SPDX-License-Identifier: MIT
# fdrange stat against targets whose stats block is corrupt or forged
# (test/stat/fake_block.c): each is refused with exit 3 and one line naming
# the field and its bad value, no report; with --json one JSON error object
# on stdout.  Forged blocks with another pid are passed over for the real
# one; a process mapping more candidates than stat examines is refused.
# usage: hostile_blocks.sh FDRANGE FAKE_BLOCK
. "$(dirname "$0")/lib.sh"
need_python

check_refused() { # MODE FIELD-PATTERN
	start_fake "$1"
	run_stat --color=never "$fpid"
	[ "$rc" = 3 ] || { cat "$out" "$err"; fail "$1: exit $rc, expected 3"; }
	[ ! -s "$out" ] || fail "$1: printed a report"
	[ "$(wc -l <"$err")" = 1 ] || { cat "$err"; fail "$1: not one line"; }
	grep -q "^fdrange stat: pid $fpid: stats block at [0-9a-f]*-[0-9a-f]* refused: $2" "$err" ||
		fail "$1: message '$(cat "$err")' does not name '$2'"
	said=$(sed 's/.*refused: //' "$err")
	run_stat --json "$fpid"
	[ "$rc" = 3 ] || fail "$1 --json: exit $rc, expected 3"
	python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
d = json.loads(lines[0])
assert d["schema"] == 1 and sys.argv[2] in d["error"] and d["reason"] == "refused", d
' "$out" "refused: $(echo "$2" | sed 's/ .*//; s/\\//g')" || fail "$1 --json: $(cat "$out")"
	stop_fake
	echo "ok: $1 refused: $said"
}

check_refused huge_width "fixed_width 2147483584 is not a multiple of 64"
check_refused bad_offsets "chunks_off [0-9]* (+[0-9]* bytes) is not an aligned offset within"
check_refused nowners_big "nowners 5000 exceeds max_owners"
check_refused wrong_pid "pid [0-9]* is not the process's own"
check_refused truncated "size [0-9]* is not within"
check_refused bad_rot "rot_owner\[1\] 4000 is not below max_owners"
check_refused bad_kind "owner 3: kind 77 is not a known kind"
check_refused bad_chunk "chunk 2: owner 2147483647"
check_refused no_nul "lib_version is not NUL-terminated"
check_refused bad_model "model 17 is not a known model"
check_refused bad_policy "policy 3 is not a known policy"
check_refused bad_line "line 34: holder 1032 (index + 1) exceeds max_owners 1027"
check_refused bad_why "why_inactive 9 is not a known reason"

# Another release's block (another version) is not refused: shown as
# inactive, with what /proc alone tells.
start_fake wrong_version
run_stat --color=never "$fpid"
[ "$rc" = 0 ] || { cat "$err"; fail "wrong_version: exit $rc, expected 0"; }
[ "$(summary_field "$out" library)" = inactive ] || fail "wrong_version: not library=inactive"
grep -q "^no stats block: its stats block is of another libfdrange release: version 1, this fdrange reads version 3 only" "$out" ||
	fail "wrong_version: $(sed -n 2p "$out")"
stop_fake
echo "ok: another release's block shown as inactive"

# Five forged blocks (other pids) mapped before the real one: passed over.
start_fake valid -d 5
[ "$(grep -c ' /memfd:fdrange (deleted)$' "/proc/$fpid/maps")" = 6 ] || fail "decoys not mapped"
run_stat --color=never --no-map "$fpid"
[ "$rc" = 0 ] || { cat "$err"; fail "valid block behind 5 forgeries: exit $rc"; }
[ "$(summary_field "$out" library)" = yes ] || fail "valid block behind 5 forgeries not read"
stop_fake
echo "ok: the real block found behind 5 forged ones"

# More candidates than stat examines (32): refused, saying so.
start_fake valid -d 40
run_stat --color=never "$fpid"
[ "$rc" = 3 ] || fail "41 candidates: exit $rc, expected 3"
grep -q "(41 candidate mappings, 32 examined, none accepted)" "$err" || fail "41 candidates: $(cat "$err")"
stop_fake
echo "ok: 41 candidate mappings refused"

# No block at all; and libfdrange.so mapped without a block: /proc only.
start_fake plain
run_stat --color=never "$fpid"
[ "$rc" = 0 ] && [ "$(summary_field "$out" library)" = no ] || fail "plain: exit $rc"
grep -q "libfdrange is not loaded" "$out" || fail "plain: no 'not loaded'"
stop_fake
cp "$fake" "$tmp/libfdrange.so"
start_fake inactive -l "$tmp/libfdrange.so"
run_stat --color=never "$fpid"
[ "$rc" = 0 ] && [ "$(summary_field "$out" library)" = inactive ] || fail "inactive: exit $rc"
grep -q "libfdrange is loaded but keeps no stats block" "$out" || fail "inactive: no message"
stop_fake
echo "ok: no block, and a library without one"
