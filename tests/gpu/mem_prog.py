"""tests/gpu/mem_prog.py — a small training loop whose allocator figures kprof's --memory must match.

A two-layer MLP trained for STEPS steps at batch BATCH (default 10, 4096) with Adam, then an
8 GiB temporary (the peak, about 10.8 GB reserved; cuBLAS's own cudaMalloc calls, which
CUPTI counts and torch does not, kprof leaves out: doc/memory.md §6.2), one
torch.cuda.empty_cache() in the middle (segments released: CUPTI release records) and more
steps.  At the end it prints, one per line:
    max_memory_reserved <bytes>
    max_memory_allocated <bytes>
    memory_reserved <bytes>
from torch.cuda's counters since the process started (never reset: kprof's CUPTI records start
with the process too).  Used by tests/gpu/memory_capture.sh.
    python3 tests/gpu/mem_prog.py [STEPS [BATCH [segments]]]
With "segments" it also prints torch's segments at the peak ("segment ADDR BYTES POOL"), for
tests/gpu/mem_allocs.py.
"""
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
dev = torch.device("cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(4096, 8192), torch.nn.GELU(), torch.nn.Linear(8192, 4096)
).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-4)
x = torch.randn(batch, 4096, device=dev)


def train(n):
    for _ in range(n):
        opt.zero_grad(set_to_none=True)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()


train(steps // 2)
big = torch.empty(8 * 1024**3, dtype=torch.uint8, device=dev)  # an 8 GiB temporary: the peak
big.fill_(1)
if len(sys.argv) > 3 and sys.argv[3] == "segments":  # torch's segments at the peak, to compare
    for seg in torch.cuda.memory_snapshot():
        print("segment", seg["address"], seg["total_size"], seg.get("segment_type", "?"))
del big
torch.cuda.synchronize()
torch.cuda.empty_cache()
train(steps - steps // 2)
torch.cuda.synchronize()
print("max_memory_reserved", torch.cuda.max_memory_reserved())
print("max_memory_allocated", torch.cuda.max_memory_allocated())
print("memory_reserved", torch.cuda.memory_reserved())
