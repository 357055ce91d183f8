#!/usr/bin/env python3
"""Reads the coherence plugin's windows (RESULTS/raw/*.txt) and the guests'
console logs, checks the validation microbenchmark, and prints per variant
and vCPU count the transfers per memcached request; writes results.csv,
summary.csv, validation.txt and coherence.png (gnuplot) into RESULTS.

  report.py RESULTS            full run
  report.py --smoke RESULTS    only the smoke boot's validation
  report.py --micro FILE NAME  validate one microbenchmark boot's windows
  report.py --sweep DIR...     one table over several runs' RESULTS (one
                               connection count and reconnect rate each,
                               as sweep.sh makes them)
  report.py --per-conn DIR...  the full count split per accepted connection:
                               struct file, file_lock's line, the fd table
  report.py --manycore OUT DIR...  the thread-count table (manycore.sh):
                               per shape, connections, reconnect rate, vCPU
                               count and variant: full count and fd-table
                               lookups x plain, file_lock's line and the
                               spin lock's slow path per connection; writes
                               OUT.csv, OUT.txt and OUT.png
  report.py --chart OUT CSV...     that chart again from kept OUT.csv files
                               (docs/results/*.csv), their rows together

Exit status 1 when a validation fails or an expected window is missing, 2 on
bad usage.
"""
import glob
import os
import re
import statistics
import subprocess
import sys

# The microbenchmark must separate interleaved from separated fds by this
# factor in fd-lookup transfers per iteration...
MIN_SEPARATION = 50.0
# ...and both of its windows must show the threads running at once: the
# share of churner iterations during which the reader made progress.
MIN_OVERLAP = 0.10
VARIANTS = ["plain", "lib", "lib-all", "lib+fdcache", "lib-all+fdcache", "fdcache", "lib-rr",
            "lib-rr+fdcache", "range", "lib+assist", "lib-all+assist", "lib+assist+fdcache",
            "lib-all+assist+fdcache", "range-sub", "lib-keep", "lib-move", "lib+assist-nolock",
            "lib+assist-w64", "lib+assist-nolock-w64", "lib+assist-nolock-w512"]


def kv(text):
    return dict(re.findall(r"(\w+)=(\S+)", text))


def windows(path):
    """Each window: {'label', 'L' (label fields), 'S', 'F', 'lines'}."""
    out, cur = [], None
    if not os.path.exists(path):
        return out
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        tag, _, rest = line.partition(" ")
        if tag == "W":
            cur = {"label": rest, "L": kv(rest), "S": {}, "F": [], "lines": [], "C": {}}
        elif cur is None:
            continue
        elif tag == "S":
            cur["S"] = {k: int(v) for k, v in kv(rest).items()}
        elif tag == "F":
            name, cat = rest.split()[:2]
            cur["F"].append((name, cat, {k: int(v) for k, v in kv(rest).items()}))
        elif tag == "C":
            f = rest.split()
            cur["C"][f[0]] = {k: int(v) for k, v in kv(rest).items()}
        elif tag == "L":
            f = rest.split()
            cur["lines"].append((f[1], {k: int(v) for k, v in kv(rest).items()}))
        elif tag == "E":
            out.append(cur)
            cur = None
    return out


def validate(path, name):
    ws = {w["L"].get("mode"): w for w in windows(path) if w["label"].startswith("micro")}
    need = ("requests", "churns", "overlap")
    if "inter" not in ws or "sep" not in ws or any(k not in ws[m]["L"] for m in ws for k in need):
        msg = f"validation {name}: FAIL, microbenchmark windows missing in {path}"
        return False, msg
    # Normalised by the churner's iterations: its fd_install and close are
    # the writes that make the reader's lookups miss, and how many it gets
    # to do depends on how the host ran the two vCPU threads.
    rate, ov, churns = {}, {}, {}
    for m in ("inter", "sep"):
        w = ws[m]
        churns[m] = max(int(w["L"]["churns"]), 1)
        rate[m] = w["S"]["lookup_xfer"] / churns[m]
        ov[m] = float(w["L"]["overlap"])
    # a separated count of 0 is "below 1 per window", not infinitely better
    floor = rate["sep"] < 1.0 / churns["sep"]
    sep = max(rate["sep"], 1.0 / churns["sep"])
    ratio = rate["inter"] / sep
    ok = ratio >= MIN_SEPARATION and min(ov.values()) >= MIN_OVERLAP
    msg = (f"validation {name}: interleaved {rate['inter']:.4f} fd-lookup transfers per churn "
           f"({ws['inter']['S']['lookup_xfer']} in {churns['inter']} churns, overlap {ov['inter']:.2f}), "
           f"separated {rate['sep']:.5f} ({ws['sep']['S']['lookup_xfer']} in {churns['sep']}, "
           f"overlap {ov['sep']:.2f}): {'>=' if floor else ''}{ratio:.0f}x; "
           f"need >= {MIN_SEPARATION:.0f}x and overlap >= {MIN_OVERLAP}: {'PASS' if ok else 'FAIL'}")
    return ok, msg


