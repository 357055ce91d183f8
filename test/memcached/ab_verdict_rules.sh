#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The A/B runner's decision rule on made-up runs (no server needed): for
# each case `ab-memcached --report DIR` must give the decision its numbers
# call for, by the rule in fdrange-ab(1) recomputed here in
# ab_rule.py, p-values included (every way the ranks can fall counted); each
# case must land where it was built to: noise inside the A/A band, a clear
# gain, a clear loss, a difference outside the band that could be chance,
# too few rounds (no verdict, exit 3).  Also: the --aa and few-CPUs notes,
# the A/A band with the digits of the ratio, the orders of the rounds run,
# an interrupted run's incomplete round, a CSV line that is not one.
. "$(dirname "$0")/ab_lib.sh"
ab_needs gnuplot python3

# make CASE CPUS AA "A2/A ratios" "B/A ratios" "p99 A2/A" "p99 B/A" [EXTRA-CSV-LINE]
make_run() {
	mkdir -p "$TMP/$1"
	python3 - "$TMP/$1" "$2" "$3" "$4" "$5" "$6" "$7" "${8:-}" <<'EOF'
import sys
d, cpus, aa, aa_ops, ba_ops, aa_p99, ba_p99, extra = sys.argv[1:]
aa_ops, ba_ops, aa_p99, ba_p99 = ([float(x) for x in s.split()] for s in (aa_ops, ba_ops, aa_p99, ba_p99))
n = len(aa_ops)
open(d + "/run.conf", "w").write(
    "server_threads=4\nclient_threads=2\nconns=32\nduration_s=10\nrounds=%d\nget_ratio=0.9\n"
    "value_size=1024\nkey_size=64\nkeys=10000\nmemory_mb=1024\nserver_args=\nserver_cpus=\n"
    "client_cpus=\ncpus_online=%s\naa=%s\n" % (n, cpus, aa))
if aa == "0":
    # What ab-server appends from fdrange stat of B; without it the report
    # is void (tested in test/ab/ab_void_when_nothing_placed.sh).
    open(d + "/run.conf", "a").write(
        "locality=pid=1 library=yes open_fds=40 groups=4 placed=36 fallbacks=0 threshold=64 reason=-\n")
orders = [("A", "B", "A2"), ("B", "A2", "A"), ("A2", "A", "B")]
rows = ["round,position,server,ops_per_s,avg_us,p50_us,p90_us,p99_us,p999_us,max_us,errors"]
for i in range(n):
    # A drifts from round to round; the ratios are what the case is about.
    a_ops, a_p99 = 80000 * (1 + 0.03 * (i % 4)), 900 * (1 + 0.05 * (i % 3))
    v = {"A": (a_ops, a_p99), "A2": (a_ops * aa_ops[i], a_p99 * aa_p99[i]),
         "B": (a_ops * ba_ops[i], a_p99 * ba_p99[i])}
    for pos, s in enumerate(orders[i % 3], 1):
        ops, p99 = v[s]
        rows.append("%d,%d,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,0"
                    % (i + 1, pos, s, ops, 32e6 / ops, p99 / 3, p99 * 0.8, p99, p99 * 1.5, p99 * 3))
if extra:
    rows.append(extra)
open(d + "/rounds.csv", "w").write("\n".join(rows) + "\n")
EOF
}

# check CASE EXPECTED-THROUGHPUT-DECISION VERDICT-START [EXIT-STATUS]
check() {
	local rc=0
	"$AB" --build "$AB_BUILD" --report "$TMP/$1" -q >"$TMP/$1.out" 2>"$TMP/$1.err" || rc=$?
	[ "$rc" -eq "${4:-0}" ] || { cat "$TMP/$1.err"; fail "$1: --report exited $rc, expected ${4:-0}"; }
	verdict=$(tail -n 1 "$TMP/$1.out")
	case $verdict in "verdict: $3"*) ;; *) fail "$1: verdict does not start with '$3': $verdict" ;; esac
	python3 "$SRCROOT/test/memcached/ab_rule.py" "$TMP/$1/result.json" --expect "$2" --verdict "$verdict" ||
		fail "$1: the decisions do not follow the rule (above)"
	echo "# $1: $verdict"
}

make_run noise 2 0 "1.10 0.92 1.05 0.95 1.08 0.90" "1.07 0.95 1.09 1.02 0.93 1.06" \
	"1.2 0.9 1.1 0.85 1.0 1.05" "1.1 0.95 1.05 0.9 1.0 1.02"
check noise same "no measurable difference on this machine: throughput B/A 1.040 [0.930-1.090] is inside the A/A band 0.900-1.111 (+-11%)"
case $verdict in *"(2 CPUs for 4 server + 2 client threads: the fd-table effect is not expected here)") ;;
	*) fail "noise: no few-CPUs note: $verdict" ;; esac

make_run faster 64 0 "1.01 0.99 1.02 0.98 1.00 1.01" "1.30 1.28 1.33 1.29 1.31 1.30" \
	"1.02 0.98 1.01 0.99 1.00 1.02" "0.80 0.79 0.81 0.80 0.80 0.81"
check faster better "B faster by 30.0%: throughput B/A 1.300 [1.280-1.330] is outside the A/A band 0.980-1.020 (+-2.0%), B the fastest of the three in 6 of 6 rounds (p="
case $verdict in *"; p99 lower by 20.0% (B/A 0.800, outside 0.980-1.020; B the lowest of the three in 6 of 6 rounds, p="*) ;; *) fail "faster: p99 part: $verdict" ;; esac
case $verdict in *"not expected"*) fail "faster: few-CPUs note on 64 CPUs: $verdict" ;; esac

