#!/bin/bash
# tests/gpu/capture_any.sh — issue 7 on a GPU: library calls and NVTX ranges of an unchanged
# program become ops.  (e) tests/gpu/gemm_prog (a plain CUDA program: cuBLAS, cuBLASLt, a custom
# kernel); (a) tests/gpu/llama_block.py under `kprof capture --`; (b) the same under
# emit_nvtx(record_shapes=True) against a torch.profiler trace of it; the traced/untraced
# ratios of tests/gpu/overhead.py and the per-call cost of interposition.  Builds nothing:
# build/kprof, build/*.so and GEMM_PROG (default build/gemm_prog, nvcc -o build/gemm_prog
# tests/gpu/gemm_prog.cu -lcublasLt -lcublas).  Called by tests/gpu/run.sh.
#   tests/gpu/capture_any.sh [OUTDIR]
set -u
KPROF=${KPROF:-build/kprof}
GEMM_PROG=${GEMM_PROG:-build/gemm_prog}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}
HERE=$(dirname "$0")
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cap() { # name, capture args... -- cmd
	local name=$1
	shift
	"$KPROF" capture -o "$DIR/$name.json" "$@" >"$DIR/$name.out" 2>"$DIR/$name.err"
	local rc=$?
	tail -3 "$DIR/$name.err"
	[ $rc -eq 0 ] || { bad "capture $name exited $rc"; cat "$DIR/$name.err"; }
	"$KPROF" analyze --format json -g op -n 0 "$DIR/$name.json" >"$DIR/$name.ana.json" 2>"$DIR/$name.ana.err" ||
		bad "analyze $name"
}

echo "== (e) plain CUDA program: cuBLAS / cuBLASLt calls and a custom kernel"
cap gemmprog -- "$GEMM_PROG" 3
cat "$DIR/gemmprog.out"
python3 "$HERE/capture_any.py" gemmprog "$DIR/gemmprog.json" "$DIR/gemmprog.ana.json" "$DIR/gemmprog.out" || fail=1
"$KPROF" analyze -g op-shape -n 8 "$DIR/gemmprog.json"

echo "== (a) llama block, bf16, fwd+bwd, under kprof capture --"
cap llama -- python3 "$HERE/llama_block.py" plain 3
python3 "$HERE/capture_any.py" plain "$DIR/llama.json" "$DIR/llama.ana.json" || fail=1
"$KPROF" analyze -g op -n 8 "$DIR/llama.json"

echo "== (b) the same under emit_nvtx(record_shapes=True) vs torch.profiler"
cap llama_nvtx -- python3 "$HERE/llama_block.py" nvtx 3
python3 "$HERE/llama_block.py" profiler 3 "$DIR/llama_prof.json" >"$DIR/llama_prof.out" 2>&1 || bad "profiler run"
"$KPROF" analyze --format json -g op -n 0 "$DIR/llama_prof.json" >"$DIR/llama_prof.ana.json" 2>/dev/null || bad "analyze profiler trace"
python3 "$HERE/capture_any.py" nvtx "$DIR/llama_nvtx.ana.json" "$DIR/llama_prof.ana.json" || fail=1
"$KPROF" analyze -g annotation -n 8 "$DIR/llama_nvtx.json" 2>/dev/null || true

echo "== overhead: traced / untraced (min of 3 timed loops each)"
ms() { grep -o 'ms_per_iter [0-9.]*' "$1" | awk '{print $2}'; }
for kind in gemm:30 launch:200; do
	k=${kind%%:*} n=${kind##*:}
	python3 "$HERE/overhead.py" "$k" "$n" >"$DIR/ov_$k.u" 2>&1
	"$KPROF" capture -o "$DIR/ov_$k.json" -- python3 "$HERE/overhead.py" "$k" "$n" >"$DIR/ov_$k.t" 2>"$DIR/ov_$k.terr"
	"$KPROF" capture --no-blas --no-nvtx -o "$DIR/ov_$k.nb.json" -- python3 "$HERE/overhead.py" "$k" "$n" >"$DIR/ov_$k.nb" 2>&1
	u=$(ms "$DIR/ov_$k.u") t=$(ms "$DIR/ov_$k.t") nb=$(ms "$DIR/ov_$k.nb")
	echo "overhead $k: untraced $u ms/iter, traced $t ms/iter, traced without interposition $nb ms/iter," \
		"ratio $(python3 -c "print('%.3f' % ($t/$u))") (without interposition $(python3 -c "print('%.3f' % ($nb/$u))"))"
done
echo "== per-call cost of interposition: 20000 tiny cublasGemmEx calls"
for mode in "" "--no-blas --no-nvtx"; do
	"$KPROF" capture $mode -o "$DIR/small.json" -- "$GEMM_PROG" 0 20000 >"$DIR/small.out" 2>/dev/null
	echo "capture ${mode:-(default)}: $(grep small-calls "$DIR/small.out")"
done
KPROF_SHIM_EXTCORR=on "$KPROF" capture -o "$DIR/small.json" -- "$GEMM_PROG" 0 20000 >"$DIR/small.out" 2>/dev/null
echo "capture, KPROF_SHIM_EXTCORR=on: $(grep small-calls "$DIR/small.out")"
"$GEMM_PROG" 0 20000 | grep small-calls | sed 's/^/untraced: /'
[ $fail -eq 0 ] && echo "capture_any: PASS" || echo "capture_any: FAIL"
exit $fail
