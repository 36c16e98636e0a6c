"""kprof_torch_hook.py: an op with shapes over every kernel, and the nn.Module tree, from an
unchanged PyTorch program under `kprof capture -- python3 prog.py` (issue 24 item 6).

Armed by kprof's sitecustomize.py.  Nothing happens until the program imports torch; then
nothing until CUDA initialises in this process (torch.cuda._lazy_call), so a process that never
uses the GPU (a DataLoader worker, a helper) is left alone and CUDA is never initialised early.
On the thread that initialises CUDA it then
  - enters torch.autograd.profiler.emit_nvtx(record_shapes=True): every ATen op, autograd node,
    record_function label and Inductor Triton launch becomes an NVTX range
    "NAME, seq = S, op_id = I, sizes = [...]", which kprof turns into cpu_ops
    (capture/intercept/hostops.c); with KPROF_TORCH_SHAPES=0 (--no-torch-shapes)
    record_shapes=False: "NAME, seq = S", names only, at about half the cost (bench/RESULTS.md);
  - registers global forward pre/post hooks on nn.Module that push and pop the NVTX range
    "kprof: nn.Module: <Class>_<N>" (N per class, in first-call order, as torch.profiler's Python
    tracer numbers them), which kprof writes as python_function events.  No backward hooks
    (they break in-place ops, pytorch/pytorch#61519): backward ops reach their module through
    their forward op (seq).  Inside torch.compile tracing (torch.compiler.is_compiling()) the
    hooks do nothing, so Dynamo sees no side effect and no graph break.
It steps aside (leaves NVTX mode, removes its hooks, warns once) when the program starts its
own torch.profiler / torch.autograd.profiler.profile, and leaves op ranges to a program that
enters emit_nvtx itself.  KPROF_TORCH=off in the environment turns it off.
(doc/attribution.md §3)
"""
import os
import sys
import threading
import weakref

MODULE_PREFIX = "kprof: nn.Module: "  # capture/intercept/hostops.h HOSTOPS_MODULE_PREFIX

_lock = threading.Lock()
_st = {
    "armed": False,
    "on": True,  # False in forked children and after stepping aside
    "nvtx": None,  # our emit_nvtx object while it is entered
    "nvtx_thread": None,
    "handles": [],  # the global hooks' RemovableHandles
    "program_profiler": False,  # the program started its own profiler
    "warned": set(),
}
_names = {}  # id(module) -> (weakref to it, its range message)
_counts = {}  # module class -> instances named so far


def _prog():
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"


def _warn(key, msg):
    if key in _st["warned"]:
        return
    _st["warned"].add(key)
    try:
        sys.stderr.write("kprof: warning: %s\n" % msg)
        sys.stderr.flush()
    except Exception:
        pass


def enabled_by_env(environ=None):
    """KPROF_TORCH=off (or 0, no, false) turns the hook off."""
    v = (environ if environ is not None else os.environ).get("KPROF_TORCH", "")
    return v.strip().lower() not in ("off", "0", "no", "false")


def shapes_by_env(environ=None):
    """KPROF_TORCH_SHAPES: 1 (or unset) records op input shapes, 0 does not (kprof capture
    --no-torch-shapes sets it); any other value warns and records them."""
    v = (environ if environ is not None else os.environ).get("KPROF_TORCH_SHAPES", "1").strip()
    if v not in ("0", "1"):
        _warn("shapes", "KPROF_TORCH_SHAPES=%r is neither 0 nor 1; recording shapes" % v[:40])
        return True
    return v == "1"


class _TorchFinder:
    """A meta-path finder that runs _after_torch(torch) once `import torch` has finished."""

    def __init__(self):
        self._busy = False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self._busy:
            return None
        import importlib.util

        self._busy = True
        try:
            spec = importlib.util.find_spec("torch")
        except Exception:
            spec = None
        finally:
            self._busy = False
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        orig = loader.exec_module

        def exec_module(module):
            orig(module)
            _after_torch(module)

        loader.exec_module = exec_module
        return spec


def arm():
    """Called by sitecustomize: wait for torch.  Returns True when armed."""
    if _st["armed"] or not enabled_by_env():
        return False
    _st["armed"] = True
    try:
        os.register_at_fork(after_in_child=_forked)
    except AttributeError:
        pass
    if "torch" in sys.modules:
        _after_torch(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _TorchFinder())
    return True


def _forked():
    # a forked child (DataLoader worker): no CUDA there, and the hooks stay quiet
    _st["on"] = False


def _after_torch(torch):
    for f in list(sys.meta_path):
        if isinstance(f, _TorchFinder):
            sys.meta_path.remove(f)
    try:
        _wrap_profilers(torch)
        torch.cuda._lazy_call(_activate)
    except Exception as e:
        _warn("arm", "kprof's torch hook cannot wait for CUDA (%s); no op or module ranges" % (e,))


