#!/usr/bin/env python3
"""bench/hook-parts.py — ns per call of each part of kprof's torch hook's per-module work (issue
24), in a tight loop on the CPU, so that a part's cost is not lost in a training step's noise:
torch.compiler.is_compiling(), the module's range message (kprof_torch_hook.module_message),
torch.cuda.nvtx's push/pop pair, torch._C._nvtx's, the observer's ctypes push/pop
(kprof_obs_range_push, when kprof-shim.so is in the process), kprof's pre + post hooks whole,
and a call of an nn.Identity with no global hooks, no-op ones and kprof's.  Best of 5 x N.

    kprof capture --torch off -o /tmp/x.json -- python3 bench/hook-parts.py [N]
"""
import ctypes
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "capture", "intercept", "python"))

import torch  # noqa: E402
from torch.nn.modules import module as M  # noqa: E402

import kprof_torch_hook as h  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200000


def best(fn):
    """ns per call of @fn(), the best of 5 runs of N calls"""
    out = []
    for _ in range(5):
        t = time.perf_counter_ns()
        fn(N)
        out.append((time.perf_counter_ns() - t) / N)
    return min(out)


def loop(body):
    def run(n):
        for _ in range(n):
            body()
    return run


rows = []
ident = torch.nn.Identity()
x = torch.zeros(4)
check = h._is_compiling_fn(torch)
nv = torch.cuda.nvtx
rows.append(("empty loop", best(loop(lambda: None))))
rows.append(("torch.compiler.is_compiling()", best(loop(check))))
rows.append(("module_message(m)", best(loop(lambda: h.module_message(ident)))))
rows.append(("torch.cuda.nvtx push+pop", best(loop(lambda: (nv.range_push("kprof: nn.Module: X_0"), nv.range_pop())))))
cn = torch._C._nvtx
rows.append(("torch._C._nvtx push+pop", best(loop(lambda: (cn.rangePushA("kprof: nn.Module: X_0"), cn.rangePop())))))
shim = ctypes.CDLL(None)
if hasattr(shim, "kprof_shim_range_push"):
    p, q = shim.kprof_shim_range_push, shim.kprof_shim_range_pop
    p.argtypes = [ctypes.c_char_p]
    rows.append(("ctypes kprof_shim push+pop", best(loop(lambda: (p(b"kprof: nn.Module: X_0"), q())))))
pre, post = h.make_hooks(nv.range_push, nv.range_pop, check)
rows.append(("kprof pre+post hooks", best(loop(lambda: (pre(ident, (x,)), post(ident, (x,), x))))))
rows.append(("Identity(x), no global hooks", best(loop(lambda: ident(x)))))
hs = [M.register_module_forward_pre_hook(lambda m, a: None),
      M.register_module_forward_hook(lambda m, a, o: None, always_call=True)]
rows.append(("Identity(x), no-op global hooks", best(loop(lambda: ident(x)))))
for k in hs:
    k.remove()
hs = [M.register_module_forward_pre_hook(pre), M.register_module_forward_hook(post, always_call=True)]
rows.append(("Identity(x), kprof's global hooks", best(loop(lambda: ident(x)))))
for k in hs:
    k.remove()
print("| part | ns per call |")
print("|---|---:|")
for name, ns in rows:
    print("| %s | %.0f |" % (name, ns))
