"""bench/nvtx-cost.py — the cost of one NVTX range and of one emit_nvtx op, in this process:
    python3 bench/nvtx-cost.py            # plain
    kprof capture --torch off -o t.json -- python3 bench/nvtx-cost.py   # under kprof-shim.so
Prints ns per range_push/pop pair, and ns per CPU op (x.add_) plain, under
emit_nvtx(record_shapes=False) and emit_nvtx(record_shapes=True), under kprof's op observer
with and without shapes (capture/intercept/python/kprof_torch_obs.cpp, built by the hook in
build/python; only under kprof, which preloads kprof-shim.so), and under
torch.profiler(activities=[CPU], record_shapes=True)."""
import ctypes
import os
import sys
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "python"))
import kprof_torch_hook  # noqa: E402

so, why = kprof_torch_hook.observer_so(torch)
if so is None:
    print("op_obs: no observer: %s" % why)
else:
    obs = ctypes.CDLL(so)
    for shapes, key in ((0, "op_obs0_ns"), (1, "op_obs_ns")):
        if obs.kprof_obs_start(shapes) != 0:
            print("op_obs: kprof-shim.so is not in this process")
            break
        print("%s %.0f" % (key, per(ops, N)))
        obs.kprof_obs_stop()
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True):
    print("op_prof_cpu_ns %.0f" % per(ops, N // 4))