def med_range(xs):
    return statistics.median(xs), min(xs), max(xs)


def fmt(xs, digits=4):
    m, lo, hi = med_range(xs)
    return f"{m:.{digits}f} [{lo:.{digits}f}-{hi:.{digits}f}]"


def line_key(name, d):
    if name != "?":
        return name
    cats = [c for c in ("lookup", "create", "close", "other", "init", "lock") if d.get(c)]
    return "?(" + "+".join(cats) + ")"


def split_per_conn(w, locked, reconnects):
    """Window @w's full count split into report.py --per-conn's classes, per
    accepted connection; None without a reconnect (nothing to divide by).
    @locked: the line the lock functions move most (file_lock's), or None."""
    if not reconnects:
        return None
    unnamed = w["C"].get("unnamed", {})
    sf = w["C"].get("struct_file", {})
    # struct file lines that lookups and other code each move more than once
    # per five connections: files both sides of a hand-off use at every
    # connection (memcached: each worker's eventfd, written by the main
    # thread, read by the worker), not a connection's own file
    sf_shared = sum(d["xfer"] for name, d in w["lines"] if name == "struct_file"
                    and d.get("lookup", 0) > 0.2 * reconnects and d.get("other", 0) > 0.2 * reconnects)
    lock_line = locked[1]["xfer"] if locked else 0
    split = {
        "all": w["S"]["xfer"],
        "file shared": sf_shared,
        "file init": sf.get("init", 0),
        "file rest": sf.get("xfer", 0) - sf_shared - sf.get("init", 0),
        "other init": unnamed.get("init", 0),
        "lock line": lock_line,
        "table rest": (sum(w["C"].get(c, {}).get("xfer", 0) for c in ("fdtable", "fdcache_gen"))
                       + unnamed.get("xfer", 0) - unnamed.get("init", 0) - lock_line),
    }
    # 0 while the plugin's classes are the four above: it shows a class
    # added to the plugin and not to this split
    split["unclassed"] = split["all"] - sum(v for k, v in split.items() if k != "all")
    return {k: v / reconnects for k, v in split.items()}


def load_rows(raw):
    """The memcached windows of one run: (rows, status)."""
    status = 0
    rows = []
    for path in sorted(glob.glob(os.path.join(raw, "smp*-r*-*.txt"))):
        m = re.search(r"smp(\d+)-r(\d+)-(.+)\.txt$", path)
        smp, rnd, var = int(m.group(1)), int(m.group(2)), m.group(3)
        # "mc": memcached; "ac": guest/acceptd.c (run.sh --shape)
        ws = [w for w in windows(path) if w["label"].split(" ", 1)[0] in ("mc", "ac")]
        con = path[:-4] + ".log"
        log = open(con, errors="replace").read() if os.path.exists(con) else ""
        if len(ws) != 1:
            print(f"{os.path.basename(path)}: no memcached window; see {con}")
            status = 1
            continue
        w = ws[0]
        if "requests" not in w["L"]:
            print(f"{os.path.basename(path)}: window label incomplete ('{w['label']}'): discarded")
            status = 1
            continue
        preload = "COH preload active" in log
        # range-sub's preload is the experiment's (guest/subrange.c)
        if preload != (var.startswith("lib") or var == "range-sub"):
            print(f"{os.path.basename(path)}: preload {'present' if preload else 'absent'} "
                  f"in variant {var}: discarded")
            status = 1
            continue
        # The plugin finds the fd tables from the embedded one, at fdarray_off
        # (run.sh's PA_*). If that does not match the kernel's files_struct,
        # it finds none: file_lock's line gets an fd name, and the tables'
        # bitmap and fdcache counter lines fall into the unnamed class. The
        # full count stays right; the class columns do not.
        locked = max(w["lines"], key=lambda l: l[1].get("lock", 0), default=None)
        if locked and not locked[1].get("lock", 0):
            locked = None
        # judged only where the lock moved often (a window with no reconnect
        # takes it a handful of times, maybe less than some other lock)
        if locked and locked[1]["lock"] >= 50 and "file_lock" not in locked[0]:
            print(f"{path}: file_lock's line is named '{locked[0]}': fdarray_off does not "
                  f"match this kernel's files_struct, so the class columns are wrong")
            status = 1
        reconnects = int(w["L"].get("reconnects", 0))
        fds = re.search(r"COH server_fds (.*)", log)
        n = int(w["L"]["requests"])
        tpath = path[:-4] + ".time"
        boot_s = int(open(tpath).read()) if os.path.exists(tpath) else None
        rows.append({
            "smp": smp, "round": rnd, "variant": var, "requests": n,
            "shape": w["label"].split(" ", 1)[0], "boot_s": boot_s,
            # the spin lock's slow path, entered while a listed (fd-path)
            # function held the call: accesses (how long waiters spun, a
            # contention proxy) and transfers
            "slow_acc": sum(d["acc"] for name, cat, d in w["F"] if cat == "lock" and "slowpath" in name),
            "slow_xfer": sum(d["xfer"] for name, cat, d in w["F"] if cat == "lock" and "slowpath" in name),
            "lock_line": locked[1]["xfer"] if locked else 0,
            "reconnects": reconnects,
            "lookup_xfer": w["S"]["lookup_xfer"], "lookup_hitm": w["S"]["lookup_hitm"],
            "xfer": w["S"]["xfer"], "hitm": w["S"]["hitm"],
            "accesses": w["S"]["accesses"], "switches": w["S"]["switches"],
            "lines": w["lines"], "fds": fds.group(1).split() if fds else [],
            # lookup-caused transfers on the fd table's own lines (fd[],
            # files_struct, bitmaps, fdtable, fdcache_gen), on struct file
            # lines, and on lines the plugin could not name
            "table_lookup": sum(w["C"].get(c, {}).get("lookup", 0) for c in ("fdtable", "fdcache_gen")),
            "table_all": sum(w["C"].get(c, {}).get("xfer", 0) for c in ("fdtable", "fdcache_gen")),
            "gen_all": w["C"].get("fdcache_gen", {}).get("xfer", 0),
            "file_lookup": w["C"].get("struct_file", {}).get("lookup", 0),
            "file_all": w["C"].get("struct_file", {}).get("xfer", 0),
            # file_lock (and struct file's f_lock): the lock functions'
            # transfers while a listed function called them
            "lock_all": sum(d["xfer"] for _, cat, d in w["F"] if cat == "lock"),
            "init_all": sum(d["xfer"] for _, cat, d in w["F"] if cat == "init"),
            "conns": int(w["L"].get("conns", 0)), "churn": int(w["L"].get("churn", 0)),
            "unnamed_lookup": w["C"].get("unnamed", {}).get("lookup", 0),
            "has_classes": bool(w["C"]),
            "per_conn": split_per_conn(w, locked, reconnects),
        })

    return rows, status


