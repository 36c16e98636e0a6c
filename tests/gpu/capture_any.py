"""tests/gpu/capture_any.py — checks of issue 7 on traces made by tests/gpu/capture_any.sh.

    capture_any.py gemmprog  TRACE ANALYZE.json PROG.out   # (e) exact FLOPs per library call
    capture_any.py plain     TRACE ANALYZE.json            # (a) GEMM time under library ops
    capture_any.py nvtx      NVTX_ANALYZE.json PROFILER_ANALYZE.json [NVTX_ANALYZE.err]  # (b) per-op FLOPs
    capture_any.py graph     TRACE ANALYZE.json REPLAYS   # graph replays under the capturing ops
    capture_any.py coverage  TRACE ANALYZE.json nvtx|plain  # (c) replayed kernel time under ops
"""
import json
import re
import sys
from collections import defaultdict

fails = []


def check(ok, msg):
    print(("ok:   " if ok else "FAIL: ") + msg)
    if not ok:
        fails.append(msg)


def gemm_args(e):
    g = e["args"].get("kprof gemm", "")
    v = dict(kv.split("=") for kv in g.split())
    return int(v["m"]), int(v["n"]), int(v["k"]), int(v["batch"])


def sdpa_flops(e):
    """The closed form of a cuDNN attention graph's op ("kprof sdpa"): 2*b*h*(d+dv) per
    query-key pair forward, 2*b*h*(3d+2dv) backward; causal pairs top-left."""
    v = {k: int(x) for k, x in (kv.split("=") for kv in e["args"]["kprof sdpa"].split())}
    sq, sk = v["sq"], v["sk"]
    n = min(sq, sk)
    pairs = n * (n + 1) // 2 + max(sq - sk, 0) * sk if v["causal"] else sq * sk
    per = 3 * v["d"] + 2 * v["dv"] if v["bwd"] else v["d"] + v["dv"]
    return 2 * v["b"] * v["h"] * per * pairs


def closed_form(e):
    """FLOPs of one library op by its own closed form: GEMMs 2*m*n*k*batch, cuDNN attention
    graphs as sdpa_flops(), other cuDNN graphs (cudnn::graph) none."""
    if "kprof sdpa" in e["args"]:
        return sdpa_flops(e)
    if "kprof gemm" in e["args"]:
        m, n, k, b = gemm_args(e)
        return 2 * m * n * k * b
    return 0