make_run slower 64 0 "1.01 0.99 1.02 0.98 1.00 1.01" "0.80 0.81 0.79 0.80 0.82 0.80" \
	"1.02 0.98 1.01 0.99 1.00 1.02" "1.25 1.24 1.26 1.25 1.27 1.25"
check slower worse "B slower by 20.0%: throughput B/A 0.800 [0.790-0.820]"
case $verdict in *"; p99 higher by 25.0%"*) ;; *) fail "slower: p99 part: $verdict" ;; esac

# Outside a narrow band, but B's rounds disagree: chance cannot be ruled out.
make_run unclear 64 0 "1.01 0.99 1.00 1.01 0.99" "1.20 0.95 1.10 0.97 1.15" "1.01 0.99 1.00 1.0 1.0" "1.00 1.00 1.00 1.0 1.0"
check unclear inconclusive "inconclusive: throughput B/A 1.100 [0.950-1.200] is outside the A/A band 0.990-1.010 (+-1.0%), but B was the fastest of the three in 3 of 5 rounds (p="
case $verdict in *"run more rounds (-r)"*) ;; *) fail "unclear: no advice to run more rounds: $verdict" ;; esac

# 3 rounds outside the band: too few to tell (B the fastest in all 3 is p = 2/27).
make_run few 64 0 "1.01 0.99 1.0" "1.30 1.30 1.3" "1.0 1.0 1.0" "1.0 1.0 1.0"
check few too_few_rounds "no verdict: throughput B/A 1.300 [1.300-1.300] is outside the A/A band 0.990-1.010 (+-1.0%), but 3 rounds cannot show a difference (at least 4" 3
grep -q '^3 rounds of 10 s per server, order rotating (A B A2, B A2 A, A2 A B); ' "$TMP/few.out" ||
	fail "few: the header does not name the three orders: $(sed -n 2p "$TMP/few.out")"
# One round: no verdict either, and only the one order it ran in.
make_run one 64 0 "1.01" "1.30" "1.0" "1.0"
check one too_few_rounds "no verdict: throughput B/A 1.300 [1.300-1.300] is outside the A/A band 0.990-1.010 (+-1.0%), but 1 round cannot" 3
grep -q '^1 round of 10 s per server, order A B A2; ' "$TMP/one.out" ||
	fail "one: the header names orders not run: $(sed -n 2p "$TMP/one.out")"
# ... and inside it, even 2 rounds are noise.
make_run two 64 0 "1.10 0.90" "1.05 0.97" "1.0 1.0" "1.0 1.0"
check two same "no measurable difference"
grep -q '^2 rounds of 10 s per server, order rotating (A B A2, B A2 A); ' "$TMP/two.out" ||
	fail "two: the header names orders not run: $(sed -n 2p "$TMP/two.out")"

# Just outside a narrow band: the band has the ratio's 3 digits, so that
# 0.993 is not shown "outside" a band that reads 0.99-1.00.
make_run close 64 0 "1.005 0.998 1.002 0.999 1.001 1.003" "0.993 0.993 0.993 0.993 0.993 0.993" \
	"1.0 1.0 1.0 1.0 1.0 1.0" "1.0 1.0 1.0 1.0 1.0 1.0"
check close worse "B slower by 0.7%: throughput B/A 0.993 [0.993-0.993] is outside the A/A band 0.995-1.005 (+-0.5%)"

make_run aa 64 1 "1.05 0.97 1.02 1.0" "1.01 0.98 1.03 1.0" "1.0 1.0 1.0 1.0" "1.0 1.0 1.0 1.0"
check aa same "[A/A check: B is plain memcached too] no measurable difference"
grep -q '^B  plain (--aa) ' "$TMP/aa.out" || fail "aa: B's row is not labelled plain"

# 9 rounds, B the fastest in all: p = 2/3^9.
make_run many 64 0 "1.01 0.99 1.02 0.98 1.00 1.01 0.99 1.01 1.00" "1.10 1.08 1.12 1.09 1.11 1.10 1.07 1.10 1.09" \
	"1.0 1.0 1.0 1.0 1.0 1.0 1.0 1.0 1.0" "1.0 1.0 1.0 1.0 1.0 1.0 1.0 1.0 1.0"
check many better "B faster by 10.0%"
case $verdict in *"fastest of the three in 9 of 9 rounds (p<0.001)"*) ;; *) fail "many: $verdict" ;; esac

# An interrupted run: the incomplete last round is left out, and said so.
make_run cut 64 0 "1.01 0.99 1.02" "1.01 0.98 1.0" "1.0 1.0 1.0" "1.0 1.0 1.0" "4,1,B,80000,400,300,700,900,1000,2000,0"
check cut same "no measurable difference"
grep -q '^(1 incomplete round at the end left out)$' "$TMP/cut.out" || fail "cut: the incomplete round is not mentioned"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert (r["complete_rounds"], r["incomplete_rounds"]) == (3, 1), r' \
	"$TMP/cut/result.json" || fail "cut: complete/incomplete rounds in the JSON"

# A line that is not a round: one line naming the file, the line and the field.
make_run bad 64 0 "1.0 1.0 1.0" "1.0 1.0 1.0" "1.0 1.0 1.0" "1.0 1.0 1.0" "4,1,C,80000,400,300,700,900,1000,2000,0"
set +e
"$AB" --build "$AB_BUILD" --report "$TMP/bad" -q >"$TMP/bad.out" 2>"$TMP/bad.err"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "bad CSV: exit $rc, expected 1"
[ "$(wc -l <"$TMP/bad.err")" -eq 1 ] || fail "bad CSV: not one line: $(cat "$TMP/bad.err")"
grep -q "rounds.csv: line 11: server 'C': expected A, A2 or B" "$TMP/bad.err" || fail "bad CSV: $(cat "$TMP/bad.err")"
echo ok
