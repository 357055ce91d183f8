#!/bin/sh
# SPDX-License-Identifier: MIT
# Real multi-threaded Debian programs, run without and with libfdrange:
# the results must be the same.
#
#   tools/ci/real-programs.sh [quick|full] [LIBFDRANGE_SO]
#
# quick (default): xz -T and zstd -T round trips (threads doing the work,
#   outputs compared byte for byte) and CPython's own regression tests for
#   fds, polling, subprocesses, ptys and threads (PYTHON=... picks the
#   interpreter; its test package must be installed);
# full: more CPython suites (threading, signals, selectors, asyncio,
#   concurrent.futures, sockets...).  Each CPython module's per-test-case
#   outcomes (passed/failed/skipped, digest of which) must be identical.
# Every program runs with the library's defaults but FDRANGE_THRESHOLD=0 (and
# FDRANGE_STATS): these programs hold a few dozen fds, which the default
# threshold (64) would leave where the kernel puts them; with it off every
# fd they create from a second thread on is moved, the harder case, and
# each run's report shows how many were.
# Exit 1 on any difference.
set -eu
mode=${1:-quick}
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=${2:-$root/build/lib/libfdrange.so}
[ -f "$lib" ] || { echo "real-programs: $lib not built" >&2; exit 2; }
# Absolute: the programs under test change directory (CPython's subprocess
# tests do), and ld.so resolves a relative LD_PRELOAD entry from the cwd.
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
status=0

placed() {
	FDRANGE_THRESHOLD=0 FDRANGE_STATS="$work/stats.%p" LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" "$@"
}

# Sum of the "placed" column over every report written since the last call.
placed_count() {
	n=$(cat "$work"/stats.* 2>/dev/null | awk '$1 == "total" { s += $3 } END { print s + 0 }')
	rm -f "$work"/stats.*
	echo "$n"
}

compare() { # NAME PLAIN_RESULT PLACED_RESULT PLACED_FDS
	if [ "$2" = "$3" ]; then
		echo "ok   $1: $2 without and with the library ($4 fds placed)"
	else
		echo "FAIL $1: '$2' without, '$3' with the library"
		status=1
	fi
}

# --- compressors: worker threads, main thread does the I/O ---
head -c 8000000 /dev/urandom >"$work/rand"
python3 -c "import sys; sys.stdout.write(''.join('line %d of some text\n' % i for i in range(250000)))" >"$work/text"
cat "$work/rand" "$work/text" >"$work/in"
want=$(sha256sum <"$work/in")
# xz 5.4 decompresses with threads too; zstd only compresses with them.
for tool in "xz -T4 -3" "zstd -T4 -q -3"; do
	set -- $tool
	dthreads=$( [ "$1" = xz ] && echo -T4 || echo -q)
	for run in plain placed; do
		rm -f "$work/in.c"
		if [ $run = plain ]; then
			"$@" -c <"$work/in" >"$work/in.c" && "$1" -d -c $dthreads <"$work/in.c" | sha256sum >"$work/out.$run"
		else
			placed "$@" -c <"$work/in" >"$work/in.c" && placed "$1" -d -c $dthreads <"$work/in.c" | sha256sum >"$work/out.$run"
		fi
		# The compressed streams must be identical too.
		sha256sum <"$work/in.c" >"$work/c.$run"
	done
	r1=$( [ "$(cat "$work/out.plain")" = "$want" ] && echo round-trip-ok || echo corrupted)
	r2=$( [ "$(cat "$work/out.placed")" = "$want" ] && cmp -s "$work/c.plain" "$work/c.placed" &&
		echo round-trip-ok || echo corrupted-or-different)
	compare "$1 -T4" "$r1" "$r2" "$(placed_count)"
done

# --- CPython's regression tests (python3 -m test) ---
# quick: ~100 s on the 2-core dev VM; full adds the slower thread- and
# signal-heavy suites (~3 more minutes for the first four) and more.
# test_socket is only in full: on the Firecracker dev VM it stalls until
# the 300 s timeout, with and without the library alike.
quick="test_thread test_select test_poll test_epoll test_fcntl test_os test_tempfile test_pty
test_subprocess"
full="$quick test_threading test_selectors test_signal test_queue test_socket test_asyncio
test_concurrent_futures test_logging test_mmap test_io test_file test_httpservers test_xmlrpc"
set -f
# shellcheck disable=SC2046
set -- $( [ "$mode" = full ] && echo $full || echo $quick )
set +f
py=${PYTHON:-python3}
# Outcome of every test case in a junit file: "N passed, N failed, N
# skipped" plus a digest of the per-case outcomes, so that the same counts
# with different failing cases still show as a difference.
outcomes() {
	"$py" - "$1" <<'PY'
import hashlib, sys, xml.etree.ElementTree as ET
cases = {}
for tc in ET.parse(sys.argv[1]).iter("testcase"):
    kind = "pass"
    for child in tc:
        if child.tag in ("failure", "error", "skipped"):
            kind = child.tag
    cases[tc.get("classname", "") + "." + tc.get("name", "")] = kind
n = {k: sum(1 for v in cases.values() if v == k) for k in ("pass", "failure", "error", "skipped")}
digest = hashlib.sha1(repr(sorted(cases.items())).encode()).hexdigest()[:8]
print("%d passed, %d failed, %d skipped [%s]" % (n["pass"], n["failure"] + n["error"], n["skipped"], digest))
PY
}
for t in "$@"; do
	# One module per run so a difference is pinned to it; -u for the
	# resource-gated subprocess tests; not network (it reaches out of the machine).
	t0=$(date +%s)
	"$py" -m test -q --timeout 300 -u subprocess --junit-xml "$work/plain.xml" "$t" >"$work/py.plain" 2>&1 || true
	placed "$py" -m test -q --timeout 300 -u subprocess --junit-xml "$work/placed.xml" "$t" >"$work/py.placed" 2>&1 || true
	r1=$(outcomes "$work/plain.xml" 2>/dev/null || echo "no result")
	r2=$(outcomes "$work/placed.xml" 2>/dev/null || echo "no result")
	# A module that produced no result at all proves nothing: that is a
	# failure of the harness (missing test package?), not a match.
	if [ "$r1" = "no result" ]; then
		echo "FAIL $py -m test $t: no result without the library; is its test package installed?"
		tail -n 20 "$work/py.plain"
		status=1
		placed_count >/dev/null
		continue
	fi
	compare "$py -m test $t" "$r1" "$r2" "$(placed_count)"
	echo "     ($(($(date +%s) - t0)) s for both runs)"
	if [ "$r1" != "$r2" ]; then
		tail -n 40 "$work/py.placed"
	fi
	rm -f "$work/plain.xml" "$work/placed.xml"
done
echo "real programs ($mode): $([ $status = 0 ] && echo same results || echo DIFFERENCES) in $(($(date +%s) - start)) s"
exit $status
