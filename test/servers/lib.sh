# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: MIT
# Shared by the real-server tests: run a Debian server plain and
# under libfdrange with NO FDRANGE_* variables, load it briefly from a real
# client on 127.0.0.1, take `fdrange stat` while the connections are open,
# and stop everything the test started on exit.
# Usage from a test: . lib.sh; the test's argv is LIB FDRANGE [ARGS...].
# LIB: absolute path of libfdrange.so; FDRANGE: the fdrange command.
# Exit status: 0 ok, 1 failed, 77 skipped.  The last line a test prints is
#   result: purity=X client_lines=N model=M errors=PLAIN/LIB [more=...]
# which test/servers/run-all.sh puts in its table.
set -eu

LIB=$1 FDRANGE=$2
shift 2
case $LIB in /*) ;; *) echo "LIB must be an absolute path: $LIB" >&2; exit 2 ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fdrange-srv.XXXXXX")
chmod 755 "$TMP"
GROUPS_STARTED=""
# What the result line reports; the tests fill them in.
R_PURITY=- R_LINES=- R_MODEL=- R_ERR_PLAIN=- R_ERR_LIB=- R_MORE=""
# Load duration in seconds and connection count: short, bounded.  The
# samples are taken once every connection is up, plus a 1 s settle; with
# 4 s, a kernel build running beside the suite once left haproxy's load
# over before procfds looked.
LOAD_S=${SRV_LOAD_S:-6}
CONNS=${SRV_CONNS:-48}

result_line() {
	echo "result: purity=$R_PURITY client_lines=$R_LINES model=$R_MODEL errors=$R_ERR_PLAIN/$R_ERR_LIB$R_MORE"
}
fail() { echo "FAIL: $*" >&2; result_line; exit 1; }
note() { echo "# $*"; }
skip() { echo "skipped: $*"; exit 77; }

# Every server runs in a process group of its own (setsid), so stopping it
# also stops what it forked (varnish's child, trafficserver's helpers).
stop_group() {
	local pg=$1
	kill -TERM -- "-$pg" 2>/dev/null || return 0
	for _ in $(seq 50); do kill -0 -- "-$pg" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL -- "-$pg" 2>/dev/null || true
	for _ in $(seq 20); do kill -0 -- "-$pg" 2>/dev/null || return 0; sleep 0.1; done
}
cleanup() {
	local pg
	# timeout(1) signals the test and then its process group, which the
	# test is in: a second TERM must not cut this cleanup short.
	trap '' INT TERM
	for pg in $GROUPS_STARTED; do stop_group "$pg"; done
	# The clients: background jobs of the test, and what they started.
	for pg in $(jobs -p); do
		# shellcheck disable=SC2046
		kill $(cat /proc/"$pg"/task/*/children 2>/dev/null) "$pg" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

need() {
	local c
	for c in "$@"; do command -v "$c" >/dev/null || skip "$c not installed"; done
}

# free_port: a port no socket here has.
. "$(dirname "${BASH_SOURCE[0]}")/../free_port.sh"

# launch NAME MODE CMD...: start CMD in the background in a session of its
# own, with every fd above 2 closed and stdout/stderr in $TMP/NAME.log.
# MODE lib: LD_PRELOAD=$LIB and FDRANGE_THRESHOLD alone; MODE plain: no
# LD_PRELOAD.  Sets PID (the server's pid, also its process group).
launch() {
	local name=$1 mode=$2 v
	shift 2
	local -a envcmd=(env -u LD_PRELOAD)
	for v in $(compgen -v FDRANGE_ || true); do envcmd+=(-u "$v"); done
	# One setting: the threshold off (SRV_THRESHOLD), so that the 48 to 128
	# connections of these loads are all placed, as the hand-off checks
	# need; with the default (64) the first few dozen fds keep the kernel's
	# numbers (test/memcached/placement_is_worker_local.sh checks that).
	[ "$mode" = lib ] && envcmd+=("LD_PRELOAD=$LIB" "FDRANGE_THRESHOLD=${SRV_THRESHOLD:-0}")
	# A second, where a line of run-all.sh names it: FDRANGE_LOCAL=move,
	# the placement a local server's connections get without the default.
	[ "$mode" = lib ] && [ -n "${SRV_LOCAL:-}" ] && envcmd+=("FDRANGE_LOCAL=$SRV_LOCAL")
	# setsid does not fork here (a background job of a script is no group
	# leader), so $! is the server itself once bash has exec'd it.
	# shellcheck disable=SC2016
	setsid "${envcmd[@]}" bash -c '
		for f in /proc/self/fd/*; do
			n=${f##*/}
			[ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"
		done
		exec "$@"' server "$@" </dev/null >"$TMP/$name.log" 2>&1 &
	PID=$!
	GROUPS_STARTED="$GROUPS_STARTED $PID"
	# For run-all.sh, which stops whatever a killed test left running.
	[ -z "${SRV_GROUPS_FILE:-}" ] || echo "$PID" >>"$SRV_GROUPS_FILE"
}

