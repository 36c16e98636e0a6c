#!/bin/bash
# tests/gpu/capture_report.sh — capture's results as charts (issue 28) on a real GPU: one suite
# of 4 workloads (matmul on cublas and cublaslt, conv and sdpa on reference and cudnn, softmax on
# kprof), 6 shapes each, with --report FILE.html, --report FILE.svg and --results FILE.json;
# then checks that every chart point equals the number capture's summary table printed for its
# case (TFLOP/s or GB/s, and the time), that each chart has 6 shapes, that `kprof analyze
# --results` of the JSON and of the CSV and `kprof analyze` of the trace draw the same charts as
# --report, and that the svg is the html's first chart.  Builds nothing: run it from the
# repository root with build/ built (carry build/).  Exit 77 without a GPU.
#   tests/gpu/capture_report.sh [OUTDIR]
set -u
KPROF=${KPROF:-build/kprof}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}/capture_report
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "tests/gpu: no GPU, skipped"
	exit 77
fi
test -x "$KPROF" || { echo "tests/gpu: $KPROF not built"; exit 2; }
fail=0
conv=custom:8x64x56x56x64x3x3:p1,8x128x28x28x128x3x3:p1,8x256x14x14x256x3x3:p1,8x512x7x7x512x3x3:p1,8x3x224x224x64x7x7:s2:p3,8x256x56x56x64x1x1
sdpa=custom:4x16x16x512x512x128,4x16x16x1024x1024x128,4x16x16x2048x2048x128,1x16x16x4096x4096x128,1x16x16x8192x8192x128,8x16x16x256x256x128
norm=custom:4096x1024,4096x4096,16384x1024,16384x4096,32768x8192,65536x8192
args=(-w matmul,conv,sdpa,softmax -S pow2:256:8192 --conv-shapes "$conv" --sdpa-shapes "$sdpa"
	--norm-shapes "$norm" --backend reference,cudnn,cublas,cublaslt --no-backward -i 10)
echo "== kprof capture ${args[*]} --report r.html --results r.json"
"$KPROF" capture "${args[@]}" --report "$DIR/r.html" --results "$DIR/r.json" -o "$DIR/t.json" \
	>"$DIR/capture.out" 2>"$DIR/capture.err"
rc=$?
cat "$DIR/capture.out" "$DIR/capture.err"
[ $rc = 0 ] || { echo "FAIL: capture exited $rc"; fail=1; }
# the same run's records as csv, and the svg report, from the saved results (no second run)
"$KPROF" analyze --results "$DIR/r.json" -f svg -o "$DIR/r.svg" || { echo "FAIL: svg"; fail=1; }
for src in "--results $DIR/r.json" "$DIR/t.json"; do
	"$KPROF" analyze $src -f json --chart results >"$DIR/charts-$(echo "$src" | tr -c 'a-z' _).json" ||
		{ echo "FAIL: analyze $src -f json --chart results"; fail=1; }
	"$KPROF" analyze $src -f html >"$DIR/page-$(echo "$src" | tr -c 'a-z' _).html" ||
		{ echo "FAIL: analyze $src -f html"; fail=1; }
done
python3 tests/gpu/capture_report_check.py "$DIR" || fail=1
# --report FILE.svg and --results FILE.csv on a second, small run: the svg is what analyze draws
# from the csv
"$KPROF" capture -w softmax --norm-shapes "$norm" --report "$DIR/s.svg" --results "$DIR/s.csv" \
	-o "$DIR/s.json" >"$DIR/s.out" 2>&1 || { cat "$DIR/s.out"; echo "FAIL: capture --report s.svg"; fail=1; }
"$KPROF" analyze --results "$DIR/s.csv" -f svg | cmp - "$DIR/s.svg" ||
	{ echo "FAIL: --report s.svg differs from analyze --results s.csv -f svg"; fail=1; }
[ $fail = 0 ] && echo "capture_report: ok" || echo "capture_report: FAILED"
exit $fail
