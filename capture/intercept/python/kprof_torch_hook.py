"""kprof_torch_hook.py: an op with shapes over every kernel, and the nn.Module tree, from an
unchanged PyTorch program under `kprof capture -- python3 prog.py` (issue 24 item 6).

Armed by kprof's sitecustomize.py.  Nothing happens until the program imports torch; then
nothing until CUDA initialises in this process (torch.cuda._lazy_call), so a process that never
uses the GPU (a DataLoader worker, a helper) is left alone and CUDA is never initialised early.
On the thread that initialises CUDA it then
  - turns on kprof's op observer (kprof_torch_obs.cpp beside this file: a global RecordFunction
    callback, compiled once per torch build against torch's headers and cached, see
    observer_so()): every ATen op, autograd node and record_function label on every thread
    becomes a range "NAME, seq = S, sizes = [...]" in kprof-shim.so, as emit_nvtx's NVTX ranges
    would, at a fraction of their cost (bench/RESULTS.md).  Without a C++ compiler or torch's
    headers, or with KPROF_TORCH_OBSERVER=off, it enters
    torch.autograd.profiler.emit_nvtx(record_shapes=True) instead: the same ranges through NVTX,
    "NAME, seq = S, op_id = I, sizes = [...]", which kprof turns into cpu_ops
    (capture/intercept/hostops.c); with KPROF_TORCH_SHAPES=0 (--no-torch-shapes) either way
    records names only, "NAME, seq = S";
  - registers global forward pre/post hooks on nn.Module that push and pop the NVTX range
    "kprof: nn.Module: <Class>_<N>" (N per class, in first-call order, as torch.profiler's Python
    tracer numbers them), which kprof writes as python_function events.  No backward hooks
    (they break in-place ops, pytorch/pytorch#61519): backward ops reach their module through
    their forward op (seq).  Inside torch.compile tracing (torch.compiler.is_compiling()) the
    hooks do nothing, so Dynamo sees no side effect and no graph break.
It steps aside (turns its op ranges off, removes its hooks, warns once) when the program starts its
own torch.profiler / torch.autograd.profiler.profile, and leaves op ranges to a program that
enters emit_nvtx itself.  KPROF_TORCH=off in the environment turns it off.
(doc/attribution.md §3)
"""
import ctypes
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref

MODULE_PREFIX = "kprof: nn.Module: "  # capture/intercept/hostops.h HOSTOPS_MODULE_PREFIX

_lock = threading.Lock()
_st = {
    "armed": False,
    "on": True,  # False in forked children and after stepping aside
    "nvtx": None,  # our emit_nvtx object while it is entered
    "nvtx_thread": None,
    "obs": None,  # the op observer (a ctypes library) while it is on
    "handles": [],  # the global hooks' RemovableHandles
    "program_profiler": False,  # the program started its own profiler
    "warned": set(),
}
_names = {}  # id(module) -> (weakref to it, its range message)
_counts = {}  # module class -> instances named so far


def _prog():
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"


def _say(msg):
    """"kprof: @msg" on stderr, if there is one.  Texts from outside (a compiler's message, a
    path) reach a terminal: control, format and separator characters are escaped."""
    msg = "".join(c if c.isprintable() else "\\x%02x" % ord(c) if ord(c) < 256
                  else "\\u%04x" % ord(c) for c in str(msg))
    try:
        sys.stderr.write("kprof: %s\n" % msg)
        sys.stderr.flush()
    except Exception:
        pass


def _warn(key, msg):
    if key in _st["warned"]:
        return
    _st["warned"].add(key)
    _say("warning: " + str(msg))


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


def observer_by_env(environ=None):
    """KPROF_TORCH_OBSERVER: auto (or unset) uses kprof's op observer when it can be built, off
    uses emit_nvtx; any other value warns and means auto."""
    v = (environ if environ is not None else os.environ).get("KPROF_TORCH_OBSERVER", "auto")
    v = v.strip().lower()
    if v not in ("auto", "off"):
        _warn("observer", "KPROF_TORCH_OBSERVER=%r is neither auto nor off; auto" % v[:40])
        return True
    return v == "auto"


