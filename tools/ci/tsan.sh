#!/bin/sh
# SPDX-License-Identifier: MIT
# ThreadSanitizer build (gcc, -Db_sanitize=thread) running the
# multi-threaded tests: the integration suite (threads, stress, fork,
# roundrobin...) and the hardening suite (signals, fork, limit flapping,
# thousands of threads, failure injection).  Any report fails the run
# (halt_on_error, exitcode 66).
# Standalone: tools/ci/tsan.sh [BUILD_DIR]  (default build-tsan)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-tsan}
cd "$root"
start=$(date +%s)
if [ ! -f "$build/build.ninja" ]; then
	CC=${CC:-gcc} meson setup "$build" -Db_sanitize=thread -Db_lundef=false \
		-Dbuildtype=debugoptimized >/dev/null
fi
# A failed build says why, without the progress lines.
ninja -C "$build" >"$build/ninja.log" 2>&1 || { grep -v '^\[' "$build/ninja.log" | tail -n 25; exit 1; }
# report_signal_unsafe stays on: the signal test's handler must only make
# async-signal-safe calls.  second_deadlock_stack helps reading a report.
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
status=0
# The sanitizer slows threads ~5-15x: meson's timeouts are doubled.
# Left out: grandchild_is_placed and thread_range_in_a_fork_child, whose
# fork children of a threaded process start threads, which TSan does not
# support ("starting new threads after multi-threaded fork"; it exits 66
# in the child, plain as well as placed); valgrind and the plain and ASan
# builds run them.
skip='grandchild_is_placed|thread_range_in_a_fork_child'
tests=$(meson test -C "$build" --list --suite integration --suite hardening --no-suite slow 2>/dev/null |
	sed 's/^libfdrange:[a-z]* \/ //' | grep -Ev "$skip")
# The hardening programs' own watchdog (hard.h) is stretched as much.
export HARD_DEADLINE_SCALE=2
# shellcheck disable=SC2086
meson test -C "$build" --timeout-multiplier 2 --print-errorlogs $tests \
	>"$build/tsan-test.log" 2>&1 || status=$?
grep -E '^(Ok|Fail|Timeout|Skipped):' "$build/tsan-test.log" || tail -n 30 "$build/tsan-test.log"
# Which tests failed, and what they said, where a cut log still shows it.
grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)' "$build/tsan-test.log" || true
[ $status = 0 ] || python3 tools/ci/failed-tests.py "$build/meson-logs/testlog.json" 10
if grep -q 'WARNING: ThreadSanitizer' "$build/meson-logs/testlog.txt"; then
	grep -A12 'WARNING: ThreadSanitizer' "$build/meson-logs/testlog.txt" | head -n 80
	status=1
fi
echo "tsan: $([ $status = 0 ] && echo clean || echo FAILED) in $(($(date +%s) - start)) s"
exit $status
