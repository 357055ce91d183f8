#!/bin/sh
# SPDX-License-Identifier: MIT
# Bounded fuzz runs of the libFuzzer targets with clang's libFuzzer, ASan
# and UBSan (Debian: clang-14, libclang-rt-14-dev): fuzz_config.c (the
# option parser and geometry) and fuzz_block.c (fdrange stat's reading of
# a stats block another process wrote, and its reports).
#
#   fuzz/run.sh [SECONDS]       fuzz each target for SECONDS (default 60),
#                               exit 1 on a crash, hang or broken property
#   TARGETS=block fuzz/run.sh   only those targets (default "config block")
#   MERGE=1 fuzz/run.sh 300     and merge new coverage into the committed
#                               corpora fuzz/corpus/TARGET
#
# New inputs go to a scratch directory, so a plain run leaves the committed
# corpus as it is.  A failing input is written to $FUZZ_OUT (default
# build-fuzz/) as crash-*, timeout-* or leak-*.
set -eu
seconds=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=${FUZZ_OUT:-$root/build-fuzz}
cc=${CLANG:-$(command -v clang-14 || command -v clang)}
targets=${TARGETS:-config block}
mkdir -p "$out"
start=$(date +%s)
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE"
flags="$flags -DFDRANGE_VERSION_STRING=\"fuzz\" -I$root/include -I$root/lib -I$root/tools"
core="$root/lib/options.c $root/lib/geometry.c $root/lib/strbuf.c $root/lib/syscall.c"
stat_src="$root/tools/stat_check.c $root/tools/stat_load.c $root/tools/stat_find.c"
stat_src="$stat_src $root/tools/stat_proc.c $root/tools/stat_analyze.c $root/tools/stat_reason.c"
stat_src="$stat_src $root/tools/stat_text.c $root/tools/stat_json.c $root/tools/stat_prom.c"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for t in $targets; do
	case $t in
	config) src="$here/fuzz_config.c $core" ;;
	block) src="$here/fuzz_block.c $stat_src $core" ;;
	*) echo "fuzz: unknown target '$t'" >&2; exit 2 ;;
	esac
	# shellcheck disable=SC2086
	"$cc" $flags $src -o "$out/fuzz_$t"
	mkdir -p "$scratch/$t"
	# One job (the machine has 2 cores shared with others); 5 s per input
	# is a hang for code that runs in microseconds to milliseconds.
	status=0
	"$out/fuzz_$t" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024 \
		-print_final_stats=1 -artifact_prefix="$out/$t-" -dict="$here/$t.dict" \
		"$scratch/$t" "$here/corpus/$t" >"$out/fuzz-$t.log" 2>&1 || status=$?
	tail -n 12 "$out/fuzz-$t.log"
	if [ "$status" -ne 0 ]; then
		echo "fuzz: $t FAILED (exit $status), see $out/fuzz-$t.log and $out/$t-crash-*" >&2
		exit 1
	fi
	if [ "${MERGE:-0}" = 1 ]; then
		"$out/fuzz_$t" -merge=1 "$here/corpus/$t" "$scratch/$t" >>"$out/fuzz-$t.log" 2>&1
		echo "fuzz: $t corpus now $(ls "$here/corpus/$t" | wc -l) inputs"
	fi
	echo "fuzz: $t ${seconds}s without a failure"
done
echo "fuzz: done in $(($(date +%s) - start))s with the builds"
