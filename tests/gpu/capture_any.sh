#!/bin/bash
# tests/gpu/capture_any.sh — issue 7 on a GPU: library calls and NVTX ranges of an unchanged
# program become ops.  (e) tests/gpu/gemm_prog (a plain CUDA program: cuBLAS, cuBLASLt, a custom
# kernel); (a) tests/gpu/llama_block.py under `kprof capture --`; (b) the same under
# emit_nvtx(record_shapes=True) against a torch.profiler trace of it, with SDPA's default backend and
# with FlashAttention; CUDA-graph replays of gemm_prog and of the block's forward; (c) the block under
# torch.compile(mode="reduce-overhead"), with and without emit_nvtx (bench/capture-overhead.sh
# measures the cost).  Builds nothing: build/kprof, build/*.so, build/gemm_prog and build/conv_prog (make builds both from tests/gpu/).
# Called by tests/gpu/run.sh.
#   tests/gpu/capture_any.sh [OUTDIR]
set -u
KPROF=${KPROF:-build/kprof}
GEMM_PROG=${GEMM_PROG:-build/gemm_prog}
CONV_PROG=${CONV_PROG:-build/conv_prog}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}
HERE=$(dirname "$0")
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
cap() { # name, capture args... -- cmd
	local name=$1
	shift
	# --torch off: these cases are the program's own NVTX (or none); tests/gpu/torch_hook.sh
	# runs them under kprof's torch hook
	"$KPROF" capture -o "$DIR/$name.json" --torch off "$@" >"$DIR/$name.out" 2>"$DIR/$name.err"
	local rc=$?
	tail -3 "$DIR/$name.err"
	[ $rc -eq 0 ] || { bad "capture $name exited $rc"; cat "$DIR/$name.err"; }
	"$KPROF" analyze --format json -g op -n 0 --warnings=all "$DIR/$name.json" >"$DIR/$name.ana.json" 2>"$DIR/$name.ana.err" ||
		bad "analyze $name"
}

echo "== (e) plain CUDA program: cuBLAS / cuBLASLt calls and a custom kernel"
cap gemmprog -- "$GEMM_PROG" 3
cat "$DIR/gemmprog.out"
python3 "$HERE/capture_any.py" gemmprog "$DIR/gemmprog.json" "$DIR/gemmprog.ana.json" "$DIR/gemmprog.out" || fail=1
"$KPROF" analyze -g op-shape -n 8 "$DIR/gemmprog.json"

echo "== cuDNN legacy convolutions (tests/gpu/conv_prog)"
cap convprog -- "$CONV_PROG" 2
cat "$DIR/convprog.out"
python3 "$HERE/capture_any.py" convprog "$DIR/convprog.json" "$DIR/convprog.ana.json" "$DIR/convprog.out" || fail=1

echo "== (a) llama block, bf16, fwd+bwd, under kprof capture --"
cap llama -- python3 "$HERE/llama_block.py" plain 3
python3 "$HERE/capture_any.py" plain "$DIR/llama.json" "$DIR/llama.ana.json" || fail=1
"$KPROF" analyze -g op -n 8 "$DIR/llama.json"

