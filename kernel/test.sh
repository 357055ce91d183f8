#!/bin/bash
# kernel/test.sh - build the kernel series (the fd range and two upstream
# fixes, then fdcache) into a small x86_64 kernel, boot it in qemu (TCG, no
# KVM needed) and run the guest tests; exit non-zero on any failure. See
# kernel/README.md.
#
# Boots (FDCACHE_BOOTS, default "on off range unpatched"):
#   on         patched kernel, CONFIG_FDCACHE=y and CONFIG_FD_RANGE=y, cache
#              and range on (the default)
#   off        the same kernel booted with fdcache=off fd_range=off
#   range      the series with CONFIG_FD_RANGE=y and CONFIG_FDCACHE=n
#   unpatched  the same source and config without the series
#   mutant     (opt-in) the series with one deliberate bug: dup2() over an
#              open fd does not invalidate. Passes only if the guest tests
#              catch it (or the kernel crashes on the stale file), i.e. it
#              checks that the tests can see a wrong file at all.
#   lib        (opt-in) the library's own tests (meson suites integration,
#              hardening, security; shell-script tests left out) and
#              bench/syscount.sh, and the program families of
#              test/families (kernel/guest-families.sh), in the guest, on the
#              range kernel: the library on its kernel-range path
#   mutant-range (opt-in) the series with one deliberate bug in the fd
#              range: a new task keeps its parent's range.  Passes only if
#              the guest tests catch it.
#   debug      (opt-in) the patched kernel with lockdep (PROVE_LOCKING, so
#              also PROVE_RCU), KASAN and DEBUG_ATOMIC_SLEEP, cache on; the
#              same tests, and any lockdep, RCU, KASAN or sleep-in-atomic
#              report fails it.  It also fails unless lockdep is still
#              armed at the end and KASAN said it was initialised, so a
#              config that silently dropped them cannot pass.
#   debug-range (opt-in) the same checkers on the range kernel (no
#              fdcache): the range fast paths of patch 0007, which
#              CONFIG_FDCACHE turns off, under lockdep and KASAN.
#   kcsan-range (opt-in) the range kernel under KCSAN, the kernel's data-race
#              detector (it cannot share a kernel with KASAN), with
#              fd_range_nolock=on: the same tests, the range fast paths of
#              0007 included.  A KCSAN report in which a function of
#              fs/file.c (the series' file) took part fails it; the others
#              (the rest of the kernel, e.g. inode timestamps) are listed.
#              It also fails unless KCSAN was enabled at the end and had
#              set up watchpoints.
#   kcsan-strict (opt-in) the same with CONFIG_KCSAN_STRICT (and so weak
#              memory modelling: missing barriers): every plain access that
#              races a marked one is reported, hundreds elsewhere in the
#              kernel; judged the same way.
#   mutant-nolock (opt-in) the range kernel with one deliberate bug in the
#              range fast paths: a close on the locked path (another
#              thread's fd, close_range) does not take the group lock.
#              Passes only if the guest tests catch it.
#
# Environment:
#   FDCACHE_WORK   work dir outside the repo    (/var/tmp/fdrange-kernel)
#   FDCACHE_JOBS   make -j                      (2)
#   FDCACHE_SMP    guest vCPUs                  (2)
#   FDCACHE_ITERS  changes per racing test      (10000)
#   FDCACHE_BOOTS  which boots                  ("on off range unpatched")
#   FDCACHE_BOOT_TIMEOUT  seconds per boot      (1800)
#   FDCACHE_NO_INSTALL=1  never call apt-get
#   FDCACHE_BUILD_ONLY=1  build the kernels of FDCACHE_BOOTS, then exit
#
# Builds are reused when their inputs (tarball, patches, config fragment)
# did not change; the kernel build itself is incremental otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${FDCACHE_WORK:-/var/tmp/fdrange-kernel}
JOBS=${FDCACHE_JOBS:-2}
SMP=${FDCACHE_SMP:-2}
ITERS=${FDCACHE_ITERS:-10000}
BOOTS=${FDCACHE_BOOTS:-on off range unpatched}
BOOT_TIMEOUT=${FDCACHE_BOOT_TIMEOUT:-1800}
TARBALL=/usr/src/linux-source-6.12.tar.xz
T0=$(date +%s)

