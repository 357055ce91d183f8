#!/bin/sh
# SPDX-License-Identifier: MIT
# The manual pages as built (man/meson.build) carry one date, a real
# YYYY-MM-DD; and, where groff is installed, render without a warning.
# usage: man_pages_share_one_date.sh PAGE...
set -u
fail=0
first=""
for page in "$@"; do
	d=$(awk '/^[.]TH / { print $4; exit }' "$page")
	echo "$d" | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' || { echo "FAIL: $page: date '$d'"; fail=1; }
	[ -n "$first" ] || first=$d
	[ "$d" = "$first" ] || { echo "FAIL: $page is dated $d, the first page $first"; fail=1; }
	if command -v groff >/dev/null; then
		w=$(groff -man -ww -z "$page" 2>&1)
		[ -z "$w" ] || { echo "FAIL: $page: groff: $w"; fail=1; }
	fi
done
[ $# -ge 2 ] || { echo "FAIL: fewer than two pages given"; fail=1; }
[ $fail = 0 ] && echo "ok: $# pages, all dated $first"
exit $fail
