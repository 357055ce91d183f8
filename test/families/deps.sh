# shellcheck shell=sh
# SPDX-License-Identifier: MIT
# Sourced after tools/deps.sh (by test/run.sh and test/families/run-all.sh):
# need_family_packages installs the Debian packages the program-family
# matrix needs, with a temporary /usr/sbin/policy-rc.d (exit 101) where
# none exists, so that installing apache2, squid or tor starts no service
# (the cases run their own instances, on their own ports and configs).
FAMILY_PACKAGES="gcc libc6-dev python3 util-linux iproute2 procps strace apache2 apache2-utils
	wrk squid squidclient tor nginx-light curl"

need_family_packages() {
	# shellcheck disable=SC2086
	[ -n "$(missing_packages $FAMILY_PACKAGES)" ] || return 0
	fam_policy=""
	if [ "$(id -u)" = 0 ] && [ ! -e /usr/sbin/policy-rc.d ]; then
		fam_policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' >"$fam_policy"
		chmod 755 "$fam_policy"
	fi
	fam_rc=0
	# shellcheck disable=SC2086
	need_packages $FAMILY_PACKAGES || fam_rc=$?
	[ -z "$fam_policy" ] || rm -f "$fam_policy"
	return "$fam_rc"
}