def _wrap_profilers(torch):
    """Step aside when the program starts a profiler of its own (or enters emit_nvtx)."""
    ap = torch.autograd.profiler
    prof = ap.profile
    # torch.profiler.profile and torch.autograd.profiler.profile both prepare here
    name = "_prepare_trace" if hasattr(prof, "_prepare_trace") else "__enter__"
    orig = getattr(prof, name)

    def prepare(self, *a, **k):
        step_aside("started torch.profiler", keep_modules=False)
        return orig(self, *a, **k)

    prepare.__wrapped__ = orig
    setattr(prof, name, prepare)

    nv = ap.emit_nvtx
    orig_enter = nv.__enter__

    def enter(self, *a, **k):
        if self is not _st["nvtx"]:
            step_aside("entered emit_nvtx itself", keep_modules=True)
        return orig_enter(self, *a, **k)

    enter.__wrapped__ = orig_enter
    nv.__enter__ = enter


def step_aside(what, keep_modules):
    """Leave NVTX mode (and, unless @keep_modules, remove the module hooks); warn once."""
    with _lock:
        nv, was = _st["nvtx"], _st["nvtx"] is not None or bool(_st["handles"])
        _st["program_profiler"] = True
        _st["nvtx"] = None
        handles = [] if keep_modules else _st["handles"]
        if not keep_modules:
            _st["handles"] = []
            _st["on"] = False
    if nv is not None:
        if threading.get_ident() == _st["nvtx_thread"]:
            try:
                nv.__exit__(None, None, None)
            except Exception:
                pass
        else:
            _warn("thread", "%s %s on another thread than kprof's torch hook; its op ranges "
                  "stay on" % (_prog(), what))
    for h in handles:
        try:
            h.remove()
        except Exception:
            pass
    if keep_modules:
        _warn("nvtx", "%s %s; kprof's torch hook leaves op ranges to it" % (_prog(), what))
    else:
        _warn("profiler", "%s %s; kprof's torch hook steps aside%s" %
              (_prog(), what, " (no op or module ranges from here on)" if was else ""))


def _in_worker(torch):
    try:
        return torch.utils.data.get_worker_info() is not None
    except Exception:
        return False


def _activate():
    """Queued by torch.cuda._lazy_call: runs once CUDA is initialised.  Never raises."""
    try:
        torch = sys.modules.get("torch")
        if torch is None or not _st["on"] or _st["program_profiler"] or _in_worker(torch):
            return
        enabled = getattr(torch.autograd, "_profiler_enabled", None)
        if enabled is not None and enabled():
            step_aside("started a profiler before CUDA initialised", keep_modules=False)
            return
        nv = torch.autograd.profiler.emit_nvtx(record_shapes=shapes_by_env())
        _st["nvtx"], _st["nvtx_thread"] = nv, threading.get_ident()  # ours, for enter()
        try:
            nv.__enter__()
        except BaseException:
            _st["nvtx"] = None
            raise
        if threading.current_thread() is not threading.main_thread():
            _warn("main", "CUDA initialised on thread '%s': kprof's op ranges cover that thread "
                  "and its autograd threads only" % threading.current_thread().name)
        install_module_hooks(torch)
    except Exception as e:
        _warn("activate", "kprof's torch hook: %s; no op or module ranges" % (e,))


def module_message(mod):
    """The range message of module @mod: "kprof: nn.Module: <Class>_<N>", N on first call."""
    key = id(mod)
    e = _names.get(key)
    if e is not None and e[0]() is mod:
        return e[1]
    cls = type(mod)
    n = _counts.get(cls, 0)
    _counts[cls] = n + 1
    msg = "%s%s_%d" % (MODULE_PREFIX, cls.__name__, n)
    try:
        def gone(r, k=key):
            if _names.get(k, (None,))[0] is r:
                del _names[k]

        ref = weakref.ref(mod, gone)
    except TypeError:
        ref = (lambda m: lambda: m)(mod)
    _names[key] = (ref, msg)
    return msg


def _is_compiling_fn(torch):
    comp = getattr(torch, "compiler", None)
    f = getattr(comp, "is_compiling", None)
    if f is None:
        dyn = sys.modules.get("torch._dynamo")
        f = getattr(dyn, "is_compiling", None)
    return f or (lambda: False)


def make_hooks(push, pop, is_compiling):
    """The global pre/post forward hooks around NVTX @push / @pop."""
    st = _st

    def pre(mod, args):
        if not st["on"] or is_compiling():
            return None
        push(module_message(mod))
        return None

    def post(mod, args, out):
        if not st["on"] or is_compiling():
            return None
        pop()
        return None

    return pre, post


def install_module_hooks(torch):
    from torch.nn.modules import module as M

    nvtx = torch.cuda.nvtx
    pre, post = make_hooks(nvtx.range_push, nvtx.range_pop, _is_compiling_fn(torch))
    handles = [M.register_module_forward_pre_hook(pre)]
    try:
        # the post hook also runs when forward raises: the range is closed
        handles.append(M.register_module_forward_hook(post, always_call=True))
    except TypeError:
        handles.append(M.register_module_forward_hook(post))
    with _lock:
        _st["handles"].extend(handles)
