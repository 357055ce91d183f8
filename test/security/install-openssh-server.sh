#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs openssh-server (and the client) for sshd_login_works.sh without
# starting or enabling the machine's own sshd: on a machine that had no
# sshd, it keeps having none.
#  - /etc/ssh/sshd_not_to_be_run, which Debian's ssh.service
#    (ConditionPathExists=!) and /etc/init.d/ssh both honour, is created
#    before the package is first installed: the service never starts, now
#    or at boot.  The test starts its own sshd by path, which ignores it.
#  - a policy-rc.d that forbids starting services is in place during the
#    install (and removed again if this script put it there).
# Run as root; does nothing if openssh-server is installed already.
set -eu
installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}
if installed openssh-server && installed openssh-client; then
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "error: openssh-server missing; run as root to install it" >&2
	exit 1
fi
if ! installed openssh-server; then
	mkdir -p /etc/ssh
	: >/etc/ssh/sshd_not_to_be_run
fi
policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\n# installed by libfdrange test/security/install-openssh-server.sh\nexit 101\n' \
		>/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	policy=1
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	openssh-server openssh-client >/dev/null
echo "installed openssh-server; the machine's sshd is not started${policy:+ (policy-rc.d)}" \
	"and not to be run (/etc/ssh/sshd_not_to_be_run)"
