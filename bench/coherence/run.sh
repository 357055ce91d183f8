#!/bin/bash
# bench/coherence/run.sh - count the fd-table cache-line transfers that
# libfdrange (and the fdcache kernel) remove, with a QEMU TCG plugin that
# models the caches of the guest's vCPUs. See docs/coherence.md.
#
#   bench/coherence/run.sh [options]        full run: validation + memcached
#   bench/coherence/run.sh --smoke          CI check: plugin builds, one short
#                                           microbenchmark boot separates
# Options:
#   --smp "2 4"        vCPU counts (default "2 4"; 4 is coarser on a 2-core host)
#   --rounds R         boots per variant and vCPU count (default 3)
#   --variants "..."   of: plain lib lib-all lib+fdcache lib-all+fdcache fdcache
#                      lib-rr lib-rr+fdcache range lib+assist lib-all+assist
#                      lib+assist+fdcache lib-all+assist+fdcache range-sub
#                      lib-keep lib-move lib+assist-nolock lib+assist-w64
#                      lib+assist-nolock-w64 lib+assist-nolock-w512
#                      (default: the first six)
#                      plain: no library, plain 6.12 kernel; lib: libfdrange
#                      with default settings; lib-keep, lib-move: with
#                      FDRANGE_LOCAL=keep or move (what the dup path does with
#                      connections their accepting thread serves; --shape ac);
#                      lib+fdcache: libfdrange on the
#                      fdcache kernel; fdcache: that kernel alone; lib-rr:
#                      libfdrange with FDRANGE_ACCEPT=roundrobin (memcached
#                      hands connection k to worker k mod t, so this puts
#                      each worker's fds in its own range); lib-rr+fdcache:
#                      that on the fdcache kernel (both with
#                      FDRANGE_THRESHOLD=0: below 64 fds nothing would be
#                      moved); lib-all: libfdrange with FDRANGE_THRESHOLD=0
#                      (moves from the first fd, as the default did before
#                      the threshold); lib-all+fdcache: that on the fdcache
#                      kernel.  The fdcache kernel has the whole series
#                      (also the full_fds_bits patch and the fd range); the
#                      "+fdcache" variants without "assist" run the library
#                      with FDRANGE_KERNEL=off.  range: no library, on the
#                      range kernel (the series with CONFIG_FD_RANGE=y and
#                      CONFIG_FDCACHE=n: the full_fds_bits patch, and the
#                      range's check with no range set); lib+assist,
#                      lib-all+assist: the library on it, which then takes
#                      its kernel-range path; lib+assist-nolock: the
#                      same booted with fd_range_nolock=on, allocating
#                      and closing in its range without file_lock (patch
#                      0007); lib+assist-w64, lib+assist-nolock-w64: those
#                      with FDRANGE_WIDTH=64 (each thread one 64-fd chunk
#                      of its own, one open_fds word, no shared 8-fd line);
#                      lib+assist-nolock-w512: FDRANGE_WIDTH=512 and
#                      FDRANGE_BOUND=off with fd_range_nolock=on: a
#                      thread's first chunks on open_fds and
#                      close_on_exec lines no other thread uses;
#                      lib+assist+fdcache,
#                      lib-all+assist+fdcache: the library on the fdcache
#                      kernel, kernel-range path; range-sub: an
#                      experiment, not libfdrange: guest/subrange.c puts
#                      each worker's connections in a small range inside
#                      the embedded 64-fd table, on the range kernel
#   --lib PATH         libfdrange.so to preload (default: build this tree's)
#   --requests N       memcached requests per window (default 20000)
#   --conns N          client connections (default 32; up to ~4000)
#   --churn N          requests per connection before it reconnects (default 50)
#   --shape mc|ac      the server: mc, memcached -t N (one thread accepts and
#                      hands connections to workers; the default) or ac,
#                      guest/acceptd.c with N threads that each accept on
#                      their own SO_REUSEPORT listener and serve and close
#                      their own connections (trafficserver, envoy, h2o,
#                      haproxy with per-thread binds). Workers = vCPUs.
#   --host-cpus LIST   run QEMU on these host CPUs only (taskset -c LIST),
#                      e.g. the N cores of a many-core host behind N vCPUs;
#                      one host core behind 8 vCPUs crawls (spinning vCPUs
#                      wait out their time slices: docs/coherence.md)
#   --micro-iters N    microbenchmark reader iterations (default 20000)
#   --no-pin           leave memcached's workers unpinned (default: worker i
#                      pinned to vCPU i mod N; the client runs on the last)
#   --out DIR          results (default $COH_WORK/results)
# Environment: COH_COUNTERS=0 skips the fdcache counter-sharing boot.
# COH_VALIDATED=DIR takes each vCPU count's validation from an earlier
# run's DIR/raw instead of booting it again (sweep.sh's later points).
# COH_BOOT_TIMEOUT: seconds per boot (900).
# COH_WORK (default /var/tmp/fdrange-coherence): builds, the
# Debian kernel for --smoke, results. The project's kernels are built (or
# reused) by kernel/test.sh in FDCACHE_WORK (default /var/tmp/fdrange-kernel).
#
# Every boot is `qemu-system-x86_64 -accel tcg,thread=multi` (MTTCG, one
# host thread per vCPU). Exit status: 0 when every requested figure was
# produced and validated, 1 otherwise (2: usage).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
WORK=${COH_WORK:-/var/tmp/fdrange-coherence}
KWORK=${FDCACHE_WORK:-/var/tmp/fdrange-kernel}
SMOKE=0 SMPS="2 4" ROUNDS=3 VARIANTS="plain lib lib-all lib+fdcache lib-all+fdcache fdcache" LIB="" REQUESTS=20000
CONNS=32 CHURN=50 MICRO_ITERS=20000 OUT="" PIN=1 SHAPE=mc HOST_CPUS=""
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) SMOKE=1 ;;
	--smp) SMPS=$2; shift ;;
	--rounds) ROUNDS=$2; shift ;;
	--variants) VARIANTS=$2; shift ;;
	--lib) LIB=$(realpath "$2"); shift ;;
	--requests) REQUESTS=$2; shift ;;
	--conns) CONNS=$2; shift ;;
	--churn) CHURN=$2; shift ;;
	--shape) SHAPE=$2; shift ;;
	--host-cpus) HOST_CPUS=$2; shift ;;
	--micro-iters) MICRO_ITERS=$2; shift ;;
	--out) OUT=$2; shift ;;
	--no-pin) PIN=0 ;;
	-h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
