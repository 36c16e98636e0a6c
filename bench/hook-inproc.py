"""bench/hook-inproc.py — the torch hook's layers timed in one process, phase against phase,
so that what one layer costs is not lost in the spread between processes (bench/hook-floor.sh
found rounds of one mode 0.3-0.7x of plain apart, process to process):

    kprof capture --torch off -o t.json -- python3 bench/hook-inproc.py cnn_train|llama_block [REPS] [STEPS]

Builds the program's model and training step (tests/gpu/PROG.py build()), warms up, then
REPS times runs STEPS steps in each mode, the modes' order rotating from one repetition to
the next, a sync before and after each phase:
  none         no observer, no module hooks (what `kprof capture --torch off` costs alone)
  noop         RecordFunction callbacks that do nothing (kprof_torch_obs.cpp OBS_NOOP)
  noop-inputs  the same asking for the ops' inputs (OBS_NOOP_INPUTS): torch's own cost
  unrecorded   the observer's messages composed, not recorded (OBS_UNRECORDED)
  names        ranges with names only (OBS_NAMES, the hook's --no-torch-shapes)
  shapes       the observer (OBS_SHAPES)
  hook         the observer and the hook's global module hooks: what `kprof capture` runs
  modules      the hook's global module hooks alone (their ranges, no observer)
  modules-noop global module hooks that do nothing (nn.Module's slow path alone)
MODES=a,b,... picks some of them (none is always run: the ratios are to it).
Prints per mode the median over repetitions of its ms/step and of its ratio to that
repetition's none phase.  Under kprof capture --torch off (the observer needs kprof-shim.so);
CNN_DTYPE=bf16 is set unless given."""
import ctypes
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# the hook's Python files beside the kprof that runs this, when KPROF_PYTHON says where
sys.path.insert(0, os.environ.get("KPROF_PYTHON") or os.path.join(HERE, "..", "build", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "gpu"))
os.environ.setdefault("CNN_DTYPE", "bf16")
ALL = ["none", "noop", "noop-inputs", "unrecorded", "names", "shapes", "hook", "modules",
       "modules-noop"]
MODES = ["none"] + [m for m in os.environ.get("MODES", ",".join(ALL)).split(",")
                    if m in ALL and m != "none"]
OBS = {"names": 0, "shapes": 1, "hook": 1, "noop-inputs": 4, "noop": 5, "unrecorded": 6}

if len(sys.argv) < 2 or sys.argv[1] not in ("cnn_train", "llama_block"):
    sys.exit("usage: hook-inproc.py cnn_train|llama_block [REPS] [STEPS]")
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 6
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 60
import torch  # noqa: E402
import kprof_torch_hook as hook  # noqa: E402

prog = __import__(sys.argv[1])
step = prog.build()[-1]
so, why = hook.observer_so(torch)
if so is None:
    sys.exit("hook-inproc: no observer: %s" % why)
obs = ctypes.CDLL(so)
obs.kprof_obs_start.argtypes = [ctypes.c_int]


def set_mode(m):
    obs.kprof_obs_stop()
    for h in hook._st["handles"]:
        h.remove()
    hook._st["handles"].clear()
    if m in OBS and obs.kprof_obs_start(OBS[m]) != 0:
        sys.exit("hook-inproc: the observer did not start (run under kprof capture --torch off)")
    if m in ("hook", "modules"):
        hook.install_module_hooks(torch)
    elif m == "modules-noop":
        from torch.nn.modules import module as M
        hook._st["handles"].extend([M.register_module_forward_pre_hook(lambda *a: None),
                                    M.register_module_forward_hook(lambda *a: None,
                                                                   always_call=True)])


def phase():
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3 / steps


for m in MODES:  # each mode once: the observer built and every path warm
    set_mode(m)
    for _ in range(5):
        step()
ms = {m: [] for m in MODES}
for r in range(reps):
    order = MODES[r % len(MODES):] + MODES[:r % len(MODES)]
    for m in order:
        set_mode(m)
        ms[m].append(phase())
set_mode("none")
print("%s: %d repetitions of %d steps a mode" % (sys.argv[1], reps, steps))
print("| mode | median ms/step | median ratio to none | ratios |")
print("|---|---:|---:|---|")
for m in MODES:
    rs = [a / b for a, b in zip(ms[m], ms["none"])]
    print("| %s | %.4f | %.3fx | %s |" % (m, statistics.median(ms[m]), statistics.median(rs),
                                          " ".join("%.3f" % x for x in rs)))
