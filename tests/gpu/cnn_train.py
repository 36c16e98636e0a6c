"""tests/gpu/cnn_train.py — a small CNN (ResNet-like convolutions with BatchNorm and ReLU, a
strided and a grouped convolution, a linear head), forward + backward + SGD step: the unchanged
training loop of issue 23 item 2 (conv backward FLOPs under emit_nvtx).

    python3 cnn_train.py plain    [ITERS]           # what `kprof capture -- python3 ...` runs
    python3 cnn_train.py nvtx     [ITERS]           # the same loop under emit_nvtx(record_shapes=True)
    python3 cnn_train.py profiler [ITERS] OUT.json  # the same loop under torch.profiler
    python3 cnn_train.py flops                      # one step's FLOPs per op (FlopCounterMode)
Every loop prints step_ms, the mean wall time of a step after the first (tests/gpu/hook_cost.sh).

CNN_DTYPE=fp32|bf16 (default fp32: cuDNN runs TF32 kernels, as a default PyTorch training does).
"""
import os
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
dev = "cuda"
dt = {"fp32": torch.float32, "bf16": torch.bfloat16}[os.environ.get("CNN_DTYPE", "fp32")]


def block(cin, cout, stride=1, groups=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))



def timed_loop(step, iters):
    """ITERS steps; the first is a warm-up.  Prints the mean of the others (step_ms: wall time
    from a sync before them to a sync after, over ITERS - 1) and the median of their times one
    by one (step_med_ms: from one step's start to the next's, no sync between steps, so that a
    stall in a few steps does not move it; bench/hook-floor.sh)."""
    import time
    step()
    torch.cuda.synchronize()
    t = [time.perf_counter()]
    for _ in range(iters - 1):
        step()
        t.append(time.perf_counter())
    torch.cuda.synchronize()
    end = time.perf_counter()
    if iters > 1:
        print("step_ms %.4f" % ((end - t[0]) * 1e3 / (iters - 1)))
        d = sorted(b - a for a, b in zip(t, t[1:]))
        print("step_med_ms %.4f" % (d[len(d) // 2] * 1e3))


def flop_counts(step):
    """One step under FlopCounterMode: FLOPs per aten op (one line each, 'flops OP N')."""
    from torch.utils.flop_counter import FlopCounterMode
    step()
    torch.cuda.synchronize()
    with FlopCounterMode(display=False) as fc:
        step()
    torch.cuda.synchronize()
    for op, n in sorted(fc.get_flop_counts()["Global"].items(), key=str):
        print("flops %s %d" % (op, n))


def conv_flops(model, step):
    """One step's convolution FLOPs from the model's own shapes: forward 2*N*Cout*Ho*Wo*(Cin/g)*kh*kw
    per Conv2d; backward the same for the weight gradient, and again for the input gradient when
    the input requires one.  (torch 2.11's FlopCounterMode counts a grouped convolution's weight
    gradient `groups` times: pytorch/pytorch#183405.)"""
    total = []

    def hook(mod, inp, out):
        n, cout, ho, wo = out.shape
        kh, kw = mod.kernel_size
        f = 2 * n * cout * ho * wo * (mod.in_channels // mod.groups) * kh * kw
        total.append(f * (3 if inp[0].requires_grad else 2))

    hs = [mod.register_forward_hook(hook) for mod in model.modules()
          if isinstance(mod, torch.nn.Conv2d)]
    step()
    torch.cuda.synchronize()
    for h in hs:
        h.remove()
    return sum(total)

def build():
    """The model and one training step (bench/hook-inproc.py times it in its own process)."""
    m = nn.Sequential(
        nn.Conv2d(3, 32, 7, 2, 3, bias=False), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
        block(32, 64), block(64, 64, groups=4), block(64, 128, stride=2),
        nn.Conv2d(128, 128, 1, bias=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(128, 10)).to(dev, dt)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    x = torch.randn(16, 3, 64, 64, device=dev, dtype=dt)
    y = torch.randint(0, 10, (16,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(m(x).float(), y).backward()
        opt.step()

    return m, step


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "plain"
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    m, step = build()

    def loop():
        timed_loop(step, iters)

    if mode == "plain":
        loop()
    elif mode == "flops":
        flop_counts(step)
        print("analytic conv %d" % conv_flops(m, step))
    elif mode == "nvtx0":
        with torch.autograd.profiler.emit_nvtx(record_shapes=False):
            loop()
    elif mode == "nvtx":
        with torch.autograd.profiler.emit_nvtx(record_shapes=True):
            loop()
    elif mode == "profiler":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as p:
            loop()
        p.export_chrome_trace(sys.argv[3])
    else:
        sys.exit("unknown mode " + mode)
    print("cnn-ok", mode, iters)


if __name__ == "__main__":
    main()
