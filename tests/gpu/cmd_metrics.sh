#!/bin/bash
# tests/gpu/cmd_metrics.sh — kprof capture --metrics -- <cmd> (issue 7 (e)): tests/gpu/metrics_prog
# (a bf16 4096^3 cublasGemmEx and four custom kernels of known FP work: fp32 FFMA, fp32
# FADD + FMUL, fp64 DFMA, fp16 HFMA2) under injection with the range profiler.  Checks: the
# GEMM's modelled FLOPs are exactly 2*M*N*K and its measured tensor FLOPs within 2% of that;
# each custom kernel's measured FLOPs of its precision are the program's count within 1% and
# kprof analyze shows them flagged 'measured'; with ncu on the PATH, the same program under
# ncu's smsp__sass_thread_inst_executed_op_* counters gives each custom kernel the same FLOPs
# (2 x fma + add + mul) as kprof within 0.1%.  Builds nothing (build/kprof, build/*.so,
# build/metrics_prog).
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
NCU=$(command -v ncu || true)
if [ -n "$NCU" ]; then
	S=smsp__sass_thread_inst_executed_op_
	M=
	for p in f d h; do for o in fma add mul; do M=$M,${S}$p${o}_pred_on.sum; done; done
	"$NCU" --metrics "${M#,}" --csv --print-units base "$PROG" >"$DIR/ncu.csv" 2>"$DIR/ncu.err" ||
		{ echo "FAIL: ncu exited $?"; cat "$DIR/ncu.err"; exit 1; }
fi
python3 - "$DIR/t.json" "$DIR/t.analyze.json" "$DIR/t.out" "$DIR/ncu.csv" <<'PY'
import csv, json, os, sys
t = json.load(open(sys.argv[1]))
ana = json.load(open(sys.argv[2]))
out = open(sys.argv[3]).read().split("\n")
fails = []
def check(ok, msg):
    print(("ok:   " if ok else "FAIL: ") + msg)
    if not ok:
        fails.append(msg)
g = next(l.split() for l in out if l.startswith("gemm "))
gemm_flops = int(g[5])
custom = {}   # name -> (precision, flops)
for l in out:
    f = l.split()
    if len(f) == 8 and f[0] == "kernel":
        custom[f[1]] = (f[3], int(f[7]))
check(len(custom) == 4, f"the program names 4 custom kernels ({sorted(custom)})")
kern = [e for e in t["traceEvents"] if e.get("cat") == "kernel"]
def custom_of(name):
    return next((c for c in custom if name.startswith(c)), None)
for k in kern:
    a = k["args"]
    prec = {p: a.get("kprof measured flops " + p) for p in ("tensor_bf16", "fp32", "fp64", "fp16")}
    print(f'kernel {k["name"][:48]:48s} dur {k["dur"]:10.1f} us  measured flops {a.get("kprof measured flops")}'
          f'  {" ".join(f"{p} {v}" for p, v in prec.items() if v is not None)}'
          f'  dram {a.get("kprof dram bytes")}  sm MHz {a.get("kprof measured sm clock mhz")}')
check(kern and all("kprof dram bytes" in k["args"] for k in kern), "every kernel carries measured counters")
gk = [k for k in kern if not custom_of(k["name"])]
measured = {}
for c, (prec, want) in sorted(custom.items()):
    ks = [k for k in kern if custom_of(k["name"]) == c]
    if len(ks) != 1:
        check(False, f"one {c} kernel (found {len(ks)})")
        continue
    a = ks[0]["args"]
    got = a.get("kprof measured flops " + prec)
    measured[c] = got
    check(got is not None and abs(got - want) <= 0.01 * want,
          f"{c}: measured {prec} FLOPs {got} vs {want} executed ({got / want if got else 0:.5f}, within 1%)")
    # the total may hold a few other FLOPs: the compiler moves registers with HFMA2.MMA, which
    # the hfma counter counts (ncu too), about one per thread
    tot = a.get("kprof measured flops")
    check(tot is not None and abs(tot - want) <= 0.01 * want,
          f"{c}: total measured FLOPs {tot} ({', '.join(f'{p} {a[q]}' for q in a if q.startswith('kprof measured flops ') for p in [q[21:]])}) within 1% of {want}")
tb = sum(k["args"].get("kprof measured flops tensor_bf16", 0) for k in gk)
check(abs(tb - gemm_flops) <= 0.02 * gemm_flops, f"GEMM kernels' measured tensor bf16 FLOPs {tb} vs 2*M*N*K {gemm_flops} (within 2%)")
rows = ana["rows"]
for c, (prec, want) in sorted(custom.items()):
    fr = [r for r in rows if custom_of(r["name"]) == c]
    check(len(fr) == 1 and "measured" in (fr[0].get("flags") or "") and fr[0].get("flops") is not None and
          abs(fr[0]["flops"] - want) <= 0.01 * want,
          f"analyze: {c} flops {fr[0].get('flops') if fr else None} flagged {fr[0].get('flags') if fr else None}")
gr = [r for r in rows if not custom_of(r["name"]) and r.get("flops")]
check(sum(r["flops"] for r in gr) == gemm_flops and all(r.get("measured_flops_per_s") for r in gr),
      f"analyze: GEMM modelled FLOPs {sum(r['flops'] for r in gr)} == {gemm_flops} exactly, with mTFLOP/s")
if os.path.exists(sys.argv[4]) and os.path.getsize(sys.argv[4]):
    lines = open(sys.argv[4]).read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    val = {}
    for r in csv.DictReader(lines[start:]):
        c = custom_of(r["Kernel Name"])
        if c:
            val.setdefault(c, {})[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
    S = "smsp__sass_thread_inst_executed_op_"
    for c, (prec, want) in sorted(custom.items()):
        v = val.get(c, {})
        p = {"fp32": "f", "fp64": "d", "fp16": "h"}[prec]
        cnt = [v.get(f"{S}{p}{o}_pred_on.sum") for o in ("fma", "add", "mul")]
        if None in cnt:
            check(False, f"ncu: {c}: counters {cnt}")
            continue
        nf = 2 * cnt[0] + cnt[1] + cnt[2]
        got = measured.get(c)
        check(got is not None and abs(got - nf) <= 0.001 * nf,
              f"ncu: {c}: {p}fma {cnt[0]:.0f} {p}add {cnt[1]:.0f} {p}mul {cnt[2]:.0f} -> {nf:.0f} {prec} FLOPs; "
              f"kprof {got} ({got / nf if got else 0:.5f}, within 0.1%)")
else:
    print("SKIP: ncu not on the PATH: no comparison with ncu's counters")
print("cmd_metrics:", "FAIL" if fails else "PASS")
sys.exit(1 if fails else 0)
PY
