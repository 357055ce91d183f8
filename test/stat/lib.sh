# SPDX-License-Identifier: MIT
# Sourced by the fdrange stat tests, each run as SCRIPT FDRANGE FAKE_BLOCK
# [PRELOAD].  Sets fdrange, fake, preload and tmp (removed at exit); targets
# started with start_fake are killed at exit.
set -u
fdrange=$1 fake=$2 preload=${3:-}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
tmp=$(mktemp -d)
targets=""
# shellcheck disable=SC2086
trap 'for p in $targets; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

# start_fake MODE [ARGS...]: runs fake_block, sets fpid once it is ready.
start_fake() {
	"$fake" "$@" >"$tmp/ready" 2>"$tmp/fake.err" &
	fpid=$!
	targets="$targets $fpid"
	i=0
	until grep -q "^ready $fpid\$" "$tmp/ready" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 300 ] || { cat "$tmp/fake.err"; fail "fake_block $* did not start"; }
		kill -0 "$fpid" 2>/dev/null || { cat "$tmp/fake.err"; fail "fake_block $* died"; }
		sleep 0.05
	done
}

stop_fake() {
	kill "$fpid" 2>/dev/null
	wait "$fpid" 2>/dev/null
	return 0
}

# run_stat ARGS...: fdrange stat ARGS, within 20 s; sets rc, out, err.
run_stat() {
	rc=0
	timeout 20 "$fdrange" stat "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc != 124 ] || fail "fdrange stat $*: hung"
	out=$tmp/out err=$tmp/err
}

# summary_field FILE KEY: the value of KEY= on the summary line.
summary_field() {
	sed -n 's/^summary:.* '"$2"'=\([^ ]*\).*/\1/p' "$1"
}

need_python() {
	command -v python3 >/dev/null || { echo "SKIP: python3 needed to parse JSON"; exit 77; }
}
