#!/bin/bash
# tests/gpu/smoke.sh — a short capture of every workload family at small shapes with its
# accuracy checks, then analyze of each trace: a check after a change that moves capture code
# (tests/gpu/run.sh is the whole run; smoke.sh is not part of it).  Builds nothing; exit 77
# without a GPU.
#   tests/gpu/smoke.sh [OUTDIR]
set -u
KPROF=${KPROF:-build/kprof}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "tests/gpu/smoke: no GPU, skipped"
	exit 77
fi
fail=0
one() { # name, capture args...
	local name=$1
	shift
	"$KPROF" capture "$@" -o "$DIR/$name.json" >"$DIR/$name.out" 2>"$DIR/$name.err" ||
		{ echo "FAIL: capture $name exited $?"; cat "$DIR/$name.err"; fail=1; }
	local ok bad
	ok=$(grep -c $'\xe2\x9c\x93' "$DIR/$name.out")
	bad=$(grep -c $'\xe2\x9c\x97' "$DIR/$name.out")
	[ "$ok" -gt 0 ] && [ "$bad" -eq 0 ] || { echo "FAIL: $name: $ok checks passed, $bad failed"; fail=1; }
	"$KPROF" analyze -g op -n 0 -f json "$DIR/$name.json" >/dev/null 2>"$DIR/$name.ana.err" ||
		{ echo "FAIL: analyze $name"; fail=1; }
	echo "$name: $ok accuracy checks passed, $bad failed"
}
one matmul -w matmul --op mm,addmm,bmm -t bf16,fp16,fp32,tf32 -S custom:256x512x384,1000x1000x1000 -b 4 --warmup 2 -i 5
one sdpa -w sdpa -t bf16,fp16,fp32 --sdpa-shapes custom:2x8x2x128x128x64c,1x4x4x96x160x32 --warmup 2 -i 5
one conv -w conv -t bf16,fp32 --conv-shapes custom:4x16x14x14x32x3x3:p1,2x8x9x9x16x3x3:s2:p1:d2:g2 --warmup 2 -i 5
one rowwise -w softmax,rmsnorm,layernorm,cross_entropy -t bf16,fp32 --warmup 2 -i 5
[ $fail -eq 0 ] && echo "smoke: PASS" || echo "smoke: FAIL"
exit $fail
