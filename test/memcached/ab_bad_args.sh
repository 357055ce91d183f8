#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bad arguments to the A/B runner and its helpers: exit 2, one line that
# names the argument, says what was wrong and what is accepted, nothing
# started; with --json that line is a JSON object on stdout (error,
# argument, problem, accepted) and stderr stays empty.
. "$(dirname "$0")/ab_lib.sh"
ab_needs python3

# one ARGUMENT-NAMED CMD...: exit 2, one line on stderr naming it, no stdout.
one() {
	local name=$1 rc
	shift
	set +e
	"$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
	set -e
	[ "$rc" -eq 2 ] || fail "$*: exit $rc, expected 2 ($(cat "$TMP/err"))"
	[ ! -s "$TMP/out" ] || fail "$*: wrote to stdout: $(cat "$TMP/out")"
	[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "$*: not one line: $(cat "$TMP/err")"
	grep -qF -- "$name" "$TMP/err" || fail "$*: the message does not name '$name': $(cat "$TMP/err")"
	grep -q 'expected' "$TMP/err" || fail "$*: the message does not say what is accepted: $(cat "$TMP/err")"
}

# case ARGUMENT-NAMED ARGS...: the runner, as text and as JSON.
check() {
	local name=$1 rc
	shift
	one "$name" "$AB" --build "$AB_BUILD" --fdrange "$FDRANGE" -o "$TMP/bad" "$@"
	grep -q "^ab-memcached: $name: .*; expected " "$TMP/err" ||
		fail "$*: not 'ab-memcached: $name: PROBLEM; expected WHAT': $(cat "$TMP/err")"
	echo "# $(cat "$TMP/err")"
	set +e
	"$AB" --build "$AB_BUILD" --fdrange "$FDRANGE" -o "$TMP/bad" --json "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
	set -e
	[ "$rc" -eq 2 ] || fail "--json $*: exit $rc, expected 2"
	[ ! -s "$TMP/err" ] || fail "--json $*: wrote to stderr: $(cat "$TMP/err")"
	[ "$(wc -l <"$TMP/out")" -eq 1 ] || fail "--json $*: not one line: $(cat "$TMP/out")"
	python3 - "$TMP/out" "$name" <<'EOF' || fail "--json $*: $(cat "$TMP/out")"
import json, sys
e = json.load(open(sys.argv[1]))
assert set(e) == {"error", "argument", "problem", "accepted"}, e
assert e["argument"] == sys.argv[2] and e["problem"] and e["accepted"], e
assert e["error"] == "ab-memcached: %s: %s; expected %s" % (e["argument"], e["problem"], e["accepted"]), e
EOF
	[ ! -e "$TMP/bad" ] || fail "$*: created the output directory: something was started"
}

check --rounds --rounds 0
check --rounds --rounds x
check --duration --duration=1.5
check -r -r
check --conns --conns 1 --client-threads 2
check --get-ratio --get-ratio 1.5
check --value-size --value-size 0
check --keys --keys -3
check --bogus --bogus
check stray stray
check --server-args --server-args "-v -p 11211"
check --server-cpus --server-cpus a-b
check --server-cpus --server-cpus 100000
check -o -o ""
check --report --report "$TMP/none"
check --build --build "$TMP/none"
if command -v memcached >/dev/null && command -v gnuplot >/dev/null; then
	check --fdrange --fdrange /nonexistent/fdrange
fi

# The helpers, which the runner starts with arguments of its own making.
mcload=$AB_BUILD/bench/mcload report=$AB_BUILD/bench/ab-report
one --port "$mcload" --port 0
one --port "$mcload" --seconds 1
one --threads "$mcload" --port 1 --threads x
one --get-ratio "$mcload" --port 1 --get-ratio 2
one --conns "$mcload" --port 1 --threads 4 --conns 2
one --bogus "$mcload" --port 1 --bogus 1
one DIR "$report"
one --bogus "$report" "$TMP" --bogus
echo ok
