#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The hypervisor's samples (pvm_irq_enable...) are left out of every share
# and shown apart: after the path table, a blank line, a heading of their
# own and one row per function, not among the header lines above the table.
# The samples come from a stand-in for perf (--perf-data reads `perf
# script`), so no permission or paravirtualised kernel is needed.
. "$(dirname "$0")/lib.sh"
mkdir -p "$TMP/bin"
cat >"$TMP/bin/perf" <<'PERF'
#!/bin/sh
# perf script -F comm,tid,ip,sym: 3 samples in fdget, 1 in the hypervisor's.
for f in fdget fdget fdget pvm_irq_enable; do
	printf 'server 4242\n\tffffffff81001000 %s\n\tffffffff81009000 do_syscall_64\n\n' "$f"
done
PERF
chmod +x "$TMP/bin/perf"
: >"$TMP/perf.data"
got=0
PATH="$TMP/bin:$PATH" "$FDRANGE" profile --perf-data "$TMP/perf.data" >"$TMP/out" 2>"$TMP/err" || got=$?
[ "$got" -eq 0 ] || fail "--perf-data: exit $got: $(cat "$TMP/err")"
cat "$TMP/out"
grep -q '^  lookup  *3 *100.00%' "$TMP/out" || fail "the hypervisor's sample is not left out of the shares"
# The block: blank line, heading, the function's row; right after the table.
awk '/^  user /                 { u = NR }
     /^  left out: /            { h = NR; blank = (prev == "") }
     h && NR == h + 1           { row = $0 }
     { prev = $0 }
     END { exit !(u && h == u + 2 && blank && row ~ /^  pvm_irq_enable +1 /) }' "$TMP/out" ||
	fail "the hypervisor's samples are not apart under a heading after the path table"
grep -q '^  left out: 1 samples (25.0% of all) in the hypervisor' "$TMP/out" || fail "the heading lacks the count"
echo ok
