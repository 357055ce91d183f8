#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Case 4: squid 5 (Debian) with `cache_dir aufs DIR 64 16 256` (aufs: the
# disk I/O threads open, read and write the cache files), its own
# configuration in a temporary folder, listening on 127.0.0.1, squid -N (one
# process), origin a local nginx (never under the library); wrk through the
# proxy (absolute URLs, 200 distinct objects kept off memory so that hits
# and misses go through the aufs threads); plain and under libfdrange, with
# the default max_filedescriptors and with max_filedescriptors 512.
# Asserts per run pair: every request answered 200 through the proxy (no
# socket error, no non-2xx) in both runs, squid survives, the cache manager
# (squid-internal-mgr/info) answers, squid's own "Largest file desc
# currently in use" read mid-load stays below 1024 under the library as it
# does plain, and the fd bound holds at every /proc sample.
# Usage: squid.sh LIB FDRANGE BIN
. "$(dirname "$0")/lib.sh"
need squid nginx wrk curl
LOAD_S=${FAM_LOAD_S:-3}
OBJECTS=200

# The origin: nginx, one process, plain, on 127.0.0.1.
o=$TMP/origin
mkdir -p "$o/www" "$o/tmp"
for i in $(seq 0 $((OBJECTS - 1))); do head -c 6000 /dev/zero | tr '\0' o >"$o/www/o$i.html"; done
ORIGIN_PORT=$(free_port)
cat >"$o/nginx.conf" <<EOF
daemon off; master_process off; worker_processes 1;
error_log $o/error.log; pid $o/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $o/tmp; proxy_temp_path $o/tmp; fastcgi_temp_path $o/tmp;
  uwsgi_temp_path $o/tmp; scgi_temp_path $o/tmp;
  keepalive_requests 1000000;
  server { listen 127.0.0.1:$ORIGIN_PORT; root $o/www; expires 1h; }
}
EOF
launch origin plain nginx -c "$o/nginx.conf" -e "$o/error.log"
wait_listen "$ORIGIN_PORT" "$PID" 10 origin

# wrk through the proxy: absolute URLs in the request line, round robin
# over the objects.
cat >"$TMP/proxy.lua" <<EOF
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "http://127.0.0.1:$ORIGIN_PORT/o" .. (n % $OBJECTS) .. ".html")
end
EOF

# mgr_info PORT: squid's cache manager info page.
mgr_info() { curl -fsS --max-time 5 "http://127.0.0.1:$1/squid-internal-mgr/info"; }
largest_fd() { sed -n 's/^[[:space:]]*Largest file desc currently in use:[[:space:]]*\([0-9]*\).*/\1/p'; }

run_mode() {
	local mode=$1 maxfd=$2 port pid d=$TMP/$1-$2 rc=0 errs req info largest
	mkdir -p "$d/cache" "$d/logs"
	port=$(free_port)
	cat >"$d/squid.conf" <<-EOF
	http_port 127.0.0.1:$port
	visible_hostname fam-squid
	pid_filename $d/squid.pid
	cache_effective_user proxy
	cache_dir aufs $d/cache 64 16 256
	cache_mem 0 MB
	maximum_object_size_in_memory 0 KB
	cache_log $d/logs/cache.log
	access_log none
	cache_store_log none
	coredump_dir $d
	dns_nameservers 127.0.0.1
	shutdown_lifetime 1 seconds
	acl localnet src 127.0.0.0/8
	http_access allow manager localhost
	http_access deny manager
	http_access allow localhost
	http_access deny all
	EOF
	[ "$maxfd" = default ] || echo "max_filedescriptors $maxfd" >>"$d/squid.conf"
	chown -R proxy:proxy "$d"
	# The swap folders, made by squid itself (plain: it exits at once).
	timeout 30 env -u LD_PRELOAD squid -N -z -f "$d/squid.conf" >"$d/z.log" 2>&1 ||
		{ tail -n 5 "$d/z.log" >&2; fail "squid -z failed"; }
	launch "squid-$mode-$maxfd" "$mode" squid -N -d 1 -f "$d/squid.conf"
	pid=$PID
	wait_listen "$port" "$pid" 20 "squid-$mode-$maxfd"
	curl -fsS -o /dev/null -x "127.0.0.1:$port" "http://127.0.0.1:$ORIGIN_PORT/o1.html" ||
		soft_fail "first request through squid failed ($mode, max_filedescriptors $maxfd)"
	watch_start "$TMP/w-$mode-$maxfd.json" "$pid"
	timeout --foreground $((LOAD_S + 20)) wrk -t2 -c48 -d"${LOAD_S}s" --timeout 5s -s "$TMP/proxy.lua" \
		"http://127.0.0.1:$port/" >"$TMP/wrk-$mode-$maxfd.log" 2>&1 &
	local load=$!
	sleep $((LOAD_S - 1))
	info=$(mgr_info "$port") || soft_fail "the cache manager did not answer ($mode, max_filedescriptors $maxfd)"
	largest=$(echo "$info" | largest_fd)
	wait "$load" || rc=$?
	watch_stop
	alive "$pid" "squid-$mode-$maxfd"
	echo "$info" | grep -E 'Maximum number of file descriptors|Largest file desc|Number of file desc currently in use|Available number' | sed 's/^[[:space:]]*/# /'
	stop_group "$pid"
	grep -E 'FATAL|assertion|Caught|WARNING: Your cache is running out of filedescriptors' "$d/logs/cache.log" | head -n 5 >&2 || true
	[ "$rc" = 0 ] || { cat "$TMP/wrk-$mode-$maxfd.log" >&2; soft_fail "wrk exited $rc ($mode)"; return 0; }
	req=$(awk '/requests in/ { print $1 }' "$TMP/wrk-$mode-$maxfd.log")
	errs=$(awk '/Socket errors:/ { gsub(",", ""); n += $4 + $6 + $8 + $10 }
	     /Non-2xx or 3xx responses:/ { n += $NF }
	     END { print n + 0 }' "$TMP/wrk-$mode-$maxfd.log")
	note "$mode max_filedescriptors=$maxfd: $req requests, $errs errors, squid's largest fd ${largest:-?}"
	[ "${req:-0}" -gt "$OBJECTS" ] || soft_fail "wrk made ${req:-0} requests, fewer than the $OBJECTS objects ($mode)"
	[ "$errs" = 0 ] || { cat "$TMP/wrk-$mode-$maxfd.log" >&2; soft_fail "$errs client errors ($mode, max_filedescriptors $maxfd)"; }
	[ -n "$largest" ] || soft_fail "no 'Largest file desc currently in use' in mgr:info ($mode)"
	eval "LARGEST_${mode}=\${largest:-0}"
}

for maxfd in default 512; do
	run_mode plain $maxfd
	run_mode lib $maxfd
	# shellcheck disable=SC2154
	if [ "$LARGEST_plain" -lt 1024 ] && [ "$LARGEST_lib" -ge 1024 ]; then
		soft_fail "squid's largest fd: $LARGEST_plain plain, $LARGEST_lib under the library (max_filedescriptors $maxfd)"
	fi
	verdict "squid-aufs-$maxfd" "$TMP/w-plain-$maxfd.json" "$TMP/w-lib-$maxfd.json" --min-open 40 \
		--extra "squid_largest_fd=$LARGEST_plain/$LARGEST_lib"
done
finish
