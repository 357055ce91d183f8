#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/manycore.sh refuses each bad option with exit 2 and one line that
# names the option and what it accepts, before it starts anything.
#   manycore_bad_options.sh MANYCORE_SH BUILD_DIR
set -u
script=$1 build=$2
cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
fails=0
check() { # EXPECTED-SUBSTRING ARGS...
	local want=$1 err rc
	shift
	err=$(MANYCORE_ACCEL=none timeout 20 bash "$script" --build "$build" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" != 2 ] || [ "$(printf '%s\n' "$err" | wc -l)" != 1 ] ||
		case $err in *"$want"*) false ;; *) true ;; esac; then
		echo "FAIL: $*: exit $rc, '$err'; expected exit 2 and one line with '$want'"
		fails=$((fails + 1))
	else
		echo "ok: $*: $err"
	fi
}
check "--bogus: unknown option; expected one of" --bogus
check "extra: unexpected argument" extra
check "--cores: 0 is out of range; expected an integer from 1 to 4096" --cores 0
check "--cores: 5000 is out of range" --cores 5000
check "--seconds: 'x' is not an integer; expected an integer from 1 to 3600" --seconds x
check "-r: 101 is out of range; expected an integer from 1 to 100" -r 101
check "--rounds: 0 is out of range; expected an integer from 1 to 100" --rounds 0
check "--churn: '-1' is not an integer; expected an integer from 0 to 1000000000" --churn -1
check "--conns: 0 is out of range; expected an integer from 1 to 100000" --conns=0
check "--out: the directory name is empty" --out ""
check "--seconds: the value is missing; expected an integer from 1 to 3600" --seconds
check "--build: '/nonexistent' is not a directory" --build /nonexistent
check "--client-cores: 1 leaves no CPU of the 1 for the servers" --cores 1 --client-cores 1
err=$(MANYCORE_ACCEL=kvm2 timeout 20 bash "$script" --build "$build" 2>&1 >/dev/null)
rc=$?
case $rc:$err in 2:"manycore.sh: MANYCORE_ACCEL: 'kvm2' is not known; expected kvm, tcg or none") echo "ok: MANYCORE_ACCEL=kvm2: $err" ;;
*) echo "FAIL: MANYCORE_ACCEL=kvm2: exit $rc, '$err'"; fails=$((fails + 1)) ;; esac
n=$(bash -c 'c=0; IFS=,; for p in $1; do a=${p%-*} b=${p#*-}; c=$((c + b - a + 1)); done; echo $c' _ "$cpus")
check "--cores: $((n + 1)) is more than the $n CPUs this process may use" --cores $((n + 1))
[ "$fails" = 0 ]
