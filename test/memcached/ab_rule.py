# SPDX-License-Identifier: MIT
"""The A/B runner's decision rule, written again apart from its C code
(bench/ab_stats.c), to check a result.json against it.

    python3 ab_rule.py RESULT.JSON [--expect DECISION] [--verdict LINE]

From the rounds alone: per metric the median B/A, the A/A band
[1/(1+h), 1+h] with 1+h the largest A2/A or A/A2, B's ranks among the three servers of each round and
their p-value counted over all 3^n ways they could fall, the decision.
All must agree with the JSON; --expect: the throughput decision; --verdict:
the printed verdict line must be the JSON's and start as the decision says.
Exit 0, or 1 with the first disagreement.
"""
import itertools
import json
import statistics
import sys

MIN_ROUNDS, ALPHA = 4, 0.05
METRICS = (("ops_per_s", False), ("p50_us", True), ("p99_us", True))
HEADS = {"same": "no measurable difference", "better": "B faster by", "worse": "B slower by",
         "inconclusive": "inconclusive", "too_few_rounds": "no verdict"}


def ranks2(vals):
    """Twice the (mean) rank of each value among the round's three, less 2."""
    return [2 * sum(w < v for w in vals) + sum(w == v for w in vals) - 3 for v in vals]


def decide(rounds, metric, lower_better):
    vals = [(r["A"][metric], r["A2"][metric], r["B"][metric]) for r in rounds]
    n = len(vals)
    ba = [b / a for a, _, b in vals]
    h = max(max(a2 / a, a / a2) for a, a2, _ in vals) - 1
    med = statistics.median(ba)
    ranks = [ranks2(v) for v in vals]
    observed = abs(sum(r[2] for r in ranks))
    hits = sum(abs(sum(ranks[i][k] for i, k in enumerate(choice))) >= observed
               for choice in itertools.product(range(3), repeat=n))
    p = hits / 3 ** n
    if 1 / (1 + h) <= med <= 1 + h:
        decision = "same"
    elif n < MIN_ROUNDS:
        decision = "too_few_rounds"
    elif p < ALPHA:
        decision = "better" if (med > 1) != lower_better else "worse"
    else:
        decision = "inconclusive"
    return {"ba_median": med, "spread": h, "p": p, "decision": decision,
            "b_highest": sum(r[2] == 2 for r in ranks), "b_lowest": sum(r[2] == -2 for r in ranks)}


def main():
    args = sys.argv[1:]
    result = json.load(open(args[0]))
    opts = dict(zip(args[1::2], args[2::2]))
    assert result["schema"] == "fdrange-ab-memcached/1", result["schema"]
    rounds = result["rounds"]
    assert len(rounds) == result["complete_rounds"], (len(rounds), result["complete_rounds"])
    for r in rounds:
        assert sorted(r[s]["position"] for s in ("A", "A2", "B")) == [1, 2, 3], r
        for s in ("A", "A2", "B"):
            assert 0 < r[s]["p50_us"] <= r[s]["p99_us"], (s, r[s])
    for metric, lower_better in METRICS:
        got, want = result["compare"][metric], decide(rounds, metric, lower_better)
        for key, value in want.items():
            if isinstance(value, float):
                ok = abs(got[key] - value) <= 1e-5 * max(1.0, abs(value))
            else:
                ok = got[key] == value
            assert ok, "%s %s: the JSON says %r, the rule %r" % (metric, key, got[key], value)
        assert abs(got["band"][0] - 1 / (1 + want["spread"])) < 1e-5, (metric, got["band"])
        assert abs(got["band"][1] - (1 + want["spread"])) < 1e-5, (metric, got["band"])
    decision = result["compare"]["ops_per_s"]["decision"]
    if "--expect" in opts:
        assert decision == opts["--expect"], "throughput: %s, the case was built for %s" % (
            decision, opts["--expect"])
    if "--verdict" in opts:
        line = opts["--verdict"]
        assert line == "verdict: " + result["verdict"], (line, result["verdict"])
        assert line.replace("[A/A check: B is plain memcached too] ", "").startswith(
            "verdict: " + HEADS[decision]), (line, decision)


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print("ab_rule.py: %s" % e, file=sys.stderr)
        sys.exit(1)
