#!/usr/bin/env python3
"""
tests/gpu/record_gate.py — real recordings for kprof diff's gate and op-shape pairing.

  python3 tests/gpu/record_gate.py train OUT.json.gz [--fp32-block N]
  python3 tests/gpu/record_gate.py infer OUT_EAGER.json.gz OUT_COMPILED.json.gz

train: LAYERS blocks of LayerNorm -> Linear(d, 4d) -> GELU -> Linear(4d, d) (+ residual), a
Linear head and an MSE loss, bf16 autocast, forward + backward + AdamW; torch.profiler with
record_shapes=True and schedule(wait=1, warmup=2, active=6): 6 ProfilerStep spans.
--fp32-block N runs block N outside autocast, in fp32 (the "one layer switched to fp32" case).
infer: the same blocks in bf16 under no_grad, eager and torch.compile'd (default mode), each
profiled over 6 active steps after warm-up (compilation happens before the profiler starts).
Traces are written gzip'ed.  Used for tests/golden/diff-gpu-* (see testdata/torch211-h100-gate/).
"""
import gzip
import os
import shutil
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule

D = 1024
TOKENS = 4096
LAYERS = 4
WARM = 5


class Block(nn.Module):
    def __init__(self, d, fp32=False):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.fp32 = fp32

    def forward(self, x):
        if self.fp32:
            with torch.autocast("cuda", enabled=False):
                h = x.float()
                return h + self.fc2(F.gelu(self.fc1(self.ln(h))))
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class Net(nn.Module):
    def __init__(self, fp32_block=-1):
        super().__init__()
        self.blocks = nn.ModuleList(Block(D, i == fp32_block) for i in range(LAYERS))
        self.head = nn.Linear(D, 256)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def write_gz(prof, path):
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(tmp)
    with open(tmp, "rb") as f, gzip.open(path, "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.unlink(tmp)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)", flush=True)


def profiled(fn, path, active=6):
    sched = schedule(wait=1, warmup=2, active=active, repeat=1)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 schedule=sched, on_trace_ready=lambda p: write_gz(p, path)) as prof:
        for _ in range(1 + 2 + active):
            fn()
            torch.cuda.synchronize()
            prof.step()


def train(path, fp32_block):
    torch.manual_seed(0)
    net = Net(fp32_block).cuda()
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
    x = torch.randn(TOKENS, D, device="cuda")
    y = torch.randn(TOKENS, 256, device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = net(x)
        loss = F.mse_loss(out.float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(WARM):
        step()
    torch.cuda.synchronize()
    profiled(step, path)


def infer(eager_path, compiled_path):
    torch.manual_seed(0)
    net = Net().cuda().to(torch.bfloat16).eval()
    x = torch.randn(TOKENS, D, device="cuda", dtype=torch.bfloat16)
    cnet = torch.compile(net)
    for name, m, path in (("eager", net, eager_path), ("compiled", cnet, compiled_path)):
        def step(m=m):
            with torch.no_grad():
                m(x)
        for _ in range(WARM):
            step()
        torch.cuda.synchronize()
        profiled(step, path)
        print(f"{name}: done", flush=True)


def main(argv):
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    if len(argv) >= 2 and argv[0] == "train":
        fp32_block = -1
        if len(argv) == 4 and argv[2] == "--fp32-block":
            fp32_block = int(argv[3])
        train(argv[1], fp32_block)
    elif len(argv) == 3 and argv[0] == "infer":
        infer(argv[1], argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
