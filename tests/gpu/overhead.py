"""tests/gpu/overhead.py — timed loops for the traced/untraced ratio of `kprof capture -- <cmd>`
(issue 7 item 6): one large bf16 GEMM per iteration, or many tiny launches per iteration.

    python3 overhead.py gemm|launch ITERS    -> "overhead-loop KIND ms_per_iter X"
"""
import sys
import time

import torch

kind, iters = sys.argv[1], int(sys.argv[2])
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
print("overhead-loop", kind, "ms_per_iter %.4f" % best)
