#!/usr/bin/python3
"""kprof_dask.py — a job's rank traces on a Dask cluster: kprof analyze per shard, kprof merge
in a tree, one report.

    kprof_dask.py [--scheduler ADDR | --local N] [--fan-in K] [--shard-size S] [--kprof PATH]
                  [-f FORMAT] [-o FILE] [-q] TRACE|DIR...

Each trace is analyzed by `kprof analyze --ranks -f json` on a worker, S traces (a shard, in the
order kprof analyze reads them) per Dask task, which gives summaries (man/kprof-merge.1); they are merged by
`kprof merge -f json` on the workers, K at a time, level after level, and the last merge writes
FORMAT.  The merge is associative and its json byte-stable, so the report is the one
`kprof analyze --ranks` of all the traces writes (tests/dask/check.py).  Workers run the kprof
binary themselves: trace paths must name the same files on every worker (shared storage, or a
LocalCluster); relative ones are taken from this directory.  See contrib/dask/README.
"""
import argparse
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
import uuid

PROG = "kprof-dask"
# kprof's exit statuses (README.md "Exit status")
STATUS = {2: "usage", 3: "bad input", 4: "environment"}
# what kprof merge writes (src/cli/cmd-merge.c format_names)
FORMATS = ("table", "csv", "json", "markdown")
TRACE_SUFFIXES = (".json", ".json.gz", ".json.zst")
FAIL = "kprof-dask-failure"


class Usage(Exception):
    pass


def err(msg, status):
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    return status


# ---- on the workers ----


def _vis(s):
    """@s for a terminal: control, format and separator characters as \\uNNNN (a file name
    is anybody's text)."""
    return "".join(c if c.isprintable() else "\\u%04x" % ord(c) for c in str(s))


def _where():
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return socket.gethostname()


def _run(argv, cwd, label):
    """kprof with @argv in @cwd: its stdout, else a failure (rc, label, stderr) raised."""
    try:
        p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        bad_cwd = isinstance(e, NotADirectoryError) or getattr(e, "filename", None) == cwd
        where = "bad cwd" if bad_cwd else f"cannot run '{argv[0]}'"
        raise RuntimeError(FAIL, 4, label, _where(),
                           f"{PROG}: error: {_vis(where)} on {_where()}: {_vis(e)}\n")
    if p.returncode != 0:
        raise RuntimeError(FAIL, p.returncode, label, _where(),
                           p.stderr.decode("utf-8", "replace"))
    return p.stdout, p.stderr.decode("utf-8", "replace")


def analyze_shard(kprof, cwd, paths):
    """One shard's summary (json bytes) and kprof's warnings (not shown: the summaries carry
    the traces' own, which the last merge prints).  Each trace is analyzed alone, as in
    README's Slurm recipe, then the shard's summaries are merged here."""
    parts = [_run([kprof, "analyze", "--ranks", "-f", "json", "--", p], cwd,
                  f"kprof analyze of {p}") for p in paths]
    if len(parts) == 1:
        return parts[0]
    summary, _ = merge_summaries(kprof, "json", 0, paths[0], *parts)
    return summary, "".join(w for _, w in parts)


def merge_summaries(kprof, fmt, level, index, *parts):
    """kprof merge -f @fmt of the summaries @parts (their json), in that order."""
    with tempfile.TemporaryDirectory(prefix="kprof-dask-") as tmp:
        names = []
        for i, (summary, _warnings) in enumerate(parts):
            names.append(os.path.join(tmp, f"s{i:06d}.json"))
            with open(names[-1], "wb") as fp:
                fp.write(summary)
        return _run([kprof, "merge", "-f", fmt, "--", *names], tmp,
                    f"kprof merge (level {level}, group {index})")


# ---- on the client ----


