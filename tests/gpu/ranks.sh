#!/bin/bash
# tests/gpu/ranks.sh — two-rank DDP traces (tests/gpu/record_ranks.py: NCCL all-reduces, rank 1
# sleeps 20 ms before the forward pass of every odd step) analyzed by kprof analyze: two ranks
# from distributedInfo, all-reduce rows with a size and bus bandwidth, and rank 1 the straggler
# of the odd steps.  Builds nothing (carry build/).  Exit 77 with fewer than 2 GPUs.
#   tests/gpu/ranks.sh [OUTDIR]
set -u
KPROF=${KPROF:-build/kprof}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1 PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
test -x "$KPROF" || { echo "tests/gpu: $KPROF not built"; exit 2; }
python3 "$HERE/record_ranks.py" "$DIR" --world 2 --straggle-ms 20
rc=$?
[ $rc = 0 ] || exit $rc
"$KPROF" analyze -j 2 "$DIR/rank0.json.gz" "$DIR/rank1.json.gz" | tee "$DIR/ranks.txt" | cut -c1-220
"$KPROF" analyze -j 2 -f json "$DIR/rank0.json.gz" "$DIR/rank1.json.gz" >"$DIR/ranks.json" ||
	{ echo "FAIL: kprof analyze of the two ranks"; exit 1; }
python3 - "$DIR/ranks.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fail = []
ranks = d["ranks"]
if [r["rank"] for r in ranks] != [0, 1] or any(r["rank_from"] != "distributedInfo" for r in ranks):
    fail.append("ranks 0 and 1 from distributedInfo")
# kernels whose record_param_comms fell before the active window carry no metadata: "-" rows
ar = [c for c in d["collectives"] if c["name"] == "allreduce" and c["bytes"] is not None]
if not ar or any(c["busbw_bytes_per_s"] is None or c["busbw_bytes_per_s"] <= 0 for c in ar):
    fail.append("all-reduce rows with bytes and busbw")
odd = [s for s in d["stragglers"] if s["step"] % 2 == 1]
late = [s for s in odd if s["rank"] == 1 and s["lag_ns"] >= 15_000_000]
if len(odd) < 2 or len(late) < len(odd) - 1:
    fail.append(f"rank 1 late by >= 15 ms in the odd steps: {odd}")
for f in fail:
    print("FAIL:", f)
print("ranks: ok" if not fail else "ranks: FAIL")
sys.exit(1 if fail else 0)
PY
