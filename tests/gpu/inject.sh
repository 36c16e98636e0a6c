#!/bin/bash
# tests/gpu/inject.sh — kprof capture -- <cmd>: a PyTorch matmul under injection, then kprof
# analyze on its trace; exit statuses of commands that fail, die or cannot run.  Called by
# tests/gpu/run.sh; builds nothing (build/kprof, build/kprof-capture.so, build/kprof-inject.so).
#   tests/gpu/inject.sh [OUTDIR]
set -u
KPROF=${KPROF:-build/kprof}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

echo "== capture -- python3 (torch bf16 matmul)"
read -r -d '' MM <<'PY'
import torch
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
for _ in range(20):
    c = a @ b
torch.cuda.synchronize()
print("torch-ok", bool(torch.isfinite(c).all()))
PY
# --torch off: this case checks the library-call path (the shim's GEMM ops); the torch hook has
# its own test (tests/gpu/torch_hook.sh)
"$KPROF" capture --torch off -o "$DIR/cmd_torch.json" -- python3 -c "$MM" >"$DIR/cmd_torch.out" 2>"$DIR/cmd_torch.err"
rc=$?
cat "$DIR/cmd_torch.out" "$DIR/cmd_torch.err"
[ $rc -eq 0 ] || bad "capture -- python3 exited $rc"
grep -qx 'torch-ok True' "$DIR/cmd_torch.out" || bad "the command's stdout did not pass through"
"$KPROF" analyze -n 5 "$DIR/cmd_torch.json" >"$DIR/cmd_torch.analyze" 2>&1 || bad "analyze cmd_torch.json"
cat "$DIR/cmd_torch.analyze"
grep -q '^# clock   trace: ' "$DIR/cmd_torch.analyze" || bad "analyze: clock source is not 'trace'"
"$KPROF" analyze --format json -n 0 "$DIR/cmd_torch.json" >"$DIR/cmd_torch.analyze.json" ||
	bad "analyze --format json cmd_torch.json"
python3 - "$DIR/cmd_torch.json" "$DIR/cmd_torch.analyze.json" <<'PY' || fail=1
import json, sys
from collections import Counter
t = json.load(open(sys.argv[1]))
ana = json.load(open(sys.argv[2]))
ev = t["traceEvents"]
fails = []
def check(ok, msg):
    print(("ok:   " if ok else "FAIL: ") + msg)
    if not ok:
        fails.append(msg)
k = t["kprof"]
cats = Counter(e.get("cat") for e in ev)
kern = [e for e in ev if e.get("cat") == "kernel"]
api = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")]
pids = {e["pid"] for e in api}
print("kprof:", {x: k[x] for x in ("command", "processes", "exit_status", "clock", "clock_samples",
                                   "sm_clock_max_mhz", "dropped_records") if x in k})
print("categories:", dict(cats))
check(k["command"][0] == "python3" and k["processes"] == 1 and k["exit_status"] == 0,
      "kprof object: command, 1 process, exit status 0")
check(k["clock"] == "nvml" and k["clock_samples"] > 0 and k["sm_clock_max_mhz"] > 0,
      "NVML clock samples from the parent")
check(cats["gpu_clock"] == k["clock_samples"], "one gpu_clock counter event per sample")
dp = t["deviceProperties"][0]
check(dp.get("clockRate", 0) > 0 and dp.get("numSms", 0) > 0, f"deviceProperties {dp['name']}, clockRate {dp.get('clockRate')}")
check(t.get("cupti_version", 0) >= 130000, f"cupti_version {t.get('cupti_version')}")
gemm = [e for e in kern if e["dur"] > 50 and e["args"]["grid"][0] * e["args"]["grid"][1] > 1]
names = Counter(e["name"] for e in kern)
top = max(names, key=lambda n: sum(e["dur"] for e in kern if e["name"] == n))
print("kernels:", sum(names.values()), "top:", top, names[top])
check(names[top] >= 20, "the 20 GEMMs of the script are recorded under one kernel name")
check(all("sm_clock_mhz" in e["args"] for e in kern), "every kernel has sm_clock_mhz")
check(len(pids) == 1 and next(iter(pids)) > 1, f"API calls from the python process (pid {pids})")
flows_s = {e["id"] for e in ev if e.get("ph") == "s"}
flows_f = {e["id"] for e in ev if e.get("ph") == "f"}
check(flows_f and flows_f <= flows_s, f"ac2g flows: {len(flows_f)} ends, each with a start")
check(all(e["args"]["correlation"] in flows_f for e in kern), "every kernel is a flow end")
check(any(e.get("ph") == "M" and e.get("name") == "process_name" and e["args"]["name"] == "python3"
          for e in ev), "process_name python3")
ops = [e for e in ev if e.get("cat") == "cpu_op"]
check(len(ops) == 20 and all(e["name"] == "aten::mm" and e["args"].get("kprof library call") == "cublasGemmEx"
                             for e in ops), f"the 20 matmuls are library ops aten::mm ({len(ops)} cpu_ops)")
# analyze shortens names (--name=short): match either way
hit = [r for r in ana["rows"] if r.get("name") and (r["name"] in top or top in r["name"])]
print("analyze rows:", [(r["name"][:60], r["calls"]) for r in ana["rows"][:5]])
check(any(r["calls"] == names[top] for r in hit), "kprof analyze lists the top kernel with its calls")
sys.exit(1 if fails else 0)
PY

echo "== exit statuses"
st() { # want, name, command...
	local want=$1 name=$2
	shift 2
	rm -f "$DIR/$name.json"
	"$KPROF" capture -o "$DIR/$name.json" -- "$@" >"$DIR/$name.out" 2>"$DIR/$name.err"
	local rc=$?
	sed 's/^/  /' "$DIR/$name.err"
	if [ $rc -eq "$want" ]; then echo "ok:   $name: exit $rc"; else bad "$name: exit $rc, want $want"; fi
}
st 3 exit3 sh -c 'exit 3'
[ -e "$DIR/exit3.json" ] && bad "exit3: a trace without CUDA activity was written"
st 127 notfound /nonexistent
printf "echo hi\n" >"$DIR/noexec.sh" && chmod 644 "$DIR/noexec.sh"
st 126 noexec "$DIR/noexec.sh"
st 7 torch_exit7 python3 -c 'import torch, sys; torch.ones(8, device="cuda").sum().item(); sys.exit(7)'
[ -s "$DIR/torch_exit7.json" ] || bad "torch_exit7: no trace although the process ran kernels"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); assert t["kprof"]["exit_status"] == 7; assert any(e.get("cat") == "kernel" for e in t["traceEvents"])' \
	"$DIR/torch_exit7.json" && echo "ok:   torch_exit7: trace with kernels, exit_status 7" || bad "torch_exit7 trace"
st 143 torch_sigterm python3 -c 'import torch, os, signal; torch.ones(8, device="cuda").sum().item(); os.kill(os.getpid(), signal.SIGTERM)'
[ $fail -eq 0 ] && echo "tests/gpu/inject.sh: PASS" || echo "tests/gpu/inject.sh: FAIL"
exit $fail
