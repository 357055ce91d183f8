# Sourced by the set-up scripts (sh or bash): installs missing Debian packages.

# missing_packages PKG...: prints " PKG" for each one not installed.
missing_packages() {
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			printf ' %s' "$p"
	done
}

# need_packages PKG...: apt-get install those not installed yet, as root,
# or through $SUDO (e.g. SUDO=sudo) where the caller allows it.
need_packages() {
	missing=$(missing_packages "$@")
	[ -z "$missing" ] && return 0
	echo "installing:$missing"
	if [ "$(id -u)" != 0 ] && [ -z "${SUDO:-}" ]; then
		echo "error: missing Debian packages:$missing; run as root or install them" >&2
		return 1
	fi
	${SUDO:-} apt-get update -qq
	# shellcheck disable=SC2086
	${SUDO:-} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$missing >/dev/null
}
