#!/bin/bash
# tests/gpu/gate.sh — kprof diff's gate on real recordings: a training script recorded twice
# (must pass --fail-above 2), once with one block in fp32 (must trip, naming an fp32 op), and
# eager vs torch.compile inference (every matmul pairs under --key op-shape).  Records with
# tests/gpu/record_gate.py; builds nothing.  Called by tests/gpu/run.sh.
#   tests/gpu/gate.sh [OUTDIR]
set -u
KPROF=${KPROF:-build/kprof}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}
REC="$(dirname "$0")/record_gate.py"
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1 PYTHONUNBUFFERED=1
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

python3 "$REC" train "$DIR/train_a.json.gz" || bad "record train_a"
python3 "$REC" train "$DIR/train_b.json.gz" || bad "record train_b"
python3 "$REC" train "$DIR/train_fp32.json.gz" --fp32-block 2 || bad "record train_fp32"
python3 "$REC" infer "$DIR/infer_eager.json.gz" "$DIR/infer_compiled.json.gz" || bad "record infer"

for k in kernel op-shape; do
	"$KPROF" diff --key $k --fail-above 2 -n 5 "$DIR/train_a.json.gz" "$DIR/train_b.json.gz" ||
		bad "unchanged pair tripped --fail-above 2 (--key $k)"
done
"$KPROF" diff --key op-shape --fail-above 2 -n 5 "$DIR/train_a.json.gz" "$DIR/train_fp32.json.gz" \
	2>"$DIR/fp32.err"
rc=$?
cat "$DIR/fp32.err"
[ $rc -eq 1 ] || bad "fp32 block: exit $rc, not 1"
grep -q "^kprof: regression: 'aten::[a-z]*mm .* fp32' (new)" "$DIR/fp32.err" || bad "fp32 block: no fp32 matmul named"
"$KPROF" diff --key op-shape -f json -n 0 "$DIR/infer_eager.json.gz" "$DIR/infer_compiled.json.gz" \
	>"$DIR/infer.json" || bad "diff eager compiled"
python3 - "$DIR/infer.json" <<'PY' || fail=1
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
mm = [r for r in rows if r["key"].split(" ")[0] in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")]
for r in mm:
    print(r["status"], r["key"])
bad = [r for r in mm if r["status"] in ("new", "gone")]
if not mm or bad:
    print("FAIL: eager vs compiled: matmuls left unpaired:", [r["key"] for r in bad] or "no matmul rows")
    sys.exit(1)
print(f"ok: {len(mm)} matmul rows paired")
PY
exit $fail
