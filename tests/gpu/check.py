#!/usr/bin/env python3
"""tests/gpu/check.py DIR NAME... — assertions over kprof capture traces and their analysis.

For each NAME: DIR/NAME.json (the capture) and DIR/NAME.analyze.json (kprof analyze --format
json --group-by op-shape).  Checks: the trace layout, clock source 'trace', kprof's FLOPs per op
equal the closed-form counts computed here from the recorded shapes, and the bf16 8192^3 mm at
70-95 % of the clock-adjusted peak.  Prints the summary table last.
"""
import json
import sys
from collections import defaultdict

fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL:", msg)


def conv_out(x, k, s, p, d):
    return (x + 2 * p - d * (k - 1) - 1) // s + 1


def pair(text):
    return [int(v) for v in text.strip("[]").split(",")]


def causal_pairs(sq, sk, causal):
    """unmasked (i, j) pairs of one head: top-left causal as PyTorch's is_causal (flops-bytes.md 3.5)"""
    return sum(min(i + 1, sk) for i in range(sq)) if causal else sq * sk


def closed_form(trace):
    """FLOPs per op family from the cpu_ops' Input Dims (flops-bytes.md §3)."""
    out = defaultdict(int)
    for e in trace["traceEvents"]:
        if e.get("cat") != "cpu_op":
            continue
        a, n = e["args"], e["name"]
        dims, conc = a.get("Input Dims"), a.get("Concrete Inputs")
        backend = a.get("kprof backend")
        if n == "aten::mm" and backend == "cublas":
            (m, k), (_, nn) = dims[0], dims[1]
            out["aten::mm"] += 2 * m * nn * k
        elif n == "aten::addmm":
            (m, k), (_, nn) = dims[1], dims[2]
            out["aten::addmm"] += 2 * m * nn * k
        elif n == "aten::bmm" and backend == "cublas":
            (b, m, k), (_, _, nn) = dims[0], dims[1]
            out["aten::bmm"] += 2 * b * m * nn * k
        elif n == "aten::_scaled_dot_product_cudnn_attention":
            # cudnn backend: fused flash attention, 4bh*pairs*d forward (H_q heads, causal pairs)
            (b, h, sq, d), (_, _, sk, _) = dims[0], dims[1]
            out["sdpa"] += 4 * b * h * causal_pairs(sq, sk, conc[6] == "True") * d
        elif n == "aten::_scaled_dot_product_cudnn_attention_backward":
            (b, h, sq, d), (_, _, sk, _) = dims[1], dims[2]
            out["sdpa"] += 10 * b * h * causal_pairs(sq, sk, conc[14] == "True") * d
        elif n == "aten::scaled_dot_product_attention" and backend != "cudnn":
            (b, h, sq, d), (_, _, sk, _) = dims[0], dims[1]
            # math path, scores in memory: fwd QK^T + PV = 4bh sq sk d; bwd 4 bmms = 8bh sq sk d
            out["sdpa"] += 12 * b * h * sq * sk * d
        elif n in ("aten::convolution", "aten::convolution_backward"):
            x, w = (dims[0], dims[1]) if n == "aten::convolution" else (dims[1], dims[2])
            s, p, dl = (pair(conc[i]) for i in ((3, 4, 5) if n == "aten::convolution" else (4, 5, 6)))
            oh, ow = conv_out(x[2], w[2], s[0], p[0], dl[0]), conv_out(x[3], w[3], s[1], p[1], dl[1])
            f = 2 * x[0] * w[0] * w[1] * w[2] * w[3] * oh * ow
            out[n] += f if n == "aten::convolution" else 2 * f
    return out


def analyzer_flops(ana):
    out = defaultdict(int)
    for r in ana["rows"]:
        if not r.get("flops"):
            continue
        op = r.get("op") or r.get("name")
        sdpa = op.startswith("aten::_scaled_dot_product_cudnn_attention") or (
            op == "aten::bmm" and "sdpa" in ana.get("_case", ""))
        out["sdpa" if sdpa else op] += r["flops"]
    return out


