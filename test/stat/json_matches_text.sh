#!/bin/sh
# SPDX-License-Identifier: MIT
# fdrange stat --json is one JSON document (schema 1) holding what the text
# report shows: for a target with a (fake) block and one without, every
# summary field, the owners with their chunks, counters and purity, the
# serving threads and the shared lines agree with the text of the same
# process.  Also: errors are JSON too (bad pid: exit 1).
# usage: json_matches_text.sh FDRANGE FAKE_BLOCK
. "$(dirname "$0")/lib.sh"
need_python

compare() { # what
	run_stat --color=never "$fpid"
	[ "$rc" = 0 ] || { cat "$err"; fail "$1 text: exit $rc"; }
	cp "$out" "$tmp/text"
	run_stat --json "$fpid"
	[ "$rc" = 0 ] || { cat "$err"; fail "$1 json: exit $rc"; }
	python3 - "$tmp/text" "$out" "$1" <<'PY' || fail "$1: JSON and text disagree"
import json, re, sys
text = open(sys.argv[1]).read().splitlines()
d = json.load(open(sys.argv[2]))
what = sys.argv[3]
assert d["schema"] == 1
summ = dict(kv.split("=", 1) for kv in text[-1].split()[1:])
js = d["summary"]
assert set(summ) == set(js), (sorted(summ), sorted(js))
for k, v in summ.items():
    j = js[k]
    if k == "min_purity":
        assert (v == "-" and j is None) or abs(float(v) - j) < 0.051, (k, v, j)
    else:
        assert str(j) == v, (k, v, j)
m = re.match(r"pid (\d+) \((.*)\): (\d+) open fds, RLIMIT_NOFILE (\d+)", text[0])
assert int(m.group(1)) == d["pid"] and int(m.group(3)) == d["open_fds"], text[0]
assert int(m.group(4)) == d["rlimit_nofile"]
# Serving threads / epoll instances: letter, key, fds, sockets.
rows = [l for l in text if re.match(r"  [A-Za-z0-9]  (tid \d+|epoll fd \d+) ", l)]
assert len(rows) == len(d["groups"]), (rows, d["groups"])
for l, g in zip(rows, d["groups"]):
    n = re.search(r"(\d+) fds \((\d+) sockets, (\d+) accepted\)", l)
    assert l[2] == g["letter"] and str(g["key"]) in l, (l, g)
    assert (int(n.group(1)), int(n.group(2)), int(n.group(3))) == (g["fds"], g["sockets"], g["accepted"]), (l, g)
sh = [l for l in text if l.startswith("shared 8-fd lines")][0]
nums = [int(x) for x in re.findall(r"(\d+) of (\d+)", sh) for x in x]
L = d["lines"]
assert nums == [L["shared"], L["served"], L["shared_socket"], L["socket"], L["shared_client"], L["client"]], (nums, L)
if d["library"] == "yes":
    b = d["block"]
    top = [i for i, l in enumerate(text) if l.startswith("owner ")][0]
    end = [i for i, l in enumerate(text) if l.startswith("  low (below base)")][0]
    owners = [l for l in text[top + 1:end] if not l.startswith("  fds ")]
    assert len(owners) == len(b["owners"]), (owners, b["owners"])
    for l, o in zip(owners, b["owners"]):
        f = l[23:].split()
        assert [int(x) for x in f[:6]] == [o["chunks"], o["placed"], o["inplace"], o["fallbacks"], o["extra_probes"], o["open"]], (l, o)
        assert (f[6] == "-" and o["purity"] is None) or abs(float(f[6].rstrip("%")) - o["purity"]) < 0.051, (l, o)
        by = " ".join("%s:%d" % (s["group"], s["fds"]) for s in o["served_by"]) or "-"
        assert l.endswith(by), (l, by)
    spans = [l.strip()[4:] for l in text if l.startswith("  fds ")]
    want = [",".join("%d-%d" % (a, z) for a, z in o["fds"]) for o in b["owners"] if o["fds"]]
    assert spans == want, (spans, want)
    sets = [l[len("settings: "):] for l in text if l.startswith("settings: ")]
    assert len(sets) == len(b["settings"])
    for l, s in zip(sets, b["settings"]):
        assert l.startswith(s["name"] + "=" + s["value"]) and l.endswith("(default)") == s["default"], (l, s)
    g = b["geometry"]
    geo = [l for l in text if l.startswith("geometry: ")][0]
    assert ("from fd %d, %d claimed, top %d of %d" % (g["base"], g["chunks_claimed"], g["top_chunk"], g["nchunks"])) in geo, geo
    assert b["handoff"]["model"] in ("none", "learning", "local", "rotation", "unpredictable")
else:
    assert "block" not in d and d["no_block"] in "\n".join(text)
print("ok: %s: %d summary fields, %d groups agree" % (what, len(summ), len(d["groups"])))
PY
}

start_fake valid
compare "fake block"
stop_fake
start_fake plain
compare "no block"
stop_fake

run_stat --json 999999999
[ "$rc" = 1 ] || fail "missing pid --json: exit $rc, expected 1"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d=={"schema":1,"error":"no process with pid 999999999"}, d' "$out" ||
	fail "missing pid --json: $(cat "$out")"
echo "ok: errors are JSON"
