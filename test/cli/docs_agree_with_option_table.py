#!/usr/bin/env python3
"""README.md's option table and the option entries of fdrange(1) and
libfdrange(7) must give each option the name, default and accepted values
(ranges included) that lib/options.c's table gives.  `fdrange --help` is
generated from that table, so it is the reference read here.

README.md: a row  | `FDRANGE_X` | ACCEPTED | DEFAULT | meaning |
man pages: a .TP entry whose tag names FDRANGE_X (and in fdrange(1) its
           --flag), whose next line is  Accepted: ACCEPTED; default: DEFAULT.
Any FDRANGE_* name a doc gives that the table lacks fails too, but for the
misspelling the docs show on purpose (FDRANGE_SLOT)."""
import re
import subprocess
import sys

exe, src = sys.argv[1], sys.argv[2]
MISSPELT = {"FDRANGE_SLOT"}

def from_help():
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    opts, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"  (--\S+)(?: \S+)?\s+(FDRANGE_[A-Z]+) \(default (\S+)\)$", line)
        if m:
            cur = opts.setdefault(m.group(2), {"flag": m.group(1), "default": m.group(3),
                                               "accepted": None})
            continue
        if line.startswith("  -"):
            cur = None
        elif cur is not None:
            text = line.strip()
            if text.startswith("accepted: "):
                cur["accepted"] = text[len("accepted: "):]
            elif cur["accepted"] is not None:
                cur["accepted"] += " " + text
    return opts

def roff_text(s):
    return s.replace("\\-", "-").replace("\\(aq", "'").replace("\\(mu", "x").replace("\\&", "")

opts = from_help()
if len(opts) < 2 or any(o["accepted"] is None for o in opts.values()):
    sys.exit("FAIL: could not read the options from fdrange --help")
fail = []

readme = open(f"{src}/README.md", encoding="utf-8").read().splitlines()
rows = {}
for line in readme:
    m = re.match(r"\| `(FDRANGE_[A-Z]+)` \|(.*)\|\s*$", line)
    if m:
        rows[m.group(1)] = [c.strip().strip("`") for c in m.group(2).split(" | ")]
for name, o in opts.items():
    r = rows.get(name)
    if r is None:
        fail.append(f"README.md: no option table row for {name}")
    elif len(r) < 3 or r[0] != o["accepted"] or r[1] != o["default"]:
        fail.append(f"README.md: {name} row says accepted '{r[0] if r else ''}', default "
                    f"'{r[1] if len(r) > 1 else ''}'; the table: '{o['accepted']}', '{o['default']}'")
for name in rows:
    if name not in opts:
        fail.append(f"README.md: option table row for {name}, which is no option")

for page in ("man/fdrange.1", "man/libfdrange.7"):
    lines = open(f"{src}/{page}", encoding="utf-8").read().splitlines()
    seen, tags = {}, {}
    for i, line in enumerate(lines[:-2]):
        if line != ".TP":
            continue
        m = re.search(r"(FDRANGE_[A-Z]+)", lines[i + 1])
        if m:
            seen[m.group(1)] = roff_text(lines[i + 2])
            tags[m.group(1)] = roff_text(lines[i + 1])
    for name, o in opts.items():
        want = f"Accepted: {o['accepted']}; default: {o['default']}."
        if name not in seen:
            fail.append(f"{page}: no .TP entry for {name}")
        elif seen[name] != want:
            fail.append(f"{page}: {name} says '{seen[name]}'; the table: '{want}'")
        elif page == "man/fdrange.1" and o["flag"] not in tags[name].split():
            fail.append(f"{page}: the entry for {name} does not name {o['flag']}")
    for name in seen:
        if name not in opts:
            fail.append(f"{page}: entry for {name}, which is no option")

docs = ["README.md", "man/fdrange.1", "man/libfdrange.7", "man/fdrange-ab-memcached.1"]
for doc in docs:
    for name in set(re.findall(r"FDRANGE_[A-Z_]*[A-Z]", open(f"{src}/{doc}", encoding="utf-8").read())):
        if name not in opts and name not in MISSPELT:
            fail.append(f"{doc}: names {name}, which the option table lacks")

for f in fail:
    print("FAIL:", f)
if not fail:
    print(f"ok: {len(opts)} options agree in README.md, fdrange(1) and libfdrange(7)")
sys.exit(1 if fail else 0)
