#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# h2o 2.2 (num-threads 4, one static file) with FDRANGE_THRESHOLD=0 alone,
# plain and under libfdrange: h2load (HTTP/2 over cleartext, 48
# connections) for a few seconds, no client errors either way.  Every h2o
# thread has the listener in its own epoll and serves what it accepts
# (model local), so under the library, mid-load: by default
# (FDRANGE_LOCAL=keep) every connection of the load kept where the kernel
# numbered it; with "move" (FDRANGE_LOCAL=move too) min_client_purity >= 95
# and no 8-fd line shared by client sockets of two threads.
# Usage: h2o.sh LIB FDRANGE [move]
. "$(dirname "$0")/lib.sh"
need h2o h2load python3
case ${1:-} in
"") ;;
move) SRV_LOCAL=move ;;
*) echo "h2o.sh: unknown argument '$1'; accepted: move" >&2; exit 2 ;;
esac

D=$TMP/h2o
mkdir -p "$D/www"
chmod 777 "$D" "$D/www"
head -c 4096 /dev/zero | tr '\0' x >"$D/www/index.html"
chmod 644 "$D/www/index.html"
PORT=$(free_port)
cat >"$D/h2o.conf" <<EOF
user: nobody
num-threads: 4
error-log: $D/error.log
listen:
  host: 127.0.0.1
  port: $PORT
hosts:
  default:
    paths:
      /:
        file.dir: $D/www
EOF

# h2load_errors FILE: failed + errored + timed-out requests + 4xx/5xx;
# fails if no request succeeded.
h2load_errors() {
	local ok
	ok=$(awk '/^requests:/ { print $8 }' "$1")
	[ "${ok:-0}" -gt 0 ] || { cat "$1" >&2; fail "h2load: no request succeeded"; }
	awk '/^requests:/ { n += $10 + $12 + $14 } /^status codes:/ { n += $7 + $9 } END { print n + 0 }' "$1"
}

run_mode() {
	local mode=$1 errs
	launch "h2o-$mode" "$mode" h2o -c "$D/h2o.conf"
	local pid=$PID
	wait_listen "$PORT" "$pid" 10 "h2o-$mode"
	warm_up "$PORT" http "$pid" "$mode"
	timeout --foreground $((LOAD_S + 20)) h2load -c"$CONNS" -t2 -m4 -D "$LOAD_S" "http://127.0.0.1:$PORT/index.html" \
		>"$TMP/h2load-$mode.log" 2>&1 &
	local load=$!
	wait_conns "$PORT" "$CONNS" 10
	sleep 1
	take_stat "$pid" "$TMP/stat-$mode.txt"
	wait "$load" || { tail -n 20 "$TMP/h2load-$mode.log" >&2; fail "h2load exited non-zero ($mode)"; }
	alive "$pid" "h2o-$mode"
	grep -E '^(finished in|requests:|status codes:)' "$TMP/h2load-$mode.log"
	errs=$(h2load_errors "$TMP/h2load-$mode.log")
	stop_group "$pid"
	record_errors "$mode" "$errs"
}

plain_then_lib
check_placement "$TMP/stat-lib.txt" predictable local
result_line