def load_valid(raw):
    """{smp: validation passed} of one run, quietly."""
    valid = {}
    for path in sorted(glob.glob(os.path.join(raw, "smp*-micro.txt"))):
        smp = int(re.search(r"smp(\d+)-micro", path).group(1))
        valid[smp] = validate(path, f"-smp {smp}")[0]
    return valid


def validated_rows(d):
    """Run folder @d's memcached windows whose vCPU count passed validation:
    (rows, status), saying which vCPU counts are left out and why."""
    raw = os.path.join(d, "raw")
    valid = load_valid(raw)
    rs, status = load_rows(raw)
    for smp in sorted({r["smp"] for r in rs}):
        if not valid.get(smp):
            print(f"{d}: -smp {smp} not reported, its validation failed or is missing")
            status = 1
    return [r for r in rs if valid.get(r["smp"])], status


def sweep(dirs):
    """One table over runs of different connection counts and reconnect
    rates: the full count beside the fd-table lookups, each relative to
    plain in the same run, and what the library adds or removes per
    accepted connection."""
    rows, status = [], 0
    for d in dirs:
        rs, st = validated_rows(d)
        status |= st
        rows += [dict(r, run=d) for r in rs]
    if not rows:
        print("sweep: no validated memcached window")
        return 1

    def med(rs, key):
        return statistics.median([r[key] / r["requests"] for r in rs])

    def ratio(rs, base, key):
        # Below 0.001 per request (no reconnect in the window: nothing
        # writes the table) a ratio of a few transfers means nothing.
        b = med(base, key) if base else 0
        if b and (b < 1e-3 and med(rs, key) < 1e-3):
            return "    ~0"
        return f"{med(rs, key) / b:6.3f}" if b else "   n/a"

    print("Per memcached request, medians over rounds; x/plain: the same median of plain")
    print("in the same run. full: every listed function (lookup, create, close, init,")
    print("file_lock) on every line; fd-table lkp: lookups on the fd table's own lines;")
    print("lookup fns: lookups on any line; file: all transfers on struct file lines;")
    print("file_lock: the lock functions for listed callers; per accept: (full - plain's")
    print("full) x requests / reconnects, the transfers one accepted connection adds (+)")
    print("or removes (-).")
    print(f"{'conns':>5} {'churn':>5} {'smp':>3} {'variant':<22} {'n':>2} {'reconn':>6} {'full':>7} "
          f"{'x/plain':>7} {'fd-table lkp':>12} {'x/plain':>7} {'lookup fns':>10} {'x/plain':>7} "
          f"{'file':>7} {'x/plain':>7} {'file_lock':>9} {'x/plain':>7} {'per accept':>10}")
    out = []
    keys = sorted({(r["conns"], r["churn"], r["smp"], r["run"]) for r in rows})
    for conns, churn, smp, run in keys:
        here = [r for r in rows if (r["conns"], r["churn"], r["smp"], r["run"]) == (conns, churn, smp, run)]
        base = [r for r in here if r["variant"] == "plain"]
        for v in VARIANTS:
            rs = [r for r in here if r["variant"] == v]
            if not rs:
                continue
            rec = statistics.median([r["reconnects"] for r in rs])
            per = ""
            if base and v != "plain" and rec > 0:
                n = statistics.median([r["requests"] for r in rs])
                per = f"{(med(rs, 'xfer') - med(base, 'xfer')) * n / rec:+10.2f}"
            print(f"{conns:>5} {churn:>5} {smp:>3} {v:<22} {len(rs):>2} {rec:>6.0f} {med(rs, 'xfer'):7.4f} "
                  f"{ratio(rs, base, 'xfer'):>7} {med(rs, 'table_lookup'):12.4f} {ratio(rs, base, 'table_lookup'):>7} "
                  f"{med(rs, 'lookup_xfer'):10.4f} {ratio(rs, base, 'lookup_xfer'):>7} "
                  f"{med(rs, 'file_all'):7.4f} {ratio(rs, base, 'file_all'):>7} "
                  f"{med(rs, 'lock_all'):9.4f} {ratio(rs, base, 'lock_all'):>7} {per:>10}")
            out.append((conns, churn, smp, v, len(rs), rec, med(rs, "xfer"), med(rs, "table_lookup"),
                        med(rs, "lookup_xfer"), med(rs, "file_all"), med(rs, "lock_all")))
    with open(os.path.join(os.path.dirname(os.path.abspath(dirs[0])), "sweep.csv"), "w") as f:
        f.write("conns,churn,smp,variant,rounds,reconnects,full,table_lookup,lookup_fns,file_all,file_lock\n")
        for o in out:
            f.write(",".join(f"{x:.6f}" if isinstance(x, float) else str(x) for x in o) + "\n")
    return status


