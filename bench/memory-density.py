#!/usr/bin/env python3
"""bench/memory-density.py — the cost of `kprof analyze --memory` as [memory] events grow (issue 25:
"memory events at 10x a real trace's density cost linear time").

usage: bench/memory-density.py [KPROF] [TRACE.json.gz] [RUNS]

From a real profile_memory trace (default testdata/torch211-h200/llama_eager_mem.json.gz) it
writes copies whose [memory] events are repeated K times (K = 1, 10, 100: each copy an
allocation/free pair of the same size at the same time and thread, at an address of its own,
so the peak grows and the pairing stays exact), then times `kprof analyze -f json` with and
without --memory, best of RUNS, in one run.  Prints the table for bench/RESULTS.md: the time
--memory adds per memory event must stay flat (linear cost).
"""
import gzip, json, os, subprocess, sys, tempfile, time

kprof = sys.argv[1] if len(sys.argv) > 1 else "build/kprof"
src = sys.argv[2] if len(sys.argv) > 2 else "testdata/torch211-h200/llama_eager_mem.json.gz"
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
d = json.load(gzip.open(src))
ev = d["traceEvents"]
mem = [e for e in ev if e.get("name") == "[memory]"]
rest = [e for e in ev if e.get("name") != "[memory]"]
tmp = tempfile.mkdtemp()


def best(cmd):
    b = 1e9
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        b = min(b, time.perf_counter() - t0)
    return b


rows = []
for k in (1, 10, 100):
    out = []
    for j in range(k):
        for e in mem:
            c = dict(e)
            c["args"] = dict(e["args"])
            if j:
                c["args"]["Addr"] = e["args"]["Addr"] + j * (1 << 40)
            out.append(c)
    path = os.path.join(tmp, "mem%d.json" % k)
    with open(path, "w") as f:
        json.dump(dict(d, traceEvents=rest + out), f)
    plain = best([kprof, "analyze", "-f", "json", "-j", "1", path])
    withm = best([kprof, "analyze", "--memory", "-f", "json", "-j", "1", path])
    rows.append((k, len(out), os.path.getsize(path), plain, withm))
print("| memory events | x | MB | analyze s | analyze --memory s | added s | added us per memory event |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for k, n, size, plain, withm in rows:
    print("| %d | %d | %.1f | %.4f | %.4f | %.4f | %.3f |" % (n, k, size / 1e6, plain, withm,
                                                         withm - plain, (withm - plain) / n * 1e6))
