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
    if k in ("min_purity", "min_client_purity"):
        assert (v == "-" and j is None) or abs(float(v) - j) < 0.051, (k, v, j)
    elif k == "reason":
        assert (v == "-" and j is None) or v == j, (k, v, j)
    else:
        assert str(j) == v, (k, v, j)
m = re.match(r"pid (\d+) \((.*)\): (\d+) open fds?, (\d+) threads?, RLIMIT_NOFILE (\d+)", text[0])
assert int(m.group(1)) == d["pid"] and int(m.group(3)) == d["open_fds"], text[0]
assert int(m.group(4)) == d["threads"] and int(m.group(5)) == d["rlimit_nofile"], text[0]
assert d["reason"] == js["reason"] and (d["reason"] is None) == (d["reason_text"] == ""), d
# Serving threads / epoll instances: letter, key, fds, sockets.
rows = [l for l in text if re.match(r"  [A-Za-z0-9]  (tid \d+|epoll fd \d+) ", l)]
assert len(rows) == len(d["groups"]), (rows, d["groups"])
for l, g in zip(rows, d["groups"]):
    n = re.search(r"(\d+) fds? \((\d+) sockets?, (\d+) accepted\)", l)
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
        assert [int(x) for x in f[:7]] == [o["chunks"], o["lines"], o["placed"], o["inplace"], o["fallbacks"], o["extra_probes"], o["open"]], (l, o)
        by = " ".join("%s:%d" % (s["group"], s["fds"]) for s in o["served_by"]) or "-"
        if o["kind"] == "sparse":
            # The learning pool: one connection per line, not a purity.
            assert f[7] == "-", (l, o)
            if o["open"]:
                one = "%d fd%s on %d line%s" % (o["open"], "" if o["open"] == 1 else "s", o["open_lines"], "" if o["open_lines"] == 1 else "s")
                assert one in l, (l, one)
                by = by if o["served_by"] else one + (", one each" if o["open"] == o["open_lines"] else "")
        else:
            assert (f[7] == "-" and o["purity"] is None) or abs(float(f[7].rstrip("%")) - o["purity"]) < 0.051, (l, o)
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
    assert b["handoff"]["model"] in ("none", "learning", "local", "rotation", "unpredictable", "unregistered")
else:
    assert "block" not in d and d["no_block"] in "\n".join(text)
if what == "fake block":
    # What fake_block.c set up: 17 accepted sockets (the client ends are
    # other connections), thread A's chunk 0 shared with one fd of B's;
    # A's purity 10 of 11 with its line 328-335 of the line pool counted.
    want = dict(library="yes", groups="2", shared_lines="1", shared_socket_lines="1",
                client_sockets="17", shared_client_lines="1", min_purity="90.9", placed="17",
                fallbacks="4", extra_probes="4", model="rotation", realignments="2", misplaced="1",
                reason="-")
    got = {k: summ[k] for k in want}
    assert got == want, (got, want)
    assert "accepted connections: rotation over 2 threads (" in "\n".join(text)
    # The line pool's lines are their holders' in the map and in the owners.
    assert re.search(r"^  thread \d+ lines 320-327 +B$", "\n".join(text), re.M), text
    assert re.search(r"^  thread \d+ lines 328-335 +A$", "\n".join(text), re.M), text
    lp = [o for o in b["owners"] if o["kind"] == "lines"][0]
    assert lp["chunks"] == 1 and lp["lines"] == 2 and lp["fds"] == [[320, 383]], lp
    ta = [o for o in b["owners"] if o["group"] == "A"][0]
    assert ta["fds"] == [[64, 127], [192, 255], [328, 335]] and ta["lines"] == 1, ta
    assert b["fallbacks"]["near"] == 1 and b["fallbacks"]["bound"] == 0, b["fallbacks"]
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
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d=={"schema":1,"error":"no process with pid 999999999","reason":"no_process","pid":999999999}, d' "$out" ||
	fail "missing pid --json: $(cat "$out")"
echo "ok: errors are JSON"
