"""bench/rf-floor.py — a program under one of the op observer's modes, started here instead of
by the torch hook, so that bench/hook-floor.sh can time what each layer of the hook costs:

    kprof capture --torch off -o t.json -- python3 bench/rf-floor.py MODE PROG.py ARGS...

MODE: noop (RecordFunction callbacks for ops and autograd nodes that do nothing, no inputs
asked), noop-inputs (the same with the ops' inputs asked for, as the hook's observer does:
torch's own cost of such an observer), names (ranges with names only), shapes (the hook's
observer; no module hooks), unrecorded (the hook's messages composed, no range recorded).  The observer needs kprof-shim.so (kprof capture's); PROG.py runs
as __main__ with ARGS."""
import ctypes
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# the hook's Python files beside the kprof that runs this (bench/hook-floor.sh sets it)
sys.path.insert(0, os.environ.get("KPROF_PYTHON") or os.path.join(HERE, "..", "build", "python"))
MODES = {"names": 0, "shapes": 1, "noop-inputs": 4, "noop": 5, "unrecorded": 6}  # kprof_torch_obs.cpp OBS_*

if len(sys.argv) < 3 or sys.argv[1] not in MODES:
    sys.exit("usage: rf-floor.py %s PROG.py [ARGS...]" % "|".join(MODES))
import torch  # noqa: E402
import kprof_torch_hook  # noqa: E402

so, why = kprof_torch_hook.observer_so(torch)
if so is None:
    sys.exit("rf-floor: no observer: %s" % why)
obs = ctypes.CDLL(so)
obs.kprof_obs_start.argtypes = [ctypes.c_int]
if obs.kprof_obs_start(MODES[sys.argv[1]]) != 0:
    sys.exit("rf-floor: the observer did not start (no kprof-shim.so: run under kprof capture)")
prog = sys.argv[2]
sys.argv = sys.argv[2:]
sys.path.insert(0, os.path.dirname(os.path.abspath(prog)))
runpy.run_path(prog, run_name="__main__")