# The socket tables are read through ss (netlink, filtered in the kernel),
# not /proc/net/tcp: under connection churn from other processes a read of
# /proc/net/tcp resumes page by page and can skip entries.
# listening PORT: true if something listens on PORT.
listening() { [ "$(listeners "$1")" -gt 0 ]; }
# listeners PORT: how many sockets listen on 127.0.0.1:PORT.
listeners() { ss -Hltn "( sport = :$1 )" | wc -l; }
# wait_listen PORT PID SECS WHAT: fail if PID dies or PORT does not listen in time.
wait_listen() {
	local port=$1 pid=$2 secs=$3 what=$4 rc
	for _ in $(seq $((secs * 10))); do
		if ! kill -0 "$pid" 2>/dev/null; then
			rc=0; wait "$pid" 2>/dev/null || rc=$?
			grep -m 3 -E 'FATAL|ALERT|[Ee]rror' "$TMP/$what.log" >&2 || true
			tail -n 5 "$TMP/$what.log" >&2 || true
			fail "$what died at start-up (exit $rc)"
		fi
		listening "$port" && return 0
		sleep 0.1
	done
	tail -n 5 "$TMP/$what.log" >&2 || true
	fail "$what did not listen on 127.0.0.1:$port within $secs s"
}
# alive PID WHAT: fail if the server is gone (after the load).
alive() {
	local rc=0
	kill -0 "$1" 2>/dev/null && return 0
	wait "$1" 2>/dev/null || rc=$?
	tail -n 5 "$TMP/$2.log" >&2 || true
	fail "$2 died during the load (exit $rc)"
}

