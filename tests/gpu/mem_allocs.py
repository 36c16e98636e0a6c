"""tests/gpu/mem_allocs.py — who made each device allocation in a `kprof capture --memory
--trace-api all` trace: per [memory] allocation its size, the CUDA API call it happened in and
the innermost op (cpu_op / library op) on its thread; then the allocations live at the peak
of Total Reserved grouped by (API, op).  Used to explain capture --memory's peak reserved
against torch.cuda.max_memory_reserved() (issue 25).
    python3 tests/gpu/mem_allocs.py TRACE.json [PROG.out]
PROG.out: the output of `mem_prog.py STEPS BATCH segments`; the allocations live at the peak
that are none of torch's segments are listed."""
import bisect
import collections
import json
import sys

t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
api = collections.defaultdict(list)  # tid -> [(ts, end, name)]
ops = collections.defaultdict(list)
mem = []
for e in ev:
    if e.get("ph") == "X":
        c = e.get("cat", "")
        iv = (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)), e.get("name", ""))
        if c in ("cuda_runtime", "cuda_driver"):
            api[e.get("tid")].append(iv)
        elif c in ("cpu_op", "user_annotation", "python_function"):
            ops[e.get("tid")].append(iv)
    elif e.get("name") == "[memory]":
        mem.append(e)


def inner(lst, tid, ts):
    best = None
    for a, b, n in lst.get(tid, ()):
        if a <= ts <= b and (best is None or a >= best[0]):
            best = (a, n)
    return best[1] if best else "-"


mem.sort(key=lambda e: float(e["ts"]))
live = {}
peak, peak_live = -1, None
for e in mem:
    a = e["args"]
    if a["Bytes"] > 0:
        live[a["Addr"]] = (a["Bytes"], inner(api, e["tid"], float(e["ts"])), inner(ops, e["tid"], float(e["ts"])))
    else:
        live.pop(a["Addr"], None)
    if a["Total Reserved"] > peak:
        peak, peak_live = a["Total Reserved"], dict(live)
print("allocations: %d, peak Total Reserved %d B" % (sum(1 for e in mem if e["args"]["Bytes"] > 0), peak))
g = collections.Counter()
n = collections.Counter()
for b, ap, op in peak_live.values():
    k = (ap, op, "2MiB-multiple" if b % (2 << 20) == 0 else "odd")
    g[k] += b
    n[k] += 1
print("live at the peak by (API, op, size class):")
for k, b in g.most_common(25):
    print("  %14d B %4d allocs  %s | %s | %s" % (b, n[k], k[0], k[1], k[2]))
print("largest allocations not a multiple of 2 MiB:")
odd = sorted((e for e in mem if e["args"]["Bytes"] > 0 and e["args"]["Bytes"] % (2 << 20)),
             key=lambda e: -e["args"]["Bytes"])
for e in odd[:15]:
    print("  %12d B at %s tid %s: %s | %s" % (e["args"]["Bytes"], e["ts"], e["tid"],
          inner(api, e["tid"], float(e["ts"])), inner(ops, e["tid"], float(e["ts"]))))
if len(sys.argv) > 2:
    segs = {}
    for line in open(sys.argv[2]):
        f = line.split()
        if f and f[0] == "segment":
            segs[int(f[1])] = int(f[2])
    print("torch's segments at its peak: %d, %d B" % (len(segs), sum(segs.values())))
    extra = {a: v for a, v in peak_live.items() if a not in segs}
    print("live at kprof's peak, not a torch segment: %d, %d B" % (len(extra), sum(v[0] for v in extra.values())))
    for a, (b, ap, op) in sorted(extra.items(), key=lambda kv: -kv[1][0]):
        print("  %x %12d B %s | %s" % (a, b, ap, op))
    miss = {a: b for a, b in segs.items() if a not in peak_live}
    print("torch segments kprof does not have live: %d, %d B" % (len(miss), sum(miss.values())))
