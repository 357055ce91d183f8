#!/bin/sh
# SPDX-License-Identifier: MIT
# fdrange stat against a real preloaded process: the library's own v2 block
# (a memfd) is found, validated and reported, in text and JSON alike; a
# process with FDRANGE_DISABLE=1 maps the library but keeps no block
# (library=inactive).  Needs the library that writes the v2 block
# (lib/block.h); skipped (77) while build/lib/libfdrange.so predates it.
# usage: real_library.sh FDRANGE FAKE_BLOCK PRELOAD
. "$(dirname "$0")/lib.sh"
need_python

lib=${preload##*:}
grep -q FDRSTAT2 "$lib" || { echo "SKIP: $lib does not write the v2 stats block yet"; exit 77; }
export ASAN_OPTIONS=detect_leaks=0   # coreutils' sleep is not ours to check

LD_PRELOAD=$preload sleep 60 &
spid=$!
targets="$targets $spid"
i=0
until grep -q ' /memfd:fdrange (deleted)$' "/proc/$spid/maps" 2>/dev/null; do
	i=$((i + 1)); [ $i -le 200 ] || fail "the preloaded sleep maps no block"; sleep 0.05
done
run_stat --color=never "$spid"
[ "$rc" = 0 ] || { cat "$err"; fail "stat of a preloaded sleep: exit $rc"; }
grep -q "^libfdrange .*stats block v2" "$out" || fail "no v2 block line: $(sed -n 2p "$out")"
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
    assert (v == "-" and j is None) or str(j) == v or (k == "min_purity" and abs(float(v) - j) < 0.051), (k, v, j)
assert d["block"]["version"] == 2 and d["block"]["settings"], d["block"]
PY
kill "$spid"

FDRANGE_DISABLE=1 LD_PRELOAD=$preload sleep 60 &
spid=$!
targets="$targets $spid"
i=0
until grep -q 'libfdrange' "/proc/$spid/maps" 2>/dev/null; do
	i=$((i + 1)); [ $i -le 200 ] || fail "the preloaded sleep maps no library"; sleep 0.05
done
run_stat --color=never "$spid"
[ "$rc" = 0 ] || { cat "$err"; fail "disabled: exit $rc"; }
case $(summary_field "$out" library) in
inactive|yes) ;;
*) fail "disabled: library=$(summary_field "$out" library)" ;;
esac
echo "ok: the library's own block, text and JSON"