# established PORT: connections accepted on PORT (server side).
established() { ss -Htn state established "( sport = :$1 )" | wc -l; }
# wait_conns PORT N SECS: wait until N connections are up; fail after SECS.
wait_conns() {
	for _ in $(seq $(($3 * 20))); do
		[ "$(established "$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "only $(established "$1") of $2 connections up on port $1 after $3 s"
}

# descendant_by_comm PID COMM: a descendant of PID (or PID) whose comm is COMM.
descendant_by_comm() {
	local p=$1 c
	[ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] && { echo "$p"; return 0; }
	# shellcheck disable=SC2013
	for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
		descendant_by_comm "$c" "$2" && return 0
	done
	return 1
}

# loopback_only PID: every TCP and UDP socket of PID is bound and connected
# to loopback or the wildcard address only (all traffic stays on 127.0.0.1).
loopback_only() {
	local inodes
	# one find, not a readlink per fd: take_stat runs mid-load
	inodes=" $(find /proc/"$1"/fd -mindepth 1 -maxdepth 1 -printf '%l\n' 2>/dev/null |
		sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ') "
	{ ss -Htane; ss -Huane; } | awk -v ino="$inodes" '
		function ok(a) {
			sub(/:[^:]*$/, "", a); sub(/%.*/, "", a)
			return a ~ /^(127\.[0-9.]+|0\.0\.0\.0|\*|\[::1\]|\[::\]|\[::ffff:127\.[0-9.]+\])$/
		}
		{ i = ""; for (k = 1; k <= NF; k++) if ($k ~ /^ino:/) i = substr($k, 5) }
		i != "" && index(ino, " " i " ") && !(ok($4) && ok($5)) { print "off loopback: " $0; bad = 1 }
		END { exit bad }' || fail "process $1 has a socket off loopback (above)"
}

# take_stat PID FILE: fdrange stat while the load runs, plus the /proc
# cross-check (procfds.py) on the same process, and the loopback check.
# The two samples come first and back to back: the load may end soon after
# (a slow loopback check first once left memcached's 4 s load over before
# procfds looked, and it saw no client).
take_stat() {
	"$FDRANGE" stat --no-map --color=never "$1" >"$2" 2>&1 || { cat "$2" >&2; fail "fdrange stat $1 failed"; }
	python3 "$HERE/procfds.py" "$1" >>"$2" 2>&1 || true
	loopback_only "$1"
	# STAT_KEEP=DIR keeps every stat taken, for a look after the run.
	[ -z "${STAT_KEEP:-}" ] || cp "$2" "$STAT_KEEP/$(basename "$0" .sh)-$1.stat"
}
# warm_up PORT PROTO PID MODE: before the load, connections one at a time
# (warmup.py), as a server that has been up a while has seen; under the
# library, rounds of 16 until fdrange stat shows a settled hand-off model
# (at most 4 rounds), so the load's connections are placed by the model.
# Without it, a client that opens all its connections at once has every one
# accepted before the first is registered: they all go to the learning pool
# (one per 8-fd line, what the model learns from), and the model is not
# what the load's placement shows.  Both runs make the same first round.
# SRV_WARMUP=0 leaves it out (to look at a burst met while learning).
# WARMUP_KEPT: fdrange stat's kept= after the warm-up (under the library),
# so that the check counts the load's kept connections alone.
WARMUP_ROUNDS=0 WARMUP_KEPT=0
warm_up() {
	local port=$1 proto=$2 pid=$3 mode=$4 model=''
	WARMUP_ROUNDS=0 WARMUP_KEPT=0
	[ "${SRV_WARMUP:-1}" != 0 ] || return 0
	while [ "$WARMUP_ROUNDS" -lt 4 ]; do
		python3 "$HERE/warmup.py" "$port" "$proto" 16 || fail "warm-up before the load ($mode)"
		WARMUP_ROUNDS=$((WARMUP_ROUNDS + 1))
		[ "$mode" = lib ] || break
		"$FDRANGE" stat --no-map --color=never "$pid" >"$TMP/stat-warmup.txt" 2>/dev/null || true
		model=$(field "$TMP/stat-warmup.txt" model)
		WARMUP_KEPT=$(field "$TMP/stat-warmup.txt" kept)
		WARMUP_KEPT=${WARMUP_KEPT:-0}
		case $model in learning|none|"") ;; *) break ;; esac
	done
	note "$mode: warm-up: $WARMUP_ROUNDS x 16 connections, one at a time${model:+, model=$model}"
}

# field FILE KEY: KEY's value on the summary line, or nothing if absent.
field() { sed -n 's/^summary:.* '"$2"'=\([^ ]*\).*/\1/p' "$1" | tail -n 1; }
# pfield FILE KEY: a value of procfds.py's line.
pfield() { sed -n 's/^procfds:.* '"$2"'=\([^ ]*\).*/\1/p' "$1" | tail -n 1; }

# record_errors MODE ERRS: the client error count of the plain or the
# library run (and, for plain, its shared lines, for the result line).
record_errors() {
	if [ "$1" = plain ]; then
		R_ERR_PLAIN=$2
		R_MORE=" plain_socket_lines=$(field "$TMP/stat-plain.txt" shared_socket_lines) plain_proc_client_lines=$(pfield "$TMP/stat-plain.txt" epoll_shared_client_lines)"
	else
		R_ERR_LIB=$2
	fi
	note "$1: $2 client errors"
}

# plain_then_lib: the script's run_mode, plain and under the library: no
# client error either way, then the library run's placement read.
plain_then_lib() {
	run_mode plain
	[ "$R_ERR_PLAIN" = 0 ] || fail "client errors without the library: $R_ERR_PLAIN"
	run_mode lib
	[ "$R_ERR_LIB" = "$R_ERR_PLAIN" ] || fail "client errors: $R_ERR_PLAIN plain, $R_ERR_LIB under libfdrange"
	read_placement "$TMP/stat-lib.txt"
}