def cache_dir(environ=None):
    """Where compiled observers are kept: $XDG_CACHE_HOME/kprof, else ~/.cache/kprof; None when
    neither is an absolute path of a sane length without control characters (the XDG rule: a
    relative one is ignored).
    observer_so() uses it only when it is private (_private_cache)."""
    env = environ if environ is not None else os.environ
    for base, sub in ((env.get("XDG_CACHE_HOME", ""), "kprof"),
                      (env.get("HOME", ""), os.path.join(".cache", "kprof"))):
        if base and os.path.isabs(base) and len(base) < 1024 and \
                not any(ord(c) < 32 or ord(c) == 127 for c in base):
            return os.path.join(base, sub)
    return None


def _compiler(environ=None):
    """$CXX when it names an executable, else c++, g++ or clang++ on PATH; None without one."""
    env = environ if environ is not None else os.environ
    cxx = env.get("CXX", "").strip()
    if cxx:
        found = shutil.which(cxx) if len(cxx) < 1024 else None
        if found:
            return found
        _warn("cxx", "CXX=%r is not an executable; looking for c++ on PATH" % cxx[:80])
    for c in ("c++", "g++", "clang++"):
        found = shutil.which(c)
        if found:
            return found
    return None


OBS_SRC = "kprof_torch_obs.cpp"
OBS_FLAGS = ["-O2", "-DNDEBUG", "-shared", "-fPIC", "-fvisibility=hidden", "-w"]


def observer_so(torch, environ=None):
    """The op observer for this torch: compiled once (a few seconds) into the cache, keyed by
    the source, torch's version and location, the C++ ABI and the compiler.  Returns (path,
    None), or (None, why) when it cannot be built."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), OBS_SRC)
    tdir = os.path.dirname(os.path.abspath(getattr(torch, "__file__", "") or "."))
    inc, lib = os.path.join(tdir, "include"), os.path.join(tdir, "lib")
    if not os.path.isfile(os.path.join(inc, "ATen", "record_function.h")):
        return None, "torch's C++ headers are not in %s" % inc
    cxx = _compiler(environ)
    if cxx is None:
        return None, "no C++ compiler (c++, g++, clang++ or $CXX)"
    try:
        with open(src, "rb") as f:
            code = f.read()
    except OSError as e:
        return None, "cannot read %s: %s" % (src, e.strerror)
    abi = int(bool(getattr(getattr(torch, "_C", None), "_GLIBCXX_USE_CXX11_ABI", True)))
    key = hashlib.sha256(b"\0".join([code, str(getattr(torch, "__version__", "")).encode(),
                                     tdir.encode(), cxx.encode(), b"%d" % abi,
                                     " ".join(OBS_FLAGS).encode()])).hexdigest()[:16]
    cdir = _private_cache(cache_dir(environ))
    if cdir is None:  # built for this process only, removed once loaded (start_observer)
        try:
            cdir = _st["obs_tmp"] = tempfile.mkdtemp(prefix="kprof-obs-")
        except OSError as e:
            return None, "cannot create a temporary directory: %s" % e.strerror
    so = os.path.join(cdir, "kprof_torch_obs-%s.so" % key)
    if _private(so):
        return so, None
    try:
        with open(os.path.join(cdir, "kprof_torch_obs-%s.lock" % key), "w") as lk:
            fcntl.flock(lk, fcntl.LOCK_EX)  # one process of a job builds, the others wait
            if _private(so):
                return so, None
            return _build(cxx, src, inc, lib, abi, so)  # a file that is not ours is replaced
    except OSError as e:
        return None, "cannot write %s: %s" % (cdir, e.strerror)


def _private(path):
    """True when @path exists, is this user's and is not writable by group or others: a
    library loaded into the program must not be one somebody else could have put there."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _private_cache(cdir):
    """@cdir, created (0700) when missing, or None (with a warning) when it cannot be or is
    not private (_private)."""
    if cdir is None:
        return None
    try:
        os.makedirs(cdir, mode=0o700, exist_ok=True)
    except OSError as e:
        _warn("cache", "cannot create %s (%s); kprof's op observer is built for this process "
              "only" % (cdir, e.strerror))
        return None
    if not _private(cdir):
        _warn("cache", "%s is not private (another owner, or writable by group or others); "
              "kprof's op observer is built for this process only" % cdir)
        return None
    return cdir


