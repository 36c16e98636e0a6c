#!/usr/bin/env python3
"""record_ranks.py — two-rank DDP traces for kprof analyze's multi-rank view.

A small MLP (4 x Linear 4096x4096, bf16) trained with DistributedDataParallel over NCCL, one
process a GPU, under torch.profiler (8 steps: 1 wait, 1 warmup, 6 active, record_shapes).
Rank 1 is a planted host-side straggler: it sleeps STRAGGLE_MS before the forward pass of
every odd step, so its gradient all-reduces start that much later and the other rank waits
inside NCCL.  Each rank writes OUTDIR/rank<r>.json.gz (Chrome trace with distributedInfo).

usage: python3 tests/gpu/record_ranks.py OUTDIR [--world 2] [--straggle-ms 20]
"""
import argparse
import gzip
import os
import shutil
import time

# NVLink multicast stays off on the lent machines (KINDS.md)
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
os.environ.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
os.environ.setdefault("NVSHMEM_DISABLE_NVLS", "1")

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def worker(rank, world, outdir, straggle_ms):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29533"
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    torch.manual_seed(0)
    d = 4096
    model = torch.nn.Sequential(*[torch.nn.Linear(d, d) for _ in range(4)]).cuda().to(torch.bfloat16)
    ddp = DDP(model, device_ids=[rank], bucket_cap_mb=25)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(8192, d, device="cuda", dtype=torch.bfloat16)
    # warm NCCL and cuBLAS outside the profile
    for _ in range(3):
        ddp(x).float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    dist.barrier()
    sched = torch.profiler.schedule(wait=1, warmup=1, active=6, repeat=1)
    path = os.path.join(outdir, f"rank{rank}.json")
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, schedule=sched, record_shapes=True,
                                on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for step in range(8):
            if rank == 1 and step % 2 == 1:
                time.sleep(straggle_ms / 1000.0)
            loss = ddp(x).float().pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            prof.step()
    torch.cuda.synchronize()
    dist.barrier()
    dist.destroy_process_group()
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
        shutil.copyfileobj(f, g)
    os.remove(path)
    print(f"rank {rank}: wrote {path}.gz ({os.path.getsize(path + '.gz')} bytes)", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--straggle-ms", type=float, default=20.0)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    n = torch.cuda.device_count()
    if n < a.world:
        print(f"record_ranks: {a.world} GPUs needed, {n} present; skipped")
        raise SystemExit(77)
    print(f"torch {torch.__version__}, NCCL {torch.cuda.nccl.version()}, {n} x {torch.cuda.get_device_name(0)}", flush=True)
    mp.spawn(worker, args=(a.world, a.outdir, a.straggle_ms), nprocs=a.world, join=True)


if __name__ == "__main__":
    main()
