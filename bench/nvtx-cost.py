"""bench/nvtx-cost.py — the cost of one NVTX range and of one emit_nvtx op, in this process:
    python3 bench/nvtx-cost.py            # plain
    kprof capture --torch off -o t.json -- python3 bench/nvtx-cost.py   # under kprof-shim.so
Prints ns per range_push/pop pair, and ns per CPU op (x.add_) plain, under
emit_nvtx(record_shapes=False) and emit_nvtx(record_shapes=True)."""
import os
import time

import torch

N = int(os.environ.get("NVTX_COST_N", "200000"))
torch.zeros(1, device="cuda")  # CUDA up, as in a real program


def per(f, n):
    best = 1e9
    for _ in range(3):
        t = time.perf_counter_ns()
        f(n)
        best = min(best, (time.perf_counter_ns() - t) / n)
    return best


def ranges(n):
    push, pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop
    for _ in range(n):
        push("kprof: nn.Module: Linear_0")
        pop()


x = torch.ones(4)


def ops(n):
    for _ in range(n):
        x.add_(1)


print("range_pair_ns %.0f" % per(ranges, N))
print("op_plain_ns %.0f" % per(ops, N))
with torch.autograd.profiler.emit_nvtx(record_shapes=False):
    print("op_nvtx0_ns %.0f" % per(ops, N))
with torch.autograd.profiler.emit_nvtx(record_shapes=True):
    print("op_nvtx_ns %.0f" % per(ops, N))
