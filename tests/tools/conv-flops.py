#!/usr/bin/env python3
"""tests/tools/conv-flops.py — issue 23 item 2: a CNN's convolution FLOPs, three ways.

    conv-flops.py KPROF PROFILER_TRACE CAPTURE...

The closed form from PROFILER_TRACE's own ops (torch.profiler, record_shapes: Input Dims and
Concrete Inputs of every aten::convolution and aten::convolution_backward): 2*N*K*(C/g)*R*S*P*Q
for a forward, the same for each gradient output_mask asks (input, weight; the bias gradient is
a reduction, FlopCounterMode counts it 0).  Then kprof analyze's FLOPs of those ops on the
profiler trace and on each kprof capture of the same program (emit_nvtx, plain).  Prints one
line per op and source; exits 1 when any differs from the closed form.
"""
import ast
import gzip
import json
import subprocess
import sys


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def ilist(s):
    return ast.literal_eval(s.replace("True", "1").replace("False", "0"))


def closed_form(trace):
    tot = {"aten::convolution": 0, "aten::convolution_backward": 0}
    for e in trace["traceEvents"]:
        name = e.get("name")
        if e.get("cat") != "cpu_op" or name not in tot:
            continue
        a = e["args"]
        dims, conc = a["Input Dims"], a["Concrete Inputs"]
        if name == "aten::convolution":
            x, w, y_groups = dims[0], dims[1], int(conc[8])
            stride, pad, dil = ilist(conc[3]), ilist(conc[4]), ilist(conc[5])
            if conc[6] != "False":
                sys.exit("conv-flops: a transposed convolution: not in this program")
            out = [(x[2 + i] + 2 * pad[i] - dil[i] * (w[2 + i] - 1) - 1) // stride[i] + 1
                   for i in range(len(x) - 2)]
            n, k, cg = x[0], w[0], w[1]
            f = 2 * n * k * cg
            for i in range(len(out)):
                f *= w[2 + i] * out[i]
            tot[name] += f
        else:
            dy, w, mask = dims[0], dims[2], ilist(conc[10])
            f = 2 * dy[0] * w[0] * w[1]
            for i in range(len(dy) - 2):
                f *= w[2 + i] * dy[2 + i]
            tot[name] += f * (mask[0] + mask[1])
    return tot


def kprof_flops(kprof, path):
    out = subprocess.run([kprof, "analyze", "-f", "json", "-g", "op", "-n", "0", path],
                         capture_output=True, text=True, check=True).stdout
    return {r["name"]: r.get("flops") for r in json.loads(out)["rows"]}


def main():
    kprof, prof, caps = sys.argv[1], sys.argv[2], sys.argv[3:]
    want = closed_form(load(prof))
    bad = 0
    for path in [prof] + caps:
        got = kprof_flops(kprof, path)
        for name, w in want.items():
            g = got.get(name)
            ok = g == w
            bad += not ok
            print(f"{'ok:  ' if ok else 'FAIL:'} {name}: closed form {w}, kprof {g} ({path})")
    sys.exit(1 if bad else 0)


main()
