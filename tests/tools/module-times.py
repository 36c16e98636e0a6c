#!/usr/bin/env python3
"""module-times.py — GPU time per nn.Module path and per Python source frame of a torch.profiler
trace recorded with with_stack=True, computed here from the trace alone, independently of kprof,
to check `kprof analyze -g module` / `-g source` (issue 24; doc/attribution.md).

usage: tests/tools/module-times.py TRACE[.gz] [--depth N]   -> json on stdout

Rules (the issue's; written here without kprof's code):
- GPU work: events of cat kernel, gpu_memcpy, gpu_memset; times in integer ns (µs text * 1000,
  truncated toward zero, as kprof reads them).
- Its launching op: the innermost cpu_op on the launch's thread (cuda_runtime/cuda_driver event
  with the same correlation) whose interval contains the launch; the launch itself when none does.
- Backward: work whose enclosing cpu_ops include one with an incoming fwdbwd flow (`f` at its
  thread and start) or a Fwd thread id > 0.  Walking them from the innermost outward, the first
  flow or, failing every flow, the first Sequence number matched to the latest-starting forward op
  (Fwd thread id 0) with that number names the forward op; the work is placed by that forward op
  (nowhere when none), marked backward.
- Module: the nn.Module python_function events on the (forward) op's thread whose interval contains
  the op, outermost first, names after "nn.Module: " joined by "/"; "(no module)" when none.
- Source: the innermost python_function containing the (forward) op named "path(line): func" that
  is not a C call ("<built-in ..."), not an nn.Module event, and whose path does not contain
  "torch/"; "(no source)" when none.
Output: {"gpu_ns": total, "module": {path: {"fwd_ns", "bwd_ns", "n"}}, "source": {...}}.
"""
import bisect
import decimal
import gzip
import json
import re
import sys

FRAME = re.compile(r'^(.*)\((\d+)\): (.*)$')


def ns(v):
    return int(decimal.Decimal(v) * 1000)


def load(path):
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        return json.load(f, parse_float=decimal.Decimal)['traceEvents']


class Thread:
    """Intervals of one thread, sorted by start, for 'which contain t0..t1' queries."""

    def __init__(self):
        self.ev = []

    def done(self):
        self.ev.sort(key=lambda e: (e[0], -e[1]))
        self.starts = [e[0] for e in self.ev]

    def containing(self, t0, t1):
        """Events with start <= t0 and end >= t1, outermost (earliest, longest) first."""
        i = bisect.bisect_right(self.starts, t0)
        return [e for e in self.ev[:i] if e[1] >= t1]


def main():
    args = sys.argv[1:]
    depth = None
    if '--depth' in args:
        k = args.index('--depth')
        depth = int(args[k + 1])
        del args[k:k + 2]
    evs = load(args[0])
    gpu, launch, ops, py = [], {}, {}, {}
    flow_s, flow_f = {}, {}
    for e in evs:
        cat, ph = e.get('cat'), e.get('ph')
        a = e.get('args') or {}
        if ph == 'X' and cat in ('kernel', 'gpu_memcpy', 'gpu_memset'):
            gpu.append((a.get('correlation'), ns(e['dur'])))
        elif ph == 'X' and cat in ('cuda_runtime', 'cuda_driver') and 'correlation' in a:
            t = ns(e['ts'])
            launch[a['correlation']] = (e['tid'], t, t + ns(e['dur']))
        elif ph == 'X' and cat == 'cpu_op':
            t = ns(e['ts'])
            ops.setdefault(e['tid'], Thread()).ev.append((t, t + ns(e['dur']), e['name'], a))
        elif ph == 'X' and cat == 'python_function':
            t = ns(e['ts'])
            py.setdefault(e['tid'], Thread()).ev.append((t, t + ns(e['dur']), e['name'], a))
        elif cat == 'fwdbwd' and ph == 's':
            flow_s[e['id']] = (e['tid'], ns(e['ts']))
        elif cat == 'fwdbwd' and ph == 'f':
            flow_f[(e['tid'], ns(e['ts']))] = e['id']
    for th in list(ops.values()) + list(py.values()):
        th.done()
    op_at = {}
    fwd_by_seq = {}
    for tid, th in ops.items():
        for o in th.ev:
            op_at.setdefault((tid, o[0]), o)
            a = o[3]
            if a.get('Sequence number') is not None and not a.get('Fwd thread id'):
                prev = fwd_by_seq.get(a['Sequence number'])
                if prev is None or prev[1][0] <= o[0]:
                    fwd_by_seq[a['Sequence number']] = (tid, o)

    def forward_of(tid, chain):
        for o in reversed(chain):  # innermost first
            fid = flow_f.get((tid, o[0]))
            if fid is not None and fid in flow_s:
                ftid, fts = flow_s[fid]
                fo = op_at.get((ftid, fts))
                if fo is not None:
                    return ftid, fo
        for o in reversed(chain):
            a = o[3]
            if a.get('Fwd thread id') and a.get('Sequence number') is not None:
                f = fwd_by_seq.get(a['Sequence number'])
                if f is not None:
                    return f
        return None

    total = 0
    mod, src = {}, {}
    for corr, dur in gpu:
        total += dur
        bwd = False
        where = None
        lk = launch.get(corr)
        if lk is not None:
            tid, t0, t1 = lk
            chain = ops[tid].containing(t0, t1) if tid in ops else []
            where = (tid, chain[-1][0], chain[-1][1]) if chain else (tid, t0, t1)
            bwd = any((tid, o[0]) in flow_f or o[3].get('Fwd thread id') for o in chain)
            if bwd:
                f = forward_of(tid, chain)
                where = (f[0], f[1][0], f[1][1]) if f is not None else None
        frames = py[where[0]].containing(where[1], where[2]) if where and where[0] in py else []
        mods = [f[2][len('nn.Module: '):] for f in frames if f[2].startswith('nn.Module: ')]
        if depth is not None:
            mods = mods[:depth]
        mkey = '/'.join(mods) if mods else '(no module)'
        skey = '(no source)'
        for f in reversed(frames):
            m = FRAME.match(f[2])
            if m and not f[2].startswith('<built-in') and not f[2].startswith('nn.Module:') \
                    and 'torch/' not in m.group(1):
                skey = f[2]
                break
        for key, table in ((mkey, mod), (skey, src)):
            r = table.setdefault(key, {'fwd_ns': 0, 'bwd_ns': 0, 'n': 0})
            r['bwd_ns' if bwd else 'fwd_ns'] += dur
            r['n'] += 1
    json.dump({'gpu_ns': total, 'module': mod, 'source': src}, sys.stdout, indent=1,
              sort_keys=True)
    print()


if __name__ == '__main__':
    main()