echo "== (b) the same under emit_nvtx(record_shapes=True) vs torch.profiler"
cap llama_nvtx -- python3 "$HERE/llama_block.py" nvtx 3
python3 "$HERE/llama_block.py" profiler 3 "$DIR/llama_prof.json" >"$DIR/llama_prof.out" 2>&1 || bad "profiler run"
"$KPROF" analyze --format json -g op -n 0 "$DIR/llama_prof.json" >"$DIR/llama_prof.ana.json" 2>/dev/null || bad "analyze profiler trace"
python3 "$HERE/capture_any.py" nvtx "$DIR/llama_nvtx.ana.json" "$DIR/llama_prof.ana.json" "$DIR/llama_nvtx.ana.err" || fail=1
"$KPROF" analyze -g annotation -n 4 "$DIR/llama_nvtx.json" || bad "analyze -g annotation"
echo "== (b) again with SDPA on FlashAttention (LLAMA_SDPA=flash): is_causal from the kernel names"
export LLAMA_SDPA=flash
cap llama_nvtx_flash -- python3 "$HERE/llama_block.py" nvtx 3
python3 "$HERE/llama_block.py" profiler 3 "$DIR/llama_prof_flash.json" >"$DIR/llama_prof_flash.out" 2>&1 || bad "profiler run (flash)"
unset LLAMA_SDPA
"$KPROF" analyze --format json -g op -n 0 "$DIR/llama_prof_flash.json" >"$DIR/llama_prof_flash.ana.json" 2>/dev/null || bad "analyze profiler trace (flash)"
python3 "$HERE/capture_any.py" nvtx "$DIR/llama_nvtx_flash.ana.json" "$DIR/llama_prof_flash.ana.json" "$DIR/llama_nvtx_flash.ana.err" || fail=1

echo "== a small CNN training loop (tests/gpu/cnn_train.py) under emit_nvtx(record_shapes=True) vs torch.profiler: conv backward FLOPs (issue 23, item 2)"
cap cnn_nvtx -- python3 "$HERE/cnn_train.py" nvtx 3
python3 "$HERE/cnn_train.py" profiler 3 "$DIR/cnn_prof.json" >"$DIR/cnn_prof.out" 2>&1 || bad "profiler run (cnn)"
"$KPROF" analyze --format json -g op -n 0 "$DIR/cnn_prof.json" >"$DIR/cnn_prof.ana.json" 2>/dev/null || bad "analyze profiler trace (cnn)"
grep -c "is not True or False" "$DIR/cnn_nvtx.ana.err" | sed 's/^/info: cnn_nvtx "transposed" warnings: /'
python3 "$HERE/capture_any.py" nvtx "$DIR/cnn_nvtx.ana.json" "$DIR/cnn_prof.ana.json" "$DIR/cnn_nvtx.ana.err" || fail=1
python3 - "$DIR/cnn_nvtx.ana.json" "$DIR/cnn_prof.ana.json" <<'PY' || fail=1
import json, sys
def conv_bwd(p):
    for r in json.load(open(p))["rows"]:
        if r.get("name") == "aten::convolution_backward":
            return r.get("flops")
a, b = conv_bwd(sys.argv[1]), conv_bwd(sys.argv[2])
ok = bool(a) and a == b
print(("ok:   " if ok else "FAIL: ") + f"aten::convolution_backward FLOPs: emit_nvtx capture {a}, torch.profiler {b}")
sys.exit(0 if ok else 1)
PY

echo "== CUDA graphs: replayed kernels under the op that created their node"
cap gprog -- "$GEMM_PROG" 1 0 4
grep graph-replays "$DIR/gprog.out"
python3 "$HERE/capture_any.py" graph "$DIR/gprog.json" "$DIR/gprog.ana.json" 4 || fail=1
cap llama_graph -- python3 "$HERE/llama_block.py" graph 3
python3 "$HERE/capture_any.py" graph "$DIR/llama_graph.json" "$DIR/llama_graph.ana.json" 3 || fail=1
"$KPROF" analyze -g op -n 6 "$DIR/llama_graph.json"
echo "== (c) torch.compile(mode=\"reduce-overhead\") inference: under emit_nvtx (the target), then plain"
cap llama_compile_nvtx -- python3 "$HERE/llama_block.py" compile_nvtx 3
python3 "$HERE/capture_any.py" coverage "$DIR/llama_compile_nvtx.json" "$DIR/llama_compile_nvtx.ana.json" nvtx || fail=1
cap llama_compile -- python3 "$HERE/llama_block.py" compile 3
python3 "$HERE/capture_any.py" coverage "$DIR/llama_compile.json" "$DIR/llama_compile.ana.json" plain || fail=1

[ $fail -eq 0 ] && echo "capture_any: PASS" || echo "capture_any: FAIL"
exit $fail
