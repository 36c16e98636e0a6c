#!/bin/sh
# Golden CLI tests: tests/golden/<case>/{cmd,stdout,stderr,status}, compared byte for byte.
#   KPROF=build/kprof tests/golden/run.sh [--update] [case...]
# cmd is one shell line run from the repository root with $KPROF set.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
: "${KPROF:=$top/build/kprof}"
export KPROF LC_ALL=C NO_COLOR=1 TZ=UTC
unset KPROF_DEVICE_DB KPROF_TIMING
update=0
if [ "${1:-}" = "--update" ]; then
	update=1
	shift
fi
if [ $# -gt 0 ]; then
	cases=$*
else
	cases=$(ls -d tests/golden/*/ | sed 's|tests/golden/||; s|/$||')
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
for c in $cases; do
	d=tests/golden/$c
	[ -f "$d/cmd" ] || continue
	sh -c "$(cat "$d/cmd")" >"$tmp/stdout" 2>"$tmp/stderr"
	echo $? >"$tmp/status"
	if [ $update = 1 ]; then
		cp "$tmp/stdout" "$tmp/stderr" "$tmp/status" "$d/"
		pass=$((pass + 1))
		continue
	fi
	ok=1
	for f in stdout stderr status; do
		if ! cmp -s "$tmp/$f" "$d/$f"; then
			ok=0
			echo "FAIL $c: $f differs"
			diff -u "$d/$f" "$tmp/$f" | head -20
		fi
	done
	if [ $ok = 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
	fi
done
if [ $update = 1 ]; then
	echo "  golden: updated $pass cases"
	exit 0
fi
echo "  golden: $pass passed, $fail failed"
[ $fail = 0 ]
