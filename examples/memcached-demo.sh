#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# memcached under libfdrange in one command, on a fresh Debian 12:
#   installs what is missing (needs root or sudo), builds libfdrange, starts
#   memcached -t 4 under it with no FDRANGE_* settings at all, puts a short
#   memcaslap load of 160 connections on it, and prints the locality report
#   while the load runs: what the library learned about memcached's
#   hand-off, which chunks each worker's connections landed in, which
#   thread serves them, and whether any 8-fd line of the fd table is
#   shared.  The fds the kernel numbers below 64 stay where they are
#   (FDRANGE_THRESHOLD: with fewer fds a move costs more than it saves);
#   the connections above are placed.
#   Then the same for plain memcached, for comparison.  Everything it starts
#   is stopped on exit and on Ctrl-C.
#
#   examples/memcached-demo.sh [SECONDS]     (load duration, default 4)
set -euo pipefail

secs=${1:-4}
[[ $secs =~ ^[0-9]+$ ]] && [ "$secs" -ge 1 ] && [ "$secs" -le 600 ] ||
	{ echo "usage: $0 [SECONDS 1..600]" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# 1. Packages (Debian/Ubuntu), only if something is missing.
. tools/deps.sh
[ "$(id -u)" -eq 0 ] || SUDO=sudo
need_packages meson ninja-build gcc pkg-config libcmocka-dev memcached libmemcached-tools gnuplot-nox

# 2. Build.
echo "== building libfdrange"
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
fdrange=$root/build/tools/fdrange

# 3. Run.
pids=()
tmp=$(mktemp -d)
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
user=()
[ "$(id -u)" -eq 0 ] && user=(-u root)   # memcached refuses root without -u
printf 'key\n64 64 1\nvalue\n1024 1024 1\ncmd\n0 0.1\n1 0.9\n' >"$tmp/load.cfg"

free_port() {
	local used p
	used=" $(awk 'NR > 1 { split($2, a, ":"); print a[2] }' /proc/net/tcp /proc/net/tcp6 | tr '\n' ' ') "
	while :; do
		p=$((20000 + RANDOM % 30000))
		case $used in *" $(printf '%04X' "$p") "*) ;; *) echo "$p"; return ;; esac
	done
}

demo() { # LABEL, then the command prefix
	local label=$1 port pid mpid
	shift
	port=$(free_port)
	echo
	echo "== $label: $* memcached -t 4 -m 1024 -p $port"
	# No fd of this shell may leak into memcached's fd table; the subshell
	# execs, so $! is memcached's pid (fdrange and env exec too).
	(
		for f in /proc/self/fd/*; do
			n=${f##*/}
			if [ "$n" -gt 2 ]; then eval "exec $n>&-" 2>/dev/null || true; fi
		done
		exec "$@" memcached "${user[@]}" -t 4 -m 1024 -p "$port" -U 0 -l 127.0.0.1
	) </dev/null >"$tmp/mc.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || { cat "$tmp/mc.log"; exit 1; }
		sleep 0.1
	done
	memcaslap -s "127.0.0.1:$port" -T 2 -c 160 -t "${secs}s" -F "$tmp/load.cfg" >"$tmp/load.log" 2>&1 &
	mpid=$!
	pids+=("$mpid")
	sleep "$(awk -v s="$secs" 'BEGIN { print s / 2 }')"
	echo "-- fdrange stat $pid   (mid-load, $secs s memcaslap -T 2 -c 160, 90% gets)"
	"$fdrange" stat "$pid" | tee "$tmp/stat.out"
	grep '^summary:' "$tmp/stat.out" >>"$tmp/summaries"
	wait "$mpid" || { cat "$tmp/load.log"; exit 1; }
	echo "-- memcaslap: $(grep '^Run time' "$tmp/load.log")"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

demo "memcached under libfdrange (no settings)" "$fdrange" --
demo "plain memcached (no library: /proc alone)" env -u LD_PRELOAD
# The verdict comes from the two reports' summary lines, not from hope.
field() { # LINE_NO KEY
	sed -n "${1}p" "$tmp/summaries" | tr ' ' '\n' | sed -n "s/^$2=//p"
}
echo
echo "under libfdrange: learned hand-off: $(field 1 model), min purity $(field 1 min_purity)%," \
	"shared client lines $(field 1 shared_client_lines) from fd $(field 1 threshold) up," \
	"$(field 1 low_shared_client_lines) below it (left as the kernel numbers them), fallbacks $(field 1 fallbacks)"
echo "plain memcached:  shared client lines $(field 2 shared_client_lines) (lowest-free numbering interleaves the workers)"
if [ "$(field 1 shared_client_lines)" = 0 ] &&
	awk -v p="$(field 1 min_purity)" 'BEGIN { exit !(p != "-" && p >= 95) }'; then
	echo "Each worker's connections from fd 64 up sat in chunks and lines of their own."
else
	echo "Placement was NOT worker-local here; see the report above and docs/memcached.md."
	status=1
fi
echo "Next: bench/ab-memcached (--help): memcached plain, plain again and under libfdrange in rounds, ending in one verdict line against the A/A noise."
exit "${status:-0}"
