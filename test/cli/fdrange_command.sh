#!/bin/sh
# The fdrange wrapper: every exit code, option validation before anything
# starts, LD_PRELOAD composition, -v, --help and --version.
# usage: fdrange_command.sh FDRANGE LIBFDRANGE
set -u
exe=$1 lib=$2
pass=0 fail=0
out=$(mktemp) err=$(mktemp) tmpd=$(mktemp -d)
trap 'rm -rf "$out" "$err" "$tmpd"' EXIT

run() { "$@" >"$out" 2>"$err"; echo $?; }
expect() { # DESCRIPTION WANTED_RC GOT_RC [grep pattern on stderr] [one-line]
	ok=1
	[ "$2" = "$3" ] || ok=0
	if [ $# -ge 4 ] && [ -n "$4" ]; then grep -q -- "$4" "$err" "$out" || ok=0; fi
	if [ $# -ge 5 ]; then [ "$(grep -c '' "$err")" -eq 1 ] || ok=0; fi
	if [ $ok = 1 ]; then pass=$((pass + 1)); echo "ok: $1"
	else fail=$((fail + 1)); echo "FAIL: $1 (exit $3, wanted $2)"; cat "$out" "$err"; fi
}

expect "--help exits 0" 0 "$(run "$exe" --help)" "FDRANGE_SLOTS"
expect "--help lists every flag" 0 "$(run "$exe" --help)" "--accept POLICY"
expect "--version" 0 "$(run "$exe" --version)" "fdrange [0-9]"
expect "no command" 2 "$(run "$exe")" "no command" one
expect "unknown option" 2 "$(run "$exe" --bogus true)" "unknown option '--bogus'" one
expect "bad --slots" 2 "$(run "$exe" --slots abc true)" "FDRANGE_SLOTS=\"abc\"" one
expect "--slots=0" 2 "$(run "$exe" --slots=0 true)" "out of range" one
expect "bad --base" 2 "$(run "$exe" --base 65 true)" "multiple of 64" one
expect "bad --accept" 2 "$(run "$exe" --accept rr true)" "thread or roundrobin" one
expect "missing value" 2 "$(run "$exe" --width)" "needs a value" one
expect "--disable takes no value" 2 "$(run "$exe" --disable=1 true)" "takes no value" one
expect "bad inherited FDRANGE_WIDTH" 2 "$(FDRANGE_WIDTH=7 run "$exe" true)" "FDRANGE_WIDTH=\"7\"" one
# nothing must have started for a bad option
expect "bad option starts nothing" 2 "$(run "$exe" --slots 0 touch "$tmpd/started")"
[ -e "$tmpd/started" ] && { fail=$((fail + 1)); echo "FAIL: command ran despite a bad option"; }
expect "command not found" 127 "$(run "$exe" -- /nonexistent/prog)" "No such file" one
printf 'x' >"$tmpd/noexec"
expect "not executable" 126 "$(run "$exe" -- "$tmpd/noexec")" "Permission denied" one
expect "exit status passes through" 7 "$(run "$exe" -- sh -c 'exit 7')"
expect "options reach the environment" 0 \
	"$(run "$exe" --slots 3 --base 128 --width=256 --accept roundrobin --open keep --stats stderr --disable -- \
	   sh -c 'test "$FDRANGE_SLOTS/$FDRANGE_BASE/$FDRANGE_WIDTH/$FDRANGE_ACCEPT/$FDRANGE_OPEN/$FDRANGE_DISABLE" = 3/128/256/roundrobin/keep/1')"
expect "library preloaded" 0 "$(run "$exe" -- sh -c 'echo "$LD_PRELOAD"')"
case $(cat "$out") in */libfdrange.so) pass=$((pass + 1)); echo "ok: LD_PRELOAD names the library";;
	*) fail=$((fail + 1)); echo "FAIL: LD_PRELOAD is '$(cat "$out")'";; esac
# (sanitizer builds set TEST_PRELOAD_FIRST to the runtime that must lead)
first=${TEST_PRELOAD_FIRST:+$TEST_PRELOAD_FIRST:}
run env LD_PRELOAD="$first/x/libfdrange.so:libc.so.6 libfdrange.so.0" "$exe" -- "$exe" -- sh -c 'echo "$LD_PRELOAD"' >/dev/null
n=$(tr ': ' '\n\n' <"$out" | grep -c 'libfdrange')
if [ "$n" = 1 ] && grep -q "^${first}libc.so.6:/.*/libfdrange.so$" "$out"; then
	pass=$((pass + 1)); echo "ok: LD_PRELOAD not duplicated, others kept in front"
else fail=$((fail + 1)); echo "FAIL: LD_PRELOAD became '$(cat "$out")'"; fi
# --name=value of 32 bytes and more: only the name must be short.
expect "a long --stats=value" 0 \
	"$(run "$exe" --stats="$tmpd/report-of-my-server.%p" -- sh -c 'test "$FDRANGE_STATS" = "'"$tmpd"'/report-of-my-server.%p"')"
expect "a long unknown option name" 2 "$(run "$exe" --a-very-long-option-name-of-40-bytes-x=1 true)" \
	"unknown option '--a-very-long-option-name-of-40-bytes-x=1'" one
expect "--help fits 80 columns" 0 "$(run "$exe" --help)"
if awk 'length($0) > 80 || / $/ { print "line " NR " (" length($0) "): " $0; bad = 1 } END { exit !bad }' "$out"; then
	fail=$((fail + 1)); echo "FAIL: --help has lines beyond 80 columns or with trailing spaces"
else pass=$((pass + 1)); echo "ok: --help within 80 columns, no trailing space"; fi
expect "-v notes when no exit report comes" 0 "$(run "$exe" -v --stats stderr true)" \
	"a raw exit_group (Go programs, some servers' worker threads) or a signal writes none"
expect "-v prints settings" 0 "$(run "$exe" -v --slots 2 true)" "FDRANGE_SLOTS=2$"
expect "-v marks defaults" 0 "$(run "$exe" -v true)" "FDRANGE_BASE=64 (default)"
expect "-- runs a command named like an option" 127 "$(run "$exe" -- --help)" "--help: No such file"
# the preloaded library is the one that was built and places fds
expect "places fds through the wrapper" 0 "$(run "$exe" --slots 2 --stats "$tmpd/report.%p" -- cat /dev/null)"
if grep -q "placing fds" "$tmpd"/report.* && grep -q "FDRANGE_SLOTS=2 " "$tmpd"/report.*; then
	pass=$((pass + 1)); echo "ok: the report names the settings"
else fail=$((fail + 1)); echo "FAIL: no report"; cat "$tmpd"/report.*; fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
