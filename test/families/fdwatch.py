#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fd-number sampling for the program-family matrix (test/families/).

Every case runs the same program plain and under libfdrange, samples the
fd table of its processes from /proc while the load runs, and asserts the
library's bound:

    at every sample, every open fd of a process is
        < max(1024, 2 * (fds the process has open at that sample) + 64)

and: a program whose highest fd stays below FD_SETSIZE (1024) plain stays
below 1024 under the library.

    fdwatch.py watch OUT PID [PID...] [--tree] [--every S] [--for S]
                     [--until-file F]
        samples /proc/PID/fd (and /proc/PID/task) of each PID, with --tree
        also every descendant process, every S seconds (default 0.05),
        until each PID has exited, --for S seconds have passed, F exists
        or SIGTERM/SIGINT; then writes OUT (JSON) and exits 0.  Prints
        "fdwatch: ready" on stdout once the first sample is taken.
    fdwatch.py once PID
        one sample of one process, as JSON on stdout.
    fdwatch.py verdict FAMILY PLAIN.json LIB.json [--min-samples N]
                     [--min-open N] [--extra TEXT] [--other-failed]
        prints  family=F plain_max=.. lib_max=.. open=.. bound=.. samples=P/L ok
        (or FAIL: why) and exits 0 / 1.  Fails if the library run broke the
        bound in any sample of any process, if plain stayed below 1024 and
        the library did not, or if either run has fewer than N samples
        (default 3) or never had N fds open in one process (the sampling
        missed the load: the check would say nothing); --other-failed: the
        case's other assertions failed, the line says FAIL too.

