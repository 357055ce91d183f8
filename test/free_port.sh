# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# free_port: print a port from 20000 to 49999 that no TCP or UDP socket of
# this network namespace has (/proc/net); status 1 after 200 tries.  The
# one definition the test libraries source (test/profile, test/memcached,
# test/servers, test/families: lib.sh; tools/ci/package.sh).  bench/ab-server and
# bench/manycore.sh, shipped to run without the tests, keep their own.
free_port() {
	local used p
	used=" $(awk 'NR > 1 { split($2, a, ":"); print a[2] }' /proc/net/tcp /proc/net/tcp6 \
		/proc/net/udp /proc/net/udp6 2>/dev/null | tr '\n' ' ' || true) "
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 30000))
		case $used in *" $(printf '%04X' "$p") "*) continue ;; esac
		echo "$p"
		return 0
	done
	return 1
}
