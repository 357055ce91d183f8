#!/bin/sh
# SPDX-License-Identifier: MIT
# FDRANGE_STATS=PATH: the report file is opened safely.
#  - A symlink planted at the report's name is not followed: a 0600 file
#    it points at is not appended to (O_NOFOLLOW).  In a directory that is
#    not sticky and world-writable, where fs.protected_symlinks does not
#    apply, for a fixed name and for report.%p.
#  - A new report file is created mode 0600 (not 0644: the report shows
#    settings, fd numbers and limits of the process), under umask 022.
#  - A value that looks like a mistake (no '/', not 'stderr' or 'none':
#    FDRANGE_STATS=1, yes, 64k, ...) is refused with the usual one line
#    `libfdrange: FDRANGE_STATS="1": ...; accepted: ...; passing all calls
#    through`, and no file appears in the current directory.
# Run plain (no report anywhere, nothing changes) and placed.
# usage: stats_report_file_is_safe.sh plain|placed PRELOAD
set -u
mode=$1 preload=$2
[ "$mode" = placed ] || preload=
export ASAN_OPTIONS=detect_leaks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 700 "$tmp"
umask 022
fail=0
bad() { echo "FAIL: $* ($mode)"; fail=1; }
run() { env ${preload:+LD_PRELOAD="$preload"} "$@"; }

# --- symlinks ---
mkdir "$tmp/d"
printf 'secret\n' >"$tmp/d/secret"
chmod 600 "$tmp/d/secret"
ln -s secret "$tmp/d/report"
run env FDRANGE_STATS="$tmp/d/report" /bin/true 2>"$tmp/err" || bad "/bin/true failed: $(cat "$tmp/err")"
if [ "$(cat "$tmp/d/secret")" = secret ]; then echo "ok: symlink at the report name not followed ($mode)"
else bad "the report followed the symlink $tmp/d/report into $tmp/d/secret"; fi
# report.%p: the pid is known before exec (the shell execs env, env execs true)
printf 'secret\n' >"$tmp/d/secret"
# shellcheck disable=SC2016
run sh -c 'ln -s secret "$1/report.$$" && exec env FDRANGE_STATS="$1/report.%p" /bin/true' sh "$tmp/d" \
	2>"$tmp/err" || bad "sh /bin/true failed: $(cat "$tmp/err")"
if [ "$(cat "$tmp/d/secret")" = secret ]; then echo "ok: symlink at report.%p not followed ($mode)"
else bad "the report followed the symlink report.PID into $tmp/d/secret"; fi

# --- mode of a new report ---
run env FDRANGE_STATS="$tmp/new.%p" /bin/true || bad "/bin/true failed"
n=0 modes=
for f in "$tmp"/new.*; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	modes="$modes $(stat -c %a "$f")"
done
want=0 want_modes=
[ "$mode" = placed ] && want=1 want_modes=" 600"
if [ $n = $want ] && [ "$modes" = "$want_modes" ]; then echo "ok: $n new report(s)$modes ($mode)"
else bad "$n report files (wanted $want), modes:$modes (wanted 600)"; fi

# --- values that look like a mistake ---
mkdir "$tmp/cwd"
for v in 1 yes 64k true report stdout; do
	rc=0
	(cd "$tmp/cwd" && run env FDRANGE_STATS="$v" /bin/true) 2>"$tmp/err" || rc=$?
	files=$(ls -A "$tmp/cwd")
	if [ "$mode" = placed ]; then
		lines=$(grep -c '' "$tmp/err")
		if [ $rc = 0 ] && [ -z "$files" ] && [ "$lines" = 1 ] &&
		   grep -q "^libfdrange: FDRANGE_STATS=\"$v\": .*; accepted: .*; passing all calls through\$" "$tmp/err"; then
			echo "ok: FDRANGE_STATS=$v refused: $(cat "$tmp/err")"
		else
			bad "FDRANGE_STATS=$v: exit $rc, $lines lines on stderr, files in cwd: '${files}': $(cat "$tmp/err")"
		fi
	else
		if [ $rc != 0 ] || [ -n "$files" ] || [ -s "$tmp/err" ]; then
			bad "FDRANGE_STATS=$v without the library: exit $rc, files '$files'"
		fi
	fi
	rm -rf "$tmp/cwd" && mkdir "$tmp/cwd"
done
# and the accepted forms still are
for v in stderr none "./rel.%p"; do
	rc=0
	(cd "$tmp/cwd" && run env FDRANGE_STATS="$v" /bin/true) 2>"$tmp/err" || rc=$?
	if [ $rc = 0 ] && ! grep -q "passing all calls through" "$tmp/err"; then echo "ok: FDRANGE_STATS=$v accepted ($mode)"
	else bad "FDRANGE_STATS=$v: exit $rc: $(cat "$tmp/err")"; fi
done
[ "$mode" = placed ] && [ -z "$(ls -A "$tmp/cwd")" ] && bad "FDRANGE_STATS=./rel.%p wrote no report"
exit $fail