log() { echo "[test.sh +$(( $(date +%s) - T0 ))s] $*"; }
die() { log "ERROR: $*"; exit 1; }

# --- dependencies (Debian packages only) ---------------------------------
. "$HERE/../tools/deps.sh"
# busybox-static: the initramfs needs a busybox that runs without libc.
pkgs="linux-source-6.12 gcc make flex bison bc cpio xz-utils qemu-system-x86 perl busybox-static
      libelf-dev libssl-dev liburing-dev"
if [ "${FDCACHE_NO_INSTALL:-0}" = 1 ]; then
	# shellcheck disable=SC2086
	missing=$(missing_packages $pkgs)
	[ -z "$missing" ] || die "missing packages:$missing"
else
	# shellcheck disable=SC2086
	need_packages $pkgs || die "apt-get install failed"
fi

mkdir -p "$WORK"
sha() { cat "$@" | sha256sum | cut -c1-16; }

# --- sources ---------------------------------------------------------------
tar_id=$(stat -c '%s %Y' "$TARBALL")
if [ "$(cat "$WORK/pristine.stamp" 2>/dev/null)" != "$tar_id" ]; then
	log "unpacking $TARBALL"
	rm -rf "$WORK/pristine" "$WORK/pristine.tmp" "$WORK/patched" "$WORK/patched.stamp"
	mkdir -p "$WORK/pristine.tmp"
	tar -xf "$TARBALL" -C "$WORK/pristine.tmp"
	mv "$WORK/pristine.tmp/linux-source-6.12" "$WORK/pristine"
	rmdir "$WORK/pristine.tmp"
	echo "$tar_id" > "$WORK/pristine.stamp"
fi
KVER=$(make -s -C "$WORK/pristine" kernelversion)

