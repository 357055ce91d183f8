#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The program-family matrix: "a program that works plain
# works unchanged under the library".  Each case runs the same program
# plain and under libfdrange (LD_PRELOAD, no FDRANGE_* variable but the pre-fork case's threshold), compares
# what it did, and asserts the library's fd bound from /proc samples taken
# mid-load (fdwatch.py); see README.md beside this script.
#   test/families/run-all.sh LIBPATH FDRANGE [NAME...]
# LIBPATH: libfdrange.so (made absolute here); FDRANGE: the fdrange
# command; NAMEs: only those cases of the table below.
# Installs the Debian packages (deps.sh), compiles the C programs of this
# folder with cc into a temporary folder, runs one case at a time and prints
# one line per case and a total.  Exit status 0 only if nothing failed
# (skipped cases do not fail).
set -eu
[ $# -ge 2 ] || { echo "usage: $0 LIBPATH FDRANGE [NAME...]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
lib=$(readlink -f "$1") fdrange=$(readlink -f "$2")
shift 2
[ -f "$lib" ] || { echo "no library at $lib" >&2; exit 2; }
[ -x "$fdrange" ] || { echo "no fdrange command at $fdrange" >&2; exit 2; }

# name, time limit in seconds, script and its arguments.
table="tpc-select 60 tpc-select.sh
http-server 45 http-server.sh
apache-event 45 apache.sh event
apache-worker 45 apache.sh worker
squid 75 squid.sh
prefork 30 prefork.sh
seccomp 30 seccomp.sh
tor 45 tor.sh
threads 30 threads.sh"

. "$here/../../tools/deps.sh"
. "$here/deps.sh"
need_family_packages

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
bin=$logs/bin
sh "$here/build.sh" "$bin"

start=$(date +%s)
pass=0 failed=0 skipped=0
: >"$logs/table"
while read -r name limit script args; do
	if [ $# -gt 0 ]; then
		case " $* " in *" $name "*) ;; *) continue ;; esac
	fi
	echo "=== $name: $script $args"
	t0=$(date +%s)
	rc=0
	: >"$logs/$name.groups"
	# shellcheck disable=SC2086
	FAM_GROUPS_FILE=$logs/$name.groups timeout -k 15 "$limit" \
		bash "$here/$script" "$lib" "$fdrange" "$bin" $args >"$logs/$name.log" 2>&1 || rc=$?
	# Programs run in sessions of their own: stop any a killed case left.
	while read -r pg; do
		if kill -0 -- "-$pg" 2>/dev/null; then
			echo "# $name left process group $pg running: killed" >>"$logs/$name.log"
			kill -KILL -- "-$pg" 2>/dev/null || true
		fi
	done <"$logs/$name.groups"
	cat "$logs/$name.log"
	res=$(grep -E '^family=' "$logs/$name.log" | awk '{ printf "%s%s %s %s %s", (NR > 1 ? "; " : ""), substr($1, 8), $2, $3, $NF }' || true)
	case $rc in
	0) r=ok; pass=$((pass + 1)) ;;
	77) r=skip; skipped=$((skipped + 1)); res=$(grep -m 1 '^skipped:' "$logs/$name.log" || true) ;;
	124 | 137) r=FAIL; failed=$((failed + 1)); res="timed out after $limit s; $res" ;;
	*) r=FAIL; failed=$((failed + 1)) ;;
	esac
	[ "$r" = FAIL ] && echo "$name" >>"$logs/failed"
	printf '%-4s %-14s %-90s %4d s\n' "$r" "$name" "${res:--}" $(($(date +%s) - t0)) >>"$logs/table"
done <<<"$table"

if [ -f "$logs/failed" ]; then
	while read -r f; do
		echo "=== why $f failed"
		grep -E 'FAIL|died|left process group|timed out' "$logs/$f.log" | head -n 12 ||
			tail -n 8 "$logs/$f.log"
	done <"$logs/failed"
fi
echo "=== program families plain and under $lib, no FDRANGE_* settings ($(($(date +%s) - start)) s)"
cat "$logs/table"
[ "$skipped" = 0 ] || echo "$skipped skipped"
echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
