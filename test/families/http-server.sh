#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Case 2: Python's http.server.ThreadingHTTPServer (Debian python3: what
# `python3 -m http.server` serves with; one thread per connection, each
# opening the file it sends) with SimpleHTTPRequestHandler serving a small
# folder, loaded by ab (apache2-utils)
# with 24 concurrent connections, a bounded number of requests; plain and
# under libfdrange.  Asserts: every request completes with status 200 and
# the file's length in both runs (no failed, no non-2xx), the folder
# listing is byte-identical, the fd bound holds at every sample and the
# highest fd stays below 1024 under the library as it does plain.
# Usage: http-server.sh LIB FDRANGE BIN
. "$(dirname "$0")/lib.sh"
need python3 ab curl
REQS=${FAM_HTTP_REQS:-3000}
CONC=24

mkdir -p "$TMP/www/sub"
head -c 20000 /dev/urandom | base64 >"$TMP/www/page.txt"
for i in 1 2 3; do echo "file $i" >"$TMP/www/sub/f$i.txt"; done
len=$(stat -c %s "$TMP/www/page.txt")

# What `python3 -m http.server` runs, with a listen backlog of 64 instead
# of socketserver's 5 (with 24 clients connecting at once, SYNs beyond the
# backlog are dropped and retried a second later: the run time varied from
# 6 to 28 s).
SERVER='import functools, http.server as h, sys
h.ThreadingHTTPServer.request_queue_size = 64
handler = functools.partial(h.SimpleHTTPRequestHandler, directory=sys.argv[2])
h.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()'

run_mode() {
	local mode=$1 port pid rc=0
	port=$(free_port)
	launch "http-$mode" "$mode" "$PY" -c "$SERVER" "$port" "$TMP/www"
	pid=$PID
	wait_listen "$port" "$pid" 15 "http-$mode"
	curl -fsS "http://127.0.0.1:$port/sub/" >"$TMP/listing-$mode.html" || soft_fail "listing failed ($mode)"
	watch_start "$TMP/w-$mode.json" "$pid"
	timeout --foreground 60 ab -q -n "$REQS" -c "$CONC" -s 10 "http://127.0.0.1:$port/page.txt" \
		>"$TMP/ab-$mode.log" 2>&1 || rc=$?
	watch_stop
	alive "$pid" "http-$mode"
	stop_group "$pid"
	[ "$rc" = 0 ] || { tail -n 5 "$TMP/ab-$mode.log" >&2; soft_fail "ab exited $rc ($mode)"; }
	local done_ failed non2xx doclen
	done_=$(awk '/^Complete requests:/ { print $3 }' "$TMP/ab-$mode.log")
	failed=$(awk '/^Failed requests:/ { print $3 }' "$TMP/ab-$mode.log")
	non2xx=$(awk '/^Non-2xx responses:/ { print $3 }' "$TMP/ab-$mode.log")
	doclen=$(awk '/^Document Length:/ { print $3 }' "$TMP/ab-$mode.log")
	note "$mode: complete=$done_ failed=$failed non2xx=${non2xx:-0} length=$doclen"
	[ "${done_:-0}" = "$REQS" ] || soft_fail "$mode: ${done_:-0} of $REQS requests completed"
	[ "${failed:-x}" = 0 ] || soft_fail "$mode: $failed failed requests"
	[ -z "$non2xx" ] || soft_fail "$mode: $non2xx non-2xx responses"
	[ "$doclen" = "$len" ] || soft_fail "$mode: document length $doclen, the file has $len bytes"
}

run_mode plain
run_mode lib
cmp -s "$TMP/listing-plain.html" "$TMP/listing-lib.html" || soft_fail "the folder listing differs plain / library"
grep -q 'f3.txt' "$TMP/listing-plain.html" || soft_fail "the folder listing lacks its files"
verdict http-server "$TMP/w-plain.json" "$TMP/w-lib.json" --min-open 6
finish