def expand(args):
    """Trace paths as kprof analyze reads them (src/base/paths.c): a directory gives its
    *.json, *.json.gz and *.json.zst regular files in (byte) name order, joined with '/'."""
    out = []
    for a in args:
        if not os.path.isdir(a):
            out.append(a)
            continue
        try:
            names = sorted(os.fsencode(n) for n in os.listdir(a))
        except OSError as e:
            raise OSError(f"cannot open '{a}': {e.strerror}")
        first = len(out)
        for n in names:
            n = os.fsdecode(n)
            if n.startswith(".") or not any(n.endswith(s) and len(n) > len(s) for s in TRACE_SUFFIXES):
                continue
            p = a + ("" if a.endswith("/") else "/") + n
            try:
                if not stat.S_ISREG(os.stat(p).st_mode):
                    print(f"{PROG}: warning: skipped '{p}': not a regular file", file=sys.stderr)
                    continue
            except OSError:
                pass  # kprof says why, with the file's name
            out.append(p)
        if len(out) == first:
            raise ValueError(f"no *.json, *.json.gz or *.json.zst traces in '{a}'")
    return out


class Progress:
    def __init__(self, total, quiet):
        self.total, self.done, self.quiet = total, 0, quiet
        self.tty = sys.stderr.isatty()
        self.shown = -1

    def step(self, what):
        self.done += 1
        if self.quiet:
            return
        pct = 100 * self.done // self.total
        if self.tty:
            end = "\n" if self.done == self.total else ""
            print(f"\r{PROG}: {self.done}/{self.total} tasks ({pct}%), last: {_vis(what)}\033[K",
                  end=end, file=sys.stderr, flush=True)
        elif pct // 10 != self.shown or self.done == self.total:
            self.shown = pct // 10
            print(f"{PROG}: {self.done}/{self.total} tasks ({pct}%)", file=sys.stderr, flush=True)


def failure(exc):
    a = getattr(exc, "args", ())
    return a[1:] if len(a) == 5 and a[0] == FAIL else None


def build_tree(client, o, paths):
    """Submit the leaves and the merges; returns (leaves, merges, root)."""
    cwd = os.getcwd()
    run_id = uuid.uuid4().hex[:8]  # two drivers on one scheduler share no task key
    shards = [paths[i:i + o.shard_size] for i in range(0, len(paths), o.shard_size)]
    leaves = [client.submit(analyze_shard, o.kprof, cwd, s, key=f"kprof-analyze-{run_id}-{i}",
                            pure=False) for i, s in enumerate(shards)]
    level, merges, lv = leaves, [], 0
    while True:
        lv += 1
        last = len(level) <= o.fan_in
        fmt = o.format if last else "json"
        nxt = [client.submit(merge_summaries, o.kprof, fmt, lv, g, *level[i:i + o.fan_in],
                             key=f"kprof-merge-{run_id}-{lv}-{g}", pure=False)
               for g, i in enumerate(range(0, len(level), o.fan_in))]
        merges += nxt
        level = nxt
        if last:
            return shards, leaves, merges, nxt[0]


def run(client, o, paths):
    from distributed import as_completed

    shards, leaves, merges, root = build_tree(client, o, paths)
    if not o.quiet:
        print(f"{PROG}: {len(paths)} traces in {len(shards)} shards of up to {o.shard_size}, "
              f"{len(merges)} merges (fan-in {o.fan_in}), on {o.where}", file=sys.stderr,
              flush=True)
    role = {f.key: ("leaf", i) for i, f in enumerate(leaves)}
    prog = Progress(len(leaves) + len(merges), o.quiet)
    failed = {}  # label -> (order, rc, where, stderr)
    for f in as_completed(leaves + merges):
        kind, i = role.get(f.key, ("merge", 0))
        if f.status == "error":
            exc = f.exception()
            fl = failure(exc)
            if fl is None:  # a worker died, the scheduler went away, ...
                fl = (4, f"task {f.key}", "?", f"{PROG}: error: {type(exc).__name__}: {exc}\n")
            rc, label, where, text = fl
            if label not in failed:
                failed[label] = (i if kind == "leaf" else len(leaves) + len(failed), rc, where, text)
        prog.step(f.key)
    if failed:
        first = None
        for label, (order, rc, where, text) in sorted(failed.items(), key=lambda kv: kv[1][0]):
            sys.stderr.write(text)
            err(f"{_vis(label)} exited {rc} ({STATUS.get(rc, 'failure')}) on worker "
                f"{_vis(where)}", rc)
            first = first or rc
        return first
    out, warnings = root.result()
    # the traces' own warnings and the job's, as kprof analyze prints them (the other merges'
    # are of parts of the job, and their traces' warnings are carried up to this one)
    sys.stderr.write(warnings)
    return write(out, o.output)


