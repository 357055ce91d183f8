#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Case 6 (c): a real sandboxed program from Debian: tor with `Sandbox 1`
# (its own seccomp-bpf filter, which allows fcntl only with the commands
# tor uses), `DisableNetwork 1` (no traffic leaves the machine), its own
# DataDirectory in a temporary folder, SocksPort and ControlPort on
# 127.0.0.1; plain and under libfdrange.  Each run: tor starts, its sandbox
# is on (/proc/PID/status Seccomp: 2, the log says Bootstrapped 0%), it has
# more than one thread; a control connection is accepted and answers
# GETINFO version while the fd table is sampled; SIGTERM stops it (SIGINT
# where tor's main thread blocks SIGTERM, see stop_tor).
# Asserts: the same outcome plain and under the library (tor alive through
# it all, the control reply, exit 0, "exiting cleanly" in the log, no
# "Caught a bad syscall"), the fd bound holds at every sample.
# Usage: tor.sh LIB FDRANGE BIN
. "$(dirname "$0")/lib.sh"
need tor python3

# control PORT OUT: a control connection: authenticate (no auth set), ask
# the version, hold the connection a moment (the sampling runs), quit.
control() {
	"$PY" - "$1" "$2" <<-'EOF'
	import socket, sys, time
	s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
	s.sendall(b'AUTHENTICATE ""\r\nGETINFO version\r\n')
	got, end = b"", time.monotonic() + 5
	while b"250 OK\r\n250-version=" not in got or not got.endswith(b"250 OK\r\n"):
	    if time.monotonic() > end:
	        break
	    b = s.recv(4096)
	    if not b:
	        break
	    got += b
	time.sleep(0.5)
	s.sendall(b"QUIT\r\n")
	time.sleep(0.1)
	s.close()
	open(sys.argv[2], "wb").write(got)
	EOF
}

# stop_tor PID MODE: SIGTERM, then SIGINT if tor's main thread blocks
# SIGTERM.  Debian's tor 0.4.9 runs its main thread with a signal mask that
# is a pointer value (SigBlk 0x55..5818 in /proc/PID/task/PID/status, seen
# plain as often as under the library): bit 14, SIGTERM, depends on where
# the binary was mapped, so SIGTERM stays pending in about half the runs;
# the low 12 bits are the page offset, constant, and leave SIGINT
# unblocked (a client tor exits at once on SIGINT, cleanly, as on SIGTERM).
# Then SIGKILL, which fails the run.
stop_tor() {
	local pid=$1 mode=$2 blk
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
	blk=$(awk '$1 == "SigBlk:" { print $2 }' "/proc/$pid/task/$pid/status" 2>/dev/null || true)
	if [ -n "$blk" ] && [ $((0x$blk >> 14 & 1)) = 1 ]; then
		note "$mode: tor's main thread blocks SIGTERM (SigBlk $blk, plain tor does the same): SIGINT"
		kill -INT "$pid" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
	fi
	soft_fail "tor did not stop on SIGTERM/SIGINT ($mode, SigBlk ${blk:-?}): killed"
	kill -KILL "$pid" 2>/dev/null || true
}

run_mode() {
	local mode=$1 d=$TMP/$1 pid rc=0 socks ctl ok=0 threads seccomp
	mkdir -p "$d/data"
	chmod 700 "$d/data"
	socks=$(free_port)
	ctl=$(free_port)
	cat >"$d/torrc" <<-EOF
	DataDirectory $d/data
	Sandbox 1
	DisableNetwork 1
	SocksPort 127.0.0.1:$socks
	ControlPort 127.0.0.1:$ctl
	CookieAuthentication 0
	Log notice stdout
	RunAsDaemon 0
	EOF
	launch "tor-$mode" "$mode" tor -f "$d/torrc"
	pid=$PID
	for _ in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || break
		grep -q 'Bootstrapped 0%' "$TMP/tor-$mode.log" && listening "$ctl" && { ok=1; break; }
		sleep 0.05
	done
	if [ "$ok" = 1 ]; then
		seccomp=$(awk '$1 == "Seccomp:" { print $2 }' "/proc/$pid/status")
		threads=$(awk '$1 == "Threads:" { print $2 }' "/proc/$pid/status")
		note "$mode: tor up, Seccomp: $seccomp, $threads threads"
		[ "$seccomp" = 2 ] || soft_fail "tor's sandbox is not on ($mode: Seccomp: $seccomp)"
		[ "$threads" -gt 1 ] || soft_fail "tor has $threads thread ($mode): the library would not place anything"
		watch_start "$TMP/w-$mode.json" "$pid"
		control "$ctl" "$d/control.out" || soft_fail "control connection failed ($mode)"
		sleep 1
		watch_stop
		grep -q '250-version=' "$d/control.out" || soft_fail "no GETINFO version reply ($mode)"
		alive "$pid" "tor-$mode"
		stop_tor "$pid" "$mode"
	else
		soft_fail "tor did not come up with its sandbox ($mode)"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || rc=$?
	note "$mode: exit $rc; $(grep -E 'exiting cleanly|Caught a bad syscall|\[err\]' "$TMP/tor-$mode.log" | head -n 2 | tr '\n' ' ')"
	if grep -q 'Caught a bad syscall' "$TMP/tor-$mode.log"; then
		grep -A 3 'Caught a bad syscall' "$TMP/tor-$mode.log" | head -n 6 >&2
		soft_fail "tor's sandbox caught a bad syscall ($mode)"
	fi
	[ "$rc" = 0 ] || soft_fail "tor exited $rc ($mode)"
	grep -q 'exiting cleanly' "$TMP/tor-$mode.log" || soft_fail "tor did not exit cleanly ($mode)"
}

run_mode plain
run_mode lib
verdict tor-sandbox "$TMP/w-plain.json" "$TMP/w-lib.json" --min-open 8
finish
