#!/bin/bash
# kernel/ci-check.sh - fast check of the kernel series for CI:
#   1. linux-source-6.12 is there (installed with apt-get if missing);
#   2. the series applies to it, in order, without fuzz;
#   3. the touched code compiles without warnings, with CONFIG_FDCACHE=y
#      and CONFIG_FD_RANGE=y (fs/file.o, the prctl in kernel/sys.o, fork,
#      exec, io_uring, and the file_lock users 0007 touches: fs/locks.o,
#      fs/proc/fd.o), with CONFIG_FD_RANGE=y alone (the range fast paths)
#      and with both =n;
#   4. the fd-range guest tests (kernel/tests/fdrange_*.c) build, and so do
#      the lib boot's family programs (test/families, echo_load.c among
#      them), and its guest-families.sh parses under busybox sh.
# No boot; kernel/test.sh is the full test. Exit status non-zero on failure.
#
# Environment:
#   FDCACHE_CI_DIR  scratch dir (default: a fresh mktemp dir, removed after)
#   FDCACHE_JOBS    make -j (default 2)
#   FDCACHE_CI_NO_COMPILE=1  only check that the series applies
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
JOBS=${FDCACHE_JOBS:-2}
TARBALL=/usr/src/linux-source-6.12.tar.xz
T0=$(date +%s)
log() { echo "[ci-check +$(( $(date +%s) - T0 ))s] $*"; }
die() { log "FAIL: $*"; exit 1; }

. "$HERE/../tools/deps.sh"
need_packages linux-source-6.12 gcc make flex bison bc xz-utils patch libelf-dev liburing-dev busybox-static ||
	die "cannot install the kernel build packages"

if [ -n "${FDCACHE_CI_DIR:-}" ]; then
	D=$FDCACHE_CI_DIR
	rm -rf "$D"
	mkdir -p "$D"
else
	D=$(mktemp -d /var/tmp/fdcache-ci.XXXXXX)
	trap 'rm -rf "$D"' EXIT
fi

# Unpack only what configuring and compiling the touched files needs: the
# build system, all Kconfig files (Kconfig reads them all), headers, x86,
# objtool and the directories of the objects compiled below.
log "unpacking $(basename "$TARBALL") (partial) into $D"
L=linux-source-6.12
tar -xf "$TARBALL" -C "$D" --wildcards \
	"$L/Makefile" "$L/Kbuild" "$L/*Kconfig*" "$L/scripts" "$L/include" \
	"$L/arch/x86" "$L/kernel" "$L/fs" "$L/io_uring" "$L/init" "$L/lib" \
	"$L/mm" "$L/security/selinux/include" "$L/usr" "$L/certs" \
	"$L/tools/objtool" "$L/tools/lib" "$L/tools/include" "$L/tools/arch/x86" \
	"$L/tools/build" "$L/tools/scripts" "$L/tools/Makefile" \
	"$L/Documentation/admin-guide/kernel-parameters.txt" ||
	die "unpacking failed"
S="$D/linux-source-6.12"
[ -f "$S/Makefile" ] && [ -f "$S/fs/file.c" ] || die "unpacking failed"
log "source $(make -s -C "$S" kernelversion)"

for p in "$HERE"/patches/*.patch; do
	out=$(patch -d "$S" -p1 --forward --batch --fuzz=0 < "$p" 2>&1) ||
		{ echo "$out"; die "$(basename "$p") does not apply"; }
	echo "$out" | grep -q "offset" && echo "$out" | sed 's/^/    /'
	log "applies: $(basename "$p")"
done

if [ "${FDCACHE_CI_NO_COMPILE:-0}" = 1 ]; then
	log "PASS (apply only), $(( $(date +%s) - T0 ))s"
	exit 0
fi

B="$D/build"
mkdir -p "$B"
config() {	# config FDCACHE=y|n FD_RANGE=y|n
	make -s -C "$S" O="$B" tinyconfig >/dev/null || die "make tinyconfig failed"
	printf 'CONFIG_FDCACHE=%s\nCONFIG_FD_RANGE=%s\n' "$1" "$2" > "$D/fdcache.config"
	"$S/scripts/kconfig/merge_config.sh" -m -O "$B" "$B/.config" \
		"$HERE/config.fragment" "$D/fdcache.config" >/dev/null || die "merge_config failed"
	make -s -C "$S" O="$B" olddefconfig >/dev/null || die "olddefconfig failed"
	local o v
	for o in FDCACHE:$1 FD_RANGE:$2; do
		v=${o#*:} o=${o%:*}
		if [ "$v" = y ]; then
			grep -qx "CONFIG_$o=y" "$B/.config" || die "CONFIG_$o=y did not stick"
		else
			! grep -q "^CONFIG_$o=y" "$B/.config" || die "CONFIG_$o still on"
		fi
	done
}
compile() {	# compile label objects...
	local label=$1; shift
	if ! make -C "$S" O="$B" -j"$JOBS" "$@" > "$B/$label.log" 2>&1; then
		tail -40 "$B/$label.log"
		die "compile ($label) failed"
	fi
	if grep -E "(fs/file\.c|fdcache|fdtable\.h|kernel/sys\.c|kernel/fork\.c|fs/exec\.c|sched\.h|fs/locks\.c|fs/proc/fd\.c|io_uring/openclose\.c).*(warning|error)" "$B/$label.log"; then
		die "warnings ($label)"
	fi
	log "compiled ($label): $*"
}

log "configuring (tinyconfig + kernel/config.fragment + CONFIG_FDCACHE=y CONFIG_FD_RANGE=y), make prepare"
config y y
make -C "$S" O="$B" -j"$JOBS" prepare > "$B/prepare.log" 2>&1 ||
	{ tail -40 "$B/prepare.log"; die "make prepare failed"; }
compile fdcache-y fs/file.o fs/exec.o kernel/fork.o kernel/sys.o io_uring/openclose.o io_uring/net.o \
	fs/locks.o fs/proc/fd.o
# the range without fdcache: the range fast paths (patch 0007) are in
config n y
compile range-only fs/file.o kernel/sys.o fs/locks.o fs/proc/fd.o io_uring/openclose.o
config n n
compile fdcache-n fs/file.o kernel/sys.o fs/locks.o fs/proc/fd.o io_uring/openclose.o
# the guest tests of the range, one program per behaviour: they must build
# (they run in kernel/test.sh)
if command -v gcc >/dev/null && [ -f /usr/include/liburing.h ]; then
	for src in "$HERE"/tests/fdrange_*.c; do
		gcc -O2 -Wall -Wextra -Werror -pthread -o "$D/$(basename "$src" .c)" "$src" -luring ||
			die "kernel/tests/$(basename "$src") does not build"
	done
	log "compiled kernel/tests/fdrange_*.c"
else
	log "liburing-dev not installed: kernel/tests/fdrange_*.c not compiled"
fi
# the lib boot's guest programs, built as kernel/test.sh builds them
sh "$HERE/../test/families/build.sh" "$D/fam" || die "test/families does not build"
busybox sh -n "$HERE/guest-families.sh" || die "kernel/guest-families.sh: busybox sh cannot parse it"
log "compiled the lib boot's family programs"
log "PASS, $(( $(date +%s) - T0 ))s"
