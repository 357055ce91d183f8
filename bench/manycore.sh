#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/manycore.sh - libfdrange where it is meant to run: a machine with
# many cores, two server shapes, real timings.  What it
# runs, what each number means and how to read the verdicts:
# docs/manycore.md.
#
#   bench/manycore.sh [options]        full run on this machine's N cores
#   bench/manycore.sh --smoke          CI check: 2 cores, 1 short round
#
# On N cores (N >= 4) the servers get the first N-2 of the usable CPUs and
# N-2 threads, the load client (bench/mcload.c, closed loop, a reconnect
# every --churn requests) the last 2 CPUs and 2 threads (--client-cores K:
# the last K and K threads); with N < 4 the servers get 2 threads on the
# first N-1 CPUs and the client the last.  The table's "srv CPUs" says
# whether the client kept the servers busy.
# Steps, each announced with its estimated time before anything runs:
#
#  1. host A/B, two servers in turn: memcached -t N-2 (one thread accepts
#     and hands each connection to a worker) and the accept-per-thread
#     server bench/coherence/guest/acceptd.c with N-2 threads (every thread
#     its own SO_REUSEPORT listener; stands for trafficserver, envoy, h2o,
#     haproxy with per-thread binds).  Three servers of each: A plain, A2
#     plain (the A/A control: what two identical servers differ by), B
#     under libfdrange (LD_PRELOAD, no settings); R rounds, the order
#     rotating (A B A2, B A2 A, A2 A B).  The table and verdict rule are
#     fdrange-ab-memcached's (bench/ab-report, bench/ab_stats.h): a
#     difference counts only outside the A/A band and with 4 rounds or more.
#  2. one unmeasured round per server after the rounds: `fdrange stat` on B
#     (did the library place anything: placed=, inplace=, kept= under
#     model local, path=, reason=; a B that did none of these makes the
#     verdict void, and the verdict says so first)
#     and, when the build's fdrange has `profile`, `fdrange profile` on A
#     and on B: the share of the server's CPU in the kernel's fd paths.
#  3. where /dev/kvm works (or MANYCORE_ACCEL=tcg): the project's kernels
#     (kernel/test.sh's build-unpatched and build-range) booted under
#     qemu-system-x86_64 -smp N (at most 64) with a busybox initramfs, and step 1 inside
#     each (a quarter of the seconds per round, at least 1): on the plain kernel B takes the
#     library's dup path, on the range kernel its kernel-range path.  The
#     only real timing of the kernel path.  Kernels are not built here
#     (that takes longer than the whole run); missing ones are reported.
#  4. N >= 8, not --smoke, the kernels built: one point of the coherence
#     model with N host cores behind N vCPUs (at most 64), bench/coherence/run.sh
#     --smp N --shape ac --variants "plain lib" --conns 128 --churn 5 --rounds 1,
#     given what is left of 8 minutes.
#
# Options:
#   --smoke            2 cores, 1 round of 2 s per server, 128 connections,
#                      no guest and no coherence step (~35 s)
#   --cores N          use N of the CPUs this process may run on (default:
#                      all of them)
#   --client-cores K   CPUs and threads of the load client (default 2; 1
#                      below 4 cores)
#   -d, --seconds S    seconds per server and round on the host (default 4)
#   -r, --rounds R     rounds (default 4; a verdict needs 4)
#   --churn K          reconnect after K requests (default 5; 0: never)
#   -c, --conns C      connections (default 4 x server threads, at least 128:
#                      the library moves only fds numbered 64 and up)
#   -o, --out DIR      results (default manycore-DATE)
#   --build DIR        the meson build directory (default build/)
#   -h, --help         this help
# Environment: MANYCORE_ACCEL=kvm|tcg|none: the guest step under KVM
# (default where /dev/kvm can be opened), under TCG at 2 vCPUs and 1 round
# of 1 s (tests the plumbing; its timings mean nothing, and it says so), or
# not at all.  FDCACHE_WORK: where kernel/test.sh built the kernels
# (default /var/tmp/fdrange-kernel).  MANYCORE_GUEST=1 is set by the
# guest's /init for the copy of this script that runs inside it.
#
# Output in DIR: summary.txt (the table, placement, fd-path shares and the
# verdicts; also printed), result.json, and per step and server a
# directory with rounds.csv, run.conf, cpu.csv, ab-result.json, stat-B.txt,
# profile-*.txt and the logs.  Exit status: 0 when every step that ran
# produced its verdict (a skipped step is not a failure), 1 otherwise, 2
# on a bad option.  Every server, load, guest and model run it started is
# stopped on exit, on error and on Ctrl-C.
set -euo pipefail

prog=manycore.sh
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
T0=$(date +%s)
BUDGET=480      # seconds: the bound a full run on 16 cores must keep

smoke=0 cores="" client_cores="" seconds=4 rounds=4 churn=5 conns="" out="" build=""
guest_mode=${MANYCORE_GUEST:-0}

