#!/bin/sh
# SPDX-License-Identifier: MIT
# OpenSSH's sshd runs under the library: a login with a key succeeds.
# sshd's pre-authentication child confines itself with a seccomp filter
# (the default sandbox) that kills it for any syscall outside its list; the
# library used to unlink its stats block at exit (unlinkat), so every
# pre-auth child died of SIGSYS and every login was refused.  A private
# sshd with generated host and user keys listens on 127.0.0.1 (a free
# port), started as LD_PRELOAD=... /usr/sbin/sshd -D -e -f CONFIG -p PORT;
# `ssh ... root@127.0.0.1 true` must exit 0, plain and placed.  The
# machine's own sshd, its configuration and /run are not touched.  Root
# only; exit 77 without openssh-server.
# usage: sshd_login_works.sh plain|placed PRELOAD
set -u
mode=$1 preload=$2
sshd=/usr/sbin/sshd
if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root"; exit 77; fi
for p in "$sshd" /usr/bin/ssh /usr/bin/ssh-keygen; do
	[ -x "$p" ] || { echo "SKIP: $p missing (apt-get install openssh-server openssh-client)"; exit 77; }
done
# Without PAM (UsePAM no: PAM's session modules fail in containers) sshd
# refuses a locked account even for a key.
case $(getent shadow root | cut -d: -f2) in
'!'*) echo "SKIP: root's account is locked (password field '!...'): sshd without PAM refuses it"; exit 77;;
esac
[ "$mode" = placed ] || preload=
# sanitizer builds preload their runtime first: no leak checks in sshd
export ASAN_OPTIONS=detect_leaks=0
tmp=$(mktemp -d)
chmod 755 "$tmp"
sshd_pid=''
# shellcheck disable=SC2317  # called by the trap
cleanup() {
	[ -n "$sshd_pid" ] && kill -TERM "$sshd_pid" 2>/dev/null && wait "$sshd_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
# sshd chroots its pre-auth child into /run/sshd, which a machine that
# never ran sshd lacks.  This test used to create it and remove it at the
# end, but its plain and placed runs overlap: the first to finish removed
# the directory under the other's login ("Missing privilege separation
# directory", a refused login).  So each sshd gets a /run/sshd of its own,
# on a tmpfs over /run in a private mount namespace; where no namespace can
# be made, the machine's own /run/sshd is used if there is one.
# $in_run "$own_run" sh COMMAND...: COMMAND with sshd's /run; every step
# execs, so a COMMAND started with & has its own pid in $!.
if unshare -m true 2>/dev/null; then
	in_run="unshare -m sh -c"
	# shellcheck disable=SC2016  # "$@" is the inner shell's
	own_run='mount -t tmpfs -o mode=755 fdrange-sshd-test /run &&
		mkdir -m 755 /run/sshd && exec "$@"'
elif [ -d /run/sshd ]; then
	in_run="sh -c"
	# shellcheck disable=SC2016
	own_run='exec "$@"'
else
	echo "SKIP: no /run/sshd, and no mount namespace (unshare -m) to make one in"; exit 77
fi
ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key" || exit 1
ssh-keygen -q -t ed25519 -N '' -f "$tmp/user_key" || exit 1
cp "$tmp/user_key.pub" "$tmp/authorized_keys"
chmod 600 "$tmp/authorized_keys"

# A port nothing listens on, tried until sshd takes one.
port_base=$((20000 + $$ % 20000))
for try in 0 1 2 3 4 5 6 7; do
	port=$((port_base + try * 97))
	cat >"$tmp/sshd_config" <<CONF
ListenAddress 127.0.0.1
HostKey $tmp/host_key
PidFile $tmp/sshd.pid
AuthorizedKeysFile $tmp/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
LogLevel VERBOSE
CONF
	$in_run "$own_run" sh "$sshd" -t -f "$tmp/sshd_config" -p "$port" || { echo "FAIL: sshd -t rejects the config"; exit 1; }
	$in_run "$own_run" sh env ${preload:+LD_PRELOAD="$preload"} \
		"$sshd" -D -e -f "$tmp/sshd_config" -p "$port" 2>"$tmp/sshd.log" &
	sshd_pid=$!
	i=0
	until grep -q "Server listening on 127.0.0.1 port $port" "$tmp/sshd.log"; do
		kill -0 "$sshd_pid" 2>/dev/null || break
		i=$((i + 1))
		[ $i -le 100 ] || break
		sleep 0.1
	done
	grep -q "Server listening on 127.0.0.1 port $port" "$tmp/sshd.log" && break
	kill -TERM "$sshd_pid" 2>/dev/null; wait "$sshd_pid" 2>/dev/null
	sshd_pid=
done
[ -n "$sshd_pid" ] || { cat "$tmp/sshd.log"; echo "FAIL: sshd did not start ($mode)"; exit 1; }
if [ "$mode" = placed ] && ! grep -q libfdrange "/proc/$sshd_pid/maps"; then
	echo "FAIL: sshd runs without the library"; exit 1
fi

rc=0
timeout 30 ssh -F /dev/null -i "$tmp/user_key" -o StrictHostKeyChecking=no \
	-o UserKnownHostsFile=/dev/null -o BatchMode=yes -o ConnectTimeout=10 \
	-o LogLevel=ERROR -p "$port" root@127.0.0.1 true </dev/null >"$tmp/ssh.out" 2>&1 || rc=$?
if [ $rc = 0 ]; then
	echo "ok: ssh root@127.0.0.1 -p $port true: exit 0 ($mode)"
	exit 0
fi
echo "FAIL: ssh root@127.0.0.1 -p $port true: exit $rc ($mode)"
cat "$tmp/ssh.out"
echo "--- sshd log:"
cat "$tmp/sshd.log"
exit 1
