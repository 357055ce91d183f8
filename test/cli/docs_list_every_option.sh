#!/bin/sh
# README.md, the man pages and --help must name every option of the table
# (fdrange --help is generated from it, so it is the reference).
set -eu
exe=$1 src=$2
vars=$("$exe" --help | grep -o 'FDRANGE_[A-Z]*' | sort -u)
[ -n "$vars" ] || { echo "FAIL: --help lists no variable"; exit 1; }
fail=0
for v in $vars; do
	for doc in README.md man/libfdrange.7 man/fdrange.1; do
		grep -q "$v" "$src/$doc" || { echo "FAIL: $doc does not mention $v"; fail=1; }
	done
	flag=$(echo "$v" | sed 's/FDRANGE_//' | tr 'A-Z' 'a-z')
	grep -q -e "--$flag" -e "\\\\-\\\\-$flag" "$src/man/fdrange.1" || { echo "FAIL: fdrange.1 lacks --$flag"; fail=1; }
done
[ $fail -eq 0 ] && echo "ok: $(echo "$vars" | wc -l) options documented everywhere"
exit $fail
