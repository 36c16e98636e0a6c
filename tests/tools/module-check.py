#!/usr/bin/env python3
"""module-check.py — kprof analyze -g module / -g source against module-times.py (issue 24).

usage: tests/tools/module-check.py KPROF TRACE...

For each trace: the json rows of `-g module` and `-g source` equal, in integer ns, the tables
module-times.py computes from the trace alone (row "K" = fwd_ns of K, "K [bwd]" = bwd_ns of K,
the "(no module)"/"(no source)" rows = both); the rows partition the GPU time; `--depth 1` gives
the top module's forward time and the depth-1 table; `--format folded` sums to the GPU time with
one line per module row.  Also -j1 and -j3 give the same rows.  Exit 1 on a difference.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NONE = {'module': '(no module)', 'source': '(no source)'}


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit('module-check: %s: status %d\n%s' % (' '.join(cmd), r.returncode, r.stderr))
    return r.stdout


def rows(kprof, trace, key, *extra):
    doc = json.loads(run([kprof, 'analyze', '-q', '-g', key, '-f', 'json', '-n', '0',
                          *extra, trace]))
    out = {}
    for r in doc['rows']:
        if r[key] in out:
            sys.exit('module-check: %s: row %r twice' % (trace, r[key]))
        out[r[key]] = r['time_ns']
    return out


def expected(table, key):
    exp = {}
    for k, v in table.items():
        if k == NONE[key]:
            exp[k] = v['fwd_ns'] + v['bwd_ns']
            continue
        if v['fwd_ns']:
            exp[k] = v['fwd_ns']
        if v['bwd_ns']:
            exp[k + ' [bwd]'] = v['bwd_ns']
    return {k: v for k, v in exp.items() if v}


def compare(trace, what, got, exp):
    got = {k: v for k, v in got.items() if v}
    bad = 0
    for k in sorted(set(got) | set(exp)):
        if got.get(k) != exp.get(k):
            print('%s: %s: %r: kprof %s, independent %s' % (trace, what, k, got.get(k),
                                                              exp.get(k)))
            bad += 1
    return bad


def main():
    kprof, traces = sys.argv[1], sys.argv[2:]
    bad = 0
    for tr in traces:
        ind = json.loads(run([sys.executable, os.path.join(HERE, 'module-times.py'), tr]))
        ind1 = json.loads(run([sys.executable, os.path.join(HERE, 'module-times.py'), tr,
                               '--depth', '1']))
        total = ind['gpu_ns']
        for key in ('module', 'source'):
            got = rows(kprof, tr, key)
            bad += compare(tr, '-g ' + key, got, expected(ind[key], key))
            if sum(got.values()) != total:
                print('%s: -g %s rows sum to %d, GPU time %d' % (tr, key, sum(got.values()),
                                                                 total))
                bad += 1
            if rows(kprof, tr, key, '-j', '3') != rows(kprof, tr, key, '-j', '1'):
                print('%s: -g %s: -j 3 and -j 1 differ' % (tr, key))
                bad += 1
            folded = run([kprof, 'analyze', '-q', '-g', key, '-f', 'folded', tr]).splitlines()
            s = sum(int(line.rsplit(' ', 1)[1]) for line in folded)
            if s != total:
                print('%s: -g %s --format folded sums to %d, GPU time %d' % (tr, key, s, total))
                bad += 1
        d1 = rows(kprof, tr, 'module', '--depth', '1')
        bad += compare(tr, '-g module --depth 1', d1, expected(ind1['module'], 'module'))
        print('%s: %d GPU ns, %d module rows, %d source rows, top modules %s' % (
            tr, total, len(ind['module']), len(ind['source']),
            ', '.join('%s %d' % (k, v) for k, v in sorted(d1.items()))))
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
