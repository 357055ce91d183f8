#!/bin/sh
# SPDX-License-Identifier: MIT
# fdrange stat with several PIDs, --all and --prometheus: one summary line
# (or JSON object) per PID in the order given, a PID that cannot be read
# named on stderr and in its own summary (exit 1, the others still shown);
# --all finds the processes that map libfdrange.so and only those;
# --prometheus is the text exposition format, each family once with its
# HELP and TYPE, a sample per process labelled pid and comm, the reason a
# library places nothing as a label; usage errors are one line, JSON with
# --json; --help fits 80 columns.
# usage: several.sh FDRANGE FAKE_BLOCK
. "$(dirname "$0")/lib.sh"
need_python

cp "$fake" "$tmp/libfdrange.so"
start_fake valid -l "$tmp/libfdrange.so"; a=$fpid
start_fake disabled -l "$tmp/libfdrange.so"; b=$fpid
start_fake plain; c=$fpid

run_stat "$a" "$b" "$c"
[ "$rc" = 0 ] || { cat "$err"; fail "three pids: exit $rc"; }
[ "$(grep -c '^summary: ' "$out")" = 3 ] && [ "$(wc -l <"$out")" = 3 ] || { cat "$out"; fail "three pids: not 3 summary lines"; }
got=$(sed -n 's/^summary: pid=\([0-9]*\) library=\([a-z]*\) .* reason=\([a-z_-]*\)$/\1 \2 \3/p' "$out" | tr '\n' ' ')
[ "$got" = "$a yes - $b inactive disabled $c no not_loaded " ] || { cat "$out"; fail "three pids: '$got'"; }
echo "ok: three pids, a summary each, in order"

run_stat "$a" 999999999 "$c"
[ "$rc" = 1 ] || fail "a missing pid among three: exit $rc, expected 1"
grep -qx "summary: pid=999999999 error=no_process" "$out" && [ "$(wc -l <"$out")" = 3 ] ||
	{ cat "$out"; fail "the missing pid has no summary of its own"; }
grep -qx "fdrange stat: no process with pid 999999999" "$err" || fail "missing pid: '$(cat "$err")'"
run_stat --json "$a" 999999999
[ "$rc" = 1 ] || fail "--json with a missing pid: exit $rc"
python3 - "$out" "$a" <<'PY' || fail "--json several: $(cat "$out")"
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
assert len(docs) == 2, docs
assert docs[0]["pid"] == int(sys.argv[2]) and docs[0]["library"] == "yes" and docs[0]["reason"] is None, docs[0]
assert docs[1] == {"schema": 1, "error": "no process with pid 999999999", "reason": "no_process", "pid": 999999999}, docs[1]
PY
echo "ok: a pid that cannot be read is named, the others shown, exit 1"

run_stat --interval 0.1 --count 2 "$a" "$b"
[ "$rc" = 0 ] && [ "$(grep -c '^summary: ' "$out")" = 4 ] || { cat "$out" "$err"; fail "--interval with two pids"; }
echo "ok: --interval with two pids"

run_stat --all
[ "$rc" = 0 ] || { cat "$err"; fail "--all: exit $rc"; }
grep -q "^summary: pid=$a library=yes " "$out" && grep -q "^summary: pid=$b library=inactive " "$out" ||
	{ cat "$out"; fail "--all misses a process that maps libfdrange.so"; }
! grep -q "^summary: pid=$c " "$out" || fail "--all lists a process without the library"
sort -t= -k2 -n -c "$out" 2>/dev/null || sed 's/^summary: pid=\([0-9]*\).*/\1/' "$out" | sort -n -c ||
	fail "--all: not in pid order"
echo "ok: --all finds the processes with libfdrange mapped, only those"

