#!/usr/bin/env python3
"""memdiff-check.py — kprof diff --memory against each trace's kprof analyze --memory (issue 25).

usage: tests/tools/memdiff-check.py KPROF BASE:NEW...

For each pair, from the two `kprof analyze --memory -f json` documents alone: GPU devices pair
by (device_type, device, k-th of that kind); per device the peak allocated and reserved deltas
and ratios; per op, the live_at_peak bytes of each side summed over modules (0 when absent),
their delta, sorted by delta descending then op name; the ops' deltas sum to the peak's.  The
json of `kprof diff --memory` must hold exactly these.  The gate: `--fail-above-mem` just
under the change (exit 1, the message names the device and the op that grew most) and at it
(exit 0).  Exit 1 on a difference.
"""
import json
import subprocess
import sys
from collections import defaultdict

fails = 0


def fail(msg):
    global fails
    fails += 1
    print('memdiff-check: ' + msg, file=sys.stderr)


def run(kprof, *args):
    return subprocess.run([kprof, *args], capture_output=True, text=True)


def analyze(kprof, trace):
    r = run(kprof, 'analyze', '-q', '--memory', '-f', 'json', trace)
    if r.returncode:
        sys.exit('memdiff-check: %s: status %d\n%s' % (trace, r.returncode, r.stderr))
    return json.loads(r.stdout)['memory']['devices']


def keyed(devs):
    seen, out = defaultdict(int), {}
    for d in devs:
        k = (d['device_type'], d['device'])
        out[k + (seen[k],)] = d
        seen[k] += 1
    return out


def by_op(d):
    s = defaultdict(int)
    for r in d['live_at_peak'] or []:
        s[r['op']] += r['bytes']
    return s


def ratio(b, n):
    return n / b if b else None


def expected(base, new):
    kb, kn = keyed(base), keyed(new)
    out = []
    for k in list(kb) + [k for k in kn if k not in kb]:
        b, n = kb.get(k), kn.get(k)
        ba = b['peak_allocated_bytes'] if b else None
        na = n['peak_allocated_bytes'] if n else None
        br = b['peak_reserved_bytes'] if b else None
        nr = n['peak_reserved_bytes'] if n else None
        e = {'device': k[1], 'device_type': k[0],
             'base_peak_allocated_bytes': ba, 'new_peak_allocated_bytes': na,
             'delta_bytes': (na or 0) - (ba or 0),
             'ratio': ratio(ba, na) if b and n else None,
             'base_peak_reserved_bytes': br, 'new_peak_reserved_bytes': nr,
             'reserved_delta_bytes': nr - br if br is not None and nr is not None else None,
             'reserved_ratio': ratio(br, nr) if br is not None and nr is not None else None,
             'grew': None}
        if b and n and b['live_at_peak'] is not None and n['live_at_peak'] is not None:
            ob, on = by_op(b), by_op(n)
            rows = [{'op': op, 'base_bytes': ob.get(op, 0), 'new_bytes': on.get(op, 0),
                     'delta_bytes': on.get(op, 0) - ob.get(op, 0)} for op in set(ob) | set(on)]
            rows.sort(key=lambda r: (-r['delta_bytes'], r['op'].encode()))
            if sum(r['delta_bytes'] for r in rows) != e['delta_bytes']:
                fail('%s: op deltas do not sum to the peak delta' % (k,))
            e['grew'] = rows
        out.append(e)
    return out


def close(a, b):
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-12 * max(1, abs(a))


def compare(tag, want, got):
    if len(want) != len(got):
        fail('%s: %d devices, kprof %d' % (tag, len(want), len(got)))
        return
    for w, g in zip(want, got):
        for k, v in w.items():
            if k in ('ratio', 'reserved_ratio'):
                ok = close(v, g.get(k))
            else:
                ok = v == g.get(k)
            if not ok:
                fail('%s: cuda:%s %s: expected %r, kprof %r' % (tag, w['device'], k, v, g.get(k)))


def gate(kprof, tag, b, n, want):
    for w in want:
        if w['ratio'] is None:
            continue
        pct = (w['ratio'] - 1) * 100
        top = next((r['op'] for r in w['grew'] or [] if r['delta_bytes'] > 0), None)
        if pct > 0.01:
            r = run(kprof, 'diff', '-q', '--fail-above-mem', '%.6f' % (pct - 0.01), b, n)
            if r.returncode != 1 or 'regression: cuda:%d peak allocated' % w['device'] not in r.stderr \
                    or (top and 'grew most: ' + top + ' +' not in r.stderr):
                fail('%s: --fail-above-mem %.6f: status %d, stderr %r' % (tag, pct - 0.01,
                                                                         r.returncode, r.stderr))
        r = run(kprof, 'diff', '-q', '--fail-above-mem', '%.6f' % (max(pct, 0) + 0.01), b, n)
        if r.returncode != 0:
            fail('%s: --fail-above-mem %.6f: status %d' % (tag, max(pct, 0) + 0.01, r.returncode))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    kprof = sys.argv[1]
    for pair in sys.argv[2:]:
        b, n = pair.split(':')
        want = expected(analyze(kprof, b), analyze(kprof, n))
        r = run(kprof, 'diff', '-q', '--memory', '-f', 'json', b, n)
        if r.returncode:
            fail('%s: diff status %d\n%s' % (pair, r.returncode, r.stderr))
            continue
        compare(pair, want, json.loads(r.stdout)['memory']['devices'])
        gate(kprof, pair, b, n, want)
    if fails:
        sys.exit(1)
    print('memdiff-check: %d pairs agree' % (len(sys.argv) - 2))


main()