OUT=${OUT:-$WORK/results}
case $SHAPE in
mc|ac) ;;
*) echo "run.sh: --shape '$SHAPE': accepted: mc (memcached) or ac (accept per thread)" >&2; exit 2 ;;
esac
for smp in $SMPS; do
	# the kernels are built with CONFIG_NR_CPUS=64 (kernel/config.fragment)
	case $smp in
	[1-9]|[1-5][0-9]|6[0-4]) ;;
	*) echo "run.sh: --smp '$smp': accepted: vCPU counts 1-64" >&2; exit 2 ;;
	esac
done
T0=$(date +%s)
log() { echo "[coherence +$(( $(date +%s) - T0 ))s] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- dependencies (Debian packages only) ----------------------------------
. "$REPO/tools/deps.sh"
# Plugin API 4 (register and guest-memory reads) needs qemu >= 9.2; Debian
# 12's own qemu is 7.2 (API 1, and the plugin memory-callback bug of
# upstream issue 1381), so take qemu from bookworm-backports (10.0).
qemu_ok() {
	command -v qemu-system-x86_64 >/dev/null 2>&1 || return 1
	local v
	v=$(qemu-system-x86_64 --version | sed -n 's/.*version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p;q')
	set -- $v
	[ "${1:-0}" -gt 9 ] || { [ "${1:-0}" -eq 9 ] && [ "${2:-0}" -ge 2 ]; }
}
if ! qemu_ok; then
	[ "$(id -u)" = 0 ] || die "need qemu-system-x86 >= 9.2 (bookworm-backports); run as root to install it"
	if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		log "adding bookworm-backports to apt sources (for qemu 10)"
		echo 'deb http://deb.debian.org/debian bookworm-backports main' \
			> /etc/apt/sources.list.d/bookworm-backports.list
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-t bookworm-backports qemu-system-x86 >/dev/null || die "installing qemu from backports failed"
	qemu_ok || die "qemu-system-x86_64 is still older than 9.2"
fi
pkgs="gcc libc6-dev libglib2.0-dev pkg-config busybox-static cpio gzip python3"
[ $SMOKE = 1 ] || pkgs="$pkgs memcached gnuplot-nox meson ninja-build"
# shellcheck disable=SC2086
need_packages $pkgs || die "apt-get install failed"

mkdir -p "$WORK" "$OUT"

# --- the plugin and the static guest programs ------------------------------
log "building the plugin and the guest programs"
PLUGIN=$WORK/coherence.so
# shellcheck disable=SC2046
gcc -O2 -g -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden $(pkg-config --cflags glib-2.0) \
	-o "$PLUGIN" "$HERE/plugin/coherence.c" || die "plugin build failed"
GB=$WORK/guest-bin
mkdir -p "$GB"
gcc -static -O2 -Wall -Wextra -Werror -pthread -o "$GB/fdbounce" "$HERE/guest/fdbounce.c"
gcc -static -O2 -Wall -Wextra -Werror -o "$GB/cohsyms" "$HERE/guest/cohsyms.c"
gcc -static -O2 -Wall -Wextra -Werror -o "$GB/mcload" "$HERE/guest/mcload.c"
gcc -O2 -Wall -Wextra -Werror -pthread -o "$GB/acceptd" "$HERE/guest/acceptd.c"
gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$GB/subrange.so" "$HERE/guest/subrange.c" -ldl

FUNCS=$(grep -v '^#' "$HERE/functions.txt" | awk 'NF == 2')

# --- guest initramfs -------------------------------------------------------
# mkinitrd DIR OUT [memcached]: busybox, /init, the guest programs, and for
# the memcached runs memcached, libfdrange and the libraries they load.
copy_with_libs() { # FILE DEST_DIR_IN_IR IR
	cp "$1" "$3/$2/"
	ldd "$1" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r l; do
		mkdir -p "$3$(dirname "$l")"
		cp -L "$l" "$3$l"
	done
}
mkinitrd() {
	local ir=$1 out=$2 with_mc=${3:-}
	rm -rf "$ir"
	mkdir -p "$ir"/{bin,proc,sys,dev,tmp,coh,etc}
	cp /bin/busybox "$ir/bin/busybox"
	cp "$GB"/fdbounce "$GB"/cohsyms "$GB"/mcload "$GB"/subrange.so "$ir/coh/"
	echo "$FUNCS" | awk '{ printf "%s:%s ", $1, $2 }' > "$ir/coh/fns"
	if [ -n "$with_mc" ]; then
		copy_with_libs /usr/bin/memcached coh "$ir"
		copy_with_libs "$GB/acceptd" coh "$ir"
		copy_with_libs "$LIB" coh "$ir"
		[ "$(basename "$LIB")" = libfdrange.so ] || mv "$ir/coh/$(basename "$LIB")" "$ir/coh/libfdrange.so"
		echo 'root:x:0:0:root:/:/bin/sh' > "$ir/etc/passwd"
		echo 'root:x:0:' > "$ir/etc/group"
	fi
	cat > "$ir/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm
arg() { sed -n "s/.*coh\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
echo "COH BOOTED $(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo)"
if [ "$(arg syms)" = guest ]; then
	echo 0 > /proc/sys/kernel/kptr_restrict
	/coh/cohsyms $(cat /coh/fns) > /tmp/syms.log || { cat /tmp/syms.log; echo "COH FAIL cohsyms"; }
	sleep 0.5   # the plugin re-translates everything once all vCPUs stop
fi
case $(arg job) in
micro)
	/coh/fdbounce inter "$(arg iters)" || echo "COH FAIL fdbounce inter"
	/coh/fdbounce sep "$(arg iters)" || echo "COH FAIL fdbounce sep"
	;;
counters)
	/coh/fdbounce sep "$(arg iters)" || echo "COH FAIL fdbounce sep"
	/coh/fdbounce alias "$(arg iters)" || echo "COH FAIL fdbounce alias"
	;;
mc)
	ifconfig lo 127.0.0.1 up
	t=$(arg threads); last=$(( $(grep -c ^processor /proc/cpuinfo) - 1 ))
	# room for ~1000 client connections on both sides (--conns)
	ulimit -n 8192
	mc="/coh/memcached -u root -t $t -c 8192 -l 127.0.0.1 -p 11211" worker=mc-worker
	# the accept-per-thread shape: every thread its own listener (guest/acceptd.c)
	[ "$(arg shape)" = ac ] && mc="/coh/acceptd 11211 $t" worker=ac-worker
	# the library's exit report says which path it took (FDRANGE_KERNEL)
	export FDRANGE_STATS=/tmp/fdrange-report
	case $(arg pre) in
	rr) FDRANGE_THRESHOLD=0 FDRANGE_ACCEPT=roundrobin LD_PRELOAD=/coh/libfdrange.so $mc & ;;
	all) FDRANGE_THRESHOLD=0 LD_PRELOAD=/coh/libfdrange.so $mc & ;;
	alloff) FDRANGE_THRESHOLD=0 FDRANGE_KERNEL=off LD_PRELOAD=/coh/libfdrange.so $mc & ;;
	1) LD_PRELOAD=/coh/libfdrange.so $mc & ;;
	1off) FDRANGE_KERNEL=off LD_PRELOAD=/coh/libfdrange.so $mc & ;;
	keep|move) FDRANGE_LOCAL=$(arg pre) LD_PRELOAD=/coh/libfdrange.so $mc & ;;
	w64) FDRANGE_WIDTH=64 LD_PRELOAD=/coh/libfdrange.so $mc & ;;
	# 16 threads of 512 fds from 64 need more than 8192 numbers, and the
	# do-no-harm bound would keep a process with few fds below 1024
	w512) ulimit -n 16384
		FDRANGE_WIDTH=512 FDRANGE_BOUND=off LD_PRELOAD=/coh/libfdrange.so $mc & ;;
	sub) SUB_N=$t LD_PRELOAD=/coh/subrange.so $mc & ;;
	*) $mc & ;;
	esac
	pid=$!
	# mcload retries its first connect for 10 s only, and a 16-vCPU TCG
	# guest can take longer to start memcached; acceptd must have every
	# thread's listener bound, or the kernel spreads the connections over
	# fewer threads than asked. Wait (60 s at most) for the listeners.
	want=1
	[ "$(arg shape)" = ac ] && want=$t
	k=0
	while [ "$(grep -c ':2BCB 00000000:0000 0A' /proc/net/tcp)" -lt $want ] && [ $k -lt 600 ]; do
		sleep 0.1; k=$((k + 1))
	done
	echo "COH listening after $k x 0.1 s: $(grep -c ':2BCB 00000000:0000 0A' /proc/net/tcp) of $want listeners"
	if [ "$(arg pin)" = 1 ]; then
		# worker i on vCPU i mod N: the guest scheduler would otherwise
		# move workers between the few vCPUs all the time, and their
		# struct file and task lines would move with them (a cost of
		# oversubscribed vCPUs, not of the fd table)
		n=$(( last + 1 )) i=0 k=0
		while [ "$(cat /proc/$pid/task/*/comm 2>/dev/null | grep -c $worker)" -lt "$t" ] && [ $k -lt 100 ]; do
			sleep 0.1; k=$((k + 1))
		done
		for d in /proc/$pid/task/*; do
			[ "$(cat "$d/comm")" = $worker ] || continue
			taskset -p -c $(( i % n )) "${d##*/}" >/dev/null && echo "COH pinned worker ${d##*/} to vCPU $(( i % n ))"
			i=$((i + 1))
		done
	fi
	/coh/mcload 11211 "$(arg conns)" "$(arg requests)" "$(arg churn)" "$last" "$pid" \
		"$(arg shape) variant=$(arg variant) threads=$t" || echo "COH FAIL mcload"
	grep -q 'libfdrange\|subrange' /proc/$pid/maps && echo "COH preload active" || echo "COH preload absent"
	echo "COH server $(cat /proc/$pid/comm) threads=$(ls /proc/$pid/task | wc -l)"
	kill $pid; wait $pid
	[ -f /tmp/fdrange-report ] && sed 's/^/COH REPORT /' /tmp/fdrange-report
	# the range fast paths' outcomes (patch 0007), where the kernel has them
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	[ -r /sys/kernel/debug/fd_range/stats ] && sed 's/^/COH KSTAT /' /sys/kernel/debug/fd_range/stats
	;;
esac
echo "COH END"
poweroff -f
EOF
	chmod +x "$ir/init"
	(cd "$ir" && find . | cpio -o -H newc 2>/dev/null | gzip -1 > "$out")
}