PER_CONN = ["all", "file shared", "file init", "file rest", "other init", "lock line",
            "table rest", "unclassed"]


def per_conn(dirs):
    """The full count split per accepted connection (transfers / reconnects),
    medians over rounds: which part placement can change (the fd table's
    lines) and which it cannot (docs/results/2026-12-05-coherence-what-is-left.md)."""
    status = 0
    print("Per accepted connection (transfers in the window / reconnects), medians over")
    print("rounds. file shared: struct file lines that lookups and other code each move")
    print("more than once per 5 connections (memcached: the workers' eventfds); file init:")
    print("initialising struct files; file rest: other struct file transfers; other init:")
    print("other objects the listed init functions write; lock line: the line the lock")
    print("functions move most (file_lock's); table rest: the other fd-table lines (fd[],")
    print("bitmaps, fdcache counters) and every non-init transfer on lines the plugin")
    print("cannot name; unclassed: a class the plugin has and this split does not (0).")
    print(f"{'conns':>5} {'churn':>5} {'smp':>3} {'variant':<22} {'n':>2}"
          + "".join(f"{k:>12}" for k in PER_CONN))
    for d in dirs:
        rs, st = validated_rows(d)
        status |= st
        if not rs:
            print(f"{d}: no validated memcached window")
            status = 1
        for smp in sorted({r["smp"] for r in rs}):
            for v in VARIANTS:
                here = [r for r in rs if r["smp"] == smp and r["variant"] == v]
                if not here:
                    continue
                r0 = here[0]
                head = f"{r0['conns']:>5} {r0['churn']:>5} {smp:>3} {v:<22} {len(here):>2}"
                if any(r["per_conn"] is None for r in here):
                    print(head + "  no reconnect in the window: nothing per connection")
                    continue
                print(head + "".join(f"{statistics.median([r['per_conn'][k] for r in here]):12.2f}"
                                     for k in PER_CONN))
    return status


