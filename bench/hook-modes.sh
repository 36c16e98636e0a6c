#!/bin/bash
# bench/hook-modes.sh — where the torch hook's step-time cost goes (issue 24's 1.5x goal):
# tests/gpu/cnn_train.py and tests/gpu/llama_block.py (bf16, fwd+bwd), best of ROUNDS runs of
# ITERS steps, runs interleaved: plain; emit_nvtx with and without record_shapes and no tool;
# `kprof capture --torch off`; `kprof capture` with the hook (hook) and with
# --no-torch-shapes (light); torch.profiler(record_shapes=True).  Prints ms/step and the ratio to plain.  On the GPU machine.
#   bench/hook-modes.sh [OUTDIR] [ROUNDS] [ITERS] [MODES...]
set -u
KPROF=${KPROF:-build/kprof}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}/hook_modes
R=${2:-3}
N=${3:-30}
shift 3 2>/dev/null
MODES=${*:-plain nvtx0 nvtx off hook light prof}
G=tests/gpu
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1 CNN_DTYPE=bf16
run() { # prog mode round
	local py=$G/$1.py o=$DIR/$1.$2.$3
	case $2 in
	plain | nvtx0 | nvtx) python3 "$py" "$2" "$N" >"$o" 2>&1 ;;
	prof) python3 "$py" profiler "$N" "$DIR/$1.prof.json" >"$o" 2>&1 ;;
	off) "$KPROF" capture --torch off -o "$DIR/$1.off.json" -- python3 "$py" plain "$N" >"$o" 2>&1 ;;
	hook) "$KPROF" capture -o "$DIR/$1.hook.json" -- python3 "$py" plain "$N" >"$o" 2>&1 ;;
	light) "$KPROF" capture --no-torch-shapes -o "$DIR/$1.light.json" -- python3 "$py" plain "$N" >"$o" 2>&1 ;;
	esac
}
for prog in cnn_train llama_block; do
	for r in $(seq "$R"); do for m in $MODES; do run $prog $m $r; done; done
done
printf '| program |'; for m in $MODES; do printf ' %s |' "$m"; done; echo
for prog in cnn_train llama_block; do
	printf '| %s |' $prog
	base=
	for m in $MODES; do
		b=$(for r in $(seq "$R"); do grep -o 'step_ms [0-9.]*' "$DIR/$prog.$m.$r" | awk '{print $2}'; done | sort -g | head -1)
		[ -z "$base" ] && base=$b
		awk -v b="$b" -v p="$base" 'BEGIN { if (b == "") printf " fail |"; else printf " %.2f (%.2fx) |", b, b / p }'
	done
	echo
done
