#!/bin/bash
# tests/gpu/compile_unlinked.sh — where the compiled llama block's unlinked GPU time comes from
# under the torch hook (tests/gpu/torch_hook.sh's torch.compile(mode="reduce-overhead") case):
# each unlinked kernel with the API call that launched it (cudaLaunchKernel, cuLaunchKernel,
# cudaGraphLaunch...), whether it was replayed from a CUDA graph, and the innermost kprof range
# open around its launch on that thread (kernels matched by name: a name both linked and
# unlinked, op null in -g kernel, is counted whole).  A diagnostic: prints a table, asserts nothing but that
# the capture ran.  Builds nothing (build/kprof, build/*.so, build/python/).
#   tests/gpu/compile_unlinked.sh [OUTDIR] [ITERS]
set -u
KPROF=${KPROF:-build/kprof}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}/compile_unlinked
N=${2:-3}
HERE=$(dirname "$0")
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1
"$KPROF" capture -o "$DIR/llama_compile.json" -- python3 "$HERE/llama_block.py" compile "$N" \
	>"$DIR/capture.out" 2>"$DIR/capture.err" || { tail "$DIR/capture.err"; echo FAIL; exit 1; }
"$KPROF" analyze -q -g kernel -f json -n 0 "$DIR/llama_compile.json" >"$DIR/kernels.json" || exit 1
python3 - "$DIR/llama_compile.json" "$DIR/kernels.json" <<'PY'
import bisect, collections, json, sys
t = json.load(open(sys.argv[1]))
rows = json.load(open(sys.argv[2]))["rows"]
# op null: a kernel name both linked and unlinked (src/analysis/analyze.c), e.g. linked while
# a CUDA graph was recorded and unlinked on its replays
unl = {r["name"] for r in rows if r.get("op") in ("(unlinked)", None)}
tot = sum(r["time_ns"] for r in rows)
ev = t["traceEvents"]
api = {}
for e in ev:
    if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
        # kernels carry the device's pid: by correlation id, the latest call before the kernel
        api.setdefault(e["args"]["correlation"], []).append(e)
rng = collections.defaultdict(list)  # (pid, tid) -> ranges
for e in ev:
    if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation", "python_function"):
        rng[(e["pid"], e["tid"])].append(e)
for v in rng.values():
    v.sort(key=lambda e: (e["ts"], -e["dur"]))
def inner(call):
    best = None
    for e in rng.get((call["pid"], call["tid"]), []):
        if e["ts"] > call["ts"]:
            break
        if e["ts"] + e["dur"] >= call["ts"] + call["dur"]:
            best = e
    return best
agg = collections.defaultdict(lambda: [0, 0.0])
for e in ev:
    if e.get("cat") != "kernel":
        continue
    name = e["name"]
    if name not in unl:
        continue
    a = e.get("args", {})
    calls = [c for c in api.get(a.get("correlation"), []) if c["ts"] <= e["ts"]]
    call = max(calls, key=lambda c: c["ts"]) if calls else None
    graph = "graph" if "graph id" in a else "-"
    cname = call["name"] if call else "(no call)"
    r = inner(call) if call else None
    rname = (r["cat"] + ":" + r["name"][:60]) if r else "(no range)"
    k = (cname, graph, rname, name[:50])
    agg[k][0] += 1
    agg[k][1] += e["dur"]
print("| us | kernels | launch call | graph | innermost range at launch | kernel |")
print("|---:|---:|---|---|---|---|")
for k, (n, us) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:25]:
    print(f"| {us:.1f} | {n} | {k[0]} | {k[1]} | {k[2]} | {k[3]} |")
print(f"unlinked kernel names: {len(unl)}; GPU time {tot} ns")
PY