def manycore(out, dirs):
    """The thread-count table: one row per shape, connections, reconnect
    rate, vCPU count and variant, relative to plain of the same run."""
    rows, status = [], 0
    for d in dirs:
        rs, st = validated_rows(d)
        status |= st
        rows += rs
    if not rows:
        print("manycore: no validated window")
        return 1
    lines = []
    p = lines.append
    p("Per request (full, lookups) and per accepted connection (lock columns),")
    p("medians over boots; x plain: against plain's median at the same point.")
    p("full: every listed fd-path function on every line; lkp: lookups on the fd")
    p("table's own lines; lock line: transfers of file_lock's line; slow acc /")
    p("slow xfer: accesses and transfers in the spin lock's slow path called from")
    p("an fd-path function (a contention proxy); spread: min-max of full x plain's")
    p("median over the boots; switch%: instrumented accesses made on another vCPU")
    p("than the one before; boot: seconds per boot.")
    p(f"{'shape':<5} {'conns':>5} {'churn':>5} {'smp':>3} {'variant':<11} {'n':>2} {'full':>7} "
      f"{'x plain':>7} {'spread':>11} {'lkp x pl':>8} {'lock line':>9} {'slow acc':>8} {'slow xfer':>9} "
      f"{'switch%':>7} {'boot':>5}")
    csv = ["shape,conns,churn,smp,variant,boots,reconnects,full,full_x_plain,full_min_x,full_max_x,"
           "lookup_x_plain,lock_line_per_conn,slow_acc_per_conn,slow_xfer_per_conn,lock_line_share,"
           "switch_pct,boot_s"]
    keys = sorted({(r["shape"], r["conns"], r["churn"], r["smp"]) for r in rows})
    order = ["plain", "lib", "lib+assist"] + [v for v in VARIANTS if v not in ("plain", "lib", "lib+assist")]
    for shape, conns, churn, smp in keys:
        here = [r for r in rows if (r["shape"], r["conns"], r["churn"], r["smp"]) == (shape, conns, churn, smp)]
        base = [r for r in here if r["variant"] == "plain"]
        bfull = statistics.median([r["xfer"] / r["requests"] for r in base]) if base else 0
        blkp = statistics.median([r["table_lookup"] / r["requests"] for r in base]) if base else 0
        for v in order:
            rs = [r for r in here if r["variant"] == v]
            if not rs:
                continue
            full = [r["xfer"] / r["requests"] for r in rs]
            rec = statistics.median([r["reconnects"] for r in rs]) or 0
            perc = lambda k: statistics.median([r[k] / max(r["reconnects"], 1) for r in rs]) if rec else float("nan")
            lkp = statistics.median([r["table_lookup"] / r["requests"] for r in rs])
            sw = statistics.median([100.0 * r["switches"] / max(r["accesses"], 1) for r in rs])
            boots = [r["boot_s"] for r in rs if r["boot_s"] is not None]
            boot = statistics.median(boots) if boots else float("nan")
            fx = statistics.median(full) / bfull if bfull else float("nan")
            lo, hi = (min(full) / bfull, max(full) / bfull) if bfull else (float("nan"),) * 2
            lx = lkp / blkp if blkp else float("nan")
            share = statistics.median([r["lock_line"] / max(r["xfer"], 1) for r in rs])
            p(f"{shape:<5} {conns:>5} {churn:>5} {smp:>3} {v:<11} {len(rs):>2} {statistics.median(full):7.3f} "
              f"{fx:7.3f} {lo:5.3f}-{hi:5.3f} {lx:8.3f} {perc('lock_line'):9.2f} {perc('slow_acc'):8.2f} "
              f"{perc('slow_xfer'):9.2f} {sw:7.1f} {boot:5.0f}")
            csv.append(",".join(str(x) for x in (shape, conns, churn, smp, v, len(rs), rec,
                                                 f"{statistics.median(full):.6f}", f"{fx:.4f}", f"{lo:.4f}",
                                                 f"{hi:.4f}", f"{lx:.4f}", f"{perc('lock_line'):.4f}",
                                                 f"{perc('slow_acc'):.4f}", f"{perc('slow_xfer'):.4f}",
                                                 f"{share:.4f}", f"{sw:.2f}", f"{boot:.0f}")))
    text = "\n".join(lines) + "\n"
    print(text, end="")
    open(out + ".txt", "w").write(text)
    open(out + ".csv", "w").write("\n".join(csv) + "\n")
    manycore_chart(out, csv[1:])
    return status


def manycore_chart(out, csv):
    """Full count x plain against the vCPU count, one line per shape,
    connections, reconnect rate and variant (plain is 1 by definition)."""
    series = {}
    for row in csv:
        f = row.split(",")
        if f[4] == "plain" or f[8] == "nan":
            continue
        series.setdefault(f"{f[0]} c{f[1]} k{f[2]} {f[4]}", []).append((int(f[3]), float(f[8])))
    if not series:
        return
    data = out + ".dat"
    with open(data, "w") as fh:
        for name, pts in series.items():
            fh.write(f'"{name}"\n')
            for smp, x in sorted(pts):
                fh.write(f"{smp} {x:.4f}\n")
            fh.write("\n\n")
    plots = ", ".join(f"'{data}' index {i} using 1:2 with linespoints title columnheader(1)"
                      for i in range(len(series)))
    top = max(smp for pts in series.values() for smp, _ in pts)
    script = f"""set terminal pngcairo size 1000,560 font "sans,10"
set output "{out}.png"
set title "Full count x plain against vCPUs = worker threads (QEMU TCG coherence model)"
set xlabel "vCPUs (= worker threads)"
set ylabel "full count x plain"
set logscale x 2
set xtics (2, 4, 8, 16, 32)
set xrange [1.6:{top * 1.25}]
set key outside right
set grid
plot {plots}, 1 with lines lc rgb "black" dt 2 title "plain"
"""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"chart: gnuplot failed: {e}")


