#!/usr/bin/env python3
"""memory-check.py — kprof analyze --memory against the [memory] events, recomputed (issue 25).

usage: tests/tools/memory-check.py KPROF TRACE...

For each trace and each device (pid, Device Type, Device Id) of its [memory] events, from the
trace alone (doc/memory.md §2): the peak is the largest "Total Allocated", its time
the first event reaching it (events by ts, file order between equal ts); the blocks live at the
peak are the allocations at or before it whose address is not freed at or before it; each is
grouped by the innermost cpu_op of its (pid, tid) whose [ts, ts + dur) holds it.  kprof's json
must give the same peak, peak_ts_ns, peak reserved (largest "Total Reserved") and bytes and
counts per op (its (op, module) rows summed by op), and its rows, "(allocated before the
trace)" included, must sum to the peak exactly.  Also -j1 and -j3 give the same "memory".
Exit 1 on a difference.
"""
import bisect
import gzip
import json
import os
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal

BEFORE = '(allocated before the trace)'


def load(path):
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rt') as f:
        return json.load(f, parse_float=Decimal)


def ns(v):
    return int(Decimal(v) * 1000)


def kprof_memory(kprof, trace, jobs):
    """kprof's "memory" object; -j > 1 with 4 kB chunks, so the parallel parse cuts the file."""
    env = dict(os.environ, KPROF_PARSE_CHUNK='4096') if jobs > 1 else None
    r = subprocess.run([kprof, 'analyze', '-q', '--memory', '-f', 'json', '-j', str(jobs), trace],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit('memory-check: %s: status %d\n%s' % (trace, r.returncode, r.stderr))
    return json.loads(r.stdout)['memory']


def ops_by_thread(events):
    """(pid, tid) -> ops sorted by start: (ts_ns, end_ns, name)."""
    th = defaultdict(list)
    for e in events:
        if e.get('cat') == 'cpu_op' and e.get('ph') == 'X':
            t = ns(e['ts'])
            th[(e['pid'], e['tid'])].append((t, t + ns(e['dur']), e['name']))
    for v in th.values():
        v.sort(key=lambda o: (o[0], -o[1]))
    return th


def innermost(ops, ts):
    """The op holding ts that started last (shorter first among equal starts), '(no op)'."""
    if not ops:
        return '(no op)'
    k = bisect.bisect_right([o[0] for o in ops], ts)
    for o in reversed(ops[:k]):
        if o[0] <= ts < o[1]:
            return o[2]
    return '(no op)'


def expected(doc):
    events = doc['traceEvents']
    th = ops_by_thread(events)
    devs = defaultdict(list)
    for i, e in enumerate(events):
        if e.get('ph') == 'i' and e.get('cat') == 'cpu_instant_event' and e.get('name') == '[memory]':
            a = e['args']
            devs[(e['pid'], a['Device Type'], a['Device Id'])].append((ns(e['ts']), i, e))
    out = {}
    for key, evs in devs.items():
        evs.sort(key=lambda x: (x[0], x[1]))
        peak = max(x[2]['args']['Total Allocated'] for x in evs)
        pk = next(k for k, x in enumerate(evs) if x[2]['args']['Total Allocated'] == peak)
        live = {}
        for ts, _, e in evs[:pk + 1]:
            a = e['args']
            if a['Bytes'] > 0:
                live[a['Addr']] = (a['Bytes'], innermost(th.get((e['pid'], e['tid'])), ts))
            elif a['Bytes'] < 0:
                live.pop(a['Addr'], None)
        by_op = defaultdict(lambda: [0, 0])
        for b, op in live.values():
            by_op[op][0] += b
            by_op[op][1] += 1
        by_op[BEFORE] = [peak - sum(b for b, _ in live.values()), 0]
        out[key] = {'peak': peak, 'ts': evs[pk][0],
                    'reserved': max(x[2]['args']['Total Reserved'] for x in evs),
                    'live': {k: tuple(v) for k, v in by_op.items()}}
    return out


def check(kprof, trace):
    exp = expected(load(trace))
    mem = kprof_memory(kprof, trace, 1)
    if mem != kprof_memory(kprof, trace, 3):
        print('%s: "memory" differs between -j1 and -j3' % trace)
        return 1
    got = {}
    for d in mem['devices'] + mem['cpu']:
        t = {'cpu': 0, 'cuda': 1, 'hip': 6}.get(d['device_type'], d['device_type'])
        by_op = defaultdict(lambda: [0, 0])
        for r in d['live_at_peak']:
            by_op[r['op']][0] += r['bytes']
            by_op[r['op']][1] += r['count']
        if sum(r['bytes'] for r in d['live_at_peak']) != d['peak_allocated_bytes']:
            print('%s: device %r: live_at_peak rows do not sum to the peak' % (trace, d['device']))
            return 1
        got[(d['pid'], t, d['device'])] = {'peak': d['peak_allocated_bytes'], 'ts': d['peak_ts_ns'],
                                           'reserved': d['peak_reserved_bytes'],
                                           'live': {k: tuple(v) for k, v in by_op.items()}}
    bad = 0
    for k in sorted(set(exp) | set(got), key=str):
        e, g = exp.get(k), got.get(k)
        if e is None or g is None:
            print('%s: device %r: kprof %s, independent %s' % (trace, k, g is not None, e is not None))
            bad += 1
            continue
        for f in ('peak', 'ts', 'reserved'):
            if e[f] != g[f]:
                print('%s: device %r: %s: kprof %s, independent %s' % (trace, k, f, g[f], e[f]))
                bad += 1
        for op in sorted(set(e['live']) | set(g['live'])):
            if e['live'].get(op) != g['live'].get(op):
                print('%s: device %r: live at peak %r: kprof %s, independent %s' %
                      (trace, k, op, g['live'].get(op), e['live'].get(op)))
                bad += 1
    if not bad:
        top = max(((v[0], op) for k, d in exp.items() if k[1] != 0
                   for op, v in d['live'].items() if op != BEFORE), default=(0, '-'))
        print('memory-check: %s: %d devices agree; largest live op at the GPU peak: %s (%d B)' %
              (trace, len(exp), top[1], top[0]))
    return bad


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    bad = sum(check(sys.argv[1], t) for t in sys.argv[2:])
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
