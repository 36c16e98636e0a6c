"""tests/gpu/overhead.py — timed loops for the traced/untraced ratio of `kprof capture -- <cmd>`
(issue 7 item 6): one large bf16 GEMM per iteration, or many tiny launches per iteration.

    python3 overhead.py gemm|launch ITERS [kineto-cuda|kineto-cpu-cuda]
        -> "overhead-loop KIND ms_per_iter X"

With a third argument the warm-up and the timed loop run inside torch.profiler (Kineto) with
CUDA activities (and CPU ones): the reference figure of PyTorch's own tracer on the same loop.
"""
import sys
import time

import torch

kind, iters = sys.argv[1], int(sys.argv[2])
kineto = sys.argv[3] if len(sys.argv) > 3 else None
dt = torch.bfloat16
if kind == "gemm":
    a = torch.randn(8192, 8192, device="cuda", dtype=dt)
    b = torch.randn(8192, 8192, device="cuda", dtype=dt)

    def step():
        torch.mm(a, b)
else:
    a = torch.randn(64, 64, device="cuda", dtype=dt)
    b = torch.randn(64, 64, device="cuda", dtype=dt)

    def step():
        c = a
        for _ in range(50):  # 50 GEMMs (library calls) and 50 elementwise kernels
            c = torch.mm(c, b).mul_(0.5)

prof = None
if kineto:
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CUDA]
    if kineto == "kineto-cpu-cuda":
        acts.insert(0, ProfilerActivity.CPU)
    prof = profile(activities=acts)
    prof.__enter__()
for _ in range(3):
    step()
torch.cuda.synchronize()
best = None
for rep in range(3):
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    torch.cuda.synchronize()
    ms = (time.perf_counter() - t0) * 1e3 / iters
    best = ms if best is None else min(best, ms)
if prof is not None:
    prof.__exit__(None, None, None)  # after the timing: Kineto's post-processing is not counted
print("overhead-loop", kind, "ms_per_iter %.4f" % best)
