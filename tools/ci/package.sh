#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The Debian packages end to end, as a user gets them:
#   1. builds libfdrange0, libfdrange-dev, fdrange and fdrange-bench with dpkg-buildpackage
#      from a copy of this tree (so no build tree of ours is anywhere near
#      what is tested), and checks them with lintian: no error, no warning
#      that debian/*.lintian-overrides does not justify;
#   2. installs them (apt-get install ./*.deb; a version already installed
#      is replaced by this build);
#   3. from a directory outside the tree, with no build tree on any path,
#      runs memcached as Debian's memcached.service would with the shipped
#      systemd drop-in's environment (LD_PRELOAD=libfdrange.so by bare name,
#      the service's own ExecStart wrapper, dropping privileges to the
#      memcache user), and memcached -t 4 under the installed fdrange
#      command with a short memcaslap load and 160 held connections; the
#      installed `fdrange stat PID` must find the installed library
#      (library=yes) and, for the second, worker-local placement; the
#      installed A/B runner (fdrange-ab-memcached) runs briefly against the
#      installed library and command and must end with its verdict line;
#   4. verifies the drop-in with systemd-analyze verify against Debian's
#      memcached.service (offline: no running systemd needed);
#   5. purges the packages and checks that every file they had installed is
#      gone, that ld.so no longer finds libfdrange.so, and that no stats
#      block of the processes it started is left in /dev/shm.
# Prints one closing verdict line; exit status 0 only if all of it passed.
# Runs as root (it installs packages); about 90 s on 2 shared cores, of
# which the package build with its tests is 30-40 s.
#
#   tools/ci/package.sh            everything; leaves nothing installed
#   KEEP=1 tools/ci/package.sh     keep the packages installed and the
#                                  work directory, for a look afterwards
set -eEuo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
t0=$(date +%s)
keep=${KEEP:-0}
tmp="" pkgs=() pids=() installed_by_us=0 step="setting up" why=""

note() { echo "package: $*"; }
die() { why=$*; exit 1; }
# An unexpected failure of any command (set -e) names itself in the verdict.
trap '[ -n "$why" ] || why="line $LINENO: $BASH_COMMAND exited $?"' ERR

cleanup() {
	local rc=$?
	trap - ERR
	set +e
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	if [ "$installed_by_us" = 1 ] && [ "$keep" != 1 ] && [ "$rc" != 0 ]; then
		# A failed run still leaves the machine as it found it.
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${pkgs[@]}" >/dev/null 2>&1
	fi
	if [ -n "$tmp" ]; then
		if [ "$keep" != 1 ]; then rm -rf "$tmp"
		elif [ "$rc" != 0 ]; then note "KEEP=1: work directory $tmp kept"; fi
	fi
	# The closing verdict line (the success line is printed at the end).
	[ "$rc" = 0 ] || echo "package: FAIL ($step, $(($(date +%s) - t0)) s): ${why:-exit status $rc}"
	exit "$rc"
}
trap cleanup EXIT
trap 'why="interrupted"; exit 130' INT TERM

[ "$(id -u)" = 0 ] || die "needs root: it installs and purges Debian packages"

# --- 1. build --------------------------------------------------------------
step="installing build dependencies"
# shellcheck source=tools/deps.sh
. "$root/tools/deps.sh"
# debian/control's Build-Depends, what dpkg-buildpackage itself needs, lintian,
# and for the tests: memcached (+ its memcache user and unit), memcaslap,
# gcc for the test client, systemd-analyze.
# fdrange-bench's runner draws with gnuplot.
need_packages build-essential dpkg-dev debhelper meson ninja-build pkg-config libcmocka-dev gcc \
	lintian memcached libmemcached-tools systemd gnuplot-nox

tmp=$(mktemp -d /tmp/fdrange-package.XXXXXX)
chmod 755 "$tmp"   # apt's _apt user reads the .debs from here
ver=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$root/meson.build" | head -n 1)
debver=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
[ "$debver" = "$ver" ] ||
	die "debian/changelog is at $debver but meson.build at $ver: add a debian/changelog entry (dch -v $ver)"

# The symbols file is the version script's list (the build checks it
# against the library's exports too, dpkg-gensymbols -c4); say it plainly.
sed -n '/^global:/,/^local:/p' "$root/lib/libfdrange.map" | tr ' \t;' '\n' |
	grep -E '^[a-z_0-9]+$' | LC_ALL=C sort -u >"$tmp/map.syms"
