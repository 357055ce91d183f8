# Sourced by the set-up scripts: installs missing Debian packages.
# need_packages PKG... : apt-get install those not installed yet (needs root).
need_packages() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "installing:$missing"
	if [ "$(id -u)" != 0 ]; then
		echo "error: missing Debian packages:$missing; run as root or install them" >&2
		return 1
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
}