def write(data, path):
    if path is None or path == "-":
        try:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        except OSError as e:
            return err(f"cannot write the report: {e.strerror}", 4)
        return 0
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".kprof-dask-", dir=d)
    except OSError as e:
        return err(f"cannot write '{path}': {e.strerror}", 4)
    try:
        with os.fdopen(fd, "wb") as fp:
            fp.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return err(f"cannot write '{path}': {e.strerror}", 4)
    return 0


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


def parse(argv):
    ap = argparse.ArgumentParser(prog=PROG, description="kprof analyze --ranks on a Dask cluster, "
                                 "kprof merge in a tree, one report (contrib/dask/README)")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDR", help="an existing cluster's scheduler")
    where.add_argument("--local", metavar="N", type=int,
                       help="a LocalCluster of N worker processes (default: one per CPU)")
    ap.add_argument("--fan-in", metavar="K", type=int, default=8,
                    help="summaries per merge (default 8)")
    ap.add_argument("--shard-size", metavar="S", type=int, default=1,
                    help="traces per kprof analyze (default 1)")
    ap.add_argument("--kprof", metavar="PATH", default="kprof",
                    help="the kprof binary on the workers (default: kprof on their PATH)")
    ap.add_argument("-f", "--format", default="table", choices=FORMATS,
                    help="report format (kprof merge's; json: a summary)")
    ap.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    ap.add_argument("traces", nargs="+", metavar="TRACE|DIR")

    def usage_error(message):
        ap.print_usage(sys.stderr)
        raise Usage(message)

    ap.error = usage_error
    o = ap.parse_args(argv)
    if o.fan_in < 2:
        usage_error("--fan-in must be 2 or more")
    if o.shard_size < 1:
        usage_error("--shard-size must be 1 or more")
    if o.local is not None and o.local < 1:
        usage_error("--local must be 1 or more")
    if os.sep in o.kprof:  # a path: the same file from the workers' directory
        o.kprof = os.path.abspath(o.kprof)
    return o


def main(argv):
    try:
        o = parse(argv)
    except Usage as e:
        return err(str(e), 2)
    try:
        paths = expand(o.traces)
    except ValueError as e:
        return err(str(e), 3)
    except OSError as e:
        return err(str(e), 4)
    try:
        import logging

        from distributed import Client, LocalCluster
    except ImportError as e:
        return err(f"cannot import distributed ({e}): install python3-distributed", 4)
    # distributed 2022.12's client sometimes leaves a Timeout in a future when it closes, which
    # asyncio logs as "Future exception was never retrieved" after a good run; failures of the
    # job are reported below from the tasks themselves
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    t0 = time.monotonic()
    try:
        if o.scheduler:
            client, cluster = Client(o.scheduler, timeout="30s"), None
            o.where = f"scheduler {o.scheduler}"
        else:
            cluster = LocalCluster(n_workers=o.local, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
            o.where = f"a LocalCluster of {len(cluster.workers)} worker processes"
    except OSError as e:
        return err(f"cannot reach the cluster: {e}", 4)
    try:
        rc = run(client, o, paths)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    if rc == 0 and not o.quiet:
        print(f"{PROG}: done in {time.monotonic() - t0:.1f} s", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
