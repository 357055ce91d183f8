#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/manycore.sh --smoke runs both servers through plain / plain /
# library and ends with a verdict for each, a table with a number in every
# cell, B's placement, and a result.json that says the same.  Skipped (77)
# without memcached.
#   manycore_smoke_gives_verdicts.sh MANYCORE_SH BUILD_DIR
set -eu
script=$1 build=$2
command -v memcached >/dev/null || { echo "memcached not installed: skipping"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/manycore-smoke.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

rc=0
timeout 100 bash "$script" --smoke --build "$build" --out "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
cat "$tmp/stdout"
[ "$rc" = 0 ] || { tail -n 20 "$tmp/stderr"; fail "manycore.sh --smoke exited with $rc"; }
grep -q '^manycore plan: ' "$tmp/stdout" || fail "no plan first"
for s in memcached acceptd; do
	v=$(grep "^verdict (host, $s " "$tmp/stdout") || fail "no verdict for $s"
	# ab-memcached's wording: 1 round is never enough for a difference
	case $v in
	*"no measurable difference"* | *"no verdict:"*) ;;
	*) fail "$s: unexpected verdict for 1 round: $v" ;;
	esac
	# 128 connections on 2 threads: the library has fds past 64 to place
	# (memcached) or, accepting per thread (model local), to keep where the
	# kernel numbered them (FDRANGE_LOCAL=keep, the default)
	case $v in *"void: "*) fail "$s: B placed nothing: $v" ;; esac
	grep -q "^host, $s .*:\$" "$tmp/stdout" || fail "no placement block for $s"
done
# every row of the table: a throughput and a p99 above 0
rows=$(grep -cE '^(host +(memcached|acceptd) [^ ]+ +)?.*(A plain|A2 plain \(A/A\)|B libfdrange) +[1-9][0-9]* +[0-9.]+ ' "$tmp/stdout" || true)
[ "$rows" = 6 ] || fail "expected 6 table rows with numbers, found $rows"
python3 - "$tmp/out/result.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["schema"] == "fdrange-manycore/1" and r["smoke"], r["schema"]
assert [p["server"].split()[0] for p in r["parts"]] == ["memcached", "acceptd"], r["parts"]
for p in r["parts"]:
    assert p["acted"] and p["acted"] > 0 and not p["void"], p
    if p["server"].startswith("memcached"):
        assert p["placed"] > 0, p
    else:
        assert p["kept"] > 0 and p["stat_summary"]["model"] == "local", p
    assert all(p["servers"][s]["ops_per_s"] > 0 for s in ("A", "A2", "B")), p
    assert p["verdict"].startswith("verdict (host, "), p["verdict"]
EOF
echo "ok"
