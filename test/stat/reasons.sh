#!/bin/sh
# SPDX-License-Identifier: MIT
# fdrange stat says why the library places nothing, in text (a "not
# placing fds:" or "no stats block:" line, and reason= on the summary) and
# in JSON ("reason", "reason_text"), for each reason, against
# test/stat/fake_block.c targets that leave what the library would:
# disabled, a bad value, a seccomp filter installed late or in force from
# the start (no block), a limit below the first chunk, a single thread, a
# fork child still on its parent's block (not a forgery: exit 0); and why
# a process cannot be read at all: a zombie, a process that changed its
# uid (only root may read it).  A placing process has no reason.
# usage: reasons.sh FDRANGE FAKE_BLOCK
. "$(dirname "$0")/lib.sh"
need_python

# json_reason FILE WORD TEXT LIBRARY: the JSON document names them.
json_reason() {
	python3 - "$@" <<'PY' || fail "JSON: $(cat "$1")"
import json, sys
d = json.load(open(sys.argv[1]))
word, text, lib = sys.argv[2], sys.argv[3], sys.argv[4]
assert d["reason"] == (word if word != "-" else None), d["reason"]
assert text in d["reason_text"], (text, d["reason_text"])
assert d["library"] == lib and d["summary"]["reason"] == d["reason"], d["library"]
PY
}

# check PID WORD LINE-PREFIX TEXT LIBRARY: text and JSON of PID agree on it.
check() {
	run_stat --color=never "$1"
	[ "$rc" = 0 ] || { cat "$err"; fail "$2: exit $rc"; }
	grep -qF "$3$4" "$out" || { head -6 "$out"; fail "$2: no line '$3$4'"; }
	[ "$(summary_field "$out" reason)" = "$2" ] || fail "$2: summary reason=$(summary_field "$out" reason)"
	[ "$(summary_field "$out" library)" = "$5" ] || fail "$2: summary library=$(summary_field "$out" library)"
	cp "$out" "$tmp/text"
	run_stat --json "$1"
	[ "$rc" = 0 ] || fail "$2 --json: exit $rc"
	json_reason "$out" "$2" "$4" "$5"
	echo "ok: ${2}: reason in text and JSON"
}

start_fake valid
check "$fpid" - "" "" yes
! grep -q "^not placing fds:" "$tmp/text" || fail "valid: a reason given"
stop_fake

start_fake disabled
check "$fpid" disabled "not placing fds: " "disabled (FDRANGE_DISABLE=1): the library passes every call through" inactive
stop_fake
start_fake config
check "$fpid" config "not placing fds: " 'a bad or unknown FDRANGE_* variable: FDRANGE_SLOTS="abc": not a number' inactive
stop_fake
start_fake seccomp_late
check "$fpid" seccomp "not placing fds: " "a seccomp filter was installed while it ran" inactive
stop_fake
start_fake limit
check "$fpid" limit "not placing fds: " "RLIMIT_NOFILE 100 (as the library last saw it) leaves no 64-fd chunk above FDRANGE_BASE 64" yes
stop_fake
start_fake single
check "$fpid" single_threaded "not placing fds: " "single-threaded so far" yes
stop_fake

# Started under a filter: the library maps but makes no block.
cp "$fake" "$tmp/libfdrange.so"
start_fake inactive -l "$tmp/libfdrange.so" -S
grep -q '^Seccomp:[[:space:]]*2' "/proc/$fpid/status" || fail "seccomp_start: no filter in force"
check "$fpid" seccomp_at_start "no stats block: " "it started under a seccomp filter (Seccomp: 2 in /proc/$fpid/status)" inactive
stop_fake

# A fork child before its first placement maps its parent's block: named
# as inherited, exit 0, no refusal, and none of the parent's counters.
start_fake valid -F
child=$(awk '/^child /{print $2}' "$tmp/ready")
targets="$targets $child"
[ -n "$child" ] && [ "$child" != "$fpid" ] || fail "inherited: no child"
check "$child" inherited "stats block: " "inherited block of pid $fpid; nothing placed in this process yet" inactive
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["inherited_from"] == int(sys.argv[2]) and "block" not in d and "placed" not in d["summary"], d' \
	"$out" "$fpid" || fail "inherited: JSON $(cat "$out")"
# Its parent's view is unchanged: its own block, placing.
run_stat --color=never --no-map "$fpid"
[ "$rc" = 0 ] && [ "$(summary_field "$out" library)" = yes ] && [ "$(summary_field "$out" placed)" = 17 ] ||
	fail "inherited: the parent is not shown as before: $(tail -1 "$out")"
kill "$child"
stop_fake
echo "ok: inherited: JSON inherited_from=$fpid, no counters; the parent's own block as before"

# A zombie: exited, not reaped; not "library=no".
start_fake plain -Z
z=$(awk '/^zombie /{print $2}' "$tmp/ready")
grep -q '^State:[[:space:]]*Z' "/proc/$z/status" || fail "zombie: $z is not one"
run_stat --color=never "$z"
[ "$rc" = 1 ] || fail "zombie: exit $rc, expected 1"
[ ! -s "$out" ] || fail "zombie: printed a report"
grep -q "^fdrange stat: pid $z: exited, not reaped (a zombie): its parent, pid $fpid, has not waited for it yet" "$err" ||
	fail "zombie: '$(cat "$err")'"
run_stat --json "$z"
[ "$rc" = 1 ] || fail "zombie --json: exit $rc"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["reason"] == "exited" and "exited, not reaped" in d["error"] and d["pid"] == int(sys.argv[2]), d' \
	"$out" "$z" || fail "zombie --json: $(cat "$out")"
stop_fake
echo "ok: zombie: exited, not reaped"

# A process that changed its uid can be read by root only, also by the
# uid it runs as now; say so (needs root and setpriv to be that uid).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	chmod 755 "$tmp"
	cp "$fdrange" "$tmp/fdrange" && chmod 755 "$tmp/fdrange"
	start_fake valid -u 65534
	grep -q '^Uid:[[:space:]]*65534[[:space:]]*65534' "/proc/$fpid/status" || fail "uid: not switched"
	for form in "" --json; do
		rc=0
		# shellcheck disable=SC2086
		setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/fdrange" stat $form "$fpid" \
			>"$tmp/out" 2>"$tmp/err" || rc=$?
		[ "$rc" = 1 ] || fail "uid ${form:-text}: exit $rc, expected 1"
		grep -q "it runs as your uid 65534 but is not dumpable: it changed its uid or gid" "$tmp/err" "$tmp/out" ||
			fail "uid ${form:-text}: '$(cat "$tmp/err" "$tmp/out")'"
	done
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["reason"] == "permission", d' "$tmp/out" ||
		fail "uid --json: $(cat "$tmp/out")"
	# Root still reads it.
	run_stat --color=never --no-map "$fpid"
	[ "$rc" = 0 ] && [ "$(summary_field "$out" library)" = yes ] || fail "uid: root cannot read it"
	stop_fake
	echo "ok: uid changed: only root, and it says so"
else
	echo "note: not root (or no setpriv): the changed-uid case is not run here"
fi