usage() { sed -n '4,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
bad_arg() { echo "$prog: $1: $2; expected $3" >&2; exit 2; }
die() { echo "$prog: $*" >&2; exit 1; }
log() { echo "[manycore +$(( $(date +%s) - T0 ))s] $*" >&2; }

# What each option takes: the one place its range is written.
accepted() {
	case $1 in
	--cores) echo "an integer from 1 to 4096" ;;
	--client-cores) echo "an integer from 1 to 4095, fewer than --cores" ;;
	-d|--seconds) echo "an integer from 1 to 3600" ;;
	-r|--rounds) echo "an integer from 1 to 100" ;;
	--churn) echo "an integer from 0 to 1000000000 (0: never reconnect)" ;;
	-c|--conns) echo "an integer from 1 to 100000" ;;
	-o|--out|--build) echo "a directory" ;;
	esac
}
range_of() { # OPTION -> "MIN MAX"
	case $1 in
	--cores) echo "1 4096" ;; --client-cores) echo "1 4095" ;; -d|--seconds) echo "1 3600" ;; -r|--rounds) echo "1 100" ;;
	--churn) echo "0 1000000000" ;; -c|--conns) echo "1 100000" ;;
	esac
}
need_int() { # OPTION VALUE
	local r lo hi
	r=$(range_of "$1"); lo=${r% *} hi=${r#* }
	[[ $2 =~ ^[0-9]+$ ]] || bad_arg "$1" "'$2' is not an integer" "$(accepted "$1")"
	[ ${#2} -le 10 ] && [ "$2" -ge "$lo" ] && [ "$2" -le "$hi" ] ||
		bad_arg "$1" "$2 is out of range" "$(accepted "$1")"
}

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	--*=*) set -- "${opt%%=*}" "${opt#*=}" "${@:2}"; continue ;;
	-h|--help) usage; exit 0 ;;
	--smoke) smoke=1; shift; continue ;;
	--cores|--client-cores|-d|--seconds|-r|--rounds|--churn|-c|--conns|-o|--out|--build) ;;
	-*) bad_arg "$opt" "unknown option" "one of --smoke --cores --client-cores --seconds --rounds --churn --conns --out --build --help" ;;
	*) bad_arg "$opt" "unexpected argument" "options only (see --help)" ;;
	esac
	[ $# -ge 2 ] || bad_arg "$opt" "the value is missing" "$(accepted "$opt")"
	val=$2
	case $opt in
	--cores) need_int "$opt" "$val"; cores=$val ;;
	--client-cores) need_int "$opt" "$val"; client_cores=$val ;;
	-d|--seconds) need_int "$opt" "$val"; seconds=$val ;;
	-r|--rounds) need_int "$opt" "$val"; rounds=$val ;;
	--churn) need_int "$opt" "$val"; churn=$val ;;
	-c|--conns) need_int "$opt" "$val"; conns=$val ;;
	-o|--out) [ -n "$val" ] || bad_arg "$opt" "the directory name is empty" "a directory"; out=$val ;;
	--build) [ -d "$val" ] || bad_arg "$opt" "'$val' is not a directory" "a meson build directory"; build=$val ;;
	esac
	shift 2
done
accel=${MANYCORE_ACCEL:-}
case $accel in
"") if [ -c /dev/kvm ] && (exec 3<>/dev/kvm) 2>/dev/null; then accel=kvm; else accel=none; fi ;;
kvm|tcg|none) ;;
*) bad_arg MANYCORE_ACCEL "'$accel' is not known" "kvm, tcg or none" ;;
esac