def usage(msg=None):
    if msg:
        print(f"report.py: {msg}", file=sys.stderr)
    print(__doc__.split("\n\n")[1], file=sys.stderr if msg else sys.stdout)
    return 2 if msg else 0


def main():
    args = sys.argv[1:]
    if args and args[0] in ("-h", "--help"):
        return usage()
    if not args:
        return usage("no RESULTS folder given")
    if args[0] == "--micro" and len(args) != 3:
        return usage("--micro takes FILE NAME")
    if args[0] in ("--sweep", "--per-conn") and len(args) < 2:
        return usage(f"{args[0]} takes one or more DIRs")
    if args[0] == "--chart":
        if len(args) < 3:
            return usage("--chart takes OUT CSV...")
        rows = []
        for f in args[2:]:
            try:
                rows += [l for l in open(f).read().splitlines()[1:] if l.strip()]
            except OSError as e:
                return usage(f"--chart: {e}")
        manycore_chart(args[1], rows)
        return 0 if os.path.exists(args[1] + ".png") else 1
    if args[0] == "--manycore":
        if len(args) < 3:
            return usage("--manycore takes OUT DIR...")
        for d in args[2:]:
            if not os.path.isdir(os.path.join(d, "raw")):
                return usage(f"'{d}' has no raw/ folder: not a run.sh results folder")
        return manycore(args[1], args[2:])
    if args[0].startswith("-") and args[0] not in ("--sweep", "--per-conn", "--micro", "--smoke"):
        return usage(f"unknown option '{args[0]}' (accepted: --smoke, --micro, --sweep, --per-conn, "
                     "--manycore, --chart, --help)")
    if args[0] == "--smoke" and len(args) != 2:
        return usage("--smoke takes RESULTS")
    if not args[0].startswith("-") and len(args) != 1:
        return usage("one RESULTS folder; for several, --sweep or --per-conn")
    if args[0] in ("--sweep", "--per-conn"):
        # a point whose run.sh died before its first boot has no raw/: the
        # other points are still worth a table
        dirs = [d for d in args[1:] if os.path.isdir(os.path.join(d, "raw"))]
        for d in sorted(set(args[1:]) - set(dirs)):
            print(f"{d}: no raw/ folder (not a run.sh results folder, or its run failed early): left out")
        if not dirs:
            return 1
        st = sweep(dirs) if args[0] == "--sweep" else per_conn(dirs)
        return st | (len(dirs) != len(args[1:]))
    if args[0] == "--micro":
        ok, msg = validate(args[1], args[2])
        print(msg)
        return 0 if ok else 1
    smoke = args[0] == "--smoke"
    if smoke:
        args = args[1:]
    res = args[0]
    raw = os.path.join(res, "raw")
    if not os.path.isdir(raw):
        return usage(f"'{res}' has no raw/ folder: not a run.sh results folder")
    if smoke:
        ok, msg = validate(os.path.join(raw, "smoke-micro.txt"), "smoke (Debian kernel, -smp 2)")
        print(msg)
        return 0 if ok else 1

    status = 0
    valid = {}
    vlines = []
    for path in sorted(glob.glob(os.path.join(raw, "smp*-micro.txt"))):
        smp = int(re.search(r"smp(\d+)-micro", path).group(1))
        ok, msg = validate(path, f"-smp {smp}")
        valid[smp] = ok
        vlines.append(msg)
        print(msg)
        status |= not ok
    # a vCPU count whose every try failed has only smpN-micro.tryK files
    for path in sorted(glob.glob(os.path.join(raw, "smp*-micro.try*.txt"))):
        smp = int(re.search(r"smp(\d+)-micro", path).group(1))
        if smp not in valid:
            valid[smp] = False
            msg = f"validation -smp {smp}: FAIL in every try; its memcached figures are not reported"
            vlines.append(msg)
            print(msg)
            status = 1
    open(os.path.join(res, "validation.txt"), "w").write("\n".join(vlines) + "\n")

    # fdcache counter sharing, on the fdcache kernel: the reader's fd 64 and
    # the churner's fd 128 (sep) or 576 (alias: the first design's 8
    # counters per table put 64 and 576 on one counter; with a counter per
    # 64-fd range, as now, alias must look like sep: checked)
    for path in sorted(glob.glob(os.path.join(raw, "smp*-counters.txt"))):
        smp = int(re.search(r"smp(\d+)-counters", path).group(1))
        ws = {w["L"].get("mode"): w for w in windows(path) if w["label"].startswith("micro")}
        if "sep" not in ws or "alias" not in ws or any("churns" not in w["L"] for w in ws.values()):
            print(f"fdcache counters -smp {smp}: windows missing in {path}")
            status = 1
            continue
        parts = []
        gen_per_churn = {}
        for m in ("sep", "alias"):
            w = ws[m]
            c = max(int(w["L"]["churns"]), 1)
            gen = w["C"].get("fdcache_gen", {})
            gen_per_churn[m] = (gen.get("lookup", 0) + gen.get("close", 0)) / c
            parts.append(f"{m}: {w['S']['lookup_xfer'] / c:.3f} lookup transfers per churn, "
                         f"fdcache_gen {gen.get('lookup', 0) / c:.3f} (lookups) + "
                         f"{gen.get('close', 0) / c:.3f} (closes), overlap {float(w['L']['overlap']):.2f}")
        low = min(float(w["L"]["overlap"]) for w in ws.values()) < MIN_OVERLAP
        # 0.1 per churn: the first design showed ~1.9 (lookups + closes)
        shared = not low and gen_per_churn["alias"] > 0.1
        print(f"fdcache counters -smp {smp} (reader fd 64; churner fd 128, or 576, which "
              f"shared 64's counter in the first design): " + "; ".join(parts) +
              (f" -- overlap below {MIN_OVERLAP}: not evidence" if low else "") +
              (": FAIL, fds 512 apart still share an invalidation counter" if shared else
               ": PASS" if not low else ""))
        if shared:
            status = 1

    rows, st = load_rows(raw)
    status |= st

    with open(os.path.join(res, "results.csv"), "w") as f:
        f.write("smp,variant,round,requests,reconnects,table_lookup_xfer,lookup_xfer,lookup_hitm,"
                "file_lookup_xfer,unnamed_lookup_xfer,table_all_xfer,gen_all_xfer,all_xfer,all_hitm,"
                "accesses,switches\n")
        for r in sorted(rows, key=lambda r: (r["smp"], VARIANTS.index(r["variant"]), r["round"])):
            f.write(f"{r['smp']},{r['variant']},{r['round']},{r['requests']},{r['reconnects']},"
                    f"{r['table_lookup']},{r['lookup_xfer']},{r['lookup_hitm']},{r['file_lookup']},"
                    f"{r['unnamed_lookup']},{r['table_all']},{r['gen_all']},{r['xfer']},{r['hitm']},"
                    f"{r['accesses']},{r['switches']}\n")

    summary = []
    def per_req(rs, key):
        return [r[key] / r["requests"] for r in rs]

    def rel(xs, base):
        if not base or statistics.median(base) == 0:
            return "     n/a"
        return f"{100 * statistics.median(xs) / statistics.median(base):7.1f}%"

    print()
    print("Cache-line transfers per memcached request, median [min-max] over rounds.")
    print("full count: every transfer by any listed function (lookup, create, close,")
    print("init, and file_lock taken by them) on any line: what the fd paths cost in all;")
    print("fd-table lookups: lookups' transfers on the fd table's own lines (fd[],")
    print("files_struct, bitmaps, struct fdtable, fdcache_gen), the part placement")
    print("targets; lookup fns: every transfer by a lookup function, whatever line;")
    print("'vs plain': medians relative to plain at the same -smp.")
    print(f"{'smp':>3} {'variant':<22} {'n':>2} {'full count xfer/req':<26} {'vs plain':>8} "
          f"{'fd-table lookup xfer/req':<26} {'vs plain':>8} {'lookup fns':>10} {'vs plain':>8}")
    table2 = []
    for smp in sorted({r["smp"] for r in rows}):
        if not valid.get(smp):
            print(f"{smp:>3} not reported: the validation microbenchmark failed or is missing")
            status = 1
            continue
        by = {v: [r for r in rows if r["smp"] == smp and r["variant"] == v] for v in VARIANTS}
        for v in VARIANTS:
            rs = by[v]
            if not rs:
                continue
            tab = per_req(rs, "table_lookup")
            look = per_req(rs, "lookup_xfer")
            tabs = fmt(tab) if all(r["has_classes"] for r in rs) else "n/a (plugin too old)"
            full = per_req(rs, "xfer")
            print(f"{smp:>3} {v:<22} {len(rs):>2} {fmt(full):<26} "
                  f"{rel(full, per_req(by['plain'], 'xfer')):>8} {tabs:<26} "
                  f"{rel(tab, per_req(by['plain'], 'table_lookup')):>8} {statistics.median(look):10.4f} "
                  f"{rel(look, per_req(by['plain'], 'lookup_xfer')):>8}")
            med = lambda k: statistics.median(per_req(rs, k))
            sw = statistics.median([100.0 * r["switches"] / max(r["accesses"], 1) for r in rs])
            table2.append((smp, v, med("file_lookup"), med("unnamed_lookup"), med("table_all"),
                           med("gen_all"), med("file_all"), med("lock_all"), med("xfer"),
                           med("lookup_hitm"), sw))
            summary.append((smp, v, len(rs)) + med_range(tab) + med_range(look) +
                           med_range(per_req(rs, "xfer")))
    if table2:
        print()
        print("Breakdown (medians per request): lookup transfers on struct file lines and on")
        print("unnamed lines (with fdcache: the per-task cache in task_struct); transfers by all")
        print("listed functions on fd-table lines, on fdcache_gen lines, on struct file lines;")
        print("file_lock: the lock functions' transfers for listed callers; all lines: the full")
        print("count; lookup HITMs; switch%: share of instrumented accesses made on another vCPU")
        print("than the one before.")
        print(f"{'smp':>3} {'variant':<22} {'file lkp':>9} {'unnamed lkp':>11} {'table all':>9} "
              f"{'gen all':>8} {'file all':>8} {'file_lock':>9} {'all lines':>9} {'lkp HITM':>9} {'switch%':>7}")
        for t in table2:
            print(f"{t[0]:>3} {t[1]:<22} {t[2]:9.4f} {t[3]:11.4f} {t[4]:9.4f} {t[5]:8.4f} {t[6]:8.4f} "
                  f"{t[7]:9.4f} {t[8]:9.4f} {t[9]:9.4f} {t[10]:7.1f}")
    with open(os.path.join(res, "summary.csv"), "w") as f:
        f.write("smp,variant,rounds,table_lookup_med,table_lookup_min,table_lookup_max,"
                "lookup_fns_med,lookup_fns_min,lookup_fns_max,all_med,all_min,all_max\n")
        for s in summary:
            f.write(",".join(str(x) if not isinstance(x, float) else f"{x:.6f}" for x in s) + "\n")

    print()
    print("top lines by transfers (sum over rounds, per request; columns: by the function category")
    print("of the access that caused the transfer)")
    for smp in sorted({r["smp"] for r in rows}):
        if not valid.get(smp):
            continue
        for v in VARIANTS:
            rs = [r for r in rows if r["smp"] == smp and r["variant"] == v]
            if not rs:
                continue
            n = sum(r["requests"] for r in rs)
            agg = {}
            for r in rs:
                for name, d in r["lines"]:
                    a = agg.setdefault(line_key(name, d), [0, 0, 0, 0, 0, 0, 0])
                    for i, k in enumerate(("xfer", "lookup", "create", "close", "other", "init", "lock")):
                        a[i] += d.get(k, 0)
            top = sorted(agg.items(), key=lambda kv_: -kv_[1][0])[:6]
            print(f"-smp {smp} {v}:")
            for name, a in top:
                print(f"    {a[0] / n:8.4f}  {name:<58} lookup {a[1] / n:.4f} create {a[2] / n:.4f} "
                      f"close {a[3] / n:.4f} other {a[4] / n:.4f} init {a[5] / n:.4f} lock {a[6] / n:.4f}")
            fds = rs[0]["fds"]
            if fds:
                print(f"    memcached fds after round {rs[0]['round']}: {' '.join(sorted(fds, key=int))}")

    chart(res, summary)
    return status