run_stat --prometheus "$a" "$b" 999999999
[ "$rc" = 1 ] || fail "--prometheus: exit $rc, expected 1 (one pid missing)"
python3 - "$out" "$a" "$b" <<'PY' || fail "--prometheus: not the text format: $(head -20 "$out")"
import re, sys
name = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
lval = r'"(?:[^"\\\n]|\\[\\"n])*"'
sample = re.compile(r"^(%s)\{(%s=%s(?:,%s=%s)*)\} (-?[0-9.e+-]+)$" % (name, name, lval, name, lval))
helped, typed, seen_family, samples = set(), {}, [], {}
current = None
for l in open(sys.argv[1]).read().split("\n")[:-1]:
    m = re.match(r"^# HELP (%s) \S.*$" % name, l)
    if m:
        assert m.group(1) not in helped, ("HELP twice", l)
        helped.add(m.group(1)); continue
    m = re.match(r"^# TYPE (%s) (counter|gauge)$" % name, l)
    if m:
        assert m.group(1) in helped and m.group(1) not in typed, ("TYPE", l)
        typed[m.group(1)] = m.group(2); current = m.group(1); seen_family.append(current); continue
    m = sample.match(l)
    assert m, ("not a sample", l)
    # A family's samples follow its TYPE line, all together.
    assert m.group(1) == current, ("sample out of its family", l, current)
    if typed[current] == "counter":
        assert current.endswith("_total"), current
    labels = dict(re.findall(r'(%s)=(%s)' % (name, lval), m.group(2)))
    samples.setdefault(current, []).append((labels, float(m.group(3))))
a, b = sys.argv[2], sys.argv[3]
def get(fam, pid, **kv):
    return [v for lab, v in samples.get(fam, []) if lab["pid"] == '"%s"' % pid and
            all(lab.get(k) == '"%s"' % w for k, w in kv.items())]
assert get("fdrange_placing", a) == [1] and get("fdrange_placing", b) == [0]
assert get("fdrange_inactive", b, reason="disabled") == [1] and not get("fdrange_inactive", a)
assert get("fdrange_fds_placed_total", a) == [17] and not get("fdrange_fds_placed_total", b) == [17]
assert get("fdrange_fallbacks_total", a, reason="near") == [1]
assert get("fdrange_fallbacks_total", a, reason="limit") == [2]
assert get("fdrange_model", a, model="rotation") == [1]
assert get("fdrange_stat_error", 999999999, reason="no_process") == [1]
assert abs(get("fdrange_min_purity_ratio", a)[0] - 0.909) < 0.001
assert all(lab["comm"] == '"fake_block"' for lab, v in samples["fdrange_open_fds"])
print("ok: %d families, %d samples" % (len(typed), sum(len(v) for v in samples.values())))
PY
echo "ok: --prometheus is the text format, each family once"

# Usage errors: one line and exit 2; JSON with --json, on stdout.
# (--json with --prometheus is among them: the --json runs below.)
for bad in "--all $a" "--prometheus $a" "--prometheus --interval 1 $a" "--bogus $a" "x1" ""; do
	if [ "$bad" != "--prometheus $a" ]; then
		# shellcheck disable=SC2086
		run_stat $bad
		[ "$rc" = 2 ] && [ "$(wc -l <"$err")" = 1 ] && [ ! -s "$out" ] ||
			fail "'$bad': exit $rc, '$(cat "$err")'"
	fi
	# shellcheck disable=SC2086
	run_stat --json $bad
	[ "$rc" = 2 ] && [ ! -s "$err" ] || fail "--json '$bad': exit $rc, stderr '$(cat "$err")'"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"] == 1 and d["reason"] == "usage" and "fdrange stat --help" in d["error"], d' "$out" ||
		fail "--json '$bad': $(cat "$out")"
done
echo "ok: usage errors, in JSON with --json"

run_stat --help
[ "$rc" = 0 ] || fail "--help: exit $rc"
if awk 'length($0) > 80 || / $/ { bad = 1; print "line " NR ": " $0 } END { exit !bad }' "$out"; then
	fail "--help: lines beyond 80 columns or with trailing spaces"
fi
grep -q -- "--color=WHEN" "$out" && grep -q -- "--no-map" "$out" && grep -q -- "--prometheus" "$out" &&
	grep -q -- "--all" "$out" || fail "--help does not describe every option"
echo "ok: --help within 80 columns, every option described"
