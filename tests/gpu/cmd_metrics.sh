#!/bin/bash
# tests/gpu/cmd_metrics.sh — kprof capture --metrics -- <cmd> (issue 7 (e)): tests/gpu/metrics_prog
# (a bf16 4096^3 cublasGemmEx and a custom kernel of 1024 FP32 FMAs per thread) under injection
# with the range profiler.  Checks: the GEMM's modelled FLOPs are exactly 2*M*N*K and its
# measured tensor FLOPs within 2% of that; the custom kernel's measured FLOPs are the program's
# count within 1% and kprof analyze shows them flagged 'measured'.  Builds nothing
# (build/kprof, build/*.so, build/metrics_prog).
#   tests/gpu/cmd_metrics.sh [OUTDIR]
set -u
KPROF=${KPROF:-build/kprof}
PROG=${METRICS_PROG:-build/metrics_prog}
DIR=${1:-${OUT:-/tmp/kprof-gpu}/cmd_metrics}
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1
s0=$(date +%s%N)
"$PROG" >"$DIR/plain.out" 2>&1 || { echo "FAIL: $PROG alone"; cat "$DIR/plain.out"; exit 1; }
s1=$(date +%s%N)
"$KPROF" capture --metrics -o "$DIR/t.json" -- "$PROG" >"$DIR/t.out" 2>"$DIR/t.err"
rc=$?
s2=$(date +%s%N)
cat "$DIR/t.out" "$DIR/t.err"
echo "wall: program alone $(( (s1 - s0) / 1000000 )) ms, under capture --metrics $(( (s2 - s1) / 1000000 )) ms"
[ $rc -eq 0 ] || { echo "FAIL: capture --metrics -- $PROG exited $rc"; exit 1; }
"$KPROF" analyze -g kernel -n 8 "$DIR/t.json" | tee "$DIR/t.analyze"
"$KPROF" analyze -g kernel -f json -n 0 "$DIR/t.json" >"$DIR/t.analyze.json" ||
	{ echo "FAIL: analyze -f json"; exit 1; }
python3 - "$DIR/t.json" "$DIR/t.analyze.json" "$DIR/t.out" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ana = json.load(open(sys.argv[2]))
out = open(sys.argv[3]).read().split("\n")
fails = []
def check(ok, msg):
    print(("ok:   " if ok else "FAIL: ") + msg)
    if not ok:
        fails.append(msg)
g = next(l.split() for l in out if l.startswith("gemm "))
f = next(l.split() for l in out if l.startswith("fma_loop "))
gemm_flops, fma_flops = int(g[5]), int(f[6])
kern = [e for e in t["traceEvents"] if e.get("cat") == "kernel"]
for k in kern:
    a = k["args"]
    print(f'kernel {k["name"][:60]:60s} dur {k["dur"]:10.1f} us  measured flops {a.get("kprof measured flops")}'
          f'  tensor_bf16 {a.get("kprof measured flops tensor_bf16")}  fp32 {a.get("kprof measured flops fp32")}'
          f'  dram {a.get("kprof dram bytes")}  sm MHz {a.get("kprof measured sm clock mhz")}')
check(kern and all("kprof dram bytes" in k["args"] for k in kern), "every kernel carries measured counters")
fk = [k for k in kern if k["name"].startswith("fma_loop")]
gk = [k for k in kern if not k["name"].startswith("fma_loop")]
check(len(fk) == 1, "one fma_loop kernel")
gaps = []
if fk:
    m = fk[0]["args"].get("kprof measured flops")
    if m is None:
        # the smsp__sass_* FP counters read 0 under the range profiler (H200, CUPTI 13): kprof
        # writes no FLOPs rather than a wrong 0.  Issue 7 (e) stays open on this.
        gaps.append("fma_loop: no measured FLOPs (SASS FP counters read 0 under the range profiler)")
    else:
        check(abs(m - fma_flops) <= 0.01 * fma_flops, f"fma_loop measured FLOPs {m} vs {fma_flops} (within 1%)")
tb = sum(k["args"].get("kprof measured flops tensor_bf16", 0) for k in gk)
check(abs(tb - gemm_flops) <= 0.02 * gemm_flops, f"GEMM kernels' measured tensor bf16 FLOPs {tb} vs 2*M*N*K {gemm_flops} (within 2%)")
rows = ana["rows"]
fr = [r for r in rows if r["name"].startswith("fma_loop")]
gr = [r for r in rows if not r["name"].startswith("fma_loop") and r.get("flops")]
if gaps:
    check(len(fr) == 1 and fr[0].get("flops") is None,
          f"analyze: fma_loop without measured FLOPs shows none (flops {fr[0].get('flops') if fr else None})")
else:
    check(len(fr) == 1 and "measured" in (fr[0].get("flags") or "") and
          abs(fr[0]["flops"] - fma_flops) <= 0.01 * fma_flops,
          f"analyze: fma_loop flops {fr[0]['flops'] if fr else None} flagged {fr[0].get('flags') if fr else None}")
check(sum(r["flops"] for r in gr) == gemm_flops and all(r.get("measured_flops_per_s") for r in gr),
      f"analyze: GEMM modelled FLOPs {sum(r['flops'] for r in gr)} == {gemm_flops} exactly, with mTFLOP/s")
for g in gaps:
    print("GAP:  " + g)
print("cmd_metrics:", "FAIL" if fails else ("PASS with gaps" if gaps else "PASS"))
sys.exit(1 if fails else 0)
PY
