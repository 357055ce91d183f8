#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fdrange profile and perf report on the same samples: memcached -t 4 under
# memcaslap, recorded once with 'perf record -e cpu-clock -g'.  The share of
# each path (the table's functions, as `fdrange profile --functions` lists
# them, summed from `perf report --no-children`) agrees within 0.5
# percentage points with fdrange profile --perf-data.  And fdrange profile's
# own sampler, on the same server meanwhile, finds the workers' lookups.
. "$(dirname "$0")/lib.sh"
for t in memcached memcaslap perf; do
	command -v $t >/dev/null || { echo "$t not installed: skipping"; exit 77; }
done
can_profile
user=()
[ "$(id -u)" -ne 0 ] || user=(-u root)
port=$(free_port)
memcached "${user[@]}" -t 4 -m 256 -p "$port" -U 0 -l 127.0.0.1 </dev/null >"$TMP/mc.log" 2>&1 &
mc=$!
PIDS="$mc"
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
memcaslap -s "127.0.0.1:$port" -T 2 -c 64 -t 8s >"$TMP/load.log" 2>&1 &
PIDS="$PIDS $!"
sleep 1
perf record -q -e cpu-clock -g -p "$mc" -o "$TMP/perf.data" -- sleep 3 >"$TMP/rec.log" 2>&1 ||
	fail "perf record failed: $(tail -n 1 "$TMP/rec.log")"
"$FDRANGE" profile --seconds 2 --json --output "$TMP/live.json" "$mc" >"$TMP/live.out" 2>&1 ||
	fail "fdrange profile $mc failed: $(tail -n 1 "$TMP/live.out")"
"$FDRANGE" profile --perf-data "$TMP/perf.data" --json --output "$TMP/fd.json" ||
	fail "fdrange profile --perf-data failed"
"$FDRANGE" profile --functions >"$TMP/functions"
perf report -i "$TMP/perf.data" --no-children --sort sym -g none --stdio -q >"$TMP/report" 2>/dev/null ||
	fail "perf report failed"
python3 - "$TMP/functions" "$TMP/report" "$TMP/fd.json" <<'PY' || exit 1
import json, re, sys
path = {}
for line in open(sys.argv[1]):
    cat, name, _ = line.split()
    path[name] = cat
want = {}
for line in open(sys.argv[2]):
    m = re.match(r'\s*([0-9.]+)%\s+\[k\]\s+(\S+)', line)
    if not m:
        continue
    name = m.group(2).split('.')[0]
    if name in path:
        want[path[name]] = want.get(path[name], 0.0) + float(m.group(1))
d = json.load(open(sys.argv[3]))['processes'][0]
n = d['samples']
total = sum(n.values())
got = {'lookup': n['lookup'], 'create': n['create'], 'close': n['close'],
       'virt': n['virtualisation']}
bad = False
for cat in ('lookup', 'create', 'close', 'virt'):
    g = 100.0 * got[cat] / total
    w = want.get(cat, 0.0)
    print(f"# {cat}: fdrange profile {g:.2f}%, perf report {w:.2f}% of {total} samples")
    if abs(g - w) > 0.5:
        print(f"FAIL: {cat} differs by more than 0.5 points", file=sys.stderr)
        bad = True
if want.get('lookup', 0) <= 0:
    print("FAIL: perf report shows no lookup function: not a memcached under load", file=sys.stderr)
    bad = True
sys.exit(1 if bad else 0)
PY
lookups=$(json "$TMP/live.json" 'd["processes"][0]["shares_pct"]["lookup"]')
workers=$(json "$TMP/live.json" 'sum(1 for t in d["processes"][0]["threads"] if t["comm"] == "mc-worker" and t["samples"]["lookup"] > 0)')
note "live: lookups $lookups% of memcached's CPU, $workers workers with lookup samples"
python3 -c "import sys; sys.exit(0 if $lookups > 0 else 1)" || fail "live profile: no lookup share"
[ "$workers" -ge 2 ] || fail "live profile: lookups in $workers mc-worker threads, expected several"
echo "ok"
