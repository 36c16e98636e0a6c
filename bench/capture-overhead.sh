#!/bin/bash
# bench/capture-overhead.sh — the cost of `kprof capture -- <cmd>` on a GPU: traced / untraced
# time of tests/gpu/overhead.py (one 8192^3 bf16 GEMM per iteration; 50 tiny GEMMs + 50
# elementwise kernels per iteration) and the per-call cost of kprof-shim.so's interposition
# (tests/gpu/gemm_prog: 20000 16x16x16 cublasGemmEx calls, host ns per call).  Each mode runs
# ROUNDS times interleaved with the others; the best time of each counts.  Builds nothing
# (build/kprof, build/*.so, build/gemm_prog); prints a markdown block to append to
# bench/RESULTS.md.
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
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", a - b }'; }
declare -A res
for k in gemm:20 launch:200; do
	kind=${k%%:*} n=${k##*:}
	for r in $(seq "$R"); do
		python3 "$PYDIR/overhead.py" "$kind" "$n" >"$T/u" 2>&1; echo "$(ms "$T/u")" >>"$T/$kind.untraced"
		"$KPROF" capture -o "$T/t.json" -- python3 "$PYDIR/overhead.py" "$kind" "$n" >"$T/t" 2>/dev/null
		echo "$(ms "$T/t")" >>"$T/$kind.traced"
		"$KPROF" capture --no-blas --no-nvtx -o "$T/t.json" -- python3 "$PYDIR/overhead.py" "$kind" "$n" >"$T/t" 2>/dev/null
		echo "$(ms "$T/t")" >>"$T/$kind.cupti_only"
		LD_PRELOAD=$SHIM python3 "$PYDIR/overhead.py" "$kind" "$n" >"$T/t" 2>&1
		echo "$(ms "$T/t")" >>"$T/$kind.shim_only"
	done
done
for r in $(seq "$R"); do
	"$GEMM_PROG" 0 20000 >"$T/p"; ns "$T/p" >>"$T/call.untraced"
	LD_PRELOAD=$SHIM "$GEMM_PROG" 0 20000 >"$T/p"; ns "$T/p" >>"$T/call.shim_only"
	"$KPROF" capture -o "$T/t.json" -- "$GEMM_PROG" 0 20000 >"$T/p" 2>/dev/null; ns "$T/p" >>"$T/call.traced"
	"$KPROF" capture --no-blas --no-nvtx -o "$T/t.json" -- "$GEMM_PROG" 0 20000 >"$T/p" 2>/dev/null
	ns "$T/p" >>"$T/call.cupti_only"
done
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
echo "## capture-overhead $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo
echo "- machine: $gpu, $(nproc) CPUs; torch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null)"
echo "- commit: $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
echo "- command: \`bench/capture-overhead.sh $R\` (best of $R interleaved rounds per mode)"
echo "- modes: untraced; traced = \`kprof capture -- cmd\` (CUPTI + kprof-shim.so); cupti only ="
echo "  \`--no-blas --no-nvtx\`; shim only = \`LD_PRELOAD=kprof-shim.so cmd\` without kprof"
echo
echo "| workload | untraced | traced | cupti only | shim only | traced/untraced | cupti only/untraced | shim only/untraced |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for w in gemm launch call; do
	u=$(best <"$T/$w.untraced") t=$(best <"$T/$w.traced") c=$(best <"$T/$w.cupti_only") s=$(best <"$T/$w.shim_only")
	unit=$([ $w = call ] && echo "ns/call" || echo "ms/iter")
	label=$([ $w = gemm ] && echo "8192^3 bf16 mm" || { [ $w = launch ] && echo "50 tiny mm + 50 mul_" || echo "16^3 cublasGemmEx (C)"; })
	printf '| %s (%s) | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$unit" "$u" "$t" "$c" "$s" \
		"$(div "$t" "$u")" "$(div "$c" "$u")" "$(div "$s" "$u")"
done
u=$(best <"$T/call.untraced") s=$(best <"$T/call.shim_only") t=$(best <"$T/call.traced") c=$(best <"$T/call.cupti_only")
printf '\n- interposition per call: shim only - untraced = %s ns; traced - cupti only = %s ns\n' \
	"$(sub "$s" "$u")" "$(sub "$t" "$c")"
rm -rf "$T"