patches=("$HERE"/patches/*.patch)
[ -f "${patches[0]}" ] || die "no patches in $HERE/patches"
patch_id="$tar_id $(sha "${patches[@]}")"
# The files the series touches (created ones included).
touched() { grep -h '^+++ b/' "$@" | sed 's|^+++ b/||; s|\t.*||' | sort -u; }
if [ "$(cat "$WORK/patched.stamp" 2>/dev/null)" != "$patch_id" ]; then
	if [ -d "$WORK/patched" ] && [ -f "$WORK/patched.files" ]; then
		# Only the files whose content changes are rewritten: a header
		# the series touches (sched.h) keeps its time stamp when its
		# content did not change, and the kernel builds stay incremental.
		log "applying ${#patches[@]} patches to $KVER (rewriting the files that change)"
		sc="$WORK/patched.scratch"
		rm -rf "$sc"
		mkdir -p "$sc"
		files=$( (touched "${patches[@]}"; cat "$WORK/patched.files") | sort -u)
		for f in $files; do
			if [ -f "$WORK/pristine/$f" ]; then
				mkdir -p "$sc/$(dirname "$f")"
				cp -p "$WORK/pristine/$f" "$sc/$f"
			fi
		done
		for p in "${patches[@]}"; do
			patch -d "$sc" -p1 --forward --batch --quiet < "$p" ||
				die "$(basename "$p") does not apply"
		done
		for f in $files; do
			if [ -f "$sc/$f" ]; then
				cmp -s "$sc/$f" "$WORK/patched/$f" ||
					{ mkdir -p "$WORK/patched/$(dirname "$f")"; cp "$sc/$f" "$WORK/patched/$f"; }
			else
				rm -f "$WORK/patched/$f"
			fi
		done
		rm -rf "$sc"
	else
		log "applying ${#patches[@]} patches to a copy of $KVER"
		rm -rf "$WORK/patched"
		cp -a "$WORK/pristine" "$WORK/patched"
		for p in "${patches[@]}"; do
			patch -d "$WORK/patched" -p1 --forward --batch --quiet < "$p" ||
				die "$(basename "$p") does not apply"
		done
	fi
	touched "${patches[@]}" > "$WORK/patched.files"
	echo "$patch_id" > "$WORK/patched.stamp"
fi

# --- kernels -----------------------------------------------------------------
# build NAME SRCDIR EXTRA_CONFIG_LINES...
build() {
	local name=$1 src=$2 b="$WORK/build-$1"; shift 2
	local extra="$WORK/extra-$name.config"
	printf '%s\n' "$@" > "$extra"
	local id
	id="$( [ "$name" = unpatched ] && echo "$tar_id" || echo "$patch_id") $(sha "$HERE/config.fragment" "$extra")"
	if [ -f "$b/arch/x86/boot/bzImage" ] && [ "$(cat "$b/.fdcache-stamp" 2>/dev/null)" = "$id" ]; then
		log "kernel $name: up to date, reusing $b"
		return
	fi
	mkdir -p "$b"
	log "kernel $name: configuring"
	make -s -C "$src" O="$b" tinyconfig >/dev/null
	"$src/scripts/kconfig/merge_config.sh" -m -O "$b" "$b/.config" \
		"$HERE/config.fragment" "$extra" >/dev/null
	make -s -C "$src" O="$b" olddefconfig >/dev/null
	local want
	for want in CONFIG_SMP=y CONFIG_BLK_DEV_INITRD=y CONFIG_SERIAL_8250_CONSOLE=y \
		    CONFIG_EPOLL=y CONFIG_EVENTFD=y CONFIG_UNIX=y CONFIG_IO_URING=y \
		    CONFIG_DEBUG_FS=y CONFIG_SECCOMP_FILTER=y "$@"; do
		grep -qx "$want" "$b/.config" || die "kernel $name: $want did not stick"
	done
	log "kernel $name: building (make -j$JOBS, log $b/build.log)"
	local t=$(date +%s)
	if ! make -C "$src" O="$b" -j"$JOBS" bzImage > "$b/build.log" 2>&1; then
		tail -30 "$b/build.log"
		die "kernel $name: build failed"
	fi
	if grep -n "fs/file.c.*warning" "$b/build.log"; then
		die "kernel $name: warnings in fs/file.c"
	fi
	echo "$id" > "$b/.fdcache-stamp"
	log "kernel $name: built in $(( $(date +%s) - t ))s"
}

want_patched=0 want_unpatched=0 want_mutant=0 want_debug=0 want_range=0 want_mrange=0 want_lib=0
want_drange=0 want_mnolock=0 want_kcsan=0 want_kstrict=0
for boot in $BOOTS; do
	case $boot in
	on|off) want_patched=1 ;;
	range) want_range=1 ;;
	unpatched) want_unpatched=1 ;;
	mutant) want_mutant=1 ;;
	mutant-range) want_mrange=1 ;;
	lib) want_range=1 want_lib=1 ;;
	debug) want_debug=1 ;;
	debug-range) want_drange=1 ;;
	kcsan-range) want_kcsan=1 ;;
	kcsan-strict) want_kstrict=1 ;;
	mutant-nolock) want_mnolock=1 ;;
	*) die "unknown boot '$boot'" ;;
	esac
done
[ $want_patched = 1 ] && build patched "$WORK/patched" CONFIG_FDCACHE=y CONFIG_FD_RANGE=y
# inotify: the library's own tests (the lib boot) use it
[ $want_range = 1 ] && build range "$WORK/patched" "# CONFIG_FDCACHE is not set" CONFIG_FD_RANGE=y \
	CONFIG_INOTIFY_USER=y
[ $want_unpatched = 1 ] && build unpatched "$WORK/pristine"
# KASAN needs the full SLUB, which tinyconfig swaps for SLUB_TINY.
[ $want_debug = 1 ] && build debug "$WORK/patched" CONFIG_FDCACHE=y CONFIG_FD_RANGE=y \
	CONFIG_PROVE_LOCKING=y CONFIG_PROVE_RCU=y CONFIG_DEBUG_ATOMIC_SLEEP=y \
	"# CONFIG_SLUB_TINY is not set" CONFIG_KASAN=y CONFIG_KASAN_GENERIC=y CONFIG_STACKTRACE=y
[ $want_drange = 1 ] && build debug-range "$WORK/patched" "# CONFIG_FDCACHE is not set" CONFIG_FD_RANGE=y \
	CONFIG_PROVE_LOCKING=y CONFIG_PROVE_RCU=y CONFIG_DEBUG_ATOMIC_SLEEP=y \
	"# CONFIG_SLUB_TINY is not set" CONFIG_KASAN=y CONFIG_KASAN_GENERIC=y CONFIG_STACKTRACE=y
# KCSAN's defaults: races whose value did not change and plain aligned
# writes are not reported, which keeps it to races that matter.  KALLSYMS:
# reports name the functions that raced, and their callers.
[ $want_kcsan = 1 ] && build kcsan-range "$WORK/patched" "# CONFIG_FDCACHE is not set" CONFIG_FD_RANGE=y \
	CONFIG_INOTIFY_USER=y CONFIG_KCSAN=y CONFIG_STACKTRACE=y CONFIG_KALLSYMS=y
[ $want_kstrict = 1 ] && build kcsan-strict "$WORK/patched" "# CONFIG_FDCACHE is not set" CONFIG_FD_RANGE=y \
	CONFIG_INOTIFY_USER=y CONFIG_KCSAN=y CONFIG_KCSAN_STRICT=y CONFIG_KCSAN_WEAK_MEMORY=y \
	CONFIG_STACKTRACE=y CONFIG_KALLSYMS=y
if [ $want_mnolock = 1 ]; then
	if [ "$(cat "$WORK/mutant-nolock.stamp" 2>/dev/null)" != "$patch_id" ]; then
		log "making the mutant-nolock tree (a locked close takes no group lock)"
		rm -rf "$WORK/mutant-nolock"
		cp -a "$WORK/patched" "$WORK/mutant-nolock"
		perl -0pi -e 's/\tstruct fd_group \*g = files_fd_hold\(files, fd\);(\n\tstruct file \*file = file_close_fd_held)/\tstruct fd_group *g = NULL;$1/' \
			"$WORK/mutant-nolock/fs/file.c"
		! cmp -s "$WORK/patched/fs/file.c" "$WORK/mutant-nolock/fs/file.c" || die "mutation did not apply"
		echo "$patch_id" > "$WORK/mutant-nolock.stamp"
	fi
	build mutant-nolock "$WORK/mutant-nolock" "# CONFIG_FDCACHE is not set" CONFIG_FD_RANGE=y \
		CONFIG_INOTIFY_USER=y
fi
if [ $want_mutant = 1 ]; then
	if [ "$(cat "$WORK/mutant.stamp" 2>/dev/null)" != "$patch_id" ]; then
		log "making the mutant tree (dup2 does not invalidate)"
		rm -rf "$WORK/mutant"
		cp -a "$WORK/patched" "$WORK/mutant"
		perl -0pi -e 's/\tif \(tofree\)\n\t\tfdcache_invalidate\(files, fd\);\n//' \
			"$WORK/mutant/fs/file.c"
		[ "$(grep -c 'fdcache_invalidate(files, fd);' "$WORK/mutant/fs/file.c")" -eq \
		  $(( $(grep -c 'fdcache_invalidate(files, fd);' "$WORK/patched/fs/file.c") - 1 )) ] ||
			die "mutation did not apply"
		echo "$patch_id" > "$WORK/mutant.stamp"
	fi
	# with the range too, as the on boot: the range tests must pass on it
	build mutant "$WORK/mutant" CONFIG_FDCACHE=y CONFIG_FD_RANGE=y
fi
if [ $want_mrange = 1 ]; then
	if [ "$(cat "$WORK/mutant-range.stamp" 2>/dev/null)" != "$patch_id" ]; then
		log "making the mutant-range tree (a new task keeps its parent's range)"
		rm -rf "$WORK/mutant-range"
		cp -a "$WORK/patched" "$WORK/mutant-range"
		perl -0pi -e 's/\tfd_range_clear\(p\);\n//' "$WORK/mutant-range/kernel/fork.c"
		! grep -q 'fd_range_clear(p);' "$WORK/mutant-range/kernel/fork.c" ||
			die "mutation did not apply"
		echo "$patch_id" > "$WORK/mutant-range.stamp"
	fi
	build mutant-range "$WORK/mutant-range" "# CONFIG_FDCACHE is not set" CONFIG_FD_RANGE=y
fi

# FDCACHE_BUILD_ONLY=1: stop here, for callers that only need the kernels
# (bench/coherence/run.sh boots them with its own guest).
if [ "${FDCACHE_BUILD_ONLY:-0}" = 1 ]; then
	log "kernels built (FDCACHE_BUILD_ONLY=1), not booting"
	exit 0
fi

# --- guest userland ----------------------------------------------------------
# The library and its tests, for the lib boot: a build of this checkout of
# its own, copied into the guest at the same paths.
if [ $want_lib = 1 ]; then
	LB="$WORK/libbuild"
	log "building libfdrange and its tests in $LB"
	[ -f "$LB/build.ninja" ] || meson setup "$LB" "$HERE/.." > "$WORK/libbuild.log" 2>&1 ||
		{ tail -20 "$WORK/libbuild.log"; die "meson setup failed"; }
	ninja -C "$LB" >> "$WORK/libbuild.log" 2>&1 || { tail -20 "$WORK/libbuild.log"; die "library build failed"; }
	python3 "$HERE/guest-suite.py" "$LB" "$WORK" integration hardening security ||
		die "listing the library's tests failed"
fi
TB="$WORK/tests-bin"
tests_id=$(sha "$HERE"/tests/*.c "$HERE"/tests/*.h "$0")
if [ "$(cat "$TB/.stamp" 2>/dev/null)" != "$tests_id" ]; then
	log "building static test programs"
	rm -rf "$TB"; mkdir -p "$TB"
	for src in "$HERE"/tests/*.c; do
		n=$(basename "$src" .c)
		gcc -static -O2 -Wall -Wextra -Werror -pthread -o "$TB/$n" "$src" -luring ||
			die "building $n failed"
	done
	echo "$tests_id" > "$TB/.stamp"
fi

IR="$WORK/initramfs"
rm -rf "$IR"; mkdir -p "$IR"/{bin,proc,sys,dev,tmp,tests}
cp /bin/busybox "$IR/bin/busybox"
cp "$TB"/fd* "$IR/tests/"
# NSS from files only, for fdrange_nss's getaddrinfo() and getpwnam()
mkdir -p "$IR/etc"
printf 'passwd: files\ngroup: files\nhosts: files\n' > "$IR/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n' > "$IR/etc/hosts"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$IR/etc/passwd"
if [ $want_lib = 1 ]; then
	# at the same paths, every link followed (/lib64 is one on the host)
	for f in $(cat "$WORK/files") "$(command -v strace)" \
		 $(ldd "$(command -v strace)" | grep -o '/[^ ]*'); do
		mkdir -p "$IR$(dirname "$f")"
		if [ -d "$f" ]; then
			mkdir -p "$IR$f" && cp -rL "$f/." "$IR$f/"
		else
			cp -L "$f" "$IR$f"
		fi
	done
	cp "$WORK/suite.sh" "$IR/suite.sh"
	cp "$HERE/../bench/syscount.sh" "$IR/syscount.sh"
	# the program families (test/families), with a C client for the
	# select server (no python in the guest)
	sh "$HERE/../test/families/build.sh" "$IR/fam" || die "building test/families failed"
	cp "$HERE/guest-families.sh" "$IR/families.sh"
fi
cat > "$IR/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm
ifconfig lo 127.0.0.1 up
arg() { sed -n "s/.*fdtest\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
EXPECT=$(arg expect); ITERS=$(arg iters); RANGE=$(arg range); SUITE=$(arg suite)
echo "FDTEST BEGIN expect=$EXPECT range=$RANGE iters=$ITERS kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo)"
echo "FDTEST CMDLINE $(cat /proc/cmdline)"
fails=0
run() {
	name=$1; shift
	s=$(date +%s)
	timeout 900 "$@" 2>&1
	rc=$?
	echo "FDTEST RC $name rc=$rc $(( $(date +%s) - s ))s"
	[ $rc -eq 0 ] || fails=$((fails + 1))
	/tests/fdstats print
}
S=$(date +%s)
if [ "$SUITE" = lib ]; then
	# the library's own tests, then its syscalls per fd on this path; the
	# limit as on a Debian host (a few tests dup onto 1024 and above)
	ulimit -n 65536
	export PATH=/bin:/usr/bin
	. /suite.sh
	cd /
	B=$(sed -n 's/.*timeout [0-9]* \(\/[^ ]*\)\/test\/.*/\1/p' /suite.sh | head -1)
	run syscount env SYSCOUNT_MOVES=0 sh /syscount.sh "$B/bench/bench_create" "$B/lib/libfdrange.so"
	run families sh /families.sh /fam "$B/lib/libfdrange.so"
	env -i FDRANGE_STATS=stderr FDRANGE_THRESHOLD=0 LD_PRELOAD="$B/lib/libfdrange.so" \
		"$B/bench/bench_create" --child=1 --call=eventfd --count=100 2>&1 | grep "placement path" |
		sed 's/^/FDTEST LIBPATH /'
else
for m in close close_range dup2 dup3 dupfd uring mix; do
	run race-$m /tests/fdrace $m $ITERS
done
run exec /tests/fdexec $(( ITERS / 20 ))
run unshare /tests/fdunshare unshare $(( ITERS / 10 ))
run close_range_unshare /tests/fdunshare close_range $(( ITERS / 10 ))
run fork /tests/fdfork fork $(( ITERS / 20 ))
run clone_files /tests/fdfork clone_files $(( ITERS / 20 ))
run exit /tests/fdfork exit $(( ITERS / 10 ))
run pidfd_getfd /tests/fdgetfd $ITERS
run grow /tests/fdgrow $(( ITERS / 100 ))
# the fd range: one program per behaviour (kernel/tests/fdrange_*.c)
for t in create explicit uring nss full floor min_open count grow new_task unshare args race nolock; do
	run range-$t /tests/fdrange_$t $RANGE $(( ITERS / 10 ))
done
run stats /tests/fdstats $EXPECT
fi
# KCSAN's reports are judged on the host, by whether fs/file.c took part.
if dmesg | grep -E "WARNING:|BUG:|Oops|use-after-free|refcount_t|list_(add|del) corruption" |
	grep -v "BUG: KCSAN: data-race in "; then
	echo "FDTEST DMESG problems above"
	fails=$((fails + 1))
else
	echo "FDTEST DMESG clean"
fi
# Only in the debug kernel: are its checkers still armed?  (lockdep turns
# itself off after its first report.)
[ -r /proc/lockdep_stats ] && echo "FDTEST LOCKDEP $(grep -o 'debug_locks: *[0-9]*' /proc/lockdep_stats | tr -s ' ')"
dmesg | grep -q "KernelAddressSanitizer initialized" && echo "FDTEST KASAN on"
[ -r /sys/kernel/debug/kcsan ] &&
	echo "FDTEST KCSAN $(grep -E '^(enabled|setup_watchpoints|data_races):' /sys/kernel/debug/kcsan | tr '\n' ' ')"
echo "FDTEST END failures=$fails guest_seconds=$(( $(date +%s) - S ))"
sync
reboot -f
EOF
chmod +x "$IR/init"
(cd "$IR" && find . | cpio -o -H newc --quiet | gzip -1) > "$WORK/initramfs.cpio.gz"

# kcsan_judge LOG FILE_O: list the KCSAN reports in LOG, each as its title
# and the functions of its stacks; fail if one names a function defined in
# FILE_O (fs/file.c: the fd table, the series' code).  Not the header
# helpers compiled into it out of line (__raw_spin_unlock): those are in
# other objects of fs/ too.
kcsan_judge() {
	local fns o
	fns=$(nm "$2" | awk '$2 ~ /^[tT]$/ { print $3 }' | sort -u |
		comm -23 - <(for o in "$(dirname "$2")"/*.o; do [ "$o" = "$2" ] || nm "$o"; done 2>/dev/null |
			awk '$2 ~ /^[tT]$/ { print $3 }' | sort -u))
	[ -n "$fns" ] || { log "kcsan: no functions read from $2"; return 1; }
	tr -d '\r' < "$1" | FNS=$fns python3 -c '
import os, re, sys
fns = set(os.environ["FNS"].split())
bad, reps, cur = 0, [], None
for line in sys.stdin:
    m = re.search(r"BUG: KCSAN: (.*)", line)
    if m:
        # "data-race in f1 / f2": the two functions, then the stacks
        t = re.sub(r"^[a-z-]+ in ", "", m.group(1))
        cur = [m.group(1), [re.sub(r"[+.].*", "", x.strip()) for x in t.split(" / ")]]
        reps.append(cur)
    elif cur is not None and line.startswith("=" * 20):
        cur = None
    elif cur is not None:
        f = re.match(r"\s*(?:\[[^]]*\]\s*)?([A-Za-z_][A-Za-z0-9_.]*)\+0x", line)
        if f:
            cur[1].append(f.group(1).split(".")[0])
for title, frames in reps:
    ours = sorted(set(frames) & fns)
    bad += bool(ours)
    print("KCSAN %s: %s [%s]" % ("FAIL" if ours else "elsewhere", title,
          " ".join(dict.fromkeys(frames)) or "no stack"))
print("KCSAN reports: %d, %d with fs/file.c" % (len(reps), bad))
sys.exit(1 if bad else 0)'
}

# --- boots -------------------------------------------------------------------
status=0
summary=()
for boot in $BOOTS; do
	case $boot in
	on)        k=patched;   extra="";                         expect=on   range=on ;;
	off)       k=patched;   extra="fdcache=off fd_range=off"; expect=off  range=off ;;
	range)     k=range;     extra="fd_range_nolock=on";       expect=none range=on ;;
	unpatched) k=unpatched; extra="";                         expect=none range=off ;;
	mutant)    k=mutant;    extra="";                         expect=on   range=on ;;
	mutant-range) k=mutant-range; extra="";                   expect=none range=on ;;
	debug)     k=debug;     extra="";                         expect=on   range=on ;;
	debug-range) k=debug-range; extra="fd_range_nolock=on";   expect=none range=on ;;
	# loglevel=7: a KCSAN report's stack lines are printed at the default level
	kcsan-range) k=kcsan-range; extra="fd_range_nolock=on loglevel=7"; expect=none range=on ;;
	kcsan-strict) k=kcsan-strict; extra="fd_range_nolock=on loglevel=7"; expect=none range=on ;;
	mutant-nolock) k=mutant-nolock; extra="fd_range_nolock=on"; expect=none range=on ;;
	lib)       k=range;     extra="fd_range_nolock=on fdtest.suite=lib"; expect=none range=on ;;
	esac
	out="$WORK/boot-$boot.log"
	log "boot $boot: qemu -accel tcg -smp $SMP, kernel $k $extra (log $out)"
	t=$(date +%s)
	set +e
	timeout "$BOOT_TIMEOUT" qemu-system-x86_64 -accel tcg -smp "$SMP" -m 1024 \
		-kernel "$WORK/build-$k/arch/x86/boot/bzImage" \
		-initrd "$WORK/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 oops=panic loglevel=4 $extra fdtest.expect=$expect fdtest.range=$range fdtest.iters=$ITERS" \
		-display none -serial stdio -monitor none -no-reboot < /dev/null > "$out" 2>&1
	qrc=$?
	set -e
	dt=$(( $(date +%s) - t ))
	tr -d '\r' < "$out" | grep -E "^(FDTEST|fdrace|fdexec|fdunshare|fdfork|fdgetfd|fdgrow|fdstats|fdrange)|FAIL|SKIP|Kernel panic" || true
	ok=1
	[ $qrc -eq 0 ] || { log "boot $boot: qemu exit status $qrc (124: timeout)"; ok=0; }
	tr -d '\r' < "$out" | grep -q "^FDTEST END failures=0 " || ok=0
	tr -d '\r' < "$out" | grep -q "FAIL" && ok=0
	tr -d '\r' < "$out" | grep -q "Kernel panic" && ok=0
	# the range mutant must be caught by the check aimed at it
	if [ "$boot" = mutant-range ] && ! tr -d '\r' < "$out" | grep -q "new thread inherited"; then
		ok=1
	fi
	# and the nolock mutant by the stress test or the kernel's own checks
	if [ "$boot" = mutant-nolock ] && ! tr -d '\r' < "$out" |
		grep -qE "fdrange_nolock: FAIL|FDTEST RC range-nolock rc=[1-9]|FDTEST DMESG problems|Kernel panic"; then
		ok=1
	fi
	if [ "$boot" = lib ]; then
		tr -d '\r' < "$out" | grep -q "^FDTEST LIBPATH placement path: kernel range" ||
			{ log "boot lib: the library did not take the kernel-range path"; ok=0; }
	fi
	if [ "$boot" = debug ] || [ "$boot" = debug-range ]; then
		tr -d '\r' < "$out" | grep -qx "FDTEST LOCKDEP debug_locks: 1" ||
			{ log "boot debug: lockdep not armed at the end"; ok=0; }
		tr -d '\r' < "$out" | grep -qx "FDTEST KASAN on" ||
			{ log "boot debug: KASAN not initialised"; ok=0; }
	fi
	if [ "$boot" = kcsan-range ] || [ "$boot" = kcsan-strict ]; then
		tr -d '\r' < "$out" | grep -qE "^FDTEST KCSAN enabled: 1 setup_watchpoints: [1-9]" ||
			{ log "boot $boot: KCSAN not enabled, or it set up no watchpoint"; ok=0; }
		kcsan_judge "$out" "$WORK/build-$k/fs/file.o" || ok=0
	fi
	if [ "$boot" = mutant ] || [ "$boot" = mutant-range ] || [ "$boot" = mutant-nolock ]; then
		# inverted: the deliberate bug must be noticed
		if [ $ok = 0 ]; then
			summary+=("boot $boot: PASS, the tests caught the deliberate bug (${dt}s)")
		else
			summary+=("boot $boot: FAIL, the deliberate bug went unnoticed (${dt}s, see $out)")
			status=1
		fi
	elif [ $ok = 1 ]; then
		summary+=("boot $boot: PASS (${dt}s)")
	else
		summary+=("boot $boot: FAIL (${dt}s, see $out)")
		status=1
	fi
done

log "summary ($KVER, $SMP vCPUs, FDCACHE_ITERS=$ITERS, total $(( $(date +%s) - T0 ))s):"
for s in "${summary[@]}"; do echo "  $s"; done
[ $status = 0 ] && log "ALL PASS" || log "FAILED"
exit $status
