#!/usr/bin/env python3
"""Record PyTorch profiler traces kprof has never seen, with FlopCounterMode's counts, and
check `kprof analyze --group-by op` against them (GPU machine only).

  python3 tests/gpu/torch_unseen.py build/kprof OUTDIR

FlopCounterMode counts causal attention as dense; kprof counts the unmasked pairs, so the
expected figure for a causal call is FC x pairs/(S_q*S_k).  GQA calls (which FC rejects) are
checked against the closed form with the query heads.
"""
import json
import os
import subprocess
import sys
from collections import defaultdict

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile
from torch.utils.flop_counter import FlopCounterMode

kprof, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
dev = "cuda"


def causal_pairs(sq, sk):
    return sum(min(i + 1, sk) for i in range(sq))


def fc_count(fn):
    fc = FlopCounterMode(display=False)
    with fc:
        fn()
    return {str(k).replace("aten.", "aten::"): v for k, v in fc.get_flop_counts()["Global"].items()}


def record(name, fn, expect):
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as p:
        fn()
        torch.cuda.synchronize()
    path = os.path.join(out, name + ".json")
    p.export_chrome_trace(path)
    return path, expect


cases = []

# matmuls: odd shapes, 3-D linear, fp32 with TF32 on and off, fp16 bmm
a = torch.randn(1000, 3000, device=dev, dtype=torch.bfloat16)
b = torch.randn(3000, 700, device=dev, dtype=torch.bfloat16)
x3 = torch.randn(4, 333, 512, device=dev, dtype=torch.bfloat16)
w = torch.randn(1536, 512, device=dev, dtype=torch.bfloat16)
bias = torch.randn(1536, device=dev, dtype=torch.bfloat16)
bb1 = torch.randn(6, 130, 260, device=dev, dtype=torch.float16)
bb2 = torch.randn(6, 260, 90, device=dev, dtype=torch.float16)


def mm_work():
    torch.mm(a, b)
    F.linear(x3, w, bias)
    torch.bmm(bb1, bb2)
    torch.matmul(x3, w.t())


exp = fc_count(mm_work)
cases.append(record("mm_mixed", mm_work, exp))

f1 = torch.randn(2048, 1024, device=dev)
f2 = torch.randn(1024, 512, device=dev)


def fp32_work():
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.mm(f1, f2)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.mm(f2.t(), f1.t())


cases.append(record("mm_fp32_tf32", fp32_work, fc_count(fp32_work)))

# convolutions: stride, dilation, groups, transposed, with backward
xc = torch.randn(8, 32, 40, 40, device=dev, requires_grad=True)
wc = torch.randn(64, 8, 3, 3, device=dev, requires_grad=True)
wt = torch.randn(32, 16, 4, 4, device=dev, requires_grad=True)
wd = torch.randn(48, 32, 3, 3, device=dev, requires_grad=True)


def conv_work():
    y = F.conv2d(xc, wc, stride=2, padding=1, groups=4)
    z = F.conv_transpose2d(xc, wt, stride=2, padding=1)
    v = F.conv2d(xc, wd, dilation=2, padding=2)
    (y.sum() + z.sum() + v.sum()).backward()


conv_exp = fc_count(conv_work)
# FC counts a grouped conv's grad-weight as groups x the forward (it feeds t(x), t(grad_out)
# to the dense formula); its real work equals the forward's, so every backward with both
# gradients is exactly 2x its forward.  kprof counts the real work.
conv_exp["aten::convolution_backward"] = 2 * conv_exp["aten::convolution"]
cases.append(record("conv_variants", conv_work, conv_exp))

# attention: several backends, causal and not, S_q != S_k, GQA
sdpa_exp = defaultdict(int)


def add_sdpa(op, b_, h, sq, sk, d, causal, bwd):
    pairs = causal_pairs(sq, sk) if causal else sq * sk
    sdpa_exp[op] += 4 * b_ * h * d * pairs
    if bwd:
        sdpa_exp[op + "_backward"] += 10 * b_ * h * d * pairs


from torch.nn.attention import SDPBackend, sdpa_kernel

q1 = torch.randn(2, 8, 512, 64, device=dev, dtype=torch.float16, requires_grad=True)
k1 = torch.randn(2, 8, 512, 64, device=dev, dtype=torch.float16, requires_grad=True)
v1 = torch.randn(2, 8, 512, 64, device=dev, dtype=torch.float16, requires_grad=True)
q2 = torch.randn(3, 4, 200, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
k2 = torch.randn(3, 4, 300, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
qg = torch.randn(1, 8, 256, 128, device=dev, dtype=torch.bfloat16)
kg = torch.randn(1, 2, 256, 128, device=dev, dtype=torch.bfloat16)


def sdpa_work():
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        o = F.scaled_dot_product_attention(q1, k1, v1, is_causal=True)
        o.sum().backward()
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
        o = F.scaled_dot_product_attention(q2, k2, k2, is_causal=False)
        o.sum().backward()
        o = F.scaled_dot_product_attention(q1, k1, v1, is_causal=True)
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
        F.scaled_dot_product_attention(qg, kg, kg, is_causal=True, enable_gqa=True)


add_sdpa("aten::_scaled_dot_product_flash_attention", 2, 8, 512, 512, 64, True, True)
add_sdpa("aten::_scaled_dot_product_efficient_attention", 3, 4, 200, 300, 128, False, True)
add_sdpa("aten::_scaled_dot_product_efficient_attention", 2, 8, 512, 512, 64, True, False)
add_sdpa("aten::_scaled_dot_product_flash_attention", 1, 8, 256, 256, 128, True, False)
cases.append(record("sdpa_backends", sdpa_work, dict(sdpa_exp)))

fails = 0
rows_out = []
for path, expect in cases:
    r = subprocess.run([kprof, "analyze", "--group-by", "op", "--format", "json", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL", path, "exit", r.returncode, r.stderr[:500])
        fails += 1
        continue
    doc = json.loads(r.stdout)
    got = defaultdict(int)
    for row in doc["rows"]:
        if row["flops"] is not None:
            got[row["name"]] += row["flops"]
    for op, want in sorted(expect.items()):
        if op in ("aten::convolution_backward", "aten::convolution", "aten::mm", "aten::addmm",
                  "aten::bmm", "aten::baddbmm") or op.startswith("aten::_scaled_dot"):
            ok = got.get(op) == want
            fails += not ok
            rows_out.append((os.path.basename(path), op, want, got.get(op), "ok" if ok else "MISMATCH"))
    for row in doc["rows"]:
        for k in ("pct_peak_flops", "pct_peak_bw"):
            v = row[k]
            if v is not None and v > 100 and "over-peak" not in (row["flags"] or ""):
                print("FAIL unflagged over-peak", path, row["name"])
                fails += 1

print("%-16s %-52s %18s %18s %s" % ("trace", "op", "expected", "kprof", ""))
for r in rows_out:
    print("%-16s %-52s %18s %18s %s" % r)
print("torch_unseen: %d mismatches" % fails)
sys.exit(1 if fails else 0)
