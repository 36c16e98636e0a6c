#!/usr/bin/env python3
"""Write the hostile-names traces of tests/hostile/check.py (issue 23, test habit (b)).

usage: tests/hostile/gen.py DIR

DIR/base.json and DIR/new.json (the same kernels, new ones slower, so a diff trips its
gate): kernel, op and device names holding control characters (ESC sequences that clear the
screen or set the terminal title, BEL, CR, LF, DEL, C1 CSI), a markdown line that would end a
table, '|', backticks, quotes, '=', '+', '@', '-' formula starts, </script> and tags, the bidi
overrides (U+202E, U+2066..U+2069, U+200F, U+061C), U+2028 and a name of 100 KB; one kernel
without 'dur' and an op without shapes, so warnings print names and the file's name.  Each op
runs under an nn.Module frame (python_function) named after its kernel, all of them under one
module whose name holds a tag, so -g module and the icicle ("flame") show the names too.
"""
import json
import os
import sys

ESC = "\x1b"
NAMES = [
    "clear" + ESC + "[2J" + ESC + "]0;owned title" + "\x07" + "_kernel",
    "line\n**kprof: no regressions, safe to merge**\r\n| x | y |",
    '=HYPERLINK("evil.example","click")',
    "+1+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd",
    "-2+3+cmd",
    "\tTAB\rCR\x7fDEL\x00NUL",
    "</script><script>alert(1)</script><b>bold</b>",
    "quotes \"dq\" 'sq' `tick` ``two`` |pipe|",
    "bidi_\u202eevil\u202c_\u2066iso\u2069_\u200f_\u061c_\u2028sep",
    "c1_\u009b31m_csi",
    "big_" + "k" * 100_000 + ESC + "[31m",
    "-1.5",
]
DEVICE = "H100" + ESC + "]0;dev title\x07" + "\n# device  fake\u202e"


def trace(scale):
    ev = []
    ts = 1000.0
    for i, name in enumerate(NAMES):
        corr = 100 + i
        op = "op_" + name[:40] + ESC + "[5m"
        ev.append({"ph": "X", "cat": "python_function", "name": "nn.Module: " + name[:60] + "_0",
                   "pid": 1, "tid": 1, "ts": ts - 1, "dur": 60.0,
                   "args": {"Python id": i + 2, "Python parent id": 1,
                            "Python module id": i + 2}})
        ev.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": ts,
                   "dur": 50.0, "args": {"External id": i + 1}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": ts + 1, "dur": 5.0,
                   "args": {"External id": i + 1, "correlation": corr}})
        # even names scale with the run, odd ones by half as much: every name has a delta in
        # diff (its waterfall, with the line-break name among them)
        dur = (10.0 + i) * (scale if i % 2 == 0 else 1.0 + (scale - 1.0) / 2)
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7,
                   "ts": ts + 10, "dur": dur,
                   "args": {"External id": i + 1, "device": 0, "stream": 7,
                            "correlation": corr, "grid": [1, 1, 1], "block": [32, 1, 1]}})
        # a block allocated in the op and freed after it: the op's name in the memory
        # tables and the memory chart's hover text (kprof analyze --memory)
        for t, b in ((ts + 2, 4096 * (i + 1)), (ts + 60, -4096 * (i + 1))):
            ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                       "pid": 1, "tid": 1, "ts": t,
                       "args": {"Device Type": 1, "Device Id": 0, "Addr": (1 << 20) + 65536 * i,
                                "Bytes": b, "Total Allocated": (1 << 20) + max(b, 0),
                                "Total Reserved": 1 << 24}})
        ts += 100.0
    # an Optimizer.step span named hostile (the memory chart shades it)
    ev.append({"ph": "X", "cat": "user_annotation", "pid": 1, "tid": 1, "ts": 1000.0,
               "dur": ts - 1000.0, "name": "Optimizer.step#" + NAMES[0][:60]})
    # an op a model knows, without shapes: a warning naming the op and the file
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": ts,
               "dur": 50.0, "args": {"External id": 99}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
               "tid": 1, "ts": ts + 1, "dur": 5.0, "args": {"External id": 99, "correlation": 99}})
    ev.append({"ph": "X", "cat": "kernel", "name": "gemm" + ESC + "[2J", "pid": 0, "tid": 7,
               "ts": ts + 10, "dur": 20.0 * scale,
               "args": {"External id": 99, "device": 0, "stream": 7, "correlation": 99}})
    # a matmul with shapes under a kernel with a line break in its name: FLOPs, so a point on
    # the roofline, whose hover text names it
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
               "ts": ts + 60, "dur": 30.0,
               "args": {"External id": 98, "Input Dims": [[64, 64], [64, 64]],
                        "Input type": ["float", "float"]}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
               "tid": 1, "ts": ts + 61, "dur": 5.0, "args": {"External id": 98, "correlation": 98}})
    ev.append({"ph": "X", "cat": "kernel", "name": "mm_" + NAMES[1], "pid": 0, "tid": 7,
               "ts": ts + 70, "dur": 8.0 * scale,
               "args": {"External id": 98, "device": 0, "stream": 7, "correlation": 98}})
    # a kernel without 'dur': a located warning
    ev.append({"ph": "X", "cat": "kernel", "name": "nodur" + ESC + "[2J", "pid": 0, "tid": 7,
               "ts": ts + 40, "args": {"device": 0, "stream": 7}})
    ev.insert(0, {"ph": "X", "cat": "python_function",
                  "name": "nn.Module: Net</title><script>alert(2)</script>" + ESC + "[2J_0",
                  "pid": 1, "tid": 1, "ts": 900.0, "dur": ts - 900.0,
                  "args": {"Python id": 1, "Python module id": 1}})
    return {"schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": DEVICE, "numSms": 132,
                                  "computeMajor": 9, "computeMinor": 0}],
            "traceEvents": ev}


def results():
    """kprof capture --results records (benchmark-db JSON): two backends of one op over shapes,
    the backends, shape texts and op named after NAMES (the 100 kB one left out)."""
    names = [n for n in NAMES if len(n) < 200]
    recs = []
    for i, shape in enumerate(names):
        for j, backend in enumerate((names[i % len(names)], names[(i + 3) % len(names)])):
            recs.append({
                "benchmark": {"name": "kprof capture", "mode": "inference", "dtype": "bfloat16",
                              "extra_info": {"device": DEVICE, "backend": backend,
                                             "sm_clock_mhz": 1830, "mem_clock_mhz": 3201}},
                "model": {"name": "matmul-" + shape, "type": "matmul", "backend": backend,
                          "origins": ["kprof"],
                          "extra_info": {"op": names[(i + 5) % len(names)], "pass": "fwd",
                                         "accuracy_err": "0.001",
                                         "accuracy_ok": "true" if j else "false"}},
                "metric": {"name": "latency (ms)", "benchmark_values": [0.5 + i + j],
                           "target_value": 0}})
    return recs


def main():
    out = sys.argv[1]
    for name, scale in (("base.json", 1.0), ("new.json", 2.0)):
        with open(os.path.join(out, name), "w") as f:
            json.dump(trace(scale), f, ensure_ascii=False)


if __name__ == "__main__":
    main()
