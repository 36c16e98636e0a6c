#!/bin/bash
# bench/capture-overhead.sh — the cost of `kprof capture -- <cmd>` on a GPU: traced / untraced
# time of tests/gpu/overhead.py (one 8192^3 bf16 GEMM per iteration; 50 tiny GEMMs + 50
# elementwise kernels per iteration) and the per-call cost of kprof-shim.so's interposition
# (tests/gpu/gemm_prog: 20000 16x16x16 cublasGemmEx calls, host ns per call).  Modes: untraced;
# traced (`kprof capture --`, --trace-api launch); all (--trace-api all); none (--trace-api
# none: CUPTI's floor); shim only (LD_PRELOAD=kprof-shim.so, no kprof); kineto (the Python
# loops under torch.profiler with CUDA activities).  Each mode runs ROUNDS times interleaved
# with the others; the best time of each counts.  Builds nothing (build/kprof, build/*.so,
# build/gemm_prog); prints a markdown block to append to bench/RESULTS.md.
#   bench/capture-overhead.sh [ROUNDS]
set -u
KPROF=${KPROF:-build/kprof}
GEMM_PROG=${GEMM_PROG:-build/gemm_prog}
PYDIR=${PYDIR:-tests/gpu}
SHIM=$(dirname "$KPROF")/kprof-shim.so
R=${1:-3}
T=$(mktemp -d)
export LC_ALL=C
ms() { grep -o 'ms_per_iter [0-9.]*' "$1" | awk '{print $2}'; }
ns() { grep -o 'host_ns_per_call [0-9.]*' "$1" | awk '{print $2}'; }
best() { sort -g | head -1; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
cap() { "$KPROF" capture -o "$T/t.json" "$@" 2>/dev/null; }
modes="untraced traced all none shim kineto"
# mode workload-command...: the command of one mode
one() {
	local m=$1; shift
	case $m in
	untraced) "$@" ;;
	traced) cap -- "$@" ;;
	all) cap --trace-api all -- "$@" ;;
	none) cap --trace-api none -- "$@" ;;
	shim) LD_PRELOAD=$SHIM "$@" ;;
	kineto) [ "$1" = python3 ] && "$@" kineto-cuda ;;
	esac
}
for r in $(seq "$R"); do
	for kind in gemm:20 launch:200; do
		k=${kind%%:*} n=${kind##*:}
		for m in $modes; do
			one $m python3 "$PYDIR/overhead.py" "$k" "$n" >"$T/o" 2>/dev/null && ms "$T/o" >>"$T/$k.$m"
		done
	done
	for m in $modes; do
		one $m "$GEMM_PROG" 0 20000 >"$T/o" 2>/dev/null && ns "$T/o" >>"$T/call.$m"
	done
done
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
echo "## capture-overhead $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo
echo "- machine: $gpu, $(nproc) CPUs; torch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)"
echo "- commit: $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
echo "- command: \`bench/capture-overhead.sh $R\` (best of $R interleaved rounds per mode)"
echo "- modes: untraced; traced = \`kprof capture -- cmd\` (--trace-api launch + kprof-shim.so);"
echo "  all = \`--trace-api all\`; none = \`--trace-api none\` (CUPTI's floor); shim = LD_PRELOAD"
echo "  kprof-shim.so without kprof; kineto = torch.profiler(activities=[CUDA]) around the loop"
echo
echo "| workload | untraced | traced | all | none | shim | kineto | traced/u | all/u | none/u | shim/u | kineto/u |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for w in gemm launch call; do
	u=$(best <"$T/$w.untraced")
	row="" rat=""
	for m in traced all none shim kineto; do
		v=$([ -s "$T/$w.$m" ] && best <"$T/$w.$m" || echo -)
		row="$row | $v"
		rat="$rat | $([ "$v" = - ] && echo - || div "$v" "$u")"
	done
	unit=$([ $w = call ] && echo "ns/call" || echo "ms/iter")
	label=$([ $w = gemm ] && echo "8192^3 bf16 mm" || { [ $w = launch ] && echo "50 tiny mm + 50 mul_" || echo "16^3 cublasGemmEx (C)"; })
	echo "| $label ($unit) | $u$row$rat |"
done
rm -rf "$T"
