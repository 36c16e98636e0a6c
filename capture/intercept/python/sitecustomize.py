"""sitecustomize.py: kprof's start-up hook for Python children of `kprof capture -- <cmd>`.

`kprof capture --torch auto|on` puts this directory first on PYTHONPATH.  Python imports
`sitecustomize` after it builds sys.path (docs.python.org/3/library/site.html), so this file is
found before any distro or virtualenv copy.  It arms kprof_torch_hook, which does nothing
until the program imports torch and initialises CUDA, and then runs the sitecustomize that
this copy shadows, so that the program starts as it would without kprof.
(doc/attribution.md §3.1)
"""


def _kprof_arm():
    try:
        import kprof_torch_hook

        kprof_torch_hook.arm()
    except Exception as e:  # never stop the program for kprof's sake
        import sys

        sys.stderr.write("kprof: warning: torch hook not armed: %s\n" % (e,))


def _kprof_chain():
    """Find and run the next sitecustomize on sys.path, under the name sitecustomize."""
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.realpath(__file__))
    path = []
    for d in sys.path:
        try:
            if os.path.realpath(d or os.getcwd()) == here:
                continue
        except (OSError, ValueError):
            pass
        path.append(d)
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = mod
    spec.loader.exec_module(mod)


_kprof_arm()
_kprof_chain()
