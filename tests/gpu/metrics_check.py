#!/usr/bin/env python3
"""tests/gpu/metrics_check.py TRACE — checks of `kprof capture --metrics` on the matmul workload.

Per op (External id): measured tensor FLOPs of its kernels vs 2*M*N*K from Input Dims
(within 2% for M*N*K >= 4096^3); addmm's kprof_bias_rows kernel: DRAM bytes written vs M*N*2
(within 5% when M*N*2 >= 128 MiB; softmax: read + written within 5% of 2 x its size: smaller stores partly stay in L2 when the kernel ends).  Prints one line per op and exits 1 on any failure."""
import json, sys

t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
ops = {e["args"]["External id"]: e for e in ev if e.get("cat") == "cpu_op"}
kern = [e for e in ev if e.get("cat") == "kernel"]
fail = 0
measured = [k for k in kern if "kprof dram bytes" in k["args"]]
print(f"{len(kern)} kernels, {len(measured)} with measured counters")
if not kern or len(measured) != len(kern):
    print("FAIL: every timed kernel should carry measured counters")
    fail = 1
by_op = {}
for k in kern:
    by_op.setdefault(k["args"].get("External id"), []).append(k)
for ext, ks in sorted(by_op.items(), key=lambda x: x[0] or 0):
    op = ops.get(ext)
    if not op:
        continue
    dims = op["args"]["Input Dims"]
    if op["name"] == "aten::_softmax":
        rows, hid = dims[0]
        size = rows * hid * 2
        rd = sum(k["args"].get("kprof dram bytes read", 0) for k in ks)
        wr = sum(k["args"].get("kprof dram bytes written", 0) for k in ks)
        r = (rd + wr) / (2 * size)
        ok = abs(r - 1) <= 0.05 or size < 128 << 20
        fail |= not ok
        print(f"{'ok  ' if ok else 'FAIL'} aten::_softmax {rows}x{hid} bf16 ({size} B in, {size} B out): DRAM read {rd} + written {wr} = {r:.4f} x 2 x size")
        continue
    if op["name"] == "aten::mm":
        (m, kk), (_, n) = dims[0], dims[1]
    elif op["name"] == "aten::addmm":
        (m, kk), (_, n) = dims[1], dims[2]
    else:
        continue
    want = 2 * m * n * kk
    got = sum(k["args"].get("kprof measured flops tensor_bf16", 0) for k in ks)
    r = got / want
    big = m * n * kk >= 4096 ** 3
    ok = abs(r - 1) <= 0.02 or not big
    clk = [k["args"].get("kprof measured sm clock mhz") for k in ks]
    line = f"{'ok  ' if ok else 'FAIL'} {op['name']} {m}x{kk}x{n}: tensor {got:.6g} / 2MNK {want:.6g} = {r:.4f}; SM MHz {clk}"
    fail |= not ok
    for k in ks:
        if "bias_rows" in k["name"]:
            wr = k["args"].get("kprof dram bytes written", -1)
            rd = k["args"].get("kprof dram bytes read", -1)
            size = m * n * 2
            rb = wr / size
            okb = abs(rb - 1) <= 0.05 or size < 128 << 20
            fail |= not okb
            line += f"\n{'ok  ' if okb else 'FAIL'}   bias_rows store {size} B: DRAM written {wr} ({rb:.4f}), read {rd}"
    print(line)
sys.exit(1 if fail else 0)
