#!/usr/bin/env python3
"""Reads the coherence plugin's windows (RESULTS/raw/*.txt) and the guests'
console logs, checks the validation microbenchmark, and prints per variant
and vCPU count the transfers per memcached request; writes results.csv,
summary.csv, validation.txt and coherence.png (gnuplot) into RESULTS.

  report.py RESULTS            full run
  report.py --smoke RESULTS    only the smoke boot's validation
  report.py --micro FILE NAME  validate one microbenchmark boot's windows

Exit status 1 when a validation fails or an expected window is missing.
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
VARIANTS = ["plain", "lib", "lib+fdcache", "fdcache", "lib-rr"]


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
            cur = {"label": rest, "L": kv(rest), "S": {}, "F": [], "lines": []}
        elif cur is None:
            continue
        elif tag == "S":
            cur["S"] = {k: int(v) for k, v in kv(rest).items()}
        elif tag == "F":
            name, cat = rest.split()[:2]
            cur["F"].append((name, cat, {k: int(v) for k, v in kv(rest).items()}))
        elif tag == "L":
            f = rest.split()
            cur["lines"].append((f[1], {k: int(v) for k, v in kv(rest).items()}))
        elif tag == "E":
            out.append(cur)
            cur = None
    return out


def validate(path, name):
    ws = {w["L"].get("mode"): w for w in windows(path) if w["label"].startswith("micro")}
    if "inter" not in ws or "sep" not in ws:
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
    cats = [c for c in ("lookup", "create", "close", "other") if d.get(c)]
    return "?(" + "+".join(cats) + ")"


def main():
    args = sys.argv[1:]
    if args and args[0] == "--micro":
        ok, msg = validate(args[1], args[2])
        print(msg)
        return 0 if ok else 1
    smoke = args and args[0] == "--smoke"
    if smoke:
        args = args[1:]
    res = args[0]
    raw = os.path.join(res, "raw")
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
    open(os.path.join(res, "validation.txt"), "w").write("\n".join(vlines) + "\n")

    rows = []
    for path in sorted(glob.glob(os.path.join(raw, "smp*-r*-*.txt"))):
        m = re.search(r"smp(\d+)-r(\d+)-(.+)\.txt$", path)
        smp, rnd, var = int(m.group(1)), int(m.group(2)), m.group(3)
        ws = [w for w in windows(path) if w["label"].startswith("mc")]
        con = path[:-4] + ".log"
        log = open(con, errors="replace").read() if os.path.exists(con) else ""
        if len(ws) != 1:
            print(f"{os.path.basename(path)}: no memcached window; see {con}")
            status = 1
            continue
        w = ws[0]
        preload = "COH preload active" in log
        if preload != var.startswith("lib"):
            print(f"{os.path.basename(path)}: preload {'present' if preload else 'absent'} "
                  f"in variant {var}: discarded")
            status = 1
            continue
        fds = re.search(r"COH server_fds (.*)", log)
        n = int(w["L"]["requests"])
        rows.append({
            "smp": smp, "round": rnd, "variant": var, "requests": n,
            "reconnects": int(w["L"].get("reconnects", 0)),
            "lookup_xfer": w["S"]["lookup_xfer"], "lookup_hitm": w["S"]["lookup_hitm"],
            "xfer": w["S"]["xfer"], "hitm": w["S"]["hitm"],
            "accesses": w["S"]["accesses"], "switches": w["S"]["switches"],
            "lines": w["lines"], "fds": fds.group(1).split() if fds else [],
        })

    with open(os.path.join(res, "results.csv"), "w") as f:
        f.write("smp,variant,round,requests,reconnects,lookup_xfer,lookup_hitm,all_xfer,all_hitm,"
                "accesses,switches\n")
        for r in sorted(rows, key=lambda r: (r["smp"], VARIANTS.index(r["variant"]), r["round"])):
            f.write(f"{r['smp']},{r['variant']},{r['round']},{r['requests']},{r['reconnects']},"
                    f"{r['lookup_xfer']},{r['lookup_hitm']},{r['xfer']},{r['hitm']},"
                    f"{r['accesses']},{r['switches']}\n")

    summary = []
    print()
    print("fd-table cache-line transfers per memcached request (median [min-max] over rounds);")
    print("'vs plain': median fd-lookup transfers relative to plain at the same vCPU count;")
    print("'switch%': share of instrumented accesses whose vCPU differs from the previous one")
    print(f"{'smp':>3} {'variant':<12} {'n':>2} {'fd-lookup xfer/req':<26} {'vs plain':>8} "
          f"{'all listed xfer/req':<26} {'lookup HITM/req':<26} {'switch%':>7}")
    for smp in sorted({r["smp"] for r in rows}):
        if not valid.get(smp):
            print(f"{smp:>3} not reported: the validation microbenchmark failed or is missing")
            status = 1
            continue
        by = {v: [r for r in rows if r["smp"] == smp and r["variant"] == v] for v in VARIANTS}
        plain = [r["lookup_xfer"] / r["requests"] for r in by["plain"]]
        for v in VARIANTS:
            rs = by[v]
            if not rs:
                continue
            look = [r["lookup_xfer"] / r["requests"] for r in rs]
            allx = [r["xfer"] / r["requests"] for r in rs]
            hitm = [r["lookup_hitm"] / r["requests"] for r in rs]
            sw = [100.0 * r["switches"] / max(r["accesses"], 1) for r in rs]
            rel = (f"{100 * statistics.median(look) / statistics.median(plain):7.1f}%"
                   if plain and statistics.median(plain) > 0 else "     n/a")
            print(f"{smp:>3} {v:<12} {len(rs):>2} {fmt(look):<26} {rel:>8} {fmt(allx):<26} "
                  f"{fmt(hitm):<26} {statistics.median(sw):7.1f}")
            summary.append((smp, v, len(rs)) + med_range(look) + med_range(allx) + med_range(hitm))
    with open(os.path.join(res, "summary.csv"), "w") as f:
        f.write("smp,variant,rounds,lookup_med,lookup_min,lookup_max,all_med,all_min,all_max,"
                "lookup_hitm_med,lookup_hitm_min,lookup_hitm_max\n")
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
                    a = agg.setdefault(line_key(name, d), [0, 0, 0, 0, 0])
                    for i, k in enumerate(("xfer", "lookup", "create", "close", "other")):
                        a[i] += d.get(k, 0)
            top = sorted(agg.items(), key=lambda kv_: -kv_[1][0])[:6]
            print(f"-smp {smp} {v}:")
            for name, a in top:
                print(f"    {a[0] / n:8.4f}  {name:<58} lookup {a[1] / n:.4f} create {a[2] / n:.4f} "
                      f"close {a[3] / n:.4f} other {a[4] / n:.4f}")
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
        f.write("variant " + " ".join(f"smp{s} lo hi" for s in smps) + "\n")
        for v in VARIANTS:
            cells = []
            for smp in smps:
                s = [x for x in summary if x[0] == smp and x[1] == v]
                cells += [f"{s[0][3]:.6f} {s[0][4]:.6f} {s[0][5]:.6f}"] if s else ["0 0 0"]
            f.write(f'"{v}" ' + " ".join(cells) + "\n")
    plots = ", ".join(f"'{data}' using {2 + 3 * i}:{3 + 3 * i}:{4 + 3 * i}:xtic(1) title '-smp {s}'"
                      for i, s in enumerate(smps))
    script = f"""set terminal pngcairo size 900,480 font "sans,10"
set output "{os.path.join(res, 'coherence.png')}"
set title "fd-lookup cache-line transfers per memcached request (QEMU TCG model; median, bars min..max)"
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