def library_ops(trace):
    """Library ops, kernels, and op External id -> its kernels, linked as kprof's link.c does:
    kernel -> launch by correlation -> the library op enclosing the launch on its thread."""
    ev = trace["traceEvents"]
    ops = [e for e in ev if e.get("cat") == "cpu_op" and "kprof library call" in e.get("args", {})]
    kern = [e for e in ev if e.get("cat") == "kernel"]
    launch = {e["args"]["correlation"]: e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")}
    per_thread = defaultdict(list)
    for o in ops:
        per_thread[(o["pid"], o["tid"])].append(o)
    by_ext = defaultdict(list)
    for k in kern:
        l = launch.get(k["args"]["correlation"])
        if not l:
            continue
        for o in per_thread.get((l["pid"], l["tid"]), ()):
            if o["ts"] <= l["ts"] <= o["ts"] + o["dur"]:
                by_ext[o["args"]["External id"]].append(k)
                k["_lib"] = o["args"]["External id"]
                break
    return ops, kern, by_ext


def rows(ana):
    return ana["rows"]


def flops_by_name(ana):
    out = defaultdict(int)
    for r in rows(ana):
        if r.get("flops") is not None:
            out[r["name"]] += int(r["flops"])
    return out


def gemmprog(trace_path, ana_path, out_path):
    t = json.load(open(trace_path))
    ana = json.load(open(ana_path))
    ops, kern, by_ext = library_ops(t)
    iters = int(re.search(r"^iters (\d+)$", open(out_path).read(), re.M).group(1))
    expect = {}
    for line in open(out_path):
        if line.startswith("call "):
            _, fn, op, m, n, k, b, fl = line.split()
            expect[fn] = (op, int(fl))
    seen = defaultdict(int)
    for e in ops:
        fn = e["args"]["kprof library call"]
        if fn not in expect or not by_ext.get(e["args"]["External id"]):
            continue
        op, fl = expect[fn]
        m, n, k, b = gemm_args(e)
        check(e["name"] == op and 2 * m * n * k * b == fl, f"{fn}: {e['name']} m={m} n={n} k={k} "
              f"batch={b}, closed form {fl}")
        seen[fn] += 1
    for fn in expect:
        check(seen[fn] == iters, f"{fn}: {seen[fn]} calls with kernels recorded, {iters} made")
    want = iters * sum(fl for _, fl in expect.values())
    got = ana["totals"]["flops"]
    check(got == want, f"analyze total FLOPs {got} == sum of closed forms {want}")
    custom = [k for k in kern if "saxpy_custom" in k["name"]]
    check(len(custom) == iters and all("_lib" not in k for k in custom),
          f"custom kernel: {len(custom)} launches, outside any library op")
    un = ana["totals"]["unlinked"]
    print(f"info: unlinked GPU events {un}")


GEMM_RE = re.compile(r"nvjet|gemm|cutlass|xmma", re.I)


def plain(trace_path, ana_path):
    t = json.load(open(trace_path))
    ana = json.load(open(ana_path))
    ops, kern, by_ext = library_ops(t)
    lib_ext = {e["args"]["External id"]: e for e in ops}
    gk = [k for k in kern if GEMM_RE.search(k["name"]) and "flash" not in k["name"].lower()]
    tot = sum(k["dur"] for k in gk)
    under = sum(k["dur"] for k in gk if k.get("_lib") in lib_ext)
    frac = under / tot if tot else 0
    check(tot > 0 and frac >= 0.95, f"GEMM kernel time under library ops: {100 * frac:.2f}% "
          f"of {tot / 1e3:.3f} ms ({len(gk)} kernels)")
    want = 0
    calls = defaultdict(int)
    for x, e in lib_ext.items():
        if by_ext.get(x):
            want += closed_form(e)
            calls[e["args"]["kprof library call"] + " -> " + e["name"]] += 1
    print("info: library calls with kernels:", dict(calls))
    sdpa = [e for x, e in lib_ext.items() if by_ext.get(x) and "kprof sdpa" in e["args"]]
    if sdpa:
        print("info: cuDNN attention graphs:", sorted({e["args"]["kprof sdpa"].rsplit(" status", 1)[0]
                                                     for e in sdpa}))
    other = {e["args"]["kprof cudnn graph"] for e in lib_ext.values() if "kprof cudnn graph" in e["args"]}
    if other:
        print("info: cuDNN graphs without a model (cudnn::graph):", sorted(other))
    got = ana["totals"]["flops"]
    check(got == want, f"analyze total FLOPs {got} == sum of the calls' closed forms (GEMMs "
          f"2*m*n*k*batch, cuDNN attention) {want}")


def nvtx(nv_path, prof_path, nv_err=None):
    """(b): per-op FLOPs of the modelled ops, emit_nvtx capture vs torch.profiler.  emit_nvtx
    records no is_causal: kprof takes it from the cuDNN graph executed inside the op, or from
    FlashAttention kernel names, else counts the op dense and warns (NV_ERR, kprof analyze's
    stderr); such an op is a gap, not a pass."""
    a = flops_by_name(json.load(open(nv_path)))
    b = flops_by_name(json.load(open(prof_path)))
    err = open(nv_err).read() if nv_err else ""
    names = sorted(n for n in set(a) | set(b) if re.search(
        r"^aten::(mm|addmm|bmm|baddbmm|_?convolution.*|.*scaled_dot_product.*|.*attention.*)$", n))
    check(any(re.search(r"mm$", n) for n in names), "modelled matmul ops present")
    for n in names:
        assumed = re.search(re.escape(f"op '{n}'") + r"[^\n]*assume is_causal=False", err)
        if "attention" in n and assumed and a.get(n) != b.get(n):
            print(f"gap:  {n}: is_causal unknown under emit_nvtx (its kernels' names do not say): "
                  f"counted dense, {a.get(n)} vs torch.profiler {b.get(n)}")
            continue
        check(a.get(n) == b.get(n), f"{n}: FLOPs emit_nvtx capture {a.get(n)} vs torch.profiler {b.get(n)}"
              + ("" if "attention" not in n else " (counted dense: is_causal unknown)" if assumed
                 else " (is_causal from the cuDNN graph executed inside or the kernel names)"))


def graph(trace_path, ana_path, replays):
    t = json.load(open(trace_path))
    ana = json.load(open(ana_path))
    replays = int(replays)
    ops, kern, by_ext = library_ops(t)
    rep = {e["args"]["External id"]: e for e in ops if "kprof graph replay of" in e["args"]}
    for k in kern:
        x = k["args"].get("External id")
        if x in rep:
            by_ext[x].append(k)
    gk = [k for k in kern if "graph node id" in k["args"] and GEMM_RE.search(k["name"])]
    tot = sum(k["dur"] for k in gk)
    under = sum(k["dur"] for k in gk if k["args"].get("External id") in rep)
    frac = under / tot if tot else 0
    check(tot > 0 and frac >= 0.95, f"replayed GEMM kernel time under replay ops: {100 * frac:.2f}% "
          f"of {tot / 1e3:.3f} ms ({len(gk)} kernels)")
    per_orig = defaultdict(int)
    for e in rep.values():
        per_orig[e["args"]["kprof graph replay of"]] += 1
    check(per_orig and all(v == replays for v in per_orig.values()),
          f"each captured library op has one replay op per replay ({replays}): {sorted(set(per_orig.values()))}"
          f" over {len(per_orig)} captured ops")
    want = 0
    for x, e in {**{o["args"]["External id"]: o for o in ops}}.items():
        if by_ext.get(x):
            want += closed_form(e)
    got = ana["totals"]["flops"]
    check(got == want, f"analyze total FLOPs {got} == sum of the closed forms over eager calls and replays {want}")


def convprog(trace_path, ana_path, out_path):
    t = json.load(open(trace_path))
    ana = json.load(open(ana_path))
    ops, kern, by_ext = library_ops(t)
    out = open(out_path).read()
    iters = int(re.search(r"^iters (\d+)$", out, re.M).group(1))
    per = int(re.search(r"flops_per_call (\d+)", out).group(1))
    calls = defaultdict(int)
    for e in ops:
        if by_ext.get(e["args"]["External id"]):
            calls[(e["args"]["kprof library call"], e["name"])] += 1
    print("info: cuDNN calls with kernels:", dict(calls))
    want = {("cudnnConvolutionForward", "aten::convolution"): iters,
            ("cudnnConvolutionBackwardData", "aten::convolution_backward"): iters,
            ("cudnnConvolutionBackwardFilter", "aten::convolution_backward"): iters}
    check(dict(calls) == want, f"forward, backward-data and backward-filter calls: {iters} each, as conv ops")
    got = ana["totals"]["flops"]
    check(got == 3 * iters * per, f"analyze total FLOPs {got} == 3 x {iters} x 2*N*K*(C/g)*R*S*P*Q ({3 * iters * per})")


def coverage(trace_path, ana_path, mode="plain"):
    """(c): the share of replayed kernel time (graph node id set) whose External id is a cpu_op,
    for torch.compile(mode="reduce-overhead") inference, by the kind of op it names: a library
    call, an aten op (emit_nvtx), an Inductor Triton launch (emit_nvtx: Inductor wraps each
    launch in _RecordFunctionFast(kernel name) while a profiler is on, emit_nvtx included), or
    another op.  The target (>= 90%) applies to mode "nvtx" (the script under
    emit_nvtx(record_shapes=True)); mode "plain" is printed: there the Triton kernels run outside
    any library call or range kprof sees (cuDNN's graph-API attention is a library call)."""
    t = json.load(open(trace_path))
    ops = {e["args"]["External id"]: e for e in t["traceEvents"] if e.get("cat") == "cpu_op"}
    kern = [e for e in t["traceEvents"] if e.get("cat") == "kernel" and "graph node id" in e["args"]]
    tot = sum(k["dur"] for k in kern)
    under = sum(k["dur"] for k in kern if k["args"].get("External id") in ops)
    by = defaultdict(float)
    for k in kern:
        o = ops.get(k["args"].get("External id"))
        kind = ("none" if o is None else "library call" if "kprof library call" in o["args"] else
                "aten op" if o["name"].startswith("aten::") else
                "triton launch" if o["name"].startswith("triton_") else "other op")
        by[kind] += k["dur"]
    g = [k for k in kern if GEMM_RE.search(k["name"])]
    gu = sum(k["dur"] for k in g if k["args"].get("External id") in ops)
    gt = sum(k["dur"] for k in g)
    share = under / tot if tot else 0
    print(f"info: [{mode}] replayed kernels {len(kern)}, {tot / 1e3:.3f} ms; under ops {100 * share:.1f}% ("
          + ", ".join(f"{n} {100 * v / tot:.1f}%" for n, v in sorted(by.items(), key=lambda x: -x[1]))
          + f"); GEMM kernels {len(g)}, {100 * gu / gt if gt else 0:.1f}% of their time under ops")
    check(tot > 0, f"[{mode}] torch.compile reduce-overhead replays recorded")
    if mode == "nvtx":
        check(share >= 0.90, f"(c) [emit_nvtx] {100 * share:.1f}% of replayed kernel time under ops (target 90%)")
    elif share < 0.90:
        print(f"gap:  (c) [plain] {100 * share:.1f}% of replayed kernel time under ops: Triton kernels are "
              "launched outside any library call or NVTX range (the emit_nvtx run above meets the target)")


if __name__ == "__main__":
    {"gemmprog": gemmprog, "plain": plain, "nvtx": nvtx, "graph": graph,
     "coverage": coverage, "convprog": convprog}[sys.argv[1]](*sys.argv[2:])
    sys.exit(1 if fails else 0)
