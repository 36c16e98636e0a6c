#!/bin/bash
# tests/gpu/run.sh — kprof capture on a real GPU: each workload at small shapes and one large
# shape, then kprof analyze and PyTorch's analyzer on the traces; then capture -- <command>
# (tests/gpu/inject.sh) and diff's gate on recordings (tests/gpu/gate.sh).  Builds nothing: run it from
# the repository root with build/kprof already built (carry build/).  Exit 77 without a GPU.
#   tests/gpu/run.sh [OUTDIR]
set -u
KPROF=${KPROF:-build/kprof}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "tests/gpu: no GPU, skipped"
	exit 77
fi
test -x "$KPROF" || { echo "tests/gpu: $KPROF not built"; exit 2; }

fail=0
run() { # name, capture args...
	local name=$1
	shift
	echo "== capture $name: $*"
	"$KPROF" capture "$@" -o "$DIR/$name.json" >"$DIR/$name.out" 2>"$DIR/$name.err"
	local rc=$?
	cat "$DIR/$name.out" "$DIR/$name.err"
	if [ $rc -ne 0 ]; then
		echo "FAIL: capture $name exited $rc"
		fail=1
	fi
	if grep -q $'\xe2\x9c\x97' "$DIR/$name.out"; then
		echo "FAIL: capture $name: an accuracy check failed"
		fail=1
	fi
	if ! grep -q $'\xe2\x9c\x93' "$DIR/$name.out"; then
		echo "FAIL: capture $name: no accuracy check passed"
		fail=1
	fi
	"$KPROF" analyze --format json --group-by op-shape -n 0 "$DIR/$name.json" >"$DIR/$name.analyze.json" 2>"$DIR/$name.analyze.err" ||
		{ echo "FAIL: analyze $name"; cat "$DIR/$name.analyze.err"; fail=1; }
}

run mm_small -w matmul --op mm,addmm,bmm -t bf16,fp16,fp32,tf32 -S custom:256x512x384,1000x1000x1000 -b 4 --warmup 2 -i 5
run mm_large -w matmul --op mm -t bf16 -S custom:8192x8192x8192 --warmup 5 -i 20 --overhead
run sdpa_small -w sdpa -t bf16,fp16,fp32 --sdpa-shapes custom:2x8x2x128x128x64c,1x4x4x96x160x32,2x4x1x160x96x64c --warmup 2 -i 5
run sdpa_large -w sdpa -t bf16 --sdpa-shapes custom:8x16x16x1024x1024x128c --warmup 2 -i 5
run conv_small -w conv -t bf16,fp32,tf32 --conv-shapes custom:4x16x14x14x32x3x3:p1,2x8x9x9x16x3x3:s2:p1:d2:g2,3x6x8x8x12x1x1,1x3x32x32x8x7x7:s2:p3 --warmup 2 -i 5
run conv_large -w conv -t bf16 --conv-shapes custom:32x64x56x56x64x3x3:p1 --warmup 2 -i 5

echo "== cudnn conv and the row-wise kernels side by side with PyTorch (tests/gpu/workloads_vs_torch.py)"
python3 "$(dirname "$0")/workloads_vs_torch.py" "$KPROF" "$DIR/wl" || fail=1

echo "== PyTorch's analyzer on the kprof matmul traces"
for t in mm_small mm_large; do
	if python3 -m torch._inductor.analysis.profile_analysis --analysis "$DIR/$t.json" bfloat16 >"$DIR/$t.pa.out" 2>&1; then
		echo "ok: profile_analysis $t.json"
	else
		echo "FAIL: profile_analysis $t.json"
		tail -20 "$DIR/$t.pa.out"
		fail=1
	fi
done

echo "== checks"
python3 "$(dirname "$0")/check.py" "$DIR" mm_small mm_large sdpa_small sdpa_large conv_small conv_large || fail=1
echo "== kprof analyze on PyTorch traces it has never seen (FlopCounterMode as reference)"
if python3 -c 'import torch' 2>/dev/null; then
	python3 "$(dirname "$0")/torch_unseen.py" "$KPROF" "$DIR/unseen" || fail=1
else
	echo "FAIL: torch is not importable here"
	fail=1
fi
echo "== kprof diff's gate on real recordings (tests/gpu/gate.sh)"
KPROF=$KPROF "$(dirname "$0")/gate.sh" "$DIR/gate" || fail=1
echo "== kprof capture -- <command> (injection)"
KPROF=$KPROF "$(dirname "$0")/inject.sh" "$DIR" || fail=1
echo "== kprof capture -- <command>: library calls and NVTX ranges as ops"
KPROF=$KPROF "$(dirname "$0")/capture_any.sh" "$DIR" || fail=1
# KPROF_GPU_SKIP_HOOK=1: not this section (run on its own where one call's time is bounded)
if [ "${KPROF_GPU_SKIP_HOOK:-0}" != 1 ]; then
	echo "== unchanged PyTorch programs under the torch hook (tests/gpu/torch_hook.sh)"
	KPROF=$KPROF "$(dirname "$0")/torch_hook.sh" "$DIR" || fail=1
	echo "== kprof capture --memory: peak reserved against torch (tests/gpu/memory_capture.sh)"
	KPROF=$KPROF "$(dirname "$0")/memory_capture.sh" "$DIR" || fail=1
fi
echo "== kprof capture --report: the results as charts, points = the summary table (tests/gpu/capture_report.sh)"
KPROF=$KPROF "$(dirname "$0")/capture_report.sh" "$DIR" || fail=1
echo "== kprof capture --metrics: measured tensor FLOPs and DRAM bytes per kernel"
KPROF=$KPROF "$(dirname "$0")/metrics.sh" "$DIR/metrics" || fail=1
echo "== kprof capture --metrics -- <command>: measured FLOPs of a cuBLAS GEMM and a custom kernel"
KPROF=$KPROF "$(dirname "$0")/cmd_metrics.sh" "$DIR/cmd_metrics" || fail=1
echo "== kprof analyze of two DDP ranks (tests/gpu/ranks.sh; needs 2 GPUs)"
KPROF=$KPROF "$(dirname "$0")/ranks.sh" "$DIR/ranks"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || fail=1
[ $fail -eq 0 ] && echo "tests/gpu: PASS" || echo "tests/gpu: FAIL"
exit $fail
