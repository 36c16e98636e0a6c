#!/usr/bin/env python3
"""Write a trace that sets traps for the parallel parse (tests/jobs/check.sh).

usage: tests/jobs/gen-traps.py OUT [N]

N events (default 3000) of the kinds kprof keeps, mixed with what a chunk parse must hand
back to the serial path or get exactly right: strings and nested args objects holding the
cut pattern '}, {"', B/E op pairs on several threads (pairs span chunks), string pids and
tids, escaped and non-UTF-8 names, non-object elements, events with warnings (kernels of
zero dur, no ts, negative dur, bad ph), flows, metadata, and varying whitespace and line
breaks.  Deterministic (seeded)."""
import random
import sys

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
rnd = random.Random(14)
ev = []
ts = 1000000
ext = 1
names = ["aten::mm", "aten::addmm", "aten::linear", "aten::add", "aten::bmm",
         "aten::conv2d", "aten::softmax", "trap }, {\\\"ph\\\": \\\"X\\\"", "esc \\u00e9\\n\\\"q\\\"",
         "caf\xc3\xa9", "bad utf8 \\udc00", "raw \udcff\udcfe bytes"]
kernels = ["ampere_sgemm_128x64_nn", "void at::native::vectorized_elementwise_kernel<4>",
           "triton_poi_fused_0", "nccl:all_reduce", "kernel }, {\"ph\": \"X\", \"cat\": \"kernel\"}"]
open_b = {}
for i in range(n):
    tid = rnd.choice([1, 2, 3, '"stream 7"', '"Spans"'])
    pid = rnd.choice([100, 100, 100, '"host"'])
    sp = rnd.choice(["", " ", "\n    ", "\n  "])
    r = rnd.random()
    ts += rnd.randint(1, 50)
    if r < 0.35:
        ext += 1
        name = rnd.choice(names)
        dims = rnd.choice(['[[1024, 1024], [1024, 1024]]', '[[8, 256, 1024], []]', '[]',
                           '[[[8, 16], [8, 16]], [4]]'])
        args = ('{"External id": %d, "Input Dims": %s, "Input type": ["float", "c10::BFloat16"],'
                ' "Concrete Inputs": ["", "1"], "nested": [{"a": 1}, {"b": "}, {\\"x\\": 1"}]}'
                % (ext, dims))
        ev.append('{%s"ph": "X", "cat": "cpu_op", "name": "%s", "pid": %s, "tid": %s,'
                  ' "ts": %d.%03d, "dur": %d, "args": %s}'
                  % (sp, name, pid, tid, ts, rnd.randint(0, 999), rnd.randint(1, 400), args))
    elif r < 0.5:
        ev.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": %s,'
                  ' "tid": %s, "ts": %d, "dur": 5, "args": {"External id": %d,'
                  ' "correlation": %d}}' % (pid, tid, ts, ext, ext))
    elif r < 0.68:
        dur = rnd.choice([0, 3, 17, 250]) if rnd.random() < 0.1 else rnd.randint(1, 900)
        ev.append('{\n    "ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7,'
                  ' "ts": %d, "dur": %d, "args": {"External id": %d, "correlation": %d,'
                  ' "device": 0, "stream": 7, "Collective name": "allreduce", "dtype": "Float",'
                  ' "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": 2}}'
                  % (rnd.choice(kernels).replace('"', '\\"'), ts, dur, ext, ext))
    elif r < 0.74:
        key = rnd.choice([1, 2, 3])
        if open_b.get(key):
            ev.append('{"ph": "E", "cat": "cpu_op", "name": "", "pid": 100, "tid": %d, "ts": %d}'
                      % (key, ts))
            open_b[key] -= 1
        else:
            ev.append('{"ph": "B", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": %d,'
                      ' "ts": %d, "args": {"External id": %d}}' % (key, ts, ext))
            open_b[key] = open_b.get(key, 0) + 1
    elif r < 0.78:
        ev.append('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 100,'
                  ' "tid": 1, "ts": %d, "dur": 1000}' % (i, ts))
    elif r < 0.81:
        ev.append('{"ph": "s", "id": %d, "pid": 100, "tid": 1, "ts": %d, "cat": "ac2g",'
                  ' "name": "ac2g"}' % (ext, ts))
    elif r < 0.83:
        ev.append('{"ph": "X", "cat": "kernel", "name": "no ts", "pid": 0, "tid": 7, "dur": 4}')
    elif r < 0.85:
        ev.append('{"ph": "X", "cat": "cpu_op", "name": "aten::neg", "pid": 100, "tid": 1,'
                  ' "ts": %d, "dur": -5}' % ts)
    elif r < 0.86:
        ev.append('{"ph": 7, "cat": "cpu_op", "name": "bad ph"}')
    elif r < 0.87:
        ev.append(rnd.choice(['17', '"a string element"', '[1, {"x": 2}]', 'null']))
    elif r < 0.9:
        ev.append('{"ph": "M", "name": "thread_name", "pid": 100, "tid": %s,'
                  ' "args": {"name": "thread }, {\\"x"}}' % tid)
    else:
        ev.append('{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7,'
                  ' "ts": %d, "dur": 12, "args": {"bytes": 4096, "device": 0, "stream": 7,'
                  ' "correlation": %d}}' % (ts, ext))
head = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {"id": 0, "name": "NVIDIA H100 80GB HBM3",'
        ' "totalGlobalMem": 85045379072, "computeMajor": 9, "computeMinor": 0, "numSms": 132},'
        ' {"id": 1, "name": "NVIDIA H100 80GB HBM3", "numSms": 132}\n  ],\n'
        '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},\n  "traceEvents": [')
tail = '\n  ],\n  "traceName": "traps }, {\\"ph\\"",\n  "baseTimeNanoseconds": 1700000000000000000\n}\n'
with open(out, "wb") as f:
    f.write(head.encode())
    f.write(",".join(ev).encode("utf-8", "surrogateescape"))
    f.write(tail.encode())