def _build(cxx, src, inc, lib, abi, so):
    _say("building kprof's op observer for this torch (once, into %s)" % os.path.dirname(so))
    fd, tmp = tempfile.mkstemp(prefix=".kprof_torch_obs-", suffix=".so", dir=os.path.dirname(so))
    os.close(fd)
    why = "the compiler failed"
    try:
        for std in ("-std=c++17", "-std=c++20"):
            # -DNDEBUG as torch itself is built: without it, RecordFunction's debug-only
            # members and assertions do not match libtorch's (every unchecked op would throw)
            cmd = [cxx, std] + OBS_FLAGS + ["-D_GLIBCXX_USE_CXX11_ABI=%d" % abi, "-I", inc,
                   "-I", os.path.join(inc, "torch", "csrc", "api", "include"),
                   src, "-o", tmp, "-L", lib, "-lc10", "-ltorch_cpu", "-Wl,-rpath," + lib]
            try:
                p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=600)
            except (OSError, subprocess.TimeoutExpired) as e:
                return None, "cannot run %s: %s" % (cxx, e)
            if p.returncode == 0:
                os.chmod(tmp, 0o755)  # a linker that writes anew leaves the umask's mode
                os.replace(tmp, so)
                return so, None
            err = [l for l in p.stderr.decode("utf-8", "replace").splitlines() if "error" in l]
            why = "%s %s: %s" % (os.path.basename(cxx), std, (err or ["exit %d" % p.returncode])[0])
        return None, why[:300]
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def start_observer(torch, shapes):
    """The op observer on (True), or a warning and False: emit_nvtx does the job instead."""
    try:
        so, why = observer_so(torch)
    except Exception as e:  # an unforeseen failure of the build: emit_nvtx still
        so, why = None, "cannot build it: %s" % (e,)
    obs = None
    if so is not None:
        try:
            obs = ctypes.CDLL(so)
        except OSError as e:
            why = "cannot load %s: %s" % (so, e)
    tmp = _st.pop("obs_tmp", None)
    if tmp is not None:  # a build for this process only: mapped now, or failed; the files go
        shutil.rmtree(tmp, ignore_errors=True)
    if obs is not None:
        try:
            fast = _fast_ranges(obs)  # its exports looked up before anything starts
            obs.kprof_obs_start.argtypes = [ctypes.c_int]
            if obs.kprof_obs_start(int(bool(shapes))) == 0:
                with _lock:  # step_aside() from another thread sees all of it or none
                    if not _st["program_profiler"]:
                        _st["obs"] = obs
                        _profiler_flag(torch, True, fast)
                        return True
                obs.kprof_obs_stop()  # the program's profiler started meanwhile
                return True
            why = "kprof-shim.so is not in this process"
        except AttributeError as e:
            why = "%s: %s" % (so, e)
    _warn("obs", "no op observer (%s); op ranges from emit_nvtx, which costs more per op" % why)
    return False


def _profiler_flag(torch, on, fast=None):
    """torch.autograd.profiler's "a profiler is on" flag, which emit_nvtx also sets: with it
    Dynamo marks compiled regions and Inductor wraps each Triton launch (and each autotuning
    run) in torch._C._profiler._RecordFunctionFast named after the kernel, which records only
    under a profiler state (emit_nvtx's, Kineto's), which the observer is not; so while the
    flag is ours, that class is replaced by @fast (_fast_ranges())."""
    f = getattr(torch.autograd.profiler, "_run_on_profiler_start" if on else
                "_run_on_profiler_stop", None)
    if f is not None:
        f()
    prof = getattr(getattr(torch, "_C", None), "_profiler", None)
    if prof is None:
        return
    if on and fast is not None and "fast_orig" not in _st:
        orig = getattr(prof, "_RecordFunctionFast", None)
        if orig is not None:
            _st["fast_orig"] = orig
            prof._RecordFunctionFast = fast
    elif not on and "fast_orig" in _st:
        prof._RecordFunctionFast = _st.pop("fast_orig")


