#!/bin/sh
# SPDX-License-Identifier: MIT
# test/families/build.sh OUTDIR: the C programs of the program families,
# compiled into OUTDIR with ${CC:-cc}.  The one place their flags live: the
# families harness (run-all.sh), the kernel boot test's guest
# (kernel/test.sh) and CI's kernel check (kernel/ci-check.sh) call it.  The
# select server is fortified on purpose (FD_SET checks its fd against
# FD_SETSIZE); all are plain -O2 builds of one file each.  echo_load is
# the C client that stands in for echo_client.py where there is no python.
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for p in tpc_select prefork seccomp_fcntl threads_churn echo_load; do
	fl=""
	[ $p = tpc_select ] && fl="-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2"
	# shellcheck disable=SC2086
	${CC:-cc} -O2 -g -Wall -Wextra -Werror -pthread $fl -o "$out/$p" "$here/$p.c" ||
		{ echo "test/families/build.sh: $p.c does not build" >&2; exit 1; }
done