sed -n 's/^ \([a-z_0-9]*\)@Base .*/\1/p' "$root/debian/libfdrange0.symbols" | LC_ALL=C sort -u >"$tmp/deb.syms"
[ -s "$tmp/map.syms" ] || die "no global symbols read from lib/libfdrange.map"
if ! cmp -s "$tmp/map.syms" "$tmp/deb.syms"; then
	die "debian/libfdrange0.symbols and lib/libfdrange.map differ:" \
		"only in the map: $(LC_ALL=C comm -23 "$tmp/map.syms" "$tmp/deb.syms" | tr '\n' ' ')" \
		"only in the symbols file: $(LC_ALL=C comm -13 "$tmp/map.syms" "$tmp/deb.syms" | tr '\n' ' ')" \
		"(a symbol added: list it with the version that adds it; one removed: bump soversion)"
fi

step="copying the tree"
src=$tmp/libfdrange-$ver
mkdir "$src"
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# Tracked and untracked-but-not-ignored files as they are in the working
	# tree: never build/ or any other ignored build output.
	git -C "$root" ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do [ -e "$root/$f" ] && printf '%s\0' "$f"; done |
		tar -C "$root" --null -T - -cf - | tar -C "$src" -xf -
else
	tar -C "$root" --exclude='./build*' --exclude='./obj-*' --exclude=./.git -cf - . | tar -C "$src" -xf -
fi

step="building the packages"
dpkg-checkbuilddeps "$src/debian/control" >/dev/null 2>"$tmp/bdeps.err" ||
	die "$(tr '\n' ' ' <"$tmp/bdeps.err")(add them to need_packages above)"
tb=$(date +%s)
if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1; then
	tail -n 40 "$tmp/build.log"
	die "dpkg-buildpackage failed (the end of its log is above)"