# Inductor's profiler keywords of a kernel launch (triton_heuristics.get_profiler_kwargs)
_KERNEL_KEYS = ("kernel_backend", "kernel_file", "kernel_hash")


# capture/intercept/nvtxmsg.c: an op's name is at most this many bytes
_OP_NAME_MAX = 255


def _fast_ranges(obs):
    """A stand-in for torch._C._profiler._RecordFunctionFast(name, input_values=None,
    keyword_values=None) opening kprof ranges through the observer (@obs): a kernel launch
    (Inductor's keywords) reads as an op "NAME, seq = -1", as torch.profiler's Triton cpu_ops
    (a name past 255 bytes cut there); anything else (Dynamo's and AOTAutograd's labels) as a
    label.  No shapes: the launch's arguments are not read (a Python walk per launch).
    Its range is popped once: by __exit__ after __enter__, or, as torch's class ends its
    RecordFunction when freed, when it is freed still open on the thread that opened it (FX's
    generated code calls __enter__ and __exit__ apart, with no finally between)."""
    push, pop = obs.kprof_obs_range_push, obs.kprof_obs_range_pop
    push.argtypes, push.restype, pop.restype = [ctypes.c_char_p], ctypes.c_int, ctypes.c_int
    ident = threading.get_ident

    class RecordFunctionFast:
        __slots__ = ("_msg", "_open")

        def __init__(self, name, input_values=None, keyword_values=None):
            self._open = None
            s = str(name)[:512]
            if isinstance(keyword_values, dict) and "," not in s and \
                    any(k in keyword_values for k in _KERNEL_KEYS):
                b = s.encode("utf-8", "replace")[:_OP_NAME_MAX]
                self._msg = b.decode("utf-8", "ignore").encode() + b", seq = -1"
            else:
                self._msg = s.encode("utf-8", "replace")

        def __enter__(self):
            if self._open is None:
                push(self._msg)
                self._open = ident()
            return self

        def __exit__(self, *exc):
            if self._open is not None:
                self._open = None
                pop()
            return False

        def __del__(self):
            if self._open is not None and self._open == ident():
                self._open = None
                try:
                    pop()
                except Exception:  # interpreter shutdown
                    pass

    return RecordFunctionFast


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
    # a forked child (DataLoader worker): no CUDA there, and the hooks stay quiet; the op
    # observer, a global callback the child inherits, is turned off there, or its CPU ops
    # would each cost a range that nothing ever collects
    _st["on"] = False
    obs, _st["obs"] = _st["obs"], None
    if obs is not None:
        obs.kprof_obs_stop()
        torch = sys.modules.get("torch")
        if torch is not None:
            _profiler_flag(torch, False)


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
        nv, obs = _st["nvtx"], _st["obs"]
        was = nv is not None or obs is not None or bool(_st["handles"])
        _st["program_profiler"] = True
        _st["nvtx"], _st["obs"] = None, None
        handles = [] if keep_modules else _st["handles"]
        if not keep_modules:
            _st["handles"] = []
            _st["on"] = False
    if obs is not None:
        obs.kprof_obs_stop()
        torch = sys.modules.get("torch")
        if torch is not None:
            _profiler_flag(torch, False)
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
        shapes = shapes_by_env()
        if not (observer_by_env() and start_observer(torch, shapes)):
            _enter_emit_nvtx(torch, shapes)
    except Exception as e:
        _warn("activate", "kprof's torch hook: %s; no op or module ranges" % (e,))
        return
    if _st["program_profiler"]:  # the program's profiler started meanwhile (step_aside)
        return
    try:
        install_module_hooks(torch)
    except Exception as e:
        _warn("modules", "kprof's torch hook: %s; no module ranges" % (e,))


def _enter_emit_nvtx(torch, shapes):
    nv = torch.autograd.profiler.emit_nvtx(record_shapes=shapes)
    _st["nvtx"], _st["nvtx_thread"] = nv, threading.get_ident()  # ours, for enter()
    try:
        nv.__enter__()
    except BaseException:
        _st["nvtx"] = None
        raise
    if threading.current_thread() is not threading.main_thread():
        _warn("main", "CUDA initialised on thread '%s': kprof's op ranges cover that thread "
              "and its autograd threads only" % threading.current_thread().name)


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
