#!/usr/bin/env python3
"""report.py --manycore reads the lock columns from the plugin's windows:
file_lock's line per accepted connection (the line the lock functions move
most), the spin lock's slow path (accesses and transfers) per connection,
and the full count relative to plain of the same point; a vCPU count whose
validation failed is left out and makes the exit status 1.

Builds two small results folders by hand, in the plugin's output format
(bench/coherence/plugin/coherence.c, close_window), one per shape, and
checks the numbers report.py derives from them."""
import csv
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "..", "report.py")


def window(label, xfer, lookup, lock_line, slow_acc, slow_xfer):
    return (f"W {label}\n"
            f"S accesses=10000 switches=500 xfer={xfer} hitm=0 lookup_xfer={lookup} lookup_hitm=0 "
            f"lines=3 dropped=0 tables=1 fns=4\n"
            f"F fdget lookup acc=5000 xfer={lookup} hitm=0 lock=0\n"
            f"F alloc_fd create acc=300 xfer=100 hitm=0 lock={lock_line}\n"
            f"F queued_spin_lock_slowpath lock acc={slow_acc} xfer={slow_xfer} hitm=0 lock=0\n"
            f"C fdtable xfer={lookup + lock_line} hitm=0 lookup={lookup} create=0 close=0 other=0 init=0 "
            f"lock={lock_line}\n"
            f"C struct_file xfer=0 hitm=0 lookup=0 create=0 close=0 other=0 init=0 lock=0\n"
            f"C unnamed xfer={xfer - lookup - lock_line} hitm=0 lookup=0 create=0 close=0 other=0 "
            f"init=0 lock=0\n"
            f"L 0xffff888001000080 T1.files_struct+128(file_lock,next_fd,bitmaps,fd[0-2]) "
            f"xfer={lock_line} hitm=0 rd=1 wr=1 lookup=0 create=0 close=0 other=0 init=0 lock={lock_line}\n"
            f"L 0xffff888001000100 T1.fd[3-10] xfer={lookup} hitm=0 rd=1 wr=1 lookup={lookup} create=0 "
            f"close=0 other=0 init=0 lock=0\n"
            "E\n")


def micro(path, overlap):
    with open(path, "w") as f:
        f.write(window(f"micro mode=inter requests=1000 churns=1000 overlap={overlap}", 900, 900, 0, 0, 0))
        f.write(window(f"micro mode=sep requests=1000 churns=1000 overlap={overlap}", 5, 5, 0, 0, 0))


def boot(raw, name, shape, variant, xfer, lookup, lock_line, slow_acc, slow_xfer, secs):
    label = f"{shape} variant={variant} threads=8 requests=1000 conns=128 churn=5 reconnects=200"
    with open(os.path.join(raw, name + ".txt"), "w") as f:
        f.write(window(label, xfer, lookup, lock_line, slow_acc, slow_xfer))
    pre = "active" if variant.startswith("lib") else "absent"
    with open(os.path.join(raw, name + ".log"), "w") as f:
        f.write(f"COH BOOTED 6.12 cpus=8\nCOH preload {pre}\nCOH END\n")
    with open(os.path.join(raw, name + ".time"), "w") as f:
        f.write(f"{secs}\n")


def main():
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        dirs = []
        for shape, plain_x, lib_x in (("ac", 5000, 4000), ("mc", 6000, 6600)):
            d = os.path.join(tmp, shape)
            raw = os.path.join(d, "raw")
            os.makedirs(raw)
            micro(os.path.join(raw, "smp8-micro.txt"), 0.5)
            boot(raw, "smp8-r1-plain", shape, "plain", plain_x, 500, 600, 400, 40, 70)
            boot(raw, "smp8-r1-lib", shape, "lib", lib_x, 100, 800, 1000, 60, 90)
            # -smp 4 never validated (overlap too low): must be left out
            micro(os.path.join(raw, "smp4-micro.txt"), 0.01)
            boot(raw, "smp4-r1-plain", shape, "plain", plain_x, 500, 600, 400, 40, 30)
            dirs.append(d)
        out = os.path.join(tmp, "manycore")
        r = subprocess.run([sys.executable, REPORT, "--manycore", out] + dirs, capture_output=True, text=True)
        print(r.stdout, r.stderr)
        if r.returncode != 1:
            print(f"FAIL: exit {r.returncode}, expected 1 (-smp 4's validation failed)")
            fails += 1
        rows = {(x["shape"], x["smp"], x["variant"]): x for x in csv.DictReader(open(out + ".csv"))}
        want = {
            # full x plain, lookups x plain, lock line / conn, slow acc / conn, slow xfer / conn
            ("ac", "8", "plain"): (1.0, 1.0, 3.0, 2.0, 0.2, 70),
            ("ac", "8", "lib"): (0.8, 0.2, 4.0, 5.0, 0.3, 90),
            ("mc", "8", "lib"): (1.1, 0.2, 4.0, 5.0, 0.3, 90),
        }
        for key, (fx, lx, ll, sa, sx, bt) in want.items():
            row = rows.get(key)
            if not row:
                print(f"FAIL: no row for {key}")
                fails += 1
                continue
            got = (float(row["full_x_plain"]), float(row["lookup_x_plain"]), float(row["lock_line_per_conn"]),
                   float(row["slow_acc_per_conn"]), float(row["slow_xfer_per_conn"]), float(row["boot_s"]))
            if any(abs(g - w) > 1e-3 for g, w in zip(got, (fx, lx, ll, sa, sx, bt))):
                print(f"FAIL: {key}: got {got}, expected {(fx, lx, ll, sa, sx, bt)}")
                fails += 1
        if any(k[1] == "4" for k in rows):
            print("FAIL: -smp 4 reported although its validation failed")
            fails += 1
        if not os.path.exists(out + ".txt"):
            print("FAIL: no manycore.txt")
            fails += 1
    print(f"{3 - min(fails, 3)} passed, {min(fails, 3)} failed" if fails else "1 passed, 0 failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
