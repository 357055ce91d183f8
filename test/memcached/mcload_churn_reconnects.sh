#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mcload --churn N (bench/mcload.c) really reconnects: against plain
# memcached, total_connections grows by exactly the connections plus the
# reconnects mcload reports, the reconnects are about requests/N, and
# without --churn it grows by the connections alone and mcload prints no
# reconnects=.  Bad --churn and --key-prefix values are refused with exit 2.
# The mcload to test: $AB_BUILD/bench/mcload.
. "$(dirname "$0")/lib.sh"

MCLOAD=${AB_BUILD:?AB_BUILD: the meson build directory}/bench/mcload
[ -x "$MCLOAD" ] || fail "no mcload at $MCLOAD"

start_mc plain -t 2
CONNS=8

# total_connections counts the stat connection that asks too, and a worker
# may count a connection a moment after the client is gone: wait until the
# growth is what is expected, or give up after 2 s and report what it is.
grown() { # BEFORE EXPECTED -> prints the growth
	local now g
	for _ in $(seq 40); do
		now=$("$MCCLIENT" stat "$MC_PORT" total_connections)
		g=$((now - $1 - 1))   # less the asking connection
		[ "$g" -eq "$2" ] && break
		# each try that does not match made one more stat connection
		set -- "$(($1 + 1))" "$2"
		sleep 0.05
	done
	echo "$g"
}
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<" $2"; }

for churn in 10 3; do
	t0=$("$MCCLIENT" stat "$MC_PORT" total_connections)
	out=$("$MCLOAD" --port "$MC_PORT" --threads 2 --conns $CONNS --seconds 1 --churn $churn) ||
		fail "mcload --churn $churn failed: $out"
	note "--churn $churn: $out"
	ops=$(field ops "$out") re=$(field reconnects "$out")
	[ -n "$re" ] || fail "--churn $churn: no reconnects= in '$out'"
	[ "$ops" -ge 1000 ] || fail "--churn $churn: only $ops requests in 1 s"
	# Each connection renews after every $churn answers counted in time;
	# what is left over on each at the end is fewer than $churn answers.
	lo=$(( (ops - CONNS * (churn - 1)) / churn )) hi=$(( ops / churn ))
	[ "$re" -ge "$lo" ] && [ "$re" -le "$hi" ] ||
		fail "--churn $churn: $re reconnects for $ops requests; expected $lo to $hi"
	g=$(grown "$t0" $((CONNS + re)))
	note "total_connections grew by $g: $CONNS connections + $re reconnects"
	[ "$g" -eq $((CONNS + re)) ] || fail "--churn $churn: total_connections grew by $g, not $((CONNS + re))"
done

t0=$("$MCCLIENT" stat "$MC_PORT" total_connections)
out=$("$MCLOAD" --port "$MC_PORT" --threads 2 --conns $CONNS --seconds 1) || fail "mcload failed: $out"
case $out in *reconnects=*) fail "no --churn, yet '$out'" ;; esac
g=$(grown "$t0" $CONNS)
[ "$g" -eq $CONNS ] || fail "no --churn: total_connections grew by $g, not $CONNS"

# --key-prefix: the keys memcached stores are the prefix's.
"$MCLOAD" --port "$MC_PORT" --keys 3 --key-size 12 --key-prefix key --value-size 8 --preload --seconds 0 ||
	fail "preload with --key-prefix key failed"
printf 'get key000000002\r\nquit\r\n' >"$TMP/get"
exec 3<>"/dev/tcp/127.0.0.1/$MC_PORT"
cat "$TMP/get" >&3
got=$(timeout 5 cat <&3 | head -n 1 | tr -d '\r')
exec 3<&-
[ "$got" = "VALUE key000000002 0 8" ] || fail "key000000002 after --key-prefix key: '$got'"

bad() { # OPTION VALUE PATTERN
	local rc=0 err
	err=$("$MCLOAD" --port "$MC_PORT" "$1" "$2" 2>&1 >/dev/null) || rc=$?
	[ "$rc" = 2 ] || fail "$1 $2: exit $rc, expected 2"
	case $err in *"$3"*) ;; *) fail "$1 $2: '$err' does not say '$3'" ;; esac
}
bad --churn -1 "expected an integer from 0 to 1000000000"
bad --churn x "expected an integer from 0 to 1000000000"
bad --key-prefix 'a b' "expected 1 to 16 letters and digits"
bad --key-prefix '' "expected 1 to 16 letters and digits"
bad --key-prefix abcdefghijklmnopq "expected 1 to 16 letters and digits"
rc=0
err=$("$MCLOAD" --port "$MC_PORT" --key-prefix abcdefghi --key-size 10 --keys 100 2>&1) || rc=$?
[ "$rc" = 2 ] && case $err in *"--key-size: 10 cannot hold"*) true ;; *) false ;; esac ||
	fail "a prefix too long for --key-size: exit $rc, '$err'"
note "ok"
