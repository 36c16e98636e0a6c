#!/bin/bash
# tests/gpu/obs_probe.sh — kprof's op observer (capture/intercept/python/kprof_torch_obs.cpp) on
# a GPU: bench/torch-obs-cost.py's per-op costs by mode; the ranges the observer opens around a
# small fwd+bwd (count per category, thread and name); and tests/gpu/cnn_train.py under the
# hook with the observer and with emit_nvtx (KPROF_TORCH_OBSERVER=off), traces kept (gzip).
# Builds nothing (build/kprof, build/*.so, build/python/).
#   tests/gpu/obs_probe.sh [OUTDIR]
set -u
KPROF=${KPROF:-build/kprof}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}/obs_probe
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1
"$KPROF" capture --torch off -o "$DIR/cost.json" -- python3 bench/torch-obs-cost.py >"$DIR/cost.txt" 2>&1
grep "^|\|^observer:" "$DIR/cost.txt"
rm -f "$DIR/cost.json"
"$KPROF" capture --torch off -o "$DIR/bwd.json" -- python3 bench/torch-obs-cost.py backward >"$DIR/bwd.txt" 2>&1
grep -h "observer:\|NVTX ranges" "$DIR/bwd.txt"
python3 - "$DIR/bwd.json" <<'PY'
import collections, json, sys
t = json.load(open(sys.argv[1]))
c = collections.Counter((e.get("cat"), e.get("tid"), e.get("name")) for e in t["traceEvents"]
                        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation"))
for (cat, tid, name), n in sorted(c.items(), key=lambda kv: (str(kv[0][1]), kv[0][2])):
    print("%4d %-15s %-8s %s" % (n, cat, tid, name))
PY
for m in auto off; do
	KPROF_TORCH_OBSERVER=$m "$KPROF" capture -o "$DIR/cnn_$m.json" -- python3 tests/gpu/cnn_train.py plain 3 >"$DIR/cnn_$m.txt" 2>&1
	grep -h "NVTX ranges\|backward ops" "$DIR/cnn_$m.txt"
	gzip -f "$DIR/cnn_$m.json"
done
