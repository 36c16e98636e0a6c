#!/usr/bin/env python3
"""depcheck.py — circular dependencies between the files of src/ (issue 29).

A file depends on another when its object file uses a symbol (a function or a
table) that the other defines: `nm` lists each of build/src/*.o's undefined
symbols, and the object that defines one names the file it depends on.  The
file graph's strongly connected components of two or more files are the
circles; each is printed with the symbols that tie it.

usage: tests/tools/depcheck.py [--strict] [--objdir DIR] [--nm NM]
Report only (exit 0) unless --strict, which exits 1 when there is a circle.
"""
import argparse
import glob
import os
import subprocess
import sys


def symbols(nm, obj):
    """(defined, undefined) global symbol names of one object file."""
    out = subprocess.run([nm, '-P', obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, kind = f[0], f[1]
        if kind == 'U':
            undefined.add(name)
        elif kind.isupper() and kind not in 'N':  # global: T, D, R, B, C, V, W ...
            defined.add(name)
    return defined, undefined


def circles(graph):
    """Tarjan's strongly connected components of more than one node, each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--strict', action='store_true', help='exit 1 when there is a circle')
    ap.add_argument('--objdir', default='build/src', help='where src/*.c were compiled')
    ap.add_argument('--nm', default=os.environ.get('NM', 'nm'))
    a = ap.parse_args()
    objs = sorted(o for o in glob.glob(os.path.join(a.objdir, '*.o'))
                  if os.path.exists(os.path.join('src', os.path.basename(o)[:-2] + '.c')))
    if not objs:
        print('depcheck: no object files in %s (run make first)' % a.objdir, file=sys.stderr)
        return 2
    owner, uses = {}, {}
    for o in objs:
        f = 'src/' + os.path.basename(o)[:-2] + '.c'
        d, u = symbols(a.nm, o)
        for s in d:
            owner[s] = f
        uses[f] = u
    graph, why = {f: set() for f in uses}, {}
    for f, u in uses.items():
        for s in u:
            g = owner.get(s)
            if g is not None and g != f:
                graph[f].add(g)
                why.setdefault((f, g), []).append(s)
    found = circles(graph)
    for comp in found:
        print('depcheck: circle: ' + ' <-> '.join(comp))
        for f in comp:
            for g in comp:
                if g in graph[f]:
                    print('  %s -> %s: %s' % (f, g, ', '.join(sorted(why[(f, g)]))))
    edges = sum(len(v) for v in graph.values())
    print('depcheck: %d files, %d dependencies, %d circle%s%s' %
          (len(graph), edges, len(found), '' if len(found) == 1 else 's',
           '' if not found or a.strict else ' (report only; --strict fails on them)'))
    return 1 if found and a.strict else 0


if __name__ == '__main__':
    sys.exit(main())
