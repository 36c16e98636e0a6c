#!/usr/bin/env python3
"""depcheck.py — circular dependencies between the files of src/ and capture/, and arrows up
the layers their folders stand in (issue 29).

A file depends on another when its object file uses a symbol (a function or a
table) that the other defines: `nm` lists each of build/{src,capture}/**/*.o's undefined
symbols, and the object that defines one names the file it depends on.  The
file graph's strongly connected components of two or more files are the
circles; each is printed with the symbols that tie it.

usage: tests/tools/depcheck.py [--strict] [--folders] [--objdir DIR]... [--nm NM]
Report only (exit 0) unless --strict, which exits 1 when there is a circle or an arrow up.
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


# The folders, lowest first: a file may use files of its own folder and of folders below it.
# capture/ sits above src/'s library and below the command line: src/ calls capture/ only
# from src/cli/cmd-capture.c.
LAYERS = ['src/base', 'src/model', 'src/ingest', 'src/report', 'src/analysis',
          'capture/record', 'capture/kernels', 'capture/workloads', 'capture/intercept', 'capture',
          'capture/suites', 'src/cli']


def sources(objdir):
    """{object: source} for every object under OBJDIR/src and OBJDIR/capture whose source exists."""
    out = {}
    for top in ('src', 'capture'):
        for o in glob.glob(os.path.join(objdir, top, '**', '*.o'), recursive=True):
            rel = os.path.relpath(o, objdir)[:-2]
            if rel.endswith('.cu'):
                continue
            if os.path.exists(rel + '.c'):
                out[o] = rel + '.c'
    return out


def folder(f):
    return os.path.dirname(f)


def layer_arrows(graph):
    """Dependencies of a folder on a folder above it (LAYERS, lowest first)."""
    bad = []
    for f, deps in sorted(graph.items()):
        for g in sorted(deps):
            ff, gf = folder(f), folder(g)
            if ff not in LAYERS or gf not in LAYERS:
                bad.append((f, g, '%s or %s is not in depcheck.py\'s LAYERS' % (ff, gf)))
            elif LAYERS.index(gf) > LAYERS.index(ff):
                bad.append((f, g, '%s uses %s, a layer above it' % (ff, gf)))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--strict', action='store_true', help='exit 1 when there is a circle')
    ap.add_argument('--objdir', action='append',
                    help='a build folder (objects in src/, capture/); several are joined: the '
                    'position-independent one (build/pic) has capture compiled with CUPTI')
    ap.add_argument('--folders', action='store_true', help='print the folder graph')
    ap.add_argument('--nm', default=os.environ.get('NM', 'nm'))
    a = ap.parse_args()
    objs = {}
    for d in a.objdir or ['build']:
        objs.update(sources(d))
    if not objs:
        print('depcheck: no object files in %s (run make first)' % a.objdir, file=sys.stderr)
        return 2
    owner, uses = {}, {}
    for o, f in sorted(objs.items()):
        d, u = symbols(a.nm, o)
        for s in d:
            owner[s] = f
        uses.setdefault(f, set()).update(u)
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
    bad = layer_arrows(graph)
    for f, g, text in bad:
        print('depcheck: %s: %s -> %s: %s' % (text, f, g, ', '.join(sorted(why[(f, g)]))))
    if a.folders:
        fg = {}
        for f, deps in graph.items():
            for g in deps:
                if folder(f) != folder(g):
                    fg.setdefault(folder(f), set()).add(folder(g))
        for f in sorted(fg):
            print('  %s -> %s' % (f, ' '.join(sorted(fg[f]))))
    edges = sum(len(v) for v in graph.values())
    print('depcheck: %d files, %d dependencies, %d circle%s, %d arrow%s up the layers%s' %
          (len(graph), edges, len(found), '' if len(found) == 1 else 's', len(bad),
           '' if len(bad) == 1 else 's',
           '' if not (found or bad) or a.strict else ' (report only; --strict fails on them)'))
    return 1 if (found or bad) and a.strict else 0


if __name__ == '__main__':
    sys.exit(main())