fi
note "built in $(($(date +%s) - tb)) s (its tests: $(grep -E '^Ok: ' "$tmp/build.log" | tr -s ' ' | head -n 1))"
debs=("$tmp"/*.deb)
for d in "${debs[@]}"; do pkgs+=("$(dpkg-deb -f "$d" Package)"); done
for p in libfdrange0 libfdrange-dev fdrange fdrange-bench; do
	case " ${pkgs[*]} " in *" $p "*) ;; *) die "no $p package was built" ;; esac
done

step="lintian"
# --fail-on none: lintian's own exit status then means lintian failed; the
# tags are judged here (with --show-overrides, overridden ones read "O:").
lintian --fail-on none --pedantic -I --show-overrides "$tmp"/*.changes >"$tmp/lintian.log" 2>&1 ||
	{ cat "$tmp/lintian.log"; die "lintian itself failed (above)"; }
if grep -q '^[EW]: ' "$tmp/lintian.log"; then
	grep -v '^N: ' "$tmp/lintian.log"
	die "lintian: $(grep -c '^[EW]: ' "$tmp/lintian.log") errors or warnings (above); fix them or justify them in debian/*.lintian-overrides"
fi
note "lintian: no error or warning; $(grep -c '^O: ' "$tmp/lintian.log" || true) overridden with the reason in debian/*.lintian-overrides, $(grep -c '^[IP]: ' "$tmp/lintian.log" || true) info/pedantic"

# --- 2. install ------------------------------------------------------------
step="installing the packages"
for p in "${pkgs[@]}"; do
	v=$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$p" 2>/dev/null || true)
	case $v in installed*) note "replacing the installed $p ${v#installed }" ;; esac
done
installed_by_us=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall --allow-downgrades \
	--no-install-recommends "${debs[@]}" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log"; die "apt-get install of the built packages failed"; }
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for p in "${pkgs[@]}"; do dpkg -L "$p" >"$tmp/files.$p"; done
# (/lib is /usr/lib on Debian 12, and ldconfig names the first.)
ldconfig -p | grep -Eq "^\s*libfdrange\.so\.0 .*=> (/usr)?/lib/$ma/libfdrange\.so\.0$" ||
	die "ld.so's cache does not list /usr/lib/$ma/libfdrange.so.0 after install"
libfile=$(readlink -f "/usr/lib/$ma/libfdrange.so")
[ "$libfile" = "$(readlink -f "/usr/lib/$ma")/libfdrange.so.$ver" ] ||
	die "/usr/lib/$ma/libfdrange.so leads to $libfile, not libfdrange.so.$ver"

# --- 3. the installed library and command, away from any build tree -------
step="testing the installed packages"
gcc -O2 -o "$tmp/mcclient" "$root/test/memcached/mcclient.c" || die "cannot build the test client"
mc=$tmp/mcclient
mkdir "$tmp/run"
cd "$tmp/run"
unset LD_PRELOAD LD_LIBRARY_PATH
for v in $(env | sed -n 's/^\(FDRANGE_[A-Z]*\)=.*/\1/p'); do unset "$v"; done
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
[ "$(command -v fdrange)" = /usr/bin/fdrange ] || die "fdrange on PATH is $(command -v fdrange || echo nothing), not /usr/bin/fdrange"
lib=$(fdrange -v true 2>&1 | sed -n 's/^fdrange: library //p')
[ "$lib" = "/usr/lib/$ma/libfdrange.so" ] || die "the installed fdrange uses '$lib', not /usr/lib/$ma/libfdrange.so"

# free_port: a port no socket here has (the test libraries' one).
. "$root/test/free_port.sh"
# start NAME CMD...: run CMD (which execs memcached on $port) with no fd of
# ours inherited; sets pid.  The pid file is written by the process that
# becomes memcached.
start() {
	local name=$1
	shift
	"$mc" closefds "$tmp/$name.pid" -- "$@" </dev/null >"$tmp/$name.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		[ -s "$tmp/$name.pid" ] && "$mc" stat "$port" pid >/dev/null 2>&1 && break
		sleep 0.05
	done
	pid=$(cat "$tmp/$name.pid" 2>/dev/null || true)
	{ [ -n "$pid" ] && "$mc" stat "$port" pid >/dev/null 2>&1; } ||
		die "$name: memcached did not come up on port $port: $(tail -n 1 "$tmp/$name.log")"
	pids+=("$pid")
	# The library in the process is the installed one, whatever else lies around.
	local maps
	maps=$(awk '/libfdrange/ { print $6 }' "/proc/$pid/maps" | sort -u | tr '\n' ' ')
	[ "$maps" = "$libfile " ] || die "$name: memcached maps '$maps', not the installed $libfile"
}
field() { sed -n 's/^summary:.* '"$2"'=\([^ ]*\).*/\1/p' "$1"; }
stop() { # PID: SIGTERM, wait, and no stats block of it may be left behind
	kill "$1"
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
	! kill -0 "$1" 2>/dev/null || die "memcached $1 did not stop on SIGTERM"
	local left
	left=$(find /dev/shm -maxdepth 1 \( -name "fdrange.*.$1" -o -name "fdrange.$1" \) 2>/dev/null)
	if [ -n "$left" ]; then
		find /dev/shm -maxdepth 1 \( -name "fdrange.*.$1" -o -name "fdrange.$1" \) -delete
		die "stats block left behind by pid $1 (removed now): $left"
	fi
}

# (a) As memcached.service with the drop-in: the unit's own ExecStart (Debian's
# wrapper, which starts memcached as root with -u memcache) under the
# drop-in's Environment= lines, our port in a config file of our own.
dropin=/usr/share/doc/fdrange/examples/systemd/memcached.service.d/libfdrange.conf
unit=/lib/systemd/system/memcached.service
[ -f "$dropin" ] || die "the fdrange package does not ship $dropin"
# The reference docs ship; docs/results/, the dated record, does not.
[ -f /usr/share/doc/fdrange/docs/design.md ] || die "the fdrange package does not ship docs/design.md"
if dpkg -L fdrange | grep '^/usr/share/doc/fdrange/docs/results' >/dev/null; then
	die "the fdrange package ships docs/results/, which is the source tree's dated record"
fi
mapfile -t envs < <(sed -n 's/^Environment=//p' "$dropin")
[ "${envs[*]}" = "LD_PRELOAD=libfdrange.so" ] || die "the drop-in sets '${envs[*]}', expected LD_PRELOAD=libfdrange.so alone"
read -r -a exec_start <<<"$(sed -n 's/^ExecStart=//p' "$unit")"
[ "${exec_start[1]:-}" = /etc/memcached.conf ] || die "unexpected ExecStart in $unit: ${exec_start[*]}"
port=$(free_port)
printf -- '-p %s\n-l 127.0.0.1\n-U 0\n-t 4\n-m 64\n-u memcache\n' "$port" >"$tmp/memcached.conf"
start service env "${envs[@]}" "${exec_start[0]}" "$tmp/memcached.conf"
[ "$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")" = "$(id -u memcache)" ] ||
	die "service: memcached did not drop privileges to memcache"
# 160: past FDRANGE_THRESHOLD (64), below which nothing is moved.
"$mc" hold "$port" 160 30 >"$tmp/hold1.out" &
hold_pid=$!
pids+=("$hold_pid")
for _ in $(seq 100); do [ -s "$tmp/hold1.out" ] && break; sleep 0.05; done
[ "$(cat "$tmp/hold1.out")" = "held 160 rejected 0 failed 0" ] || die "service: connections: $(cat "$tmp/hold1.out")"
fdrange stat --color=never "$pid" >"$tmp/stat1.txt" 2>&1 || { cat "$tmp/stat1.txt"; die "fdrange stat $pid (as root, service runs as memcache) failed"; }
[ "$(field "$tmp/stat1.txt" library)" = yes ] || { cat "$tmp/stat1.txt"; die "service: fdrange stat does not see the library (summary above)"; }
[ "$(field "$tmp/stat1.txt" fallbacks)" = 0 ] || { cat "$tmp/stat1.txt"; die "service: fallbacks under default settings"; }
placed=$(field "$tmp/stat1.txt" placed)
[ "${placed:-0}" -ge 64 ] || { cat "$tmp/stat1.txt"; die "service: only ${placed:-0} fds placed with 160 connections open"; }
for kv in shared_client_lines=0 model=rotation; do
	[ "$(field "$tmp/stat1.txt" "${kv%%=*}")" = "${kv#*=}" ] ||
		{ cat "$tmp/stat1.txt"; die "service: summary lacks $kv (report above)"; }
done
note "as memcached.service with the drop-in (LD_PRELOAD=libfdrange.so, -u memcache): $(grep '^summary:' "$tmp/stat1.txt")"
kill "$hold_pid"; wait "$hold_pid" 2>/dev/null || true
stop "$pid"

# (b) The installed fdrange command, no settings, the demo's load.
port=$(free_port)
start fdrange fdrange -- memcached -u memcache -t 4 -m 64 -p "$port" -U 0 -l 127.0.0.1
printf 'key\n64 64 1\nvalue\n1024 1024 1\ncmd\n0 0.1\n1 0.9\n' >"$tmp/load.cfg"
memcaslap -s "127.0.0.1:$port" -T 2 -c 16 -t 2s -F "$tmp/load.cfg" >"$tmp/load.log" 2>&1 ||
	{ tail -n 20 "$tmp/load.log"; die "memcaslap against memcached under the installed library failed"; }
grep -q '^Run time' "$tmp/load.log" || { tail -n 20 "$tmp/load.log"; die "memcaslap printed no result"; }
"$mc" hold "$port" 160 30 >"$tmp/hold2.out" &
hold_pid=$!
pids+=("$hold_pid")
for _ in $(seq 200); do [ -s "$tmp/hold2.out" ] && break; sleep 0.05; done
[ "$(cat "$tmp/hold2.out")" = "held 160 rejected 0 failed 0" ] || die "fdrange: connections: $(cat "$tmp/hold2.out")"
fdrange stat --color=never "$pid" >"$tmp/stat2.txt" 2>&1 || { cat "$tmp/stat2.txt"; die "fdrange stat $pid failed"; }
for kv in library=yes shared_client_lines=0 fallbacks=0 model=rotation; do
	[ "$(field "$tmp/stat2.txt" "${kv%%=*}")" = "${kv#*=}" ] ||
		{ cat "$tmp/stat2.txt"; die "fdrange -- memcached: summary lacks $kv (report above)"; }
done
awk -v p="$(field "$tmp/stat2.txt" min_client_purity)" 'BEGIN { exit !(p != "-" && p >= 95) }' ||
	{ cat "$tmp/stat2.txt"; die "fdrange -- memcached: client purity below 95% (report above)"; }
note "memcached -t 4 under the installed fdrange, after a 2 s memcaslap load, 160 connections: $(grep '^summary:' "$tmp/stat2.txt")"
kill "$hold_pid"; wait "$hold_pid" 2>/dev/null || true
stop "$pid"

# (c) The installed A/B runner: its helpers, the installed fdrange and, through
# it, libfdrange.so by bare name; 4 short rounds, the verdict line at the end.
[ "$(command -v fdrange-ab-memcached)" = /usr/bin/fdrange-ab-memcached ] ||
	die "fdrange-ab-memcached on PATH is $(command -v fdrange-ab-memcached || echo nothing), not /usr/bin/fdrange-ab-memcached"
fdrange-ab-memcached -t 2 -T 2 -c 80 -d 1 -r 4 -q -o "$tmp/ab" >"$tmp/ab.out" 2>&1 ||
	{ cat "$tmp/ab.out"; die "the installed fdrange-ab-memcached failed (output above)"; }
verdict=$(tail -n 1 "$tmp/ab.out")
case $verdict in "verdict: "*" A/A band "*) ;; *) cat "$tmp/ab.out"; die "fdrange-ab-memcached: no verdict line at the end (output above)" ;; esac
grep -qx "fdrange=/usr/bin/fdrange" "$tmp/ab/run.conf" && grep -qx "library=/usr/lib/$ma/libfdrange.so" "$tmp/ab/run.conf" ||
	{ cat "$tmp/ab/run.conf"; die "fdrange-ab-memcached did not run B with the installed fdrange and library (run.conf above)"; }
