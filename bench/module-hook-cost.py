#!/usr/bin/env python3
"""bench/module-hook-cost.py — what global nn.Module forward hooks cost a CPU-bound training step
(issue 24: the torch hook's module ranges), without kprof: tests/gpu/cnn_train.py's plain loop
run with no global hooks, with no-op global pre/post hooks, with hooks doing one part of
what kprof_torch_hook.make_hooks does each (is_compiling(), the module's name, a
torch.cuda.nvtx push/pop), and with kprof's hooks, each in its own process, ROUNDS interleaved rounds; prints ms per step (best and median
of the rounds) and the ratio to no hooks.

    python3 bench/module-hook-cost.py [ROUNDS] [STEPS]          # the driver
    python3 bench/module-hook-cost.py --run MODE STEPS            # one process
"""
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CNN = os.path.join(HERE, "..", "tests", "gpu", "cnn_train.py")
# none; no-op hooks; each part of kprof's hooks alone (torch.compiler.is_compiling(), the
# module's name, a torch.cuda.nvtx push/pop of a fixed text); kprof's hooks whole
MODES = ("none", "noop", "check", "name", "nvtx", "ranges")


def run(mode, steps):
    import torch
    from torch.nn.modules import module as M

    sys.path.insert(0, os.path.join(HERE, "..", "capture", "intercept", "python"))
    import kprof_torch_hook as h

    check, push, pop = h._is_compiling_fn(torch), torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop
    def hooks(before, after):
        """A pre and a post hook calling @before / @after and returning None (anything else
        would replace the module's inputs or output)."""
        def pre(mod, args):
            before(mod)

        def post(mod, args, out):
            after(mod)

        return pre, post

    parts = {
        "noop": hooks(lambda m: None, lambda m: None),
        "check": hooks(lambda m: check(), lambda m: check()),
        "name": hooks(h.module_message, h.module_message),
        "nvtx": hooks(lambda m: push("kprof: nn.Module: X_0"), lambda m: pop()),
        "ranges": h.make_hooks(push, pop, check),
    }
    if mode in parts:
        pre, post = parts[mode]
        M.register_module_forward_pre_hook(pre)
        M.register_module_forward_hook(post, always_call=True)
    os.environ["CNN_DTYPE"] = "bf16"
    sys.argv = [CNN, "plain", str(steps)]
    with open(CNN) as f:
        code = compile(f.read(), CNN, "exec")
    exec(code, {"__name__": "__main__", "__file__": CNN})


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--run":
        run(sys.argv[2], int(sys.argv[3]))
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    got = {m: [] for m in MODES}
    for _ in range(rounds):
        for m in MODES:
            out = subprocess.run([sys.executable, __file__, "--run", m, str(steps)],
                                 capture_output=True, text=True, env=dict(os.environ, CNN_DTYPE="bf16"))
            v = [l.split()[1] for l in out.stdout.splitlines() if l.startswith("step_ms ")]
            if out.returncode or not v:
                sys.exit("module-hook-cost: %s failed: %s" % (m, out.stderr[-500:]))
            got[m].append(float(v[-1]))
    base = min(got["none"])
    print("| global module hooks | best ms/step | median ms/step | best / none | per module call (20 a step) |")
    print("|---|---:|---:|---:|---:|")
    for m in MODES:
        b, med = min(got[m]), statistics.median(got[m])
        print("| %s | %.4f | %.4f | %.3fx | %.2f us |" % (m, b, med, b / base, (b - base) * 1000 / 20))


main()
