"""bench/torch-obs-cost.py — what kprof's op observer (capture/intercept/python/kprof_torch_obs.cpp)
costs per op, mode by mode, against plain and emit_nvtx, in one process under kprof-shim.so:
    kprof capture --torch off -o t.json -- python3 bench/torch-obs-cost.py [backward]
Prints, per op kind (a CPU x.add_(1), a CPU x.add_(y), a CUDA a.add_(b)): ns per op plain, under
emit_nvtx(record_shapes=True) and under the observer with names only, with RecordFunction's
inputs asked for but not read, with sizes, and with sizes and types (the hook's mode); and
the observer's ranges per op.  With "backward": one small fwd+bwd on CUDA under the observer,
so that the trace shows which autograd ranges it opened (tests/gpu/obs_probe.sh reads it)."""
import ctypes
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "build", "python"))
import kprof_torch_hook  # noqa: E402

N = int(os.environ.get("OBS_COST_N", "50000"))
so, why = kprof_torch_hook.observer_so(torch)
if so is None:
    sys.exit("torch-obs-cost: no observer: %s" % why)
obs = ctypes.CDLL(so)
obs.kprof_obs_calls.restype = ctypes.c_ulonglong
obs.kprof_obs_unread.restype = ctypes.c_ulonglong
obs.kprof_obs_first_error.restype = ctypes.c_char_p


def said():
    print("observer: %d ranges, %d with inputs unread; first: %s" % (
        obs.kprof_obs_calls(), obs.kprof_obs_unread(),
        obs.kprof_obs_first_error().decode("utf-8", "replace")[:240]))


def per(f, n):
    best = 1e18
    for _ in range(3):
        t = time.perf_counter_ns()
        f(n)
        best = min(best, (time.perf_counter_ns() - t) / n)
    return best


x, y = torch.ones(4), torch.ones(4)
a, b = torch.ones(4, device="cuda"), torch.ones(4, device="cuda")
torch.cuda.synchronize()


def add_scalar(n):
    for _ in range(n):
        x.add_(1)


def add_tensor(n):
    for _ in range(n):
        x.add_(y)


def add_cuda(n):
    for _ in range(n):
        a.add_(b)
    torch.cuda.synchronize()


if sys.argv[1:] == ["backward"]:
    obs.kprof_obs_start(1)
    w = torch.randn(64, 64, device="cuda", requires_grad=True)
    for _ in range(3):
        (torch.relu(w @ w) * 2).sum().backward()
    torch.cuda.synchronize()
    obs.kprof_obs_stop()
    said()
    sys.exit(0)

MODES = [("names", 0), ("inputs_unread", 2), ("sizes", 3), ("shapes", 1)]
print("| op | plain ns | emit_nvtx(shapes) ns | " +
      " | ".join("observer %s ns (ranges/op)" % m for m, _ in MODES) + " |")
for name, f in (("cpu x.add_(1)", add_scalar), ("cpu x.add_(y)", add_tensor),
                ("cuda a.add_(b)", add_cuda)):
    row = [per(f, N)]
    with torch.autograd.profiler.emit_nvtx(record_shapes=True):
        row.append(per(f, N))
    cells = []
    for _, mode in MODES:
        c0 = obs.kprof_obs_calls()
        if obs.kprof_obs_start(mode) != 0:
            sys.exit("torch-obs-cost: kprof-shim.so is not in this process (run under kprof)")
        ns = per(f, N)
        obs.kprof_obs_stop()
        cells.append("%.0f (%.2f)" % (ns, (obs.kprof_obs_calls() - c0) / (3.0 * N)))
    print("| %s | %.0f | %.0f | %s |" % (name, row[0], row[1], " | ".join(cells)))
said()
