#!/usr/bin/env python3
"""capture_results.py — writes capture_results.json and capture_results.csv: made-up results of
`kprof capture -w conv,softmax,rmsnorm --backend reference,cudnn,kprof --results FILE`, in the
benchmark-db records src/report/results.c writes (one record per case and metric, the device
and clocks in benchmark.extra_info), and capture_results_trace.json: capture-h200/
matmul_epilogues.json with the same records as its "kprof"."results" (as capture.c writes them
into a trace).  3 workloads, 2 backends each, 6 shapes each, one failed accuracy check.

usage: testdata/handmade/capture_results.py   (from the repository root; rewrites the files)
"""
import csv
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DEVICE, SM, MEM = "NVIDIA H200", 1830, 3201

CONV = ["32x64x56x56->64 3x3 s1 p1 d1 g1", "32x128x28x28->128 3x3 s1 p1 d1 g1",
        "32x256x14x14->256 3x3 s1 p1 d1 g1", "32x512x7x7->512 3x3 s1 p1 d1 g1",
        "32x3x224x224->64 7x7 s2 p3 d1 g1", "32x256x56x56->64 1x1 s1 p0 d1 g1"]
CONV_GFLOP = [236.8, 236.8, 236.8, 236.8, 236.8, 118.4]
ROWS = ["4096x1024", "4096x4096", "16384x1024", "16384x4096", "32768x8192", "65536x8192"]


def case(op, kind, shape, backend, layout, ms, tflops, gbs, peak, err, ok):
    return dict(op=op, kind=kind, shape=shape, backend=backend, layout=layout, ms=ms,
                tflops=tflops, gbs=gbs, peak=peak, err=err, ok=ok)


def cases():
    out = []
    for i, (s, gf) in enumerate(zip(CONV, CONV_GFLOP)):
        for b, speed in (("reference", 0.21 + 0.02 * i), ("cudnn", 0.55 + 0.03 * i)):
            tfl = 989.0 * speed
            ms = gf / tfl  # GFLOP / TFLOP/s = ms
            out.append(case("aten::convolution", "conv2d", s, b, "nchw", ms, gf / ms, 0, 0,
                            4e-4 if b == "reference" else 2e-4, True))
    for kind, op, eb in (("softmax", "aten::_softmax", 4), ("rmsnorm", "aten::_fused_rms_norm", 4)):
        for i, s in enumerate(ROWS):
            r, h = (int(x) for x in s.split("x"))
            nbytes = 2 * r * h * 2  # read and write bf16
            for b, frac in (("reference", 0.42 + 0.03 * i), ("kprof", 0.71 + 0.025 * i)):
                gbs = 4800.0 * frac
                ms = nbytes / (gbs * 1e9) * 1e3
                ok = not (kind == "rmsnorm" and b == "kprof" and i == 2)
                out.append(case(op, kind, s, b, "", ms, 0, nbytes / (ms * 1e-3) / 1e9,
                                100 * nbytes / (ms * 1e-3) / 4.8e12, 9e-3 if not ok else 1e-3, ok))
    return out


def metrics(c):
    m = [("latency (ms)", c["ms"], 0)]
    if c["tflops"] > 0:
        m.append(("TFLOPS", c["tflops"], 0))
    if c["gbs"] > 0:
        m.append(("bandwidth (GB/s)", c["gbs"], 0))
    if c["peak"] > 0:
        m.append(("% of DRAM peak", c["peak"], 85))
    return m


def name(c):
    return c["kind"] + "-" + c["shape"] + ("-" + c["layout"] if c["layout"] else "")


def records():
    out = []
    for c in cases():
        for mn, v, t in metrics(c):
            out.append({
                "benchmark": {"name": "kprof capture", "mode": "inference", "dtype": "bfloat16",
                              "extra_info": {"device": DEVICE, "backend": c["backend"],
                                             "sm_clock_mhz": SM, "mem_clock_mhz": MEM}},
                "model": {"name": name(c), "type": c["kind"], "backend": c["backend"],
                          "origins": ["kprof"],
                          "extra_info": {"op": c["op"], "layout": c["layout"], "pass": "fwd",
                                         "accuracy_err": "%.3g" % c["err"],
                                         "accuracy_ok": "true" if c["ok"] else "false"}},
                "metric": {"name": mn, "benchmark_values": [v], "target_value": t}})
    return out


def main():
    recs = records()
    with open(os.path.join(HERE, "capture_results.json"), "w") as f:
        json.dump(recs, f, indent=1)
        f.write("\n")
    with open(os.path.join(HERE, "capture_results.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow("benchmark_name,benchmark_mode,benchmark_dtype,device,model_name,model_type,"
                   "backend,op,layout,accuracy_ok,metric_name,benchmark_value,target_value,pass,"
                   "accuracy_err,sm_clock_mhz,mem_clock_mhz".split(","))
        for r in recs:
            b, m, x = r["benchmark"], r["model"], r["model"]["extra_info"]
            w.writerow([b["name"], b["mode"], b["dtype"], DEVICE, m["name"], m["type"],
                        m["backend"], x["op"], x["layout"], x["accuracy_ok"],
                        r["metric"]["name"], repr(r["metric"]["benchmark_values"][0]),
                        r["metric"]["target_value"], x["pass"], x["accuracy_err"], SM, MEM])
    with open(os.path.join(HERE, "..", "capture-h200", "matmul_epilogues.json")) as f:
        tr = json.load(f)
    tr["kprof"]["results"] = recs
    with open(os.path.join(HERE, "capture_results_trace.json"), "w") as f:
        json.dump(tr, f)
        f.write("\n")


if __name__ == "__main__":
    main()
