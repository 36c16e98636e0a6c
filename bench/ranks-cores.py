#!/usr/bin/env python3
# ranks-cores.py: N symlinks of one inflated trace as N ranks: `kprof analyze -j J` wall seconds and
# the child's peak RSS (getrusage of a fresh process per run), against one trace; for hosts
# without GNU time (bench/ranks-speed.sh needs it).  usage: bench/ranks-cores.py KPROF TRACE.gz N J...
import gzip, os, resource, shutil, subprocess, sys, tempfile, time
kprof, trace, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
jobs = [int(j) for j in sys.argv[4:]]
d = tempfile.mkdtemp()
base = os.path.join(d, "base.json")
with gzip.open(trace, "rb") as f, open(base, "wb") as g:
    shutil.copyfileobj(f, g)
def run(args):
    code = ("import resource,subprocess,sys,time;t=time.time();"
            "r=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
            "w=time.time()-t;print(w,resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,r.returncode)")
    out = subprocess.run([sys.executable, "-c", code] + args, capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])
w1, kb1, _ = run([kprof, "analyze", "-j", "1", base])
print(f"cpus {os.cpu_count()}; single trace {os.path.getsize(base)/1e6:.1f} MB: {w1:.3f} s, peak RSS {kb1/1024:.1f} MB")
files = []
for i in range(n):
    p = os.path.join(d, f"rank{i}.json")
    os.symlink(base, p)
    files.append(p)
print("| N | jobs | wall s | s/trace | speedup | RSS MB | RSS ratio |")
print("|--:|--:|--:|--:|--:|--:|--:|")
w_one = None
for j in jobs:
    w, kb, rc = run([kprof, "analyze", "-j", str(j)] + files)
    w_one = w_one or w
    print(f"| {n} | {j} | {w:.2f} | {w/n:.3f} | {w_one/w:.2f}x | {kb/1024:.1f} | {kb/(kb1*min(j,n)):.2f} |{'' if rc == 0 else f' (exit {rc})'}")
shutil.rmtree(d)