def main():
    d, names = sys.argv[1], sys.argv[2:]
    table, clocks, ovh, dropped, device = [], [], None, 0, None
    for name in names:
        try:
            trace = json.load(open(f"{d}/{name}.json"))
            ana = json.load(open(f"{d}/{name}.analyze.json"))
        except (OSError, ValueError) as e:
            fail(f"{name}: {e}")
            continue
        ana["_case"] = name
        for key in ("schemaVersion", "deviceProperties", "baseTimeNanoseconds", "traceEvents", "kprof"):
            if key not in trace:
                fail(f"{name}: top-level key {key} missing")
        dp = trace["deviceProperties"][0]
        for key in ("clockRate", "memoryClockRate", "memoryBusWidth", "numSms", "name"):
            if key not in dp:
                fail(f"{name}: deviceProperties lacks {key}")
        device = dp.get("name")
        kp = trace["kprof"]
        dropped += kp.get("dropped_records", 0)
        if kp.get("clock") != "nvml":
            fail(f"{name}: kprof.clock is {kp.get('clock')}")
        if "overhead_ratio" in kp:
            ovh = kp["overhead_ratio"]
        ev = trace["traceEvents"]
        kernels = [e for e in ev if e.get("cat") == "kernel"]
        counters = [e for e in ev if e.get("ph") == "C" and e.get("cat") == "gpu_clock"]
        steps = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
        if not kernels or not counters or not steps:
            fail(f"{name}: {len(kernels)} kernels, {len(counters)} clock samples, {len(steps)} steps")
        unlinked = [k for k in kernels if "External id" not in k["args"]]
        if unlinked:
            fail(f"{name}: {len(unlinked)} kernels without External id, e.g. {unlinked[0]['name'][:60]}")
        noclk = [k for k in kernels if "sm_clock_mhz" not in k["args"]]
        if noclk:
            fail(f"{name}: {len(noclk)} kernels without sm_clock_mhz")
        clocks += [k["args"]["sm_clock_mhz"] for k in kernels if "sm_clock_mhz" in k["args"]]
        flows = sum(1 for e in ev if e.get("ph") == "f")
        if flows < len(kernels):
            fail(f"{name}: {flows} ac2g flow ends for {len(kernels)} kernels")

        dev = ana["device"]
        if dev.get("clock_source") != "trace":
            fail(f"{name}: analyze clock_source is {dev.get('clock_source')}")
        want, got = closed_form(trace), analyzer_flops(ana)
        for op, f in want.items():
            if got.get(op) != f:
                fail(f"{name}: {op}: kprof analyze counts {got.get(op)} FLOPs, closed form {f}")
        for r in ana["rows"]:
            if r.get("flops"):
                table.append((name, r.get("op") or r["name"], r.get("shape") or "", r.get("dtype") or "",
                              r["calls"], r["flops_per_s"], r.get("pct_peak_flops")))
        if name == "mm_large":
            rows = [r for r in ana["rows"] if (r.get("op") == "aten::mm" and r.get("dtype") == "bf16")]
            if len(rows) != 1:
                fail(f"mm_large: {len(rows)} bf16 aten::mm rows")
            else:
                pct = rows[0].get("pct_peak_flops")
                if pct is None or not 70 <= pct <= 95:
                    fail(f"mm_large: bf16 8192^3 aten::mm at {pct} % of the clock-adjusted peak (want 70-95)")

    print()
    print(f"device          {device}")
    if clocks:
        print(f"SM clock seen   {min(clocks):.0f}-{max(clocks):.0f} MHz over kernels "
              f"(mean {sum(clocks) / len(clocks):.0f} MHz, {len(clocks)} kernels)")
    print(f"overhead ratio  {ovh:.3f}x (traced / untraced loop)" if ovh else "overhead ratio  not measured")
    print(f"dropped records {dropped}")
    print()
    print(f"{'case':<11} {'calls':>5} {'TFLOP/s':>8} {'%peak':>6}  {'dtype':<5} {'op':<28} shape")
    for name, op, shape, dt, calls, fps, pct in table:
        pcts = f"{pct:6.1f}" if pct is not None else "   N/A"
        print(f"{name:<11} {calls:>5} {fps / 1e12:8.1f} {pcts}  {dt:<5} {op:<28} {shape}")
    print()
    print("check.py:", "FAIL" if fails else "ok", f"({len(fails)} failures)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
