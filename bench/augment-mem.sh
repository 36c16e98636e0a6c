#!/bin/sh
# kprof augment against kprof analyze on the same trace: peak RSS and wall time (ratios in the
# same run), and the sizes of the html report and the augmented trace.
#   bench/augment-mem.sh [build/kprof] [trace.json.gz]
set -eu
k=${1:-build/kprof}
f=${2:-testdata/hta/trace_diff_control_2022.json.gz}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # label command...
	l=$1
	shift
	/usr/bin/time -f "%M %e" -o "$tmp/$l.t" "$@" >/dev/null 2>&1 || true
	echo "$(cat "$tmp/$l.t")"
}
a=$(run analyze "$k" analyze -n 0 -f csv "$f")
g=$(run augment "$k" augment -o "$tmp/out.json.gz" "$f")
h=$(run html "$k" analyze -f html -o "$tmp/a.html" "$f")
set -- $a
ar=$1 at=$2
set -- $g
gr=$1 gt=$2
set -- $h
hr=$1 ht=$2
echo "trace: $f ($(wc -c <"$f") bytes, $(gunzip -c "$f" | wc -c) inflated)"
echo "analyze -f csv: max RSS $ar KB, $at s"
echo "augment:        max RSS $gr KB, $gt s  (RSS x$(echo "$gr $ar" | awk '{printf "%.2f", $1/$2}'), time x$(echo "$gt $at" | awk '{printf "%.2f", ($2>0)?$1/$2:0}'))"
echo "analyze -f html: max RSS $hr KB, $ht s, page $(wc -c <"$tmp/a.html") bytes"
echo "augmented trace: $(wc -c <"$tmp/out.json.gz") bytes gzip, $(gunzip -c "$tmp/out.json.gz" | wc -c) inflated"
