# shellcheck shell=bash disable=SC2034
# SPDX-License-Identifier: MIT
# Shared by the A/B runner's tests that start no server (ab_verdict_rules,
# ab_bad_args): their argv is the other memcached tests' (LIB FDRANGE
# MCCLIENT SRCROOT), AB_BUILD the meson build directory with the helpers.
set -eu
FDRANGE=$2 SRCROOT=$4
: "${AB_BUILD:?AB_BUILD must name the meson build directory}"
AB=$SRCROOT/bench/ab-memcached
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fdrange-ab.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# ab_needs COMMAND...: skip the test (77) unless each is installed.
ab_needs() {
	local c
	for c; do command -v "$c" >/dev/null || { echo "$c not installed: skipping"; exit 77; }; done
}
