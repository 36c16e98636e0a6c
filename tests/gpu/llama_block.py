"""tests/gpu/llama_block.py — a small llama-style block (RMSNorm, GQA attention with SDPA, SwiGLU
MLP, a biased output head), bf16, forward + backward, eager: the unchanged program of issue 7
(a)/(b).

    python3 llama_block.py plain    [ITERS]    # what `kprof capture -- python3 ...` runs
    python3 llama_block.py nvtx     [ITERS]    # the same loop under emit_nvtx(record_shapes=True)
    python3 llama_block.py profiler [ITERS] OUT.json  # the same loop under torch.profiler
    python3 llama_block.py flops                      # one step's FLOPs per op (FlopCounterMode)
    python3 llama_block.py graph    [ITERS]    # forward captured in a CUDA graph, replayed ITERS times
    python3 llama_block.py compile  [ITERS]    # torch.compile(mode="reduce-overhead") inference
    python3 llama_block.py compile_nvtx [ITERS]  # the same under emit_nvtx(record_shapes=True)

LLAMA_SDPA=flash|cudnn|efficient|math picks SDPA's backend (default: PyTorch's choice; cuDNN on
H200 with torch 2.11).
"""
import os
import sys

import torch
import torch.nn.functional as F

torch.manual_seed(0)
dev, dt = "cuda", torch.bfloat16
B, S, D, H, HKV, FF = 4, 512, 1024, 16, 4, 2816
HD = D // H


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.n1 = torch.nn.RMSNorm(D)
        self.wq = torch.nn.Linear(D, D, bias=False)
        self.wkv = torch.nn.Linear(D, 2 * HKV * HD, bias=False)
        self.wo = torch.nn.Linear(D, D, bias=False)
        self.n2 = torch.nn.RMSNorm(D)
        self.w13 = torch.nn.Linear(D, 2 * FF, bias=False)
        self.w2 = torch.nn.Linear(FF, D, bias=False)
        self.head = torch.nn.Linear(D, 512, bias=True)

    def forward(self, x):
        h = self.n1(x)
        q = self.wq(h).view(B, S, H, HD).transpose(1, 2)
        k, v = self.wkv(h).view(B, S, 2, HKV, HD).permute(2, 0, 3, 1, 4)
        k = k.repeat_interleave(H // HKV, dim=1)
        v = v.repeat_interleave(H // HKV, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(B, S, D))
        g, u = self.w13(self.n2(x)).chunk(2, dim=-1)
        x = x + self.w2(F.silu(g) * u)
        # a batched matmul (bmm) as attention-score probes do
        s = torch.bmm(x[:, :64], x[:, :64].transpose(1, 2))
        return self.head(x).float().pow(2).mean() + s.float().mean()



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

def build():
    """The block, its input and one forward + backward step (bench/hook-inproc.py times it in
    its own process)."""
    sdpa = os.environ.get("LLAMA_SDPA")
    if sdpa:
        # the process-wide switches (an sdpa_kernel() context would need to stay open)
        want = {"efficient": "mem_efficient"}.get(sdpa, sdpa)
        if want not in ("flash", "cudnn", "mem_efficient", "math"):
            sys.exit("unknown LLAMA_SDPA " + sdpa)
        for b in ("flash", "cudnn", "mem_efficient", "math"):
            getattr(torch.backends.cuda, f"enable_{b}_sdp")(b == want)
    m = Block().to(dev, dt)
    x = torch.randn(B, S, D, device=dev, dtype=dt, requires_grad=True)

    def step():
        m.zero_grad(set_to_none=True)
        m(x).backward()

    return m, x, step


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "plain"
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    m, x, step = build()

    def loop():
        timed_loop(step, iters)

    if mode == "plain":
        loop()
    elif mode == "flops":
        flop_counts(step)
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
    elif mode == "graph":
        xs = x.detach()
        with torch.no_grad():
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(2):
                    m(xs)
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                m(xs)
            for _ in range(iters):
                g.replay()
        torch.cuda.synchronize()
    elif mode in ("compile", "compile_nvtx"):
        import contextlib
        cm = torch.compile(m, mode="reduce-overhead")
        xs = x.detach()
        ctx = (torch.autograd.profiler.emit_nvtx(record_shapes=True) if mode == "compile_nvtx"
               else contextlib.nullcontext())
        with torch.no_grad(), ctx:
            for _ in range(3 + iters):  # warm-up, recording, then replays
                cm(xs)
        torch.cuda.synchronize()
    else:
        sys.exit("unknown mode " + mode)
    print("llama-ok", mode, iters)


if __name__ == "__main__":
    main()
