#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Case 3: apache2 (Debian) with mpm_event or mpm_worker and one child
# process (StartServers 1, ServerLimit 1, ThreadsPerChild 64), its own
# configuration in a temporary folder, listening on 127.0.0.1 only (not the
# system service: apache2 -f CONF -DFOREGROUND), wrk -c 48 for a few
# seconds on a static file; plain and under libfdrange.  Asserts: wrk makes
# requests with no socket error and no non-2xx in both runs, the child
# serves them (the parent and the one child are all there is), the fd
# bound holds at every sample of every apache process, and the highest fd
# stays below 1024 under the library as it does plain.
# Usage: apache.sh LIB FDRANGE BIN event|worker
. "$(dirname "$0")/lib.sh"
need apache2 wrk curl
MPM=${1:?event or worker}
LOAD_S=${FAM_LOAD_S:-3}
MODS=/usr/lib/apache2/modules
[ -f "$MODS/mod_mpm_$MPM.so" ] || skip "no $MODS/mod_mpm_$MPM.so"

mkdir -p "$TMP/www"
head -c 8192 /dev/zero | tr '\0' a >"$TMP/www/index.html"

run_mode() {
	local mode=$1 port pid d=$TMP/$1 rc=0 errs req children
	mkdir -p "$d"
	port=$(free_port)
	cat >"$d/apache2.conf" <<-EOF
	ServerRoot $d
	DefaultRuntimeDir $d
	PidFile $d/apache2.pid
	Mutex file:$d default
	LoadModule mpm_${MPM}_module $MODS/mod_mpm_$MPM.so
	LoadModule authz_core_module $MODS/mod_authz_core.so
	LoadModule dir_module $MODS/mod_dir.so
	User www-data
	Group www-data
	ServerName 127.0.0.1
	Listen 127.0.0.1:$port
	ErrorLog $d/error.log
	LogLevel warn
	DocumentRoot $TMP/www
	<Directory $TMP/www>
	  Require all granted
	</Directory>
	KeepAlive On
	MaxKeepAliveRequests 0
	StartServers 1
	ServerLimit 1
	ThreadLimit 64
	ThreadsPerChild 64
	MaxRequestWorkers 64
	MinSpareThreads 1
	MaxSpareThreads 128
	MaxConnectionsPerChild 0
	EOF
	launch "apache-$mode" "$mode" apache2 -f "$d/apache2.conf" -DFOREGROUND
	pid=$PID
	wait_listen "$port" "$pid" 15 "apache-$mode"
	curl -fsS -o /dev/null "http://127.0.0.1:$port/index.html" || soft_fail "first request failed ($mode)"
	watch_start "$TMP/w-$mode.json" --tree "$pid"
	timeout --foreground $((LOAD_S + 20)) wrk -t2 -c48 -d"${LOAD_S}s" --timeout 5s \
		"http://127.0.0.1:$port/index.html" >"$TMP/wrk-$mode.log" 2>&1 || rc=$?
	children=$(cat /proc/"$pid"/task/*/children 2>/dev/null | wc -w)
	watch_stop
	alive "$pid" "apache-$mode"
	stop_group "$pid"
	grep -E '\[[a-z_]*:(emerg|alert|crit|error)\]' "$d/error.log" | head -n 5 >&2 || true
	[ "$rc" = 0 ] || { cat "$TMP/wrk-$mode.log" >&2; soft_fail "wrk exited $rc ($mode)"; return 0; }
	req=$(awk '/requests in/ { print $1 }' "$TMP/wrk-$mode.log")
	errs=$(awk '/Socket errors:/ { gsub(",", ""); n += $4 + $6 + $8 + $10 }
	     /Non-2xx or 3xx responses:/ { n += $NF }
	     END { print n + 0 }' "$TMP/wrk-$mode.log")
	note "$mode: $req requests, $errs errors, $children child process(es)"
	[ "${req:-0}" -gt 0 ] || soft_fail "wrk made no requests ($mode)"
	[ "$errs" = 0 ] || { cat "$TMP/wrk-$mode.log" >&2; soft_fail "$errs client errors ($mode)"; }
	[ "$children" = 1 ] || soft_fail "$children apache children, expected 1 ($mode)"
}

run_mode plain
run_mode lib
# The child holds the listener, 64 worker threads' fds and 48 connections.
verdict "apache-$MPM" "$TMP/w-plain.json" "$TMP/w-lib.json" --min-open 40
finish
