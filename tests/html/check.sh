#!/bin/sh
# html and svg reports of every bundled trace and of a diff: well-formed XML (xmlcheck),
# no external URL, no src/href other than #fragments, under the size bound.
#   KPROF=build/kprof XMLCHECK=build/tests/xmlcheck tests/html/check.sh [OUTDIR]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
: "${KPROF:=$top/build/kprof}" "${XMLCHECK:=$top/build/tests/xmlcheck}"
export LC_ALL=C NO_COLOR=1 TZ=UTC
unset KPROF_DEVICE_DB
max=2000000
out=${1:-$(mktemp -d)}
[ $# -gt 0 ] || trap 'rm -rf "$out"' EXIT
mkdir -p "$out"
fail=0
n=0
for f in testdata/hta/*.json.gz testdata/torch211-*/*.json testdata/torch211-*/*.json.gz testdata/handmade/*.json; do
	[ -f "$f" ] || continue
	b=$(echo "$f" | sed 's|^testdata/||; s|[/.]|_|g')
	# not every file there is a trace (flop_counter.json): skip what analyze refuses anyway
	"$KPROF" analyze -f csv "$f" >/dev/null 2>&1 || continue
	"$KPROF" analyze -f html -o "$out/$b.html" "$f" 2>/dev/null
	rc=$?
	if [ $rc != 0 ]; then
		echo "FAIL html: kprof analyze -f html $f exited $rc"
		fail=1
		continue
	fi
	"$XMLCHECK" -s $max "$out/$b.html" || fail=1
	for c in roofline timeline top flame memory; do
		"$KPROF" analyze -f svg --chart $c -o "$out/$b-$c.svg" "$f" 2>/dev/null &&
			"$XMLCHECK" -s $max "$out/$b-$c.svg" || { echo "FAIL svg $c: $f"; fail=1; }
	done
	n=$((n + 1))
done
# the memory pages (--memory) of the traces recorded with profile_memory=True: the chart per
# GPU device with its hover bands and peak, and the live-at-peak table, under the bound
for f in testdata/torch211-h200/*_mem.json.gz; do
	b=mem-$(basename "$f" .json.gz)
	"$KPROF" analyze --memory -f html -o "$out/$b.html" "$f" 2>/dev/null ||
		{ echo "FAIL html --memory: $f"; fail=1; continue; }
	"$XMLCHECK" -s $max "$out/$b.html" || fail=1
	for want in '<section id="memory">' 'class="hv"' '<g class="pk">' '<h2>live at the peak, cuda:0'; do
		grep -q "$want" "$out/$b.html" || { echo "FAIL html --memory $f: no $want"; fail=1; }
	done
	n=$((n + 1))
done
# the icicle at 10,000 distinct module frames (tests/html/gen-modules.py): under the bound
python3 tests/html/gen-modules.py 10000 >"$out/modules10k.json" || fail=1
for fmt in html svg; do
	"$KPROF" analyze -f $fmt --chart flame -o "$out/modules10k.$fmt" "$out/modules10k.json" 2>/dev/null &&
		"$XMLCHECK" -s $max "$out/modules10k.$fmt" || { echo "FAIL $fmt: 10,000 module frames"; fail=1; }
done
grep -q '10000 frames, ' "$out/modules10k.html" || { echo "FAIL html: no icicle of 10,000 frames"; fail=1; }
rm -f "$out/modules10k.json"
# capture's results (issue 28): the page of a --results file, one chart per workload/op, and
# each chart alone as svg
res=testdata/handmade/capture_results.json
"$KPROF" analyze --results $res -f html -o "$out/capture_results.html" 2>/dev/null &&
	"$XMLCHECK" -s $max "$out/capture_results.html" || { echo "FAIL html: --results $res"; fail=1; }
[ "$(grep -c '<svg class="kc" id="chart-results-' "$out/capture_results.html")" = 3 ] ||
	{ echo "FAIL html: --results $res: not 3 charts"; fail=1; }
for c in results-1 results-2 results-3; do
	"$KPROF" analyze --results $res -f svg --chart $c -o "$out/capture_results-$c.svg" 2>/dev/null &&
		"$XMLCHECK" -s $max "$out/capture_results-$c.svg" || { echo "FAIL svg $c: $res"; fail=1; }
done
# a diff with a gate that trips, one that passes, and its two svg charts
base=testdata/hta/trace_diff_control_2022.json.gz new=testdata/hta/trace_diff_test_2022.json.gz
"$KPROF" diff -f html -k op-shape --fail-above 1 -o "$out/diff.html" $base $new 2>/dev/null
[ $? = 1 ] || { echo "FAIL diff html: expected the gate to trip (exit 1)"; fail=1; }
"$XMLCHECK" -s $max "$out/diff.html" || fail=1
grep -q 'class="verdict bad"' "$out/diff.html" || { echo "FAIL diff html: no failed verdict"; fail=1; }
"$KPROF" diff -f html --fail-above 5 -o "$out/diff-pass.html" $base $base 2>/dev/null ||
	{ echo "FAIL diff html of a trace with itself"; fail=1; }
grep -q 'class="verdict good"' "$out/diff-pass.html" || { echo "FAIL diff html: no passed verdict"; fail=1; }
for c in waterfall dumbbell; do
	"$KPROF" diff -f svg -k op-shape --chart $c -o "$out/diff-$c.svg" $base $new 2>/dev/null &&
		"$XMLCHECK" -s $max "$out/diff-$c.svg" || { echo "FAIL diff svg $c"; fail=1; }
done
# op-shape pages (long op + shape labels) of the H100 traces, and a diff of two of them; then
# every chart's labels unique (tests/html/labels.py)
for f in testdata/torch211-h100/*.json; do
	"$KPROF" analyze -f csv "$f" >/dev/null 2>&1 || continue
	b=$(basename "$f" .json)
	"$KPROF" analyze -g op-shape -f html -o "$out/shape-$b.html" "$f" 2>/dev/null ||
		{ echo "FAIL html -g op-shape: $f"; fail=1; }
done
"$KPROF" diff -k op-shape -f html -o "$out/diff-matmul.html" testdata/torch211-h100/matmul_bf16.json \
	testdata/torch211-h100/matmul_fp16.json 2>/dev/null
python3 "$top/tests/html/labels.py" "$out"/*.html "$out"/*.svg || fail=1
[ $fail = 0 ] && echo "  html: $n traces and a diff: well-formed, self-contained, under $max bytes"
exit $fail