# boot NAME KERNEL INITRD SMP PLUGIN_ARGS CMDLINE_EXTRA: raw plugin output in
# $OUT/raw/NAME.txt, serial console in $OUT/raw/NAME.log.
boot() {
	local name=$1 kernel=$2 initrd=$3 smp=$4 pargs=$5 extra=$6
	local raw=$OUT/raw/$name.txt con=$OUT/raw/$name.log t
	mkdir -p "$OUT/raw"
	rm -f "$raw" "$con"
	t=$(date +%s)
	local pin=()
	[ -z "$HOST_CPUS" ] || pin=(taskset -c "$HOST_CPUS")
	timeout "${COH_BOOT_TIMEOUT:-900}" "${pin[@]}" qemu-system-x86_64 -accel tcg,thread=multi -smp "$smp" -m 1024 \
		-display none -monitor none -serial "file:$con" -no-reboot \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 nokaslr panic=-1 quiet $extra" \
		-plugin "$PLUGIN,out=$raw${pargs:+,$pargs}" >"$OUT/raw/$name.qemu" 2>&1 ||
		log "boot $name: qemu exited with $?"
	t=$(( $(date +%s) - t ))
	log "boot $name: ${t}s"
	echo "$t" > "$OUT/raw/$name.time"
	grep -a '^COH' "$con" | grep -v '^COH BOOTED' | sed "s/^/  $name: /" >&2 || true
	grep -aq '^COH END' "$con" || { log "boot $name did not finish; see $con"; return 1; }
	# a kernel built for fewer CPUs boots with fewer, silently: such a
	# boot would count fewer vCPUs than its name says
	local cpus
	cpus=$(sed -n 's/^COH BOOTED .* cpus=\([0-9]*\).*/\1/p' "$con" | head -1)
	if [ "$cpus" != "$smp" ]; then
		log "boot $name: the guest has ${cpus:-an unknown number of} vCPUs, not $smp: refused"
		rm -f "$raw"
		return 1
	fi
	if grep -aq '^COH FAIL' "$con"; then log "boot $name: a guest step failed; see $con"; return 1; fi
	return 0
}