def chart(res, summary):
    if not summary:
        return
    smps = sorted({s[0] for s in summary})
    data = os.path.join(res, "chart.dat")
    with open(data, "w") as f:
        # a comment, not a header: gnuplot's histogram would take a header
        # row for a first, empty cluster and shift the error bars
        f.write("# variant " + " ".join(f"smp{s} lo hi" for s in smps) + "\n")
        for v in VARIANTS:
            if not any(x[1] == v for x in summary):
                continue
            cells = []
            for smp in smps:
                s = [x for x in summary if x[0] == smp and x[1] == v]
                cells += [f"{s[0][3]:.6f} {s[0][4]:.6f} {s[0][5]:.6f}"] if s else ["0 0 0"]
            f.write(f'"{v}" ' + " ".join(cells) + "\n")
    plots = ", ".join(f"'{data}' using {2 + 3 * i}:{3 + 3 * i}:{4 + 3 * i}:xtic(1) title '-smp {s}'"
                      for i, s in enumerate(smps))
    script = f"""set terminal pngcairo size 900,480 font "sans,10"
set output "{os.path.join(res, 'coherence.png')}"
set title "fd-table lines: lookup transfers per memcached request (QEMU TCG model; median, bars min..max)"
set ylabel "transfers per request"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set yrange [0:*]
set key top right
plot {plots}
"""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"chart: gnuplot failed: {e}")


if __name__ == "__main__":
    sys.exit(main())
