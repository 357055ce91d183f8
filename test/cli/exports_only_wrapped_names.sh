#!/bin/sh
# The library exports exactly the wrapped names and the public API, wraps
# nothing on the data path, and never calls a wrapped name itself (such a
# call would show as a PLT relocation against our own export).
# usage: exports_only_wrapped_names.sh LIB SRCDIR
set -eu
lib=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort >"$tmp/exported"
# expected: the version script's list, which must hold every next-symbol of
# lib/real.h and every function of the public header
sed -n '/^global:/,/^local:/p' "$src/lib/libfdrange.map" | tr ' \t;' '\n\n\n' |
	grep -E '^[a-z_0-9]+$' | sort -u >"$tmp/expected"
{
	sed -n '/#define FDR_SYMBOLS/,/^$/p' "$src/lib/real.h" | grep -o 'X([a-z_0-9]*)' | sed 's/X(\(.*\))/\1/'
	grep -o '^[a-z ]*\*\?fdrange_[a-z_]*(' "$src/include/fdrange.h" | grep -o 'fdrange_[a-z_]*'
} | sort -u >"$tmp/required"
missing=$(comm -23 "$tmp/required" "$tmp/expected")
[ -z "$missing" ] || { echo "FAIL: not in libfdrange.map: $missing"; exit 1; }
if ! cmp -s "$tmp/exported" "$tmp/expected"; then
	echo "FAIL: exported symbols differ from lib/libfdrange.map:"
	diff "$tmp/expected" "$tmp/exported" || true
	exit 1
fi
for f in read write recv send recvfrom sendmsg recvmsg epoll_wait epoll_pwait close dup dup2 dup3 fcntl poll select; do
	if grep -qx "$f" "$tmp/exported"; then
		echo "FAIL: data-path call $f is wrapped"
		exit 1
	fi
done
readelf -rW "$lib" | awk '/JUMP_SLOT|GLOB_DAT/ {print $5}' | sed 's/@.*//' | sort -u >"$tmp/called"
bad=$(comm -12 "$tmp/called" "$tmp/exported" | grep -v '^fdrange_' || true)
if [ -n "$bad" ]; then
	echo "FAIL: the library calls its own wrapped names: $bad"
	exit 1
fi
echo "ok: $(wc -l <"$tmp/exported") symbols exported, none called internally"