# read_placement FILE: fill R_* from a stat file (and show its summary).
# check_placement FILE predictable MODEL | FILE unpredictable: what a real
# server must show.  Predictable hand-off: the library learned MODEL (local or
# rotation); for local on the dup path with FDRANGE_LOCAL=keep (the
# default) the load's connections were all kept; otherwise the accepted
# client sockets in each thread's chunks are >= 95%
# served by that thread (min_client_purity: a proxy's upstream sockets,
# which it may hand between threads, and a main thread's wake-up fds for
# its workers are not the hand-off's doing; min_purity over all fds is
# shown beside it), and no 8-fd line is shared by client sockets of two
# threads; unpredictable: the library says model=unpredictable, or is
# still learning with no client socket in a thread's chunks; burst
# (connections all accepted before the first answer): MODEL learned and no
# shared client line, purity judged only if some client is in a thread's
# chunks (they may all sit alone on lines of the learning pool).
read_placement() {
	local f=$1
	R_PURITY=$(field "$f" min_client_purity); R_PURITY=${R_PURITY:--}
	R_LINES=$(field "$f" shared_client_lines); R_LINES=${R_LINES:-?}
	R_MODEL=$(field "$f" model); R_MODEL=${R_MODEL:-?}
	R_MORE="$R_MORE all_fds_purity=$(field "$f" min_purity) socket_lines=$(field "$f" shared_socket_lines) proc_client_lines=$(pfield "$f" epoll_shared_client_lines) fallbacks=$(field "$f" fallbacks) kept=$(field "$f" kept)"
	grep -E '^(summary|procfds):' "$f"
}
check_placement() {
	local f=$1 kind=$2 want=${3:-} lib seen
	lib=$(field "$f" library)
	[ "$lib" = yes ] || fail "library=$lib in fdrange stat: the library is not active in the server"
	# The /proc cross-check is only one if it saw the load's connections
	# (no procfds line at all counts as none seen).
	seen=$(pfield "$f" client_sockets)
	[ "${seen:-0}" -ge "$CONNS" ] ||
		fail "procfds saw ${seen:-no} of the load's $CONNS client sockets: the sample missed the load"
	if [ "$kind" = predictable ] || [ "$kind" = burst ]; then
		[ -z "$want" ] || [ "$R_MODEL" = "$want" ] || fail "model=$R_MODEL, expected $want"
		# FDRANGE_LOCAL=keep, the default: on the dup path a local
		# server's connections accepted once the model settled (after the
		# warm-up: every one of the load's) stay where the kernel numbered
		# them, each counted kept, none moved into a thread's chunks; purity
		# and shared lines then read as the kernel's numbering does.
		if [ "$kind" = predictable ] && [ "$R_MODEL" = local ] &&
			[ "${SRV_LOCAL:-keep}" = keep ] && [ "$(field "$f" path)" = dup ]; then
			local kept
			kept=$(field "$f" kept)
			[ "$((${kept:-0} - WARMUP_KEPT))" -ge "$CONNS" ] 2>/dev/null ||
				fail "kept=${kept:-none}, $WARMUP_KEPT of them before the load: fewer than the load's $CONNS connections left where the kernel numbered them (model local, FDRANGE_LOCAL=keep)"
			grep -q "^accepted connections: served where accepted .*left where the kernel numbered them (FDRANGE_LOCAL=keep)" "$f" ||
				fail "fdrange stat does not say that the connections are left where the kernel numbered them"
			note "model=local, FDRANGE_LOCAL=keep: $((kept - WARMUP_KEPT)) connections of the load kept where the kernel numbered them ($kept with the warm-up's; purity $R_PURITY and $R_LINES shared client lines are the kernel's numbering)"
			return 0
		fi
		case $R_PURITY in
		[0-9]*) awk -v p="$R_PURITY" 'BEGIN { exit !(p >= 95) }' || fail "min_client_purity $R_PURITY < 95" ;;
		-) [ "$kind" = burst ] || fail "min_client_purity=$R_PURITY (no client socket in a thread's chunks)" ;;
		*) fail "min_client_purity=$R_PURITY" ;;
		esac
		[ "$R_LINES" != "?" ] || fail "fdrange stat has no shared_client_lines (a stat from an older fdrange?)"
		[ "$R_LINES" = 0 ] || fail "$R_LINES 8-fd lines shared by client sockets of different threads"
	else
		# Still learning is right too when the server registers few of
		# its connections (varnish's waiter registers only idle ones:
		# 0 to 24 of 50 here, and 32 answers are needed to judge), as long
		# as no client was placed in a thread's chunks on a guess.
		# A model settled on a burst that no later accept used is right
		# too: haproxy's multi-queue hands each connection to the less
		# loaded of two rotating threads, and over a burst into equally
		# loaded threads that can be a rotation or look local (each once in CI,
		# once after a relearn: local on the first accepts, then a rotation).
		# What it must not do is place a client on the guess.  The
		# predictions count ("N/M predictions right") is every model's since
		# the start, so "on the last accepts" is judged by the accept count:
		# none after the current model settled.  An earlier local model's
		# connections, kept under FDRANGE_LOCAL=keep, lie where the kernel
		# numbered them, as in plain: no guess placed them.  (fdrange stat
		# gives no count of predictions since the last settle; its
		# learned_after and accepted, read here from the text, do.)
		local learned accepted
		case $R_MODEL in
		unpredictable) ;;
		learning|none)
			[ "$R_PURITY" = - ] ||
				fail "model=$R_MODEL, yet client sockets in threads' chunks (min_client_purity $R_PURITY)" ;;
		rotation|local)
			# "learned after N connection(s)" on the model's line, and
			# "  FDRANGE_ACCEPT=auto; A accepted, ..." on the next.
			learned=$(sed -n 's/^accepted connections: .*learned after \([0-9][0-9]*\) connection.*/\1/p' "$f")
			accepted=$(sed -n 's/^  FDRANGE_ACCEPT=[a-z]*; \([0-9][0-9]*\) accepted, .*/\1/p' "$f")
			{ [ "$R_PURITY" = - ] && [ -n "$learned" ] && [ "$learned" = "$accepted" ]; } ||
				fail "model=$R_MODEL (settled after ${learned:-?} of ${accepted:-?} accepted connections, min_client_purity $R_PURITY), expected unpredictable (hand-off cannot be predicted)"
			note "model=$R_MODEL settled on the last of $accepted accepts ($(grep -m 1 '^accepted connections: ' "$f" | sed 's/^accepted connections: //')), and no connection was placed on it" ;;
		*) fail "model=$R_MODEL, expected unpredictable (hand-off cannot be predicted)" ;;
		esac
	fi
}

