#!/bin/sh
# SPDX-License-Identifier: MIT
# Bounded fuzz run of fuzz/fuzz_config.c with clang's libFuzzer, ASan and
# UBSan (Debian: clang-14, libclang-rt-14-dev).
#
#   fuzz/run.sh [SECONDS]       fuzz for SECONDS (default 60), exit 1 on a
#                               crash, hang or broken property
#   MERGE=1 fuzz/run.sh 300     and merge new coverage into the committed
#                               corpus fuzz/corpus/config
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
mkdir -p "$out"
start=$(date +%s)

"$cc" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-D_GNU_SOURCE -DFDRANGE_VERSION_STRING='"fuzz"' \
	-I"$root/include" -I"$root/lib" \
	"$here/fuzz_config.c" "$root/lib/options.c" "$root/lib/geometry.c" "$root/lib/strbuf.c" \
	-o "$out/fuzz_config"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# One job (the machine has 2 cores shared with others); 5 s per input is a
# hang for code that runs in microseconds.
status=0
"$out/fuzz_config" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024 \
	-print_final_stats=1 -artifact_prefix="$out/" -dict="$here/config.dict" \
	"$scratch" "$here/corpus/config" >"$out/fuzz.log" 2>&1 || status=$?
tail -n 12 "$out/fuzz.log"
if [ "$status" -ne 0 ]; then
	echo "fuzz: FAILED (exit $status), see $out/fuzz.log and $out/crash-*" >&2
	exit 1
fi
if [ "${MERGE:-0}" = 1 ]; then
	"$out/fuzz_config" -merge=1 "$here/corpus/config" "$scratch" >>"$out/fuzz.log" 2>&1
	echo "fuzz: corpus now $(ls "$here/corpus/config" | wc -l) inputs"
fi
echo "fuzz: ${seconds}s without a failure ($(($(date +%s) - start))s with the build)"