A sample of a process is one listing of /proc/PID/fd: its highest fd, its
number of open fds and the bound computed from that same listing; the
thread count is read from /proc/PID/task.  Plain runs are judged by the
same bound and reported, but only the library run's breaches fail (the
kernel's lowest-free numbering cannot break it by much, and the point is
what the library changes).
"""
import json
import os
import signal
import sys
import time

FD_SETSIZE = 1024


def bound(nopen):
    return max(FD_SETSIZE, 2 * nopen + 64)


def sample(pid):
    """(highest fd, open count, threads) of pid, or None once it is gone."""
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    fds = [int(n) for n in names if n.isdigit()]
    try:
        threads = len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        threads = 0
    return (max(fds) if fds else -1, len(fds), threads)


def children(pid):
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def tree(roots):
    seen, todo = [], list(roots)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.append(p)
        todo.extend(children(p))
    return seen


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


class Proc:
    def __init__(self, pid):
        self.pid, self.comm = pid, comm(pid)
        self.samples = 0
        self.max_fd, self.open_at_max, self.max_open, self.max_threads = -1, 0, 0, 0
        self.nbreach = 0
        self.breaches = []   # [highest, open, bound] of samples that broke the bound
        self.tightest = None  # the sample closest to its bound: [highest, open, bound]

    def add(self, s):
        hi, n, th = s
        self.samples += 1
        if hi > self.max_fd:
            self.max_fd, self.open_at_max = hi, n
        self.max_open = max(self.max_open, n)
        self.max_threads = max(self.max_threads, th)
        b = bound(n)
        if self.tightest is None or hi - b > self.tightest[0] - self.tightest[2]:
            self.tightest = [hi, n, b]
        if hi >= b:
            self.nbreach += 1
            if len(self.breaches) < 20:
                self.breaches.append([hi, n, b])
            elif hi - b > self.breaches[-1][0] - self.breaches[-1][2]:
                self.breaches[-1] = [hi, n, b]

    def json(self):
        return {"pid": self.pid, "comm": self.comm, "samples": self.samples,
                "max_fd": self.max_fd, "open_at_max": self.open_at_max,
                "max_open": self.max_open, "max_threads": self.max_threads,
                "tightest": self.tightest, "nbreach": self.nbreach,
                "breaches": self.breaches}


def watch(argv):
    out, pids, every, until, stop_file, with_tree = None, [], 0.05, None, None, False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--tree":
            with_tree = True
        elif a == "--every":
            i += 1; every = float(argv[i])
        elif a == "--for":
            i += 1; until = time.monotonic() + float(argv[i])
        elif a == "--until-file":
            i += 1; stop_file = argv[i]
        elif out is None:
            out = a
        else:
            pids.append(int(a))
        i += 1
    if out is None or not pids:
        sys.exit("usage: fdwatch.py watch OUT PID... [--tree] [--every S] [--for S] [--until-file F]")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    procs = {}
    first = True
    while not stop:
        live = 0
        for p in (tree(pids) if with_tree else pids):
            s = sample(p)
            if s is None:
                continue
            live += 1
            if p not in procs:
                procs[p] = Proc(p)
            procs[p].add(s)
        if first:
            print("fdwatch: ready", flush=True)
            first = False
        if live == 0 or (until is not None and time.monotonic() >= until):
            break
        if stop_file and os.path.exists(stop_file):
            break
        time.sleep(every)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"procs": [p.json() for p in procs.values()]}, f)
    os.replace(tmp, out)


def once(argv):
    s = sample(int(argv[0]))
    if s is None:
        sys.exit(f"no process {argv[0]}")
    print(json.dumps({"pid": int(argv[0]), "max_fd": s[0], "open": s[1], "threads": s[2],
                      "bound": bound(s[1])}))


def summary(path):
    with open(path) as f:
        procs = json.load(f)["procs"]
    top = max(procs, key=lambda p: p["max_fd"], default=None)
    return procs, top


def verdict(argv):
    min_samples, min_open, extra, other = 3, 1, "", False
    pos = []
    i = 0
    while i < len(argv):
        if argv[i] == "--min-samples":
            i += 1; min_samples = int(argv[i])
        elif argv[i] == "--min-open":
            i += 1; min_open = int(argv[i])
        elif argv[i] == "--other-failed":
            other = True
        elif argv[i] == "--extra":
            i += 1; extra = " " + argv[i]
        else:
            pos.append(argv[i])
        i += 1
    family, plain_path, lib_path = pos
    why = []
    res = {}
    for mode, path in (("plain", plain_path), ("lib", lib_path)):
        try:
            procs, top = summary(path)
        except (OSError, ValueError) as e:
            why.append(f"{mode}: no samples ({e})")
            procs, top = [], None
        res[mode] = (procs, top)
        if top is None:
            why.append(f"{mode}: no process was sampled")
            continue
        ns = max(p["samples"] for p in procs)
        if ns < min_samples:
            why.append(f"{mode}: {ns} samples < {min_samples}")
        peak = max(p["max_open"] for p in procs)
        if peak < min_open:
            why.append(f"{mode}: at most {peak} fds open in a process, expected >= {min_open}"
                       " (the sampling missed the load)")
    lprocs, ltop = res["lib"]
    pprocs, ptop = res["plain"]
    for p in lprocs:
        if p["breaches"]:
            hi, n, b = max(p["breaches"], key=lambda x: x[0] - x[2])
            why.append(f"lib: pid {p['pid']} ({p['comm']}) highest fd {hi} >= bound {b}"
                       f" with {n} open (in {p['nbreach']} of {p['samples']} samples)")
    if ptop and ltop and ptop["max_fd"] < FD_SETSIZE <= ltop["max_fd"]:
        why.append(f"plain stays below {FD_SETSIZE} (highest {ptop['max_fd']}),"
                   f" library reaches {ltop['max_fd']}")

    if other:
        why.append("other assertions of this run pair failed (FAIL lines above)")

    def fmt(top):
        return str(top["max_fd"]) if top else "-"
    lopen = ltop["open_at_max"] if ltop else 0
    nsamp = "/".join(str(sum(p["samples"] for p in r[0])) for r in (res["plain"], res["lib"]))
    line = (f"family={family} plain_max={fmt(ptop)} lib_max={fmt(ltop)} open={lopen}"
            f" bound={bound(lopen)} samples={nsamp}{extra}")
    if why:
        print(line + " FAIL")
        for w in why:
            print(f"  FAIL: {w}")
        sys.exit(1)
    print(line + " ok")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, argv = sys.argv[1], sys.argv[2:]
    {"watch": watch, "once": once, "verdict": verdict}.get(cmd, lambda _: sys.exit(__doc__))(argv)


if __name__ == "__main__":
    main()