# wrk_load URL OUT: wrk with $CONNS connections for $LOAD_S s; prints the
# client error count (socket errors + non-2xx/3xx); fails without requests.
wrk_load() {
	timeout --foreground $((LOAD_S + 20)) wrk -t2 -c"$CONNS" -d"${LOAD_S}s" --timeout 5s "$1" >"$2" 2>&1 || { cat "$2" >&2; fail "wrk exited non-zero"; }
}
wrk_errors() {
	local req
	req=$(awk '/requests in/ { print $1 }' "$1")
	[ "${req:-0}" -gt 0 ] || { cat "$1" >&2; fail "wrk made no requests"; }
	awk '/Socket errors:/ { gsub(",", ""); n += $4 + $6 + $8 + $10 }
	     /Non-2xx or 3xx responses:/ { n += $NF }
	     END { print n + 0 }' "$1"
}

# origin: a static HTTP origin on 127.0.0.1 (nginx, one process); sets
# ORIGIN_PORT.  Never under the library.
start_origin() {
	local d=$TMP/origin
	mkdir -p "$d/www" "$d/tmp"
	head -c 4096 /dev/zero | tr '\0' x >"$d/www/index.html"
	ORIGIN_PORT=$(free_port)
	cat >"$d/nginx.conf" <<-EOF
	daemon off; master_process off; worker_processes 1;
	error_log $d/error.log; pid $d/nginx.pid;
	events { worker_connections 4096; }
	http {
	  access_log off;
	  client_body_temp_path $d/tmp; proxy_temp_path $d/tmp; fastcgi_temp_path $d/tmp;
	  uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
	  keepalive_requests 1000000;
	  server { listen 127.0.0.1:$ORIGIN_PORT; root $d/www; }
	}
	EOF
	launch origin plain nginx -c "$d/nginx.conf" -e "$d/error.log"
	ORIGIN_PID=$PID
	wait_listen "$ORIGIN_PORT" "$ORIGIN_PID" 10 origin
}
