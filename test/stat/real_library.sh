#!/bin/sh
# SPDX-License-Identifier: MIT
# fdrange stat against real preloaded processes: the library's own v3 block
# (a memfd) is found, validated and reported, in text and JSON alike; and
# stat names why the library places nothing, as the library leaves it:
#   FDRANGE_DISABLE=1          a block, reason=disabled
#   FDRANGE_SLOTS=abc          a block, reason=config, its message naming
#                              FDRANGE_SLOTS and "abc"
#   started under seccomp      no block (the library makes no syscall),
#                              Seccomp: 2, reason=seccomp_at_start
#   filter installed late      reason=seccomp
#   a fork child, no fd yet    its parent's block, reason=inherited, exit 0
#   single-threaded            reason=single_threaded
#   threaded, a few dozen fds  reason=few_fds (all below FDRANGE_THRESHOLD)
# Needs the library that writes the v3 block (lib/block.h); skipped (77)
# while the built library predates it.
# usage: real_library.sh FDRANGE FAKE_BLOCK PRELOAD
. "$(dirname "$0")/lib.sh"
need_python

lib=${preload##*:}
grep -q FDRSTAT3 "$lib" || { echo "SKIP: $lib does not write the v3 stats block yet"; exit 77; }
export ASAN_OPTIONS=detect_leaks=0   # coreutils' sleep is not ours to check
failed=0
# bad MESSAGE: a failed expectation, the others still checked.
bad() { echo "FAIL: $*"; failed=1; }

# wait_maps PID PATTERN: until /proc/PID/maps shows PATTERN.
wait_maps() {
	i=0
	until grep -q "$2" "/proc/$1/maps" 2>/dev/null; do
		i=$((i + 1)); [ $i -le 200 ] || return 1; sleep 0.05
	done
}

# expect PID WORD TEXT: text and JSON of PID name reason WORD, the text
# line holding TEXT; exit 0 both.
expect() {
	run_stat --color=never --no-map "$1"
	if [ "$rc" != 0 ]; then bad "$2: exit $rc: $(cat "$err")"; return; fi
	[ "$(summary_field "$out" reason)" = "$2" ] ||
		bad "$2: summary reason=$(summary_field "$out" reason), expected $2 ($(sed -n 2,3p "$out" | tr '\n' ' '))"
	grep -qF -- "$3" "$out" || bad "$2: no '$3' in: $(sed -n 2,4p "$out" | tr '\n' ' ')"
	run_stat --json "$1"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["reason"] == sys.argv[2] and sys.argv[3] in d["reason_text"], (d["reason"], d["reason_text"])' \
		"$out" "$2" "$3" || bad "$2 --json: $(head -c 300 "$out")"
	[ $failed = 1 ] || echo "ok: $2: $3"
}

# A preloaded sleep: its block, v3, single-threaded.
LD_PRELOAD=$preload sleep 60 &
spid=$!
targets="$targets $spid"
wait_maps "$spid" ' /memfd:fdrange (deleted)$' || fail "the preloaded sleep maps no block"
run_stat --color=never "$spid"
[ "$rc" = 0 ] || { cat "$err"; fail "stat of a preloaded sleep: exit $rc"; }
grep -q "^libfdrange .*stats block v3" "$out" || fail "no v3 block line: $(sed -n 2p "$out")"
grep -q "^settings: FDRANGE_SLOTS=" "$out" || fail "no settings"
[ "$(summary_field "$out" library)" = yes ] || fail "summary: library"
cp "$out" "$tmp/text"
run_stat --json "$spid"
[ "$rc" = 0 ] || fail "--json: exit $rc"
python3 - "$tmp/text" "$out" <<'PY' || fail "JSON and text disagree"
import json, sys
text = open(sys.argv[1]).read().splitlines()
d = json.load(open(sys.argv[2]))
summ = dict(kv.split("=", 1) for kv in text[-1].split()[1:])
for k, v in summ.items():
    j = d["summary"][k]
    assert (v == "-" and j is None) or str(j) == v or (k.endswith("purity") and abs(float(v) - j) < 0.051), (k, v, j)
assert d["block"]["version"] == 3 and d["block"]["settings"], d["block"]
PY
expect "$spid" single_threaded "single-threaded so far"
kill "$spid"

# FDRANGE_DISABLE=1: the v3 library keeps a block that says so.
FDRANGE_DISABLE=1 LD_PRELOAD=$preload sleep 60 &
spid=$!
targets="$targets $spid"
wait_maps "$spid" ' /memfd:fdrange (deleted)$' || bad "disabled: no block (the v3 library makes one when disabled)"
expect "$spid" disabled "disabled (FDRANGE_DISABLE=1)"
kill "$spid"

# A bad value: a block whose reason is the library's one-line message.
FDRANGE_SLOTS=abc LD_PRELOAD=$preload sleep 60 2>"$tmp/lib.err" &
spid=$!
targets="$targets $spid"
wait_maps "$spid" ' /memfd:fdrange (deleted)$' || bad "FDRANGE_SLOTS=abc: no block (the v3 library makes one when misconfigured)"
expect "$spid" config 'FDRANGE_SLOTS="abc"'
kill "$spid"

# Started under a seccomp filter: the library is mapped, makes no block.
"$fake" exec env LD_PRELOAD="$preload" sleep 60 &
spid=$!
targets="$targets $spid"
wait_maps "$spid" 'libfdrange' || fail "seccomp at start: the library is not mapped"
grep -q '^Seccomp:[[:space:]]*2' "/proc/$spid/status" || fail "seccomp at start: no filter in force"
grep -q ' /memfd:fdrange (deleted)$' "/proc/$spid/maps" && bad "seccomp at start: the library made a block"
expect "$spid" seccomp_at_start "it started under a seccomp filter (Seccomp: 2"
kill "$spid"

# A threaded process that installs a filter while it runs (prctl).
LD_PRELOAD=$preload start_fake plain -S
spid=$fpid
expect "$spid" seccomp "a seccomp filter was installed while it ran"
kill "$spid"

# A threaded process with a few dozen fds: every one numbered below
# FDRANGE_THRESHOLD (64), none moved, and stat says why.
LD_PRELOAD=$preload start_fake plain -F
spid=$fpid
child=$(awk '/^child /{print $2}' "$tmp/ready")
targets="$targets $child"
expect "$spid" few_fds "few fds so far: every fd it made was numbered below FDRANGE_THRESHOLD 64"
run_stat --color=never --no-map "$spid"
[ "$(summary_field "$out" placed)" = 0 ] || bad "few fds: placed $(summary_field "$out" placed)"
kill "$child" "$spid"

# The same with the threshold off, placing fds, and a fork child of it
# that placed nothing: its parent's block, inherited, not refused.
FDRANGE_THRESHOLD=0 LD_PRELOAD=$preload start_fake plain -F
spid=$fpid
child=$(awk '/^child /{print $2}' "$tmp/ready")
targets="$targets $child"
run_stat --color=never --no-map "$spid"
{ [ "$rc" = 0 ] && [ "$(summary_field "$out" library)" = yes ] && [ "$(summary_field "$out" reason)" = - ]; } ||
	bad "threaded parent: exit $rc, $(tail -1 "$out") $(cat "$err")"
[ "$(summary_field "$out" placed)" -gt 0 ] 2>/dev/null || bad "threaded parent: nothing placed: $(tail -1 "$out")"
expect "$child" inherited "inherited block of pid $spid; nothing placed in this process yet"
kill "$child" "$spid"

[ $failed = 0 ] || exit 1
echo "ok: the library's own block, text and JSON, and each reason it leaves"