grep -q '^B locality .*library=yes' "$tmp/ab.out" || { cat "$tmp/ab.out"; die "fdrange-ab-memcached: B ran without the library (output above)"; }
grep -q '"verdict": "' "$tmp/ab/result.json" || die "fdrange-ab-memcached wrote no result.json with a verdict"
[ "$(head -c 8 "$tmp/ab/chart.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || die "fdrange-ab-memcached wrote no PNG chart"
note "fdrange-ab-memcached (installed, 4 rounds of 1 s): $verdict"

# --- 4. the systemd drop-in ------------------------------------------------
step="systemd-analyze verify"
# systemd-analyze verify reads a unit's drop-ins from the unit file's own
# directory, offline.  A copy with a misspelt key must draw a warning naming
# the drop-in: otherwise the check would pass without having read it.
mkdir -p "$tmp/units/memcached.service.d" "$tmp/typo/memcached.service.d"
cp "$unit" "$tmp/units/"
cp "$unit" "$tmp/typo/"
cp "$dropin" "$tmp/units/memcached.service.d/"
sed 's/^Environment=/Enviroment=/' "$dropin" >"$tmp/typo/memcached.service.d/libfdrange.conf"
systemd-analyze verify "$tmp/units/memcached.service" >"$tmp/verify.log" 2>&1 ||
	{ cat "$tmp/verify.log"; die "systemd-analyze verify rejects memcached.service with the drop-in"; }
! grep -q 'libfdrange.conf' "$tmp/verify.log" || { cat "$tmp/verify.log"; die "systemd-analyze verify warns about the drop-in"; }
systemd-analyze verify "$tmp/typo/memcached.service" >"$tmp/typo.log" 2>&1 || true
grep -q "libfdrange.conf:[0-9]*: Unknown key.*Enviroment" "$tmp/typo.log" ||
	{ cat "$tmp/typo.log"; die "systemd-analyze verify did not read the drop-in (no warning for a misspelt copy)"; }
note "systemd-analyze verify: memcached.service with the drop-in is clean"

# --- 5. purge --------------------------------------------------------------
step="purging the packages"
cd /
if [ "$keep" = 1 ]; then
	echo "package: ok (KEEP=1: packages left installed, work directory $tmp kept), $(($(date +%s) - t0)) s"
	exit 0
fi
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${pkgs[@]}" >"$tmp/purge.log" 2>&1 ||
	{ cat "$tmp/purge.log"; die "apt-get purge failed"; }
installed_by_us=0
for p in "${pkgs[@]}"; do
	if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qv '^not-installed$'; then
		die "$p is still known to dpkg after purge: $(dpkg-query -W -f='${db:Status-Status}' "$p")"
	fi
done
left=""
for p in "${pkgs[@]}"; do
	while IFS= read -r f; do
		[ "$f" = /. ] && continue
		[ -e "$f" ] || [ -L "$f" ] || continue
		# A directory another package still owns stays (/usr/lib/..., /usr/share/doc).
		[ -d "$f" ] && [ ! -L "$f" ] && dpkg-query -S "$f" >/dev/null 2>&1 && continue
		left="$left $f"
	done <"$tmp/files.$p"
done
[ -z "$left" ] || die "left behind after purge:$left"
if ldconfig -p | grep -q libfdrange; then die "ld.so's cache still lists libfdrange after purge"; fi
LD_PRELOAD=libfdrange.so /bin/true 2>&1 | grep -q "cannot be preloaded" ||
	die "LD_PRELOAD=libfdrange.so still finds a library after purge"

echo "package: ok: ${#pkgs[@]} packages built from a copy of the tree, lintian clean," \
	"installed library placed fds (bare-name LD_PRELOAD as memcached.service, fdrange command)," \
	"the installed A/B runner gave its verdict," \
	"drop-in verified, purged without residue ($(($(date +%s) - t0)) s)"
