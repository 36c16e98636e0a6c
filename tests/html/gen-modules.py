#!/usr/bin/env python3
"""tests/html/gen-modules.py N > trace.json: a synthetic torch.profiler trace (H200) with N
distinct nn.Module frames (Net_0 / Block_i / Layer_j, about sqrt(N) blocks), each layer one
op and kernel: aten::mm (modelled FLOPs) or aten::add (bytes), of sizes over three decades
at 5-65% of the H200's peak (a few wide layers, most narrower than a pixel).  For the
icicle at 10,000 frames (doc/icicle-10k.png)."""
import json
import math
import random
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
rnd = random.Random(1)
nb = max(1, int(math.sqrt(n)))
ev = []
pyid = [0]


def frame(name, ts, dur, parent):
    pyid[0] += 1
    a = {"Python id": pyid[0]}
    if parent:
        a["Python parent id"] = parent
    if name.startswith("nn.Module: "):
        a["Python module id"] = pyid[0]
    ev.append({"ph": "X", "cat": "python_function", "name": name, "pid": 1, "tid": 1,
               "ts": ts, "dur": dur, "args": a})
    return pyid[0]


t = 0.0
gpu = 1e6
corr = 0
layers = n - nb - 1
root = frame("nn.Module: Net_0", 0, 1e9, 0)
per = [layers // nb + (1 if i < layers % nb else 0) for i in range(nb)]
for b in range(nb):
    bt = t
    bid = frame("nn.Module: Block_%d" % b, bt, per[b] * 10 + 2, root)
    for j in range(per[b]):
        lt = t + 1
        frame("nn.Module: Layer_%d" % j, lt, 8, bid)
        corr += 1
        k = rnd.random()
        size = 2 ** (12 * k ** 5)  # mostly small, a few large: 1 to 4096
        u = 0.05 + 0.6 * rnd.random()  # share of the peak the kernel reaches
        if corr % 3:
            m = max(1, int(size))
            dur = 2 * m * 4096 * 4096 / (989.5e12 * u) * 1e6 + 0.5
            op = {"name": "aten::mm", "args": {"Input Dims": [[m, 4096], [4096, 4096]],
                  "Input type": ["c10::BFloat16", "c10::BFloat16"]}}
            kname = "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT"
        else:
            r = max(1, int(size))
            dur = 3 * r * 4096 * 2 / (4.8e12 * u) * 1e6 + 0.5
            op = {"name": "aten::add", "args": {"Input Dims": [[r, 4096], [r, 4096], []],
                  "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"]}}
            kname = "void at::native::vectorized_elementwise_kernel<4, add>(int, T, T)"
        dur = round(dur, 3)
        op["args"]["External id"] = corr
        ev.append({"ph": "X", "cat": "cpu_op", "name": op["name"], "pid": 1, "tid": 1,
                   "ts": lt + 1, "dur": 5, "args": op["args"]})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": lt + 2, "dur": 2, "args": {"correlation": corr}})
        ev.append({"ph": "X", "cat": "kernel", "name": kname, "pid": 0, "tid": 7, "ts": gpu,
                   "dur": dur, "args": {"correlation": corr, "device": 0, "stream": 7}})
        gpu += dur + 0.5
        t += 10
    t += 2
ev[0]["dur"] = t + 10
json.dump({"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "computeMajor": 9,
                                 "computeMinor": 0, "numSms": 132}],
           "traceEvents": ev}, sys.stdout)
