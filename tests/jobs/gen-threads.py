#!/usr/bin/env python3
"""Write a trace whose linking and analysis split over many threads (tests/jobs/check.sh).

usage: tests/jobs/gen-threads.py OUT [THREADS] [OPS] [dense]

THREADS CPU threads (default 40) with about OPS cpu_ops in all (default 60000), nested up to
four deep with siblings of identical intervals, written out of time order within each thread
(so each thread's run is sorted), each innermost op launching one to three kernels (some by a
graph launch) with sparse correlation and External ids (so the id maps take their sorted
mode, and their parallel sort runs), kernels some of whose External id names another op,
ProfilerStep spans over the whole run and a few launches with no op around them.  Sizes are
chosen so that -j 3 cuts every sort into runs.  With "dense", ids count up by one (the id
maps take their array mode) and 2% of the ops repeat an earlier op's External id (the first
op in the file keeps it).  Deterministic (seeded)."""
import random
import sys

out = sys.argv[1]
nthreads = int(sys.argv[2]) if len(sys.argv) > 2 else 40
nops = int(sys.argv[3]) if len(sys.argv) > 3 else 60000
dense = len(sys.argv) > 4 and sys.argv[4] == "dense"
rnd = random.Random(14)
names = ["aten::linear", "aten::addmm", "aten::mm", "aten::add", "aten::softmax", "aten::bmm",
         "aten::copy_", "aten::mul", "aten::layer_norm", "aten::native_layer_norm"]
dims = ['[[512, 1024], [1024, 1024]]', '[[1024, 1024], [1024, 1024]]', '[[8, 512, 64], []]',
        '[[256, 256], [256, 256]]', '[]']
kernels = ["ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nn",
           "void at::native::vectorized_elementwise_kernel<4>", "triton_poi_fused_0",
           "void at::native::reduce_kernel<512, 1>", "sm90_xmma_gemm_bf16bf16_bf16f32"]
ev = []
ext = 7
corr = 11
op_ids = []
per_thread = max(1, nops // nthreads)
span_end = 0


def op(tid, ts, dur, name, eid):
    return ('{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": 1, "tid": %d, "ts": %d, '
            '"dur": %d, "args": {"External id": %d, "Input Dims": %s, '
            '"Input type": ["c10::BFloat16", "c10::BFloat16"]}}'
            % (name, tid, ts, dur, eid, rnd.choice(dims)))


def launch(tid, ts, c, eid, graph):
    name = "cudaGraphLaunch" if graph else "cudaLaunchKernel"
    return ('{"ph": "X", "cat": "cuda_runtime", "name": "%s", "pid": 1, "tid": %d, '
            '"ts": %d, "dur": 3, "args": {"correlation": %d, "External id": %d}}'
            % (name, tid, ts, c, eid))


def kernel(ts, c, eid):
    return ('{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %d, '
            '"dur": %d, "args": {"correlation": %d, "External id": %d, "device": 0, '
            '"stream": 7}}' % (rnd.choice(kernels), ts, rnd.randint(2, 40), c, eid))


def tree(tid, ts, dur, depth, out_ev):
    """ops under [ts, ts+dur): siblings, some with identical intervals, nested"""
    global ext, corr
    t = ts
    while t < ts + dur - 8:
        d = rnd.randint(8, min(400, ts + dur - t))
        same = rnd.random() < 0.1
        for _ in range(2 if same else 1):
            ext += 1 if dense else rnd.choice([1, 1, 3, 977])
            eid = ext
            if dense and op_ids and rnd.random() < 0.02:
                eid = rnd.choice(op_ids)  # a repeated External id
            op_ids.append(eid)
            out_ev.append(op(tid, t, d, rnd.choice(names), eid))
            if depth < 4 and d > 40 and rnd.random() < 0.6:
                tree(tid, t + 1, d - 2, depth + 1, out_ev)
            else:
                for k in range(rnd.randint(1, 3)):
                    corr += 1 if dense else rnd.choice([1, 2, 5, 1500])
                    lt = t + 1 + k
                    named = eid
                    if op_ids and rnd.random() < 0.05:
                        named = rnd.choice(op_ids)  # an op that may not enclose it
                    out_ev.append(launch(tid, lt, corr, named, rnd.random() < 0.05))
                    ev.append(kernel(lt + 5, corr, named))
        t += d + rnd.randint(0, 5)


t0 = 1000
for tid in range(1, nthreads + 1):
    mine = []
    start = t0 + rnd.randint(0, 500)
    while len(mine) < per_thread:
        tree(tid, start, 2000, 0, mine)
        start += 2000 + rnd.randint(0, 50)
    # a few launches outside every op
    for _ in range(3):
        corr += 1
        mine.append(launch(tid, start + 10, corr, 0, False))
        ev.append(kernel(start + 20, corr, 0))
    span_end = max(span_end, start + 100)
    # out of time order within the thread: blocks swapped
    k = len(mine) // 3
    mine = mine[k:] + mine[:k]
    ev.extend(mine)
nsteps = 6
step = (span_end - t0) // nsteps + 1
for s in range(nsteps):
    ev.append('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 1, '
              '"tid": 1, "ts": %d, "dur": %d, "args": {"External id": 3}}'
              % (s, t0 + s * step, step - 1))
with open(out, "w") as f:
    f.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",'
            ' "computeMajor": 9, "computeMinor": 0, "numSms": 132}],\n"traceEvents": [\n')
    f.write(",\n".join(ev))
    f.write("\n]}\n")
