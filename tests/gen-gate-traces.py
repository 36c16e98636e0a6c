#!/usr/bin/env python3
"""
tests/gen-gate-traces.py — synthetic Kineto traces of one training-like program for kprof diff's
gate: 8 ProfilerStep spans, each with three ops (a GEMM, a GELU, a LayerNorm), each op launching
one kernel whose duration jitters +-8% per step (uniform, seeded).

  python3 tests/gen-gate-traces.py OUTDIR
writes OUTDIR/run_a.json and OUTDIR/run_b.json (the same program, two seeds; seed 22 moves the GEMM row past 2% and 5 us by jitter alone) and
OUTDIR/run_slow.json (a third seed with the GELU kernel 20% slower).  Deterministic: the files
in testdata/synth-gate/ are its output, and tests/golden/diff-synth-* gate them.
"""
import json
import os
import random
import sys

STEPS = 8
# op, Input Dims, Input type, kernel, mean kernel time in us
OPS = [
    ("aten::mm", [[4096, 1024], [1024, 4096]], ["c10::BFloat16", "c10::BFloat16"],
     "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", 190.0),
    ("aten::gelu", [[4096, 4096]], ["c10::BFloat16"],
     "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl>(int)", 100.0),
    ("aten::native_layer_norm", [[4096, 1024], [1024], [1024]], ["float", "float", "float"],
     "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float, false>(int)", 60.0),
]


def trace(seed, slow_op=None, factor=1.0):
    rnd = random.Random(seed)
    ev = []
    ts = 1000.0
    gpu = 1100.0
    ext = 1
    corr = 100
    for s in range(STEPS):
        step_ts = ts
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{s}", "pid": 1, "tid": 1,
                   "ts": step_ts, "dur": 0, "args": {"External id": ext}})
        step = ev[-1]
        ext += 1
        ts += 5.0
        for op, dims, types, kernel, mean in OPS:
            dur = mean * (1 + rnd.uniform(-0.08, 0.08)) * (factor if op == slow_op else 1.0)
            ev.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": ts, "dur": 20.0,
                       "args": {"External id": ext, "Input Dims": dims, "Input type": types}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": ts + 5.0, "dur": 8.0, "args": {"External id": ext, "correlation": corr}})
            gpu = max(gpu, ts + 10.0)
            ev.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": round(gpu, 3),
                       "dur": round(dur, 3), "args": {"External id": ext, "device": 0, "stream": 7,
                                                      "correlation": corr}})
            gpu += dur + 2.0
            ts += 25.0
            ext += 1
            corr += 1
        # the step ends when its GPU work is done (the loop synchronizes)
        ts = max(ts, gpu) + 5.0
        step["dur"] = round(ts - step_ts, 3)
        ts += 5.0
    return {"schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9,
                                  "computeMinor": 0, "numSms": 132, "totalGlobalMem": 85045330176}],
            "traceEvents": ev}


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    for name, t in (("run_a", trace(1)), ("run_b", trace(22)), ("run_slow", trace(3, "aten::gelu", 1.2))):
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(t, f, indent=None, separators=(",", ":"))
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