# --- the machine: which CPUs, how many threads ------------------------------
# The CPUs this process may use, as a list (a container or taskset may
# give fewer than the machine has).
cpu_list() {
	local spec part a b parts
	spec=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
	[ -n "$spec" ] || spec=0-$(( $(nproc) - 1 ))
	IFS=, read -r -a parts <<<"$spec"
	for part in "${parts[@]}"; do
		a=${part%-*} b=${part#*-}
		seq "$a" "$b"
	done
}
mapfile -t allcpus < <(cpu_list)
if [ "$smoke" = 1 ]; then
	n=2
	[ "${#allcpus[@]}" -ge 2 ] || n=1
	[ -z "$cores" ] || n=$cores
	seconds=2 rounds=1
elif [ -n "$cores" ]; then
	n=$cores
else
	n=${#allcpus[@]}
fi
[ "$n" -le "${#allcpus[@]}" ] ||
	bad_arg --cores "$n is more than the ${#allcpus[@]} CPUs this process may use" "at most ${#allcpus[@]}"
join() { local IFS=,; echo "$*"; }
if [ -n "$client_cores" ]; then
	[ "$client_cores" -lt "$n" ] ||
		bad_arg --client-cores "$client_cores leaves no CPU of the $n for the servers" "fewer than $n"
	k=$client_cores
	threads=$((n - k)) client_threads=$k
	[ "$threads" -ge 2 ] || threads=2
	server_cpus=$(join "${allcpus[@]:0:n-k}") client_cpus=$(join "${allcpus[@]:n-k:k}")
elif [ "$n" -ge 4 ]; then
	threads=$((n - 2)) client_threads=2
	server_cpus=$(join "${allcpus[@]:0:n-2}") client_cpus=$(join "${allcpus[@]:n-2:2}")
elif [ "$n" -ge 2 ]; then
	threads=2 client_threads=1
	server_cpus=$(join "${allcpus[@]:0:n-1}") client_cpus=${allcpus[n-1]}
else
	threads=2 client_threads=1 server_cpus=${allcpus[0]} client_cpus=${allcpus[0]}
fi
if [ -z "$conns" ]; then
	conns=$((4 * threads))
	[ "$conns" -ge 128 ] || conns=128
fi
[ "$conns" -ge "$client_threads" ] ||
	bad_arg --conns "$conns is fewer than the $client_threads load threads" "at least $client_threads"
# The load: keys and values acceptd can hold (keys "key" + digits below
# 8192, values up to 64 bytes), the same for both servers; 1024 keys, set
# once before the rounds, so gets hit.
keys=1024 value_size=32 key_size=16 get_ratio=0.9
profile_s=4
[ "$smoke" = 0 ] && [ "$guest_mode" = 0 ] || profile_s=1

# --- the programs ------------------------------------------------------------
if [ "$guest_mode" = 1 ]; then
	mcload=/mc/mcload acceptd=/mc/acceptd fdrange=/mc/fdrange lib=/mc/libfdrange.so memcached=/mc/memcached
	report="" profile=0
else
	[ -n "$build" ] || build=$repo/build
	[ -d "$build" ] || bad_arg --build "'$build' is not a directory" "a meson build directory (meson setup build && ninja -C build)"
	build=$(cd "$build" && pwd)
	mcload=$build/bench/mcload acceptd=$build/bench/acceptd report=$build/bench/ab-report
	fdrange=$build/tools/fdrange lib=$build/lib/libfdrange.so
	for f in "$mcload" "$acceptd" "$report" "$fdrange" "$lib"; do
		[ -e "$f" ] || die "no $f: build it first (ninja -C $build) or pass --build DIR"
	done
	memcached=$(command -v memcached) || die "memcached not found (Debian: apt-get install memcached)"
	command -v python3 >/dev/null || die "python3 not found (Debian: apt-get install python3)"
	command -v taskset >/dev/null || die "taskset not found (Debian: apt-get install util-linux)"
	profile=0
	"$fdrange" profile --help >/dev/null 2>&1 && profile=1
fi
# B's preload: a library built with ASan loads only behind the ASan runtime
# (as bench/meson.build's bench_preload does for the other benchmarks).
preload=$lib
asan=$(ldd "$lib" 2>/dev/null | awk '/libasan/ { print $3; exit }' || true)
[ -z "$asan" ] || preload=$asan:$lib
mc_user=()
[ "$(id -u)" -ne 0 ] || mc_user=(-u root)   # memcached refuses root without -u
# Room for every connection and its churn on both sides.
nofile=$((conns * 2 + 1024))
[ "$(ulimit -Sn)" -ge "$nofile" ] || ulimit -Sn "$nofile" 2>/dev/null || ulimit -Sn "$(ulimit -Hn)"

# --- stopping everything --------------------------------------------------------
# pids: the children still running.  A child is taken off once reaped, so
# no number the kernel may have given to another process since is killed.
pids=()
forget() {
	local p keep=()
	for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	pids=("${keep[@]}")
}
state() { { sed "s/.*) //" "/proc/$1/stat" 2>/dev/null || true; } | cut -d" " -f1; }
# stop PID...: TERM, up to 5 s to exit (a zombie has), KILL, reap.
stop() {
	local p st
	for p in "$@"; do kill "$p" 2>/dev/null || true; done
	for p in "$@"; do
		for _ in $(seq 50); do
			st=$(state "$p")
			[ -n "$st" ] && [ "$st" != Z ] || break
			sleep 0.1
		done
		[ -z "$st" ] || [ "$st" = Z ] || kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		forget "$p"
	done
}
cleanup() { [ ${#pids[@]} = 0 ] || stop "${pids[@]}"; }
trap cleanup EXIT
trap 'echo "$prog: interrupted" >&2; exit 130' INT
trap 'exit 143' TERM

# --- one server shape, A A2 B (the host, and the guest's copy of this script)
free_port() {
	local p used
	used=" $(awk 'NR > 1 { split($2, a, ":"); print a[2] }' /proc/net/tcp /proc/net/tcp6 2>/dev/null | tr '\n' ' ') "
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 30000))
		case $used in *" $(printf '%04X' "$p") "*) continue ;; esac
		echo "$p"; return 0
	done
	return 1
}
clk_tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

declare -A port pid
# start_server SHAPE A|A2|B DIR: sets port[V], pid[V].
start_server() {
	local shape=$1 v=$2 dir=$3 p try cmd
	for try in 1 2 3 4 5; do
		p=$(free_port) || die "no free port found"
		if [ "$shape" = mc ]; then
			cmd=("$memcached" "${mc_user[@]}" -t "$threads" -m 64 -c "$nofile" -p "$p" -U 0 -l 127.0.0.1)
		else
			cmd=("$acceptd" "$p" "$threads")
		fi
		if [ "$v" = B ]; then cmd=(env "LD_PRELOAD=$preload" "${cmd[@]}"); else cmd=(env -u LD_PRELOAD "${cmd[@]}"); fi
		cmd=(taskset -c "$server_cpus" "${cmd[@]}")
		echo "${cmd[*]}" >"$dir/server-$v.cmd"
		# No fd of ours beyond 0-2 in the server's table; the subshell
		# execs, so $! is the server's pid.
		(
			for f in /proc/self/fd/*; do
				k=${f##*/}
				if [ "$k" -gt 2 ]; then eval "exec $k>&-" 2>/dev/null || true; fi
			done
			exec "${cmd[@]}"
		) </dev/null >"$dir/server-$v.log" 2>&1 &
		pid[$v]=$!
		pids+=("${pid[$v]}")
		for _ in $(seq 50); do
			kill -0 "${pid[$v]}" 2>/dev/null || break
			if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
				port[$v]=$p
				# acceptd's other threads open their listeners a moment later
				sleep 0.2
				return 0
			fi
			sleep 0.1
		done
		stop "${pid[$v]}"
		log "$v did not come up on port $p (try $try): $(tail -n 1 "$dir/server-$v.log")"
	done
	die "the server ($shape $v) would not start; see $dir/server-$v.log"
}
stop_servers() { stop "${pid[A]}" "${pid[A2]}" "${pid[B]}"; }

load_cmd=(env -u LD_PRELOAD taskset -c "$client_cpus" "$mcload" --threads "$client_threads"
	--conns "$conns" --churn "$churn" --get-ratio "$get_ratio" --value-size "$value_size"
	--key-size "$key_size" --keys "$keys" --key-prefix key)

# load SERVER SECONDS LOG: the load on one server, in the background; sets lpid.
load() {
	timeout $(($2 + 60)) "${load_cmd[@]}" --port "${port[$1]}" --seconds "$2" >"$3" 2>&1 &
	lpid=$!
	pids+=("$lpid")
}

# run_shape SHAPE DIR SECONDS: the rounds, then B's placement and the profiles.
run_shape() {
	local shape=$1 dir=$2 secs=$3 v i pos c0 c1 line kv summary
	local -A pre=()
	mkdir -p "$dir"
	for v in A A2 B; do start_server "$shape" "$v" "$dir"; done
	for v in A A2 B; do
		timeout 120 "${load_cmd[@]}" --port "${port[$v]}" --preload --seconds 0 >"$dir/preload-$v.log" 2>&1 &
		pre[$v]=$!
		pids+=("${pre[$v]}")
	done
	for v in A A2 B; do
		wait "${pre[$v]}" || die "setting the keys on $shape $v failed: $(tail -n 1 "$dir/preload-$v.log")"
		forget "${pre[$v]}"
	done
	{
		echo "shape=$shape"
		echo "server_threads=$threads"
		echo "client_threads=$client_threads"
		echo "conns=$conns"
		echo "churn=$churn"
		echo "duration_s=$secs"
		echo "rounds=$rounds"
		echo "get_ratio=$get_ratio"
		echo "value_size=$value_size"
		echo "key_size=$key_size"
		echo "keys=$keys"
		echo "memory_mb=64"
		echo "server_cpus=$server_cpus"
		echo "client_cpus=$client_cpus"
		echo "cpus_online=$n"
		echo "aa=0"
		echo "kernel=$(uname -r)"
		echo "started=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	} >"$dir/run.conf"
	echo "round,position,server,ops_per_s,avg_us,p50_us,p90_us,p99_us,p999_us,max_us,errors" >"$dir/rounds.csv"
	echo "round,server,cpu_s,reconnects" >"$dir/cpu.csv"
	local orders=("A B A2" "B A2 A" "A2 A B")
	for i in $(seq 1 "$rounds"); do
		pos=0
		for v in ${orders[$(((i - 1) % 3))]}; do
			pos=$((pos + 1))
			kill -0 "${pid[$v]}" 2>/dev/null || die "$shape $v died; see $dir/server-$v.log"
			c0=$(cpu_ticks "${pid[$v]}")
			load "$v" "$secs" "$dir/load-$v-$i.log"
			wait "$lpid" || die "the load failed in round $i on $shape $v: $(tail -n 1 "$dir/load-$v-$i.log")"
			forget "$lpid"
			c1=$(cpu_ticks "${pid[$v]}")
			line=$(grep '^ops=' "$dir/load-$v-$i.log") || die "no result in $dir/load-$v-$i.log"
			local -A f=()
			for kv in $line; do f[${kv%%=*}]=${kv#*=}; done
			echo "$i,$pos,$v,${f[ops_per_s]},${f[avg_us]},${f[p50_us]},${f[p90_us]},${f[p99_us]},${f[p999_us]},${f[max_us]},${f[errors]}" >>"$dir/rounds.csv"
			echo "$i,$v,$(awk -v t=$((c1 - c0)) -v hz="$clk_tck" 'BEGIN { printf "%.2f", t / hz }'),${f[reconnects]:-0}" >>"$dir/cpu.csv"
			log "$shape round $i $v: ${f[ops_per_s]} ops/s, p99 ${f[p99_us]} us, server CPU $(tail -n 1 "$dir/cpu.csv" | cut -d, -f3) s"
		done
	done
	# Unmeasured: B's placement while a load runs (read during a measured
	# round it would slow B alone), and where fdrange has it, the fd paths'
	# share of A's and B's CPU.
	for v in A B; do
		[ "$v" = B ] || [ "$profile" = 1 ] || continue
		load "$v" $((profile_s + 2)) "$dir/load-$v-unmeasured.log"
		sleep 1
		if [ "$v" = B ]; then
			timeout 30 "$fdrange" stat --color=never --no-map "${pid[B]}" >"$dir/stat-B.txt" 2>&1 || true
			timeout 30 "$fdrange" stat --json "${pid[B]}" >"$dir/stat-B.json" 2>/dev/null || true
			# ab-report calls a run whose B placement it cannot read void.
			summary=$(sed -n 's/^summary: //p' "$dir/stat-B.txt")
			echo "locality=${summary:-(fdrange stat failed; see stat-B.txt)}" >>"$dir/run.conf"
		fi
		if [ "$profile" = 1 ]; then
			timeout $((profile_s + 30)) "$fdrange" profile --seconds "$profile_s" "${pid[$v]}" \
				>"$dir/profile-$v.txt" 2>&1 || echo "fdrange profile failed (exit $?)" >>"$dir/profile-$v.txt"
		fi
		wait "$lpid" || true
		forget "$lpid"
	done
	stop_servers
}

# --- inside the guest: both shapes, then back to /init -----------------------
if [ "$guest_mode" = 1 ]; then
	gsecs=$seconds
	run_shape mc /tmp/out/memcached "$gsecs"
	run_shape ac /tmp/out/acceptd "$gsecs"
	exit 0
fi

# --- the plan ----------------------------------------------------------------
[ -n "$out" ] || out=manycore-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out" || die "cannot create '$out'"
out=$(cd "$out" && pwd)
rm -rf "$out/host" "$out/guest-"* "$out/coherence" "$out/summary.txt" "$out/result.json"
: >"$out/parts.txt"
: >"$out/notes.txt"
note() { echo "$*" >>"$out/notes.txt"; log "$*"; }

kwork=${FDCACHE_WORK:-/var/tmp/fdrange-kernel}
kplain=$kwork/build-unpatched/arch/x86/boot/bzImage
krange=$kwork/build-range/arch/x86/boot/bzImage
# per server: 3 servers started and loaded, the rounds, the unmeasured round(s)
per_shape() { # SECONDS PROFILE(0|1)
	echo $(( 4 + 3 * rounds * ($1 + 1) + (profile_s + 3) * ($2 + 1) ))
}
est_host=$((2 * $(per_shape "$seconds" "$profile")))

guest=none guest_why="" client_cores_g=$client_cores
# The project's guest kernels have CONFIG_NR_CPUS=64, and run.sh refuses
# more: on a larger machine the guest and the coherence point use 64.
gn=$n gsecs=$((seconds / 4)) grounds=$rounds
[ "$gn" -le 64 ] || gn=64
# the guest's own check wants its client fewer than its CPUs
[ "$client_cores_g" -lt "$gn" ] || client_cores_g=$((gn / 4 > 0 ? gn / 4 : 1))
[ "$gsecs" -ge 1 ] || gsecs=1
if [ "$smoke" = 1 ]; then
	guest_why="--smoke"
elif [ "$accel" = none ]; then
	if [ -n "${MANYCORE_ACCEL:-}" ]; then guest_why="MANYCORE_ACCEL=none"; else guest_why="no usable /dev/kvm (MANYCORE_ACCEL=tcg tests the plumbing under TCG)"; fi
elif ! command -v qemu-system-x86_64 >/dev/null; then
	guest_why="qemu-system-x86_64 not found (Debian: apt-get install qemu-system-x86)"
elif ! busybox=$(command -v busybox) || ldd "$busybox" >/dev/null 2>&1; then
	guest_why="no static busybox (Debian: apt-get install busybox-static)"
elif ! command -v cpio >/dev/null || ! command -v gzip >/dev/null; then
	guest_why="cpio or gzip not found"
elif [ ! -f "$kplain" ] || [ ! -f "$krange" ]; then
	guest_why="the kernels are not built in $kwork (build them first: FDCACHE_BUILD_ONLY=1 FDCACHE_BOOTS=\"unpatched range\" kernel/test.sh)"
else
	guest=$accel
	if [ "$accel" = tcg ]; then gn=2 gsecs=1 grounds=1 client_cores_g=""; fi
fi
# per boot: the boot, then both servers started, loaded and stopped; TCG
# runs everything about 2 times slower (measured on 2 host cores)
est_boot=$((15 + 2 * (4 + 3 * grounds * (gsecs + 1) + 4)))
[ "$guest" != tcg ] || est_boot=$((est_boot * 2))
est_guest=0
[ "$guest" = none ] || est_guest=$((2 * est_boot))

coh=0 coh_why=""
if [ "$smoke" = 1 ]; then
	coh_why="--smoke"
elif [ "$n" -lt 8 ]; then
	coh_why="$n cores: the coherence point runs at 8 or more"
elif [ ! -f "$kplain" ] || [ ! -f "$kwork/build-unpatched/vmlinux" ]; then
	coh_why="the plain kernel is not built in $kwork (FDCACHE_BUILD_ONLY=1 FDCACHE_BOOTS=\"unpatched range\" kernel/test.sh)"
else
	coh=1
fi
est_total=$((est_host + est_guest + 10))
coh_cmd=(bench/coherence/run.sh --smp "$((n > 64 ? 64 : n))" --shape ac --variants "plain lib" --conns 128 --churn 5 --rounds 1)

{
	echo "manycore plan: $n of ${#allcpus[@]} CPUs$( [ "$smoke" = 0 ] || echo ' (--smoke)'); servers on CPUs $server_cpus with $threads threads, load on CPUs $client_cpus with $client_threads threads"
	echo "  load: $conns connections, a reconnect every $churn requests (0: never), 90% gets of $keys keys, $value_size-byte values"
	echo "  1. host: memcached -t $threads and acceptd $threads, each A A2 B x $rounds rounds x $seconds s: ~$est_host s"
	if [ "$profile" = 1 ]; then
		echo "  2. B's placement (fdrange stat) and fdrange profile on A and B, $profile_s s each (included above)"
	else
		echo "  2. B's placement (fdrange stat) (included above); fdrange profile is not in this build"
	fi
	if [ "$guest" = none ]; then
		echo "  3. guest (kernel path): skipped: $guest_why"
	else
		echo "  3. guest under $guest, -smp $gn, plain and range kernels, both servers x $grounds rounds x $gsecs s: ~$est_guest s"
	fi
	if [ "$coh" = 1 ]; then
		echo "  4. coherence point: ${coh_cmd[*]}: what is left of $BUDGET s (~$((BUDGET - 10 - est_total)) s; skipped under 60 s)"
	else
		echo "  4. coherence point: skipped: $coh_why"
	fi
	echo "  estimated: ~$est_total s$( [ "$coh" = 0 ] || echo " + the coherence point (at most $BUDGET s in all)")"
} | tee "$out/plan.txt"
[ "$est_total" -le "$BUDGET" ] || [ "$smoke" = 1 ] ||
	log "note: the estimate is above the $BUDGET s target (fewer --rounds or --seconds keep it)"

# --- 1 and 2: the host ---------------------------------------------------------
{
	echo "machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc --all) CPUs online, $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r), $(memcached -V 2>&1 | head -n 1)"
	echo "run: $(date -u +%Y-%m-%dT%H:%M:%SZ), libfdrange $(git -C "$repo" describe --always --dirty 2>/dev/null || echo '(not a git checkout)')"
} >"$out/machine.txt"
part() { printf '%s\t%s\t%s\t%s\n' "$@" >>"$out/parts.txt"; } # DIR LABEL SERVER KIND
log "host: memcached -t $threads"
run_shape mc "$out/host/memcached" "$seconds"
part host/memcached host "memcached -t $threads" host
log "host: acceptd $threads"
run_shape ac "$out/host/acceptd" "$seconds"
part host/acceptd host "acceptd $threads" host
[ "$profile" = 1 ] || note "fdrange profile: not available in this build ($fdrange profile --help failed): no fd-path share of CPU"

# --- 3: the kernel path in a guest ----------------------------------------------
copy_with_libs() { # FILE DIR_IN_IR IR
	cp -L "$1" "$3/$2/"
	ldd "$1" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r l; do
		mkdir -p "$3$(dirname "$l")"
		cp -L "$l" "$3$l"
	done
}
mkinitrd() { # IR OUT
	local ir=$1
	rm -rf "$ir"
	mkdir -p "$ir"/{bin,proc,sys,dev,tmp,mc,etc}
	cp "$busybox" "$ir/bin/busybox"
	copy_with_libs "$(command -v bash)" bin "$ir"
	for f in "$memcached" "$acceptd" "$mcload" "$fdrange" "$lib"; do copy_with_libs "$f" mc "$ir"; done
	[ -f "$ir/mc/libfdrange.so" ] || mv "$ir/mc/$(basename "$lib")" "$ir/mc/libfdrange.so"
	cp "$here/manycore.sh" "$ir/mc/"
	echo "--cores $gn ${client_cores_g:+--client-cores $client_cores_g} --seconds $gsecs --rounds $grounds --churn $churn --conns $conns" >"$ir/mc/args"
	echo 'root:x:0:0:root:/:/bin/sh' >"$ir/etc/passwd"
	echo 'root:x:0:' >"$ir/etc/group"
	cat >"$ir/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd   # bash's <(...)
ifconfig lo 127.0.0.1 up
echo "MC BOOTED $(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo)"
MANYCORE_GUEST=1 /bin/bash /mc/manycore.sh $(cat /mc/args) >/tmp/run.log 2>&1
echo "MC RC $?"
tail -n 20 /tmp/run.log | sed 's/^/MC LOG /'
for f in $(cd /tmp/out 2>/dev/null && find . -type f ! -name '*.log'); do
	echo "MC FILE $f"
	sed 's/^/MC| /' "/tmp/out/$f"
done
echo "MC END"
poweroff -f
EOF
	chmod +x "$ir/init"
	(cd "$ir" && find . | cpio -o -H newc 2>/dev/null | gzip -1 >"$2")
}
# boot NAME KERNEL: the guest's files in $out/guest-NAME/{memcached,acceptd}.
boot() {
	local name=$1 kernel=$2 con=$out/guest-$1/console.log t cpus bound
	local qa=(-accel kvm -cpu host)
	# shellcheck disable=SC2054 # one argument with a comma
	[ "$guest" = kvm ] || qa=(-accel tcg,thread=multi)
	mkdir -p "$out/guest-$name"
	bound=$((est_boot * 2 + 60))
	t=$(date +%s)
	timeout "$bound" qemu-system-x86_64 "${qa[@]}" -smp "$gn" -m 2048 -display none -monitor none \
		-serial "file:$con" -no-reboot -kernel "$kernel" -initrd "$out/guest/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet" >"$out/guest-$name/qemu.log" 2>&1 &
	local qpid=$!
	pids+=("$qpid")
	wait "$qpid" || log "guest $name: qemu exited with $?"
	forget "$qpid"
	log "guest $name: $(( $(date +%s) - t )) s"
	tr -d '\r' <"$con" | awk -v d="$out/guest-$name" '
		/^MC FILE / { f = d "/" substr($3, 3); sub(/\/[^\/]*$/, "", f); system("mkdir -p \"" f "\""); f = d "/" substr($3, 3); printf "" > f; next }
		/^MC\| / { print substr($0, 5) >> f; next }
		/^MC (BOOTED|RC|LOG|END)/ { print > (d "/guest.txt") }'
	grep -q '^MC END' "$out/guest-$name/guest.txt" 2>/dev/null ||
		{ note "guest $name: did not finish; see $con"; return 1; }
	cpus=$(sed -n 's/^MC BOOTED .* cpus=\([0-9]*\).*/\1/p' "$out/guest-$name/guest.txt")
	if [ "$cpus" != "$gn" ]; then
		note "guest $name: booted with ${cpus:-an unknown number of} CPUs, not $gn: its timings are left out"
		return 1
	fi
	grep -q '^MC RC 0' "$out/guest-$name/guest.txt" ||
		{ note "guest $name: the A/B inside failed: $(grep '^MC LOG' "$out/guest-$name/guest.txt" | tail -n 1)"; return 1; }
	return 0
}
guest_failed=0
if [ "$guest" != none ]; then
	log "guest: building the initramfs"
	mkdir -p "$out/guest"
	mkinitrd "$out/guest/ir" "$out/guest/initrd.gz"
	tcg_note=""
	[ "$guest" = kvm ] || tcg_note=" (TCG)"
	for k in plain range; do
		if [ "$k" = plain ]; then kern=$kplain; else kern=$krange; fi
		log "guest: the $k kernel under $guest, -smp $gn"
		if boot "$k" "$kern"; then
			gt=$(sed -n 's/^server_threads=//p' "$out/guest-$k/memcached/run.conf")
			part "guest-$k/memcached" "guest $k kernel$tcg_note" "memcached -t $gt" "guest-$k"
			part "guest-$k/acceptd" "guest $k kernel$tcg_note" "acceptd $gt" "guest-$k"
		else
			guest_failed=1
		fi
	done
	[ "$guest" = kvm ] || note "the guest step ran under TCG (MANYCORE_ACCEL=tcg) at -smp $gn: it tests the plumbing; its timings say nothing about the kernel path"
else
	note "guest step (the kernel path under KVM): skipped: $guest_why"
fi

# --- 4: one coherence point, N host cores behind N vCPUs ------------------------
coh_failed=0
if [ "$coh" = 1 ]; then
	left=$((BUDGET - 10 - ($(date +%s) - T0)))
	if [ "$left" -lt 60 ]; then
		note "coherence point: skipped: only $left s left of $BUDGET s; run it by hand: ${coh_cmd[*]}"
	else
		log "coherence: ${coh_cmd[*]} (at most $left s)"
		rc=0
		# timeout stops run.sh and its QEMU boots (its process group) at the bound
		COH_COUNTERS=0 COH_BOOT_TIMEOUT=$left timeout "$left" "$repo/${coh_cmd[0]}" "${coh_cmd[@]:1}" \
			--lib "$lib" --out "$out/coherence" >"$out/coherence.txt" 2>"$out/coherence.log" &
		cpid=$!
		pids+=("$cpid")
		wait "$cpid" || rc=$?
		forget "$cpid"
		if [ "$rc" = 124 ]; then
			note "coherence point: not done within $left s (the 8-minute bound); run it by hand: ${coh_cmd[*]}"
			coh_failed=1
		elif [ "$rc" != 0 ]; then
			note "coherence point: run.sh exited with $rc; see $out/coherence.log"
			coh_failed=1
		fi
	fi
else
	note "coherence point: skipped: $coh_why"
fi

# --- the report ---------------------------------------------------------------
while IFS=$'\t' read -r d _; do
	# 3: no verdict: void (B placed nothing, or its placement is unknown;
	# the table below says so from stat-B.txt), or too few rounds (the
	# verdict says so).
	rc=0
	"$report" "$out/$d" --json >"$out/$d/ab-report.out" 2>"$out/$d/ab-report.err" || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 3 ] ||
		die "ab-report on $out/$d failed (exit $rc): $(head -n 1 "$out/$d/ab-report.err")"
	# ab-report's text and chart name memcached in their header: keep its
	# JSON (the rule's numbers and verdict) and write our own table.
	mv "$out/$d/result.json" "$out/$d/ab-result.json"
	rm -f "$out/$d/summary.txt" "$out/$d/chart.dat" "$out/$d/chart-vars.gp" "$out/$d/ab-report.out"
done <"$out/parts.txt"

python3 - "$out" "$n" "$smoke" <<'PYEOF'
import json, os, re, statistics, sys

out, ncores, smoke = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"

def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""

def summary_fields(text):
    m = re.search(r"^summary: (.*)$", text, re.M)
    if not m:
        return None
    return dict(kv.split("=", 1) for kv in m.group(1).split() if "=" in kv)

def stat_of(pdir):
    """fdrange stat's summary fields for B, and \"acted\": the fds the
    library placed, by a move (placed) or where they already lay, as on the
    kernel-range path (inplace, summed over owners in the summary), or kept
    under model local; None when stat gave nothing."""
    fields = summary_fields(read(os.path.join(pdir, "stat-B.txt")))
    try:
        j = json.loads(read(os.path.join(pdir, "stat-B.json")))
    except ValueError:
        j = None
    if fields is None and j is None:
        return None
    if j is not None:
        fields = {k: ("-" if v is None else str(v)) for k, v in j["summary"].items()}
    inplace = fields.get("inplace", "0")
    inplace = int(inplace) if inplace.isdigit() else 0
    # Connections a local model kept where the kernel numbered them
    # (FDRANGE_LOCAL=keep, the default on the dup path) are the library's
    # decision too, as in fdrange ab's verdict; fds 0-2, kept by rule in
    # any process, are not.
    kept = fields.get("kept", "0")
    kept = int(kept) if kept.isdigit() and fields.get("model") == "local" else 0
    fields["acted"] = int(fields.get("placed", "0") or 0) + inplace + kept
    return fields

def profile_line(text):
    for line in text.splitlines():
        if line.startswith("fd paths "):
            return line
    # no result: what fdrange profile said first (the reason) and last
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return " / ".join(dict.fromkeys(lines[:1] + lines[-1:]))

parts, lines, verdicts = [], [], []
for row in read(os.path.join(out, "parts.txt")).splitlines():
    d, label, server, kind = row.split("\t")
    pdir = os.path.join(out, d)
    ab = json.load(open(os.path.join(pdir, "ab-result.json")))
    cpu = {}
    for l in read(os.path.join(pdir, "cpu.csv")).splitlines()[1:]:
        _, s, c, _ = l.split(",")
        cpu.setdefault(s, []).append(float(c))
    secs = float(ab["config"]["duration_s"])
    stat = stat_of(pdir)
    prof = {v: profile_line(read(os.path.join(pdir, "profile-%s.txt" % v)))
            for v in ("A", "B") if os.path.exists(os.path.join(pdir, "profile-%s.txt" % v))}
    cmp_ops, cmp_p99 = ab["compare"]["ops_per_s"], ab["compare"]["p99_us"]
    verdict = ab["verdict"]
    if stat is None:
        acted, void = None, "void: whether B placed anything is unknown (fdrange stat gave no summary; see %s/stat-B.txt); " % d
    else:
        acted = stat["acted"]
        void = "" if acted > 0 else "void: B placed nothing (placed=0 inplace=0 kept=%s model=%s reason=%s), so B ran as plain; " % (
            stat.get("kept", "?"), stat.get("model", "?"), stat.get("reason", "?"))
    path_note = ""
    if stat and kind == "guest-range" and acted and stat.get("path") != "kernel-range":
        path_note = " [B took path=%s, not the kernel range]" % stat.get("path")
    line = "verdict (%s, %s): %s%s%s" % (label, server, void, "measured: " if void else "", verdict)
    line += path_note
    if "(TCG)" in label:
        line += " [under TCG: the timings mean nothing]"
    verdicts.append(line)
    part = {
        "dir": d, "step": label, "kind": kind, "server": server,
        "rounds": ab["complete_rounds"], "seconds": secs,
        "servers": {s: {"ops_per_s": ab["servers"][s]["ops_per_s"]["median"],
                        "p99_us": ab["servers"][s]["p99_us"]["median"],
                        "server_cpus_busy": round(statistics.median(cpu[s]) / secs, 2) if cpu.get(s) else None}
                    for s in ("A", "A2", "B")},
        "ops_ba": cmp_ops["ba_median"], "ops_band": cmp_ops["band"], "ops_decision": cmp_ops["decision"],
        "p99_ba": cmp_p99["ba_median"], "p99_band": cmp_p99["band"], "p99_decision": cmp_p99["decision"],
        "placed": int(stat["placed"]) if stat and stat.get("placed", "").isdigit() else None,
        "inplace": int(stat["inplace"]) if stat and stat.get("inplace", "").isdigit() else None,
        "kept": int(stat["kept"]) if stat and stat.get("kept", "").isdigit() else None,
        "acted": acted, "path": stat.get("path") if stat else None,
        "reason": stat.get("reason") if stat else None,
        "stat_summary": stat, "fd_paths_profile": prof, "void": bool(void), "verdict": line,
    }
    parts.append(part)

lines.append("%-34s %-18s %-15s %10s %9s %9s %7s %s" % ("step", "server", "variant", "ops/s", "p99 us", "srv CPUs", "B/A", "A/A band"))
for p in parts:
    for s, name in (("A", "A plain"), ("A2", "A2 plain (A/A)"), ("B", "B libfdrange")):
        v = p["servers"][s]
        busy = "%.2f" % v["server_cpus_busy"] if v["server_cpus_busy"] is not None else "-"
        extra = ""
        if s == "B":
            extra = "%7.3f %.3f-%.3f" % (p["ops_ba"], p["ops_band"][0], p["ops_band"][1])
        lines.append("%-34s %-18s %-15s %10.0f %9.1f %9s %s" % (
            p["step"] if s == "A" else "", p["server"] if s == "A" else "", name,
            v["ops_per_s"], v["p99_us"], busy, extra))
lines.append("(medians over rounds; srv CPUs: the server's CPU time per second of load, in CPUs;"
             " B/A: median of the per-round throughput ratios; A/A band: what the two plain"
             " servers differed by, either way)")
lines.append("")
for p in parts:
    lines.append("%s, %s:" % (p["step"], p["server"]))
    if p["acted"] is None:
        lines.append("  B placement: unknown (no fdrange stat summary)")
    else:
        st = p["stat_summary"]
        lines.append("  B placement: placed=%s inplace=%s kept=%s path=%s reason=%s model=%s client_sockets=%s shared_client_lines=%s" % (
            st.get("placed"), st.get("inplace"), st.get("kept"), st.get("path"), st.get("reason"), st.get("model"),
            st.get("client_sockets"), st.get("shared_client_lines")))
    if p["kind"] == "host":
        if p["fd_paths_profile"]:
            for v in ("A", "B"):
                if v in p["fd_paths_profile"]:
                    lines.append("  fd paths, %s: %s" % (v, p["fd_paths_profile"][v]))
        else:
            lines.append("  fd paths: fdrange profile is not available in this build")
# The kernel path across boots: B on the range kernel against plain on the
# plain kernel (two boots: no A/A band spans them, so no verdict).
by = {(p["kind"], p["server"]): p for p in parts}
cross = []
for p in parts:
    if p["kind"] == "guest-range" and ("guest-plain", p["server"]) in by:
        q = by[("guest-plain", p["server"])]
        cross.append("%s: B on the range kernel / A on the plain kernel: throughput %.3f, p99 %.3f"
                     " (two boots, no A/A band across them: read with both boots' bands)" % (
                         p["server"], p["servers"]["B"]["ops_per_s"] / q["servers"]["A"]["ops_per_s"],
                         p["servers"]["B"]["p99_us"] / q["servers"]["A"]["p99_us"]))
if cross:
    lines.append("")
    lines.extend(cross)
notes = [l for l in read(os.path.join(out, "notes.txt")).splitlines() if l]
coh = read(os.path.join(out, "coherence.txt"))
if coh:
    lines.append("")
    lines.append("coherence point (bench/coherence/run.sh; full output in coherence.txt):")
    lines.extend("  " + l for l in coh.rstrip().splitlines()[-12:])
if notes:
    lines.append("")
    lines.extend("note: " + l for l in notes)
lines.append("")
lines.extend(verdicts)
text = "\n".join(lines) + "\n"
plan = read(os.path.join(out, "plan.txt"))
machine = read(os.path.join(out, "machine.txt"))
open(os.path.join(out, "summary.txt"), "w").write(machine + plan + "\n" + text)
json.dump({"schema": "fdrange-manycore/1", "cores": ncores, "smoke": smoke,
           "machine": machine.splitlines(), "plan": plan.splitlines(),
           "parts": parts, "cross_kernel": cross, "coherence": coh.splitlines(), "notes": notes},
          open(os.path.join(out, "result.json"), "w"), indent=2)
sys.stdout.write(text)
PYEOF
log "done in $(( $(date +%s) - T0 )) s; results in $out (summary.txt, result.json)"
[ "$guest_failed" = 0 ] && [ "$coh_failed" = 0 ]
