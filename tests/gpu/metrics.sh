#!/bin/bash
# tests/gpu/metrics.sh — kprof capture --metrics on the matmul workload (issue 7 item 4, check d):
# measured tensor FLOPs of each large bf16 GEMM within 2% of 2·M·N·K, DRAM bytes of a one-pass
# softmax over 256 MiB of bf16 (read once, written once: a copy) within 5% of 2 x 256 MiB, DRAM
# bytes written by addmm's bias broadcast (a [M,N] bf16 store) within 5% of M·N·2, and the
# wall-time ratio of the capture with --metrics over the same capture without.  Exit 77 without a GPU.
#   tests/gpu/metrics.sh [OUTDIR]
set -u
KPROF=${KPROF:-build/kprof}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}
HERE=$(dirname "$0")
mkdir -p "$DIR"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "tests/gpu/metrics: no GPU, skipped"
	exit 77
fi
ARGS=(-w matmul,softmax --op mm,addmm -t bf16 -S custom:4096x4096x4096,8192x8192x8192 \
	--norm-shapes custom:65536x2048 --warmup 2 -i 3)
t0=$(date +%s.%N)
"$KPROF" capture "${ARGS[@]}" -o "$DIR/mm_plain.json" >"$DIR/mm_plain.out" 2>&1
rc0=$?
t1=$(date +%s.%N)
"$KPROF" capture "${ARGS[@]}" --metrics -o "$DIR/mm_metrics.json" >"$DIR/mm_metrics.out" 2>&1
rc1=$?
t2=$(date +%s.%N)
cat "$DIR/mm_metrics.out"
python3 -c "import sys; a,b,c=map(float,sys.argv[1:]); print(f'capture wall: plain {b-a:.2f} s (rc $rc0), --metrics {c-b:.2f} s (rc $rc1), ratio {(c-b)/(b-a):.2f}')" $t0 $t1 $t2
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] || { echo "FAIL: capture exited $rc0 / $rc1"; exit 1; }
python3 "$HERE/metrics_check.py" "$DIR/mm_metrics.json" || exit 1
"$KPROF" analyze "$DIR/mm_metrics.json" >"$DIR/mm_metrics.analyze" 2>&1 || { echo "FAIL: analyze"; exit 1; }
head -30 "$DIR/mm_metrics.analyze"
