#!/usr/bin/env python3
"""Every repository path the reference docs, the man pages and the code's
comments name must exist: in the source tree, or (for a program or library
the build makes, such as tools/fdrange) in the build directory.  Markdown
links are resolved from the linking file's directory, and an anchor into a
markdown file must name one of its headings.  The dated record (docs/results/, NEWS.md) names files as they were and is
not checked."""
import glob
import os
import re
import sys

src, build = sys.argv[1], sys.argv[2]
TOP = r"(?:lib|tools|test|bench|fuzz|include|docs|man|kernel|debian|examples|\.ci)"
PATH = re.compile(r"(?<![\w./~$-])(" + TOP + r"/[A-Za-z0-9_.*/+-]*[A-Za-z0-9_*/])")
LINK = re.compile(r"\]\(([^)\s#]*)(?:#([^)]*))?\)")
SKIP_DIRS = {".git", "docs/results", "subprojects"}
DOC_EXT = (".md", ".1", ".7")
CODE_EXT = (".c", ".h", ".sh", ".py", ".build", ".txt", ".map", ".options", ".S")

def sources():
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(rel, d)) not in SKIP_DIRS
                   and not d.startswith("build") and d != ".git"]
        for f in files:
            path = os.path.normpath(os.path.join(rel, f))
            if path == "NEWS.md" or path.startswith("kernel/patches/"):
                continue
            if f.endswith(DOC_EXT) or f.endswith(CODE_EXT) or f in ("run", "rules"):
                yield path

def comments(path, text):
    """The comment text of a code file (its prose); docs are all prose."""
    if path.endswith((".1", ".7")):
        return text.replace("\\-", "-").replace("\\&", "")
    if path.endswith(DOC_EXT):
        return text
    if path.endswith((".c", ".h", ".S")):
        return "\n".join(re.findall(r"/\*.*?\*/|//[^\n]*", text, re.S))
    return "\n".join(m for m in re.findall(r"#[^\n]*", text))

def linux_tree(p):
    """A path of the Linux source the kernel/ series patches, not of ours."""
    return p.startswith(("include/linux/", "include/uapi/")) or p.endswith(".o")

def placeholder(p):
    return any(re.fullmatch(r"[A-Z][A-Z_]{2,}(\.\w+)?", c) for c in p.split("/"))

def anchors(md):
    """The anchors GitHub gives the headings of markdown file @md."""
    out, fence = set(), False
    for line in open(md, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#+ (.*)", line)
        if m:
            text = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            out.add(text.replace(" ", "-"))
    return out

def exists(p):
    if "*" in p:
        return bool(glob.glob(os.path.join(src, p)))
    return os.path.exists(os.path.join(src, p)) or os.path.exists(os.path.join(build, p))

fail = []
checked = 0
for path in sorted(sources()):
    try:
        text = open(os.path.join(src, path), encoding="utf-8").read()
    except (UnicodeDecodeError, OSError):
        continue
    prose = comments(path, text)
    for m in PATH.finditer(prose):
        p = m.group(1).rstrip(".")
        if linux_tree(p) or placeholder(p):
            continue
        checked += 1
        if not exists(p):
            fail.append(f"{path}: names {p}, which does not exist")
    if path.endswith(".md"):
        for m in LINK.finditer(text):
            target, anchor = m.group(1), m.group(2)
            if re.match(r"[a-z]+:", target) or (not target and not anchor):
                continue
            checked += 1
            full = os.path.normpath(os.path.join(src, os.path.dirname(path), target or os.path.basename(path)))
            if not os.path.exists(full):
                fail.append(f"{path}: links {target}, which does not exist")
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                fail.append(f"{path}: links {target}#{anchor}, a heading that does not exist")
for f in fail:
    print("FAIL:", f)
if not fail:
    print(f"ok: {checked} paths named in docs, man pages and comments exist")
sys.exit(1 if fail else 0)
