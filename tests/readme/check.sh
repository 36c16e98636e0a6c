#!/bin/sh
# tests/readme/check.sh: run every `$ ...` example of README.md as written (issue 23 item 22).
#   KPROF=build/kprof tests/readme/check.sh
# Examples are the indented lines starting with "$ " (a trailing "\" joins the next line).  Each
# runs with sh from a temporary directory that links the repository's build/ and testdata/, so
# outputs (-o FILE, sums/) land there.  An example must exit 0; one with --fail-above may exit 1
# (the gate tripped, README "Exit status").  `kprof capture` needs a GPU and CUPTI: without
# `nvidia-smi` seeing a GPU its examples are skipped, and so is every example that reads a file
# a skipped one would have written; the program in `capture -- python3 train.py` is the
# reader's own and is skipped always.  Each skip is printed with its reason.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
: "${KPROF:=$top/build/kprof}"
: "${README:=$top/README.md}"
export LC_ALL=C NO_COLOR=1 TZ=UTC
unset KPROF_DEVICE_DB KPROF_TIMING
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/run"
ln -s "$top/testdata" "$tmp/run/testdata"
mkdir "$tmp/run/build"
for f in "$top"/build/*; do ln -s "$f" "$tmp/run/build/"; done
ln -sf "$KPROF" "$tmp/run/build/kprof"

# one example per line, continuations joined
awk 'cont { sub(/^ +/, ""); line = line $0 }
     !cont && /^    \$ / { line = substr($0, 7) }
     !cont && !/^    \$ / { next }
     { if (line ~ /\\$/) { sub(/\\$/, "", line); cont = 1 } else { print line; cont = 0 } }' \
	"$README" >"$tmp/examples"

gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
	[ -e "$top/build/kprof-capture.so" ]; then
	gpu=1
fi
: >"$tmp/unmade"
pass=0
fail=0
skip=0
while IFS= read -r ex; do
	reason=
	case $ex in
	*"capture "*"-- python3 train.py"*) reason="runs the reader's own train.py" ;;
	*"kprof capture "*) [ $gpu = 1 ] || reason="capture needs a GPU (nvidia-smi sees none) and kprof-capture.so" ;;
	esac
	if [ -z "$reason" ]; then
		while IFS= read -r f; do
			case " $ex " in *" $f "*) reason="reads $f, which a skipped capture writes" ;; esac
		done <"$tmp/unmade"
	fi
	if [ -n "$reason" ]; then
		# what it would have written: -o FILE
		echo "$ex" | tr ' ' '\n' | awk 'p { print; p = 0 } $0 == "-o" { p = 1 }' >>"$tmp/unmade"
		echo "  readme: skip ($reason): $ex"
		skip=$((skip + 1))
		continue
	fi
	(cd "$tmp/run" && sh -c "$ex") >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	ok=0
	[ $rc = 0 ] && ok=1
	case $ex in *--fail-above*) [ $rc = 1 ] && ok=1 ;; esac
	if [ $ok = 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL readme (status $rc): $ex"
		head -5 "$tmp/err"
	fi
done <"$tmp/examples"
echo "  readme: $pass examples ran, $skip skipped, $fail failed"
[ $fail = 0 ] && [ $pass -gt 0 ]
