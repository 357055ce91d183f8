#!/bin/sh
# The whole test suite, from a fresh Debian 12 machine: installs what it
# needs, then runs every check CI runs and prints one line per check and a
# total.  Exit status 0 only if everything passed.
#
#   ./test/run.sh            everything (about 20 minutes on 2 cores)
#   ./test/run.sh --quick    the normal build's meson tests only (about 8 minutes)
#
# The checks:
#   build         meson test, normal build (unit, integration, cli,
#                 hardening, memcached, bench-smoke)
#   build-asan    the same under AddressSanitizer + UBSan
#   slow          meson test --suite slow (long adversarial runs)
#   static        cppcheck + clang-tidy over lib/, include/, tools/
#   tsan          ThreadSanitizer build, multi-threaded and hardening tests
#   valgrind      memcheck over the integration and hardening programs
#   fuzz          60 s of libFuzzer on the option parser and geometry
#   real          real programs' own tests (xz, zstd, CPython) with and without
#   servers       memcached, haproxy, h2o, trafficserver, redis, varnish and a
#                 Java NIO server, plain and under the library with no settings
#   package       the Debian packages build, lintian-clean, install, work by
#                 bare name and through fdrange, and purge without a trace
#   kernel        the kernel patch series applies to linux-source-6.12 and compiles
#   coherence     the QEMU cache-line transfer counter builds and, booted with
#                 its microbenchmark, separates interleaved from separated fds
set -eu
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1

. ./tools/deps.sh
need_packages meson ninja-build gcc pkg-config libcmocka-dev memcached libmemcached-tools \
	gnuplot-nox strace procps python3 file util-linux
# fdrange profile's comparison with perf report, and fdrange ab's real
# servers and their load tools (test/profile, test/ab).
need_packages linux-perf redis-server redis-tools h2o nghttp2-client nginx-light wrk
# sshd_login_works needs an sshd that the machine itself never starts.
sh test/security/install-openssh-server.sh
[ $quick = 1 ] || need_packages cppcheck clang-tidy clang libclang-rt-14-dev valgrind \
	xz-utils zstd libpython3.11-testsuite \
	linux-source-6.12 make flex bison bc libelf-dev libssl-dev patch
[ $quick = 1 ] || { . ./test/families/deps.sh && need_family_packages; }

logs=$(mktemp -d)
results=$logs/results
trap 'rm -rf "$logs"' EXIT
start=$(date +%s)

# check NAME COMMAND...: run one check, record ok/FAIL and its duration.
# Its output is kept too: the summary repeats the end of a failed check's
# output, so that a CI log cut to its last lines still says what failed.
check() {
	name=$1; shift
	echo "=== $name: $*"
	t0=$(date +%s)
	{ rc=0; "$@" 2>&1 || rc=$?; echo $rc >"$logs/$name.rc"; } | tee "$logs/$name.log"
	# Something on this kind of machine has replaced /dev/null with a
	# regular file (seen three times, cause not found): every later check
	# would fail for that. Say which check it happened during and mend it.
	if [ ! -c /dev/null ]; then
		echo "=== $name: /dev/null is no longer a character device; recreating it" >&2
		rm -f /dev/null && mknod -m 666 /dev/null c 1 3
		echo "/dev/null replaced during $name" >>"$logs/devnull"
	fi
	if [ "$(cat "$logs/$name.rc")" = 0 ]; then r=ok; else r=FAIL; fi
	printf '%-4s %-11s %4d s\n' "$r" "$name" $(($(date +%s) - t0)) >>"$results"
}

# meson_suite BUILDDIR [meson test args] -- [meson setup args]
meson_suite() {
	dir=$1; shift
	targs=""
	while [ $# -gt 0 ] && [ "$1" != -- ]; do targs="$targs $1"; shift; done
	[ $# -gt 0 ] && shift
	# A failed set-up or build says why (the summary shows the end of it).
	[ -f "$dir/build.ninja" ] || meson setup "$dir" "$@" >"$logs/$dir.setup" 2>&1 ||
		{ tail -n 25 "$logs/$dir.setup"; return 1; }
	ninja -C "$dir" >"$logs/$dir.ninja" 2>&1 || { grep -v '^\[' "$logs/$dir.ninja" | tail -n 25; return 1; }
	# shellcheck disable=SC2086
	meson test -C "$dir" --no-rebuild --print-errorlogs $targs >"$dir/run.log" 2>&1
	rc=$?
	grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)' "$dir/run.log" || true
	# What each failed test printed last: a CI log that keeps only the
	# summary still says why (a FAIL: line alone often does not).
	[ $rc = 0 ] || python3 tools/ci/failed-tests.py "$dir/meson-logs/testlog.json"
	grep -E '^(Ok|Fail|Skipped|Timeout):' "$dir/run.log" | tr -s ' ' | tr '\n' ' '
	echo
	return $rc
}

check build meson_suite build
if [ $quick = 0 ]; then
	check build-asan meson_suite build-asan -- -Db_sanitize=address,undefined -Db_lundef=false
	check slow meson_suite build --suite slow
	check static sh tools/ci/static-analysis.sh
	check tsan sh tools/ci/tsan.sh
	check valgrind sh tools/ci/valgrind.sh
	check fuzz sh fuzz/run.sh 60
	# Debian's interpreter: its test package is libpython3.11-testsuite.
	check real env PYTHON=/usr/bin/python3 sh tools/ci/real-programs.sh quick "$PWD/build/lib/libfdrange.so"
	check families bash test/families/run-all.sh "$PWD/build/lib/libfdrange.so" "$PWD/build/tools/fdrange"
	check servers bash test/servers/run-all.sh "$PWD/build/lib/libfdrange.so" "$PWD/build/tools/fdrange"
	check package bash tools/ci/package.sh
	check kernel bash kernel/ci-check.sh
	# Last, on an otherwise idle machine: it needs both cores at once.
	check coherence bash bench/coherence/run.sh --smoke
fi

for f in $(grep '^FAIL' "$results" | awk '{print $2}'); do
	echo "=== why $f failed (its last 40 lines)"
	tail -n 40 "$logs/$f.log"
done
[ ! -f "$logs/devnull" ] || cat "$logs/devnull"
echo "=== summary ($(($(date +%s) - start)) s)"
cat "$results"
pass=$(grep -c '^ok' "$results" || true)
fail=$(grep -c '^FAIL' "$results" || true)
echo "$pass checks passed, $fail failed"
[ "$fail" -eq 0 ]