# micro NAME KERNEL INITRD SMP PLUGIN_ARGS CMDLINE_EXTRA: the validation
# boot, repeated up to COH_TRIES (4) times, COH_RETRY_SLEEP (10) seconds
# apart, while it fails. The count is only meaningful when the host really
# ran the vCPU threads at once; on a shared host whose other work holds a
# core (seen here: one xz at 100%) it does not, which the overlap check
# detects, and such load comes and goes. Failed tries are kept as
# NAME.tryN.*.
micro() {
	local name=$1 try
	shift
	local tries=${COH_TRIES:-4}
	for try in $(seq 1 "$tries"); do
		if boot "$name" "$@" && python3 "$HERE/report.py" --micro "$OUT/raw/$name.txt" "$name" >&2; then
			return 0
		fi
		for ext in txt log qemu; do
			[ ! -e "$OUT/raw/$name.$ext" ] || mv "$OUT/raw/$name.$ext" "$OUT/raw/$name.try$try.$ext"
		done
		log "$name: validation failed (try $try); host load: $(cut -d' ' -f1-3 /proc/loadavg)"
		[ "$try" = "$tries" ] || sleep "${COH_RETRY_SLEEP:-10}"
	done
	return 1
}

# --- smoke: the Debian kernel, symbols from its kallsyms ---------------------
if [ $SMOKE = 1 ]; then
	# No kernel is built on a fresh CI machine, and building one takes
	# longer than the whole check may: use Debian's packaged kernel,
	# unpacked (not installed), and let the guest read its /proc/kallsyms.
	dk=$WORK/debkernel
	mkdir -p "$dk"
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ { print $2; exit }')
	[ -n "$pkg" ] || die "cannot tell which kernel package linux-image-amd64 means"
	vmlinuz=$(ls "$dk"/boot/vmlinuz-* 2>/dev/null | head -1 || true)
	if [ -z "$vmlinuz" ] || [ "$(cat "$dk/pkg" 2>/dev/null)" != "$pkg" ]; then
		log "downloading $pkg (kernel image only, not installed)"
		rm -rf "$dk" && mkdir -p "$dk"
		(cd "$dk" && apt-get download "$pkg" >/dev/null 2>&1) || die "apt-get download $pkg failed"
		dpkg-deb --fsys-tarfile "$dk"/*.deb | tar -x -C "$dk" --wildcards './boot/vmlinuz-*'
		rm -f "$dk"/*.deb
		echo "$pkg" > "$dk/pkg"
		vmlinuz=$(ls "$dk"/boot/vmlinuz-* | head -1)
	fi
	mkinitrd "$WORK/ir-smoke" "$WORK/ir-smoke.cpio.gz"
	rm -f "$OUT"/raw/smoke-micro.*
	micro smoke-micro "$vmlinuz" "$WORK/ir-smoke.cpio.gz" 2 "" \
		"coh.job=micro coh.syms=guest coh.iters=$MICRO_ITERS" || { log "smoke: FAIL"; exit 1; }
	log "smoke: PASS ($(( $(date +%s) - T0 ))s)"
	exit 0
fi

# --- full run: the project's kernels and libfdrange --------------------------
# only the kernels the variants boot (the validation boots the plain one)
kboots="unpatched"
case " $VARIANTS " in *fdcache*) kboots="$kboots on" ;; esac
case " $VARIANTS " in *" range "*|*assist*|*range-sub*) kboots="$kboots range" ;; esac
log "kernels ($kboots): kernel/test.sh FDCACHE_BUILD_ONLY=1 (reuses $KWORK when up to date)"
FDCACHE_BUILD_ONLY=1 FDCACHE_BOOTS="$kboots" FDCACHE_WORK=$KWORK nice -n 19 "$REPO/kernel/test.sh" >&2 ||
	die "kernel build failed"
if [ -z "$LIB" ]; then
	log "building libfdrange from $REPO"
	[ -f "$REPO/build/build.ninja" ] || nice -n 19 meson setup "$REPO/build" >/dev/null
	# The whole build: the library's target is its versioned file name
	# (lib/libfdrange.so.0.1.0), which the unversioned link follows.
	nice -n 19 ninja -C "$REPO/build" >/dev/null || die "libfdrange build failed"
	LIB=$REPO/build/lib/libfdrange.so
fi
[ -f "$LIB" ] || die "no library at $LIB"
log "library: $LIB"

# syms FILE VMLINUX: "START END CAT NAME" for each listed function, from the
# kernel's own symbol table (nm -S gives each function's size).
syms() {
	nm -S --defined-only "$2" | FUNCS="$FUNCS" python3 -c '
import os, sys
cat = {}
for l in os.environ["FUNCS"].splitlines():
    c, n = l.split()
    cat[n] = c
for l in sys.stdin:
    f = l.split()
    if len(f) == 4 and f[2] in "tT" and f[3] in cat:
        s = int(f[0], 16)
        print("%x %x %s %s" % (s, s + int(f[1], 16), cat[f[3]], f[3]))
' > "$1"
	[ -s "$1" ] || die "no listed function in $2"
}
syms "$WORK/syms-unpatched" "$KWORK/build-unpatched/vmlinux"
case $kboots in *on*) syms "$WORK/syms-patched" "$KWORK/build-patched/vmlinux"
	grep -q 'fdcache_fget' "$WORK/syms-patched" || log "note: fdcache_fget is inlined in the patched kernel" ;;
esac
case $kboots in *range*) syms "$WORK/syms-range" "$KWORK/build-range/vmlinux" ;; esac
grep -q ' lookup ' "$WORK/syms-unpatched" || die "no lookup function in the plain kernel"
KPLAIN=$KWORK/build-unpatched/arch/x86/boot/bzImage
KCACHE=$KWORK/build-patched/arch/x86/boot/bzImage
KRANGE=$KWORK/build-range/arch/x86/boot/bzImage
# files_struct layout of 6.12 x86_64 without lock debugging (include/linux/
# fdtable.h): file_lock is cache-line aligned at 128, fd_array follows the
# three one-word bitmaps at 160. CONFIG_FD_RANGE (the range and the patched
# kernel) adds open_fd_count after next_fd, which moves the bitmaps and
# fd_array by 8 (168: file_lock's line holds fds 0-2, then 3-10, 11-18...).
# With CONFIG_FDCACHE the embedded table's one generation counter (a cache
# line) follows fd_array (168 + 64*8 = 680 -> 704), and every allocated
# struct fdtable points at its own counters (one line per 64 fds) from
# offset 56, after its rcu_head. report.py exits 1 naming each window whose
# file_lock line is not named as such (an offset that does not match).
PA_PLAIN="syms=$WORK/syms-unpatched,fdarray_off=160"
PA_CACHE="syms=$WORK/syms-patched,fdarray_off=168,gen_off=704,gen_n=1,fdt_gen_off=56"
# the range kernel has no fdcache: files_struct as in plain 6.12, plus
# open_fd_count
PA_RANGE="syms=$WORK/syms-range,fdarray_off=168"

mkinitrd "$WORK/ir-full" "$WORK/ir-full.cpio.gz" memcached
: > "$OUT/validation.txt"
status=0
for smp in $SMPS; do
	# validation first: without it the memcached figures are not reported
	rm -f "$OUT/raw/smp$smp-"*
	# COH_VALIDATED=DIR: a run of the same sweep validated this vCPU count
	# minutes ago (sweep.sh): take its verdict instead of booting again
	vd=${COH_VALIDATED:-}
	if [ -n "$vd" ] && [ -f "$vd/raw/smp$smp-micro.txt" ] &&
		python3 "$HERE/report.py" --micro "$vd/raw/smp$smp-micro.txt" "smp$smp (from $vd)" >&2; then
		mkdir -p "$OUT/raw" && cp "$vd/raw/smp$smp-micro.txt" "$OUT/raw/"
	elif ! micro "smp$smp-micro" "$KPLAIN" "$WORK/ir-full.cpio.gz" "$smp" "$PA_PLAIN" \
		"coh.job=micro coh.iters=$MICRO_ITERS"; then
		# its figures would be refused anyway: do not spend the boots
		log "-smp $smp: validation failed, skipping its memcached boots"
		status=1
		continue
	fi
	# fdcache's invalidation counters: the same two threads with separate
	# ranges, 64 apart and 512 apart (which shared a counter in the first
	# design, 8 counters per table); the report fails if they still do
	if [ "${COH_COUNTERS:-1}" = 1 ]; then
		boot "smp$smp-counters" "$KCACHE" "$WORK/ir-full.cpio.gz" "$smp" "$PA_CACHE" \
			"coh.job=counters coh.iters=$MICRO_ITERS" || status=1
	fi
	for r in $(seq 1 "$ROUNDS"); do
		for v in $VARIANTS; do
			kx=""
			case $v in
			plain) k=$KPLAIN pa=$PA_PLAIN pre=0 ;;
			lib) k=$KPLAIN pa=$PA_PLAIN pre=1 ;;
			lib-keep) k=$KPLAIN pa=$PA_PLAIN pre=keep ;;
			lib-move) k=$KPLAIN pa=$PA_PLAIN pre=move ;;
			lib+fdcache) k=$KCACHE pa=$PA_CACHE pre=1off ;;
			fdcache) k=$KCACHE pa=$PA_CACHE pre=0 ;;
			lib-rr) k=$KPLAIN pa=$PA_PLAIN pre=rr ;;
			lib-rr+fdcache) k=$KCACHE pa=$PA_CACHE pre=rr ;;
			lib-all) k=$KPLAIN pa=$PA_PLAIN pre=all ;;
			lib-all+fdcache) k=$KCACHE pa=$PA_CACHE pre=alloff ;;
			range) k=$KRANGE pa=$PA_RANGE pre=0 ;;
			lib+assist) k=$KRANGE pa=$PA_RANGE pre=1 ;;
			lib+assist-nolock) k=$KRANGE pa=$PA_RANGE pre=1 kx=fd_range_nolock=on ;;
			lib+assist-w64) k=$KRANGE pa=$PA_RANGE pre=w64 ;;
			lib+assist-nolock-w64) k=$KRANGE pa=$PA_RANGE pre=w64 kx=fd_range_nolock=on ;;
			lib+assist-nolock-w512) k=$KRANGE pa=$PA_RANGE pre=w512 kx=fd_range_nolock=on ;;
			lib-all+assist) k=$KRANGE pa=$PA_RANGE pre=all ;;
			range-sub) k=$KRANGE pa=$PA_RANGE pre=sub ;;
			lib+assist+fdcache) k=$KCACHE pa=$PA_CACHE pre=1 ;;
			lib-all+assist+fdcache) k=$KCACHE pa=$PA_CACHE pre=all ;;
			*) die "unknown variant $v" ;;
			esac
			boot "smp$smp-r$r-$v" "$k" "$WORK/ir-full.cpio.gz" "$smp" "$pa" \
				"$kx${kx:+ }coh.job=mc coh.shape=$SHAPE coh.variant=$v coh.pre=$pre coh.threads=$smp coh.conns=$CONNS coh.requests=$REQUESTS coh.churn=$CHURN coh.pin=$PIN" ||
				status=1
		done
	done
done
python3 "$HERE/report.py" "$OUT" || status=1
log "done in $(( $(date +%s) - T0 ))s; results in $OUT"
exit $status
