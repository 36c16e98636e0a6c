#!/usr/bin/env python3
"""List the longest C functions: scripts/funclen.py [-n N] [--max N] [FILE...] (default: src/*/*.c capture/*.c capture/*/*.c capture/kernels/*.cu).

A function's length is its lines from the line holding its name to its closing brace
(signature, body and braces; comments and blank lines inside count).  Used for issue 10's
"no function in src/ over ~120 lines" and to compare the tree before and after clang-format.
With --max N it lists every function of N lines or more and exits 1 when there is one (`make
funclen`: issue 29, no function of 120 lines or more).  CUDA files parse as C: a kernel's
`__global__ void f(...)` and `f<<<grid, block>>>(...)` calls inside a body need nothing more.
"""
import argparse
import glob
import re
import sys


def blank_out(s):
    """s with comments, string and character literals replaced by spaces (newlines kept)."""
    out = list(s)
    i, n = 0, len(s)
    while i < n:
        if s.startswith('/*', i):
            j = s.find('*/', i + 2)
            j = n if j < 0 else j + 2
        elif s.startswith('//', i):
            j = s.find('\n', i)
            j = n if j < 0 else j
        elif s[i] in '"\'':
            q, j = s[i], i + 1
            while j < n and s[j] != q and s[j] != '\n':
                j += 2 if s[j] == '\\' else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != '\n':
                out[k] = ' '
        i = j
    # preprocessor lines (with their continuations) hold no function bodies
    return re.sub(r'(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', lambda m: re.sub(r'[^\n]', ' ', m.group(0)),
                  ''.join(out))


def functions(path):
    t = blank_out(open(path, encoding='utf-8', errors='replace').read())
    depth, i, n = 0, 0, len(t)
    while i < n:
        c = t[i]
        if c == '{':
            if depth == 0:
                head = t[:i].rstrip()
                # extern "C" { (the "C" blanked) and namespace blocks hold functions: not a level
                if re.search(r'(?:\bextern|\bnamespace(?:\s+\w+)?)$', head):
                    i += 1
                    continue
                # a C++ specialization's name carries its arguments: ld<float>(...)
                m = re.search(r'(\w+)(?:\s*<[^<>(){};]*>)?\s*\((?:[^()]|\([^()]*\))*\)\s*$', head)
                if m and m.group(1) not in ('if', 'for', 'while', 'switch', 'sizeof'):
                    start = i
                    d, j = 0, i
                    while j < n:
                        if t[j] == '{':
                            d += 1
                        elif t[j] == '}':
                            d -= 1
                            if d == 0:
                                break
                        j += 1
                    first = t.count('\n', 0, m.start(1)) + 1
                    last = t.count('\n', 0, j) + 1
                    yield m.group(1), path, first, last - first + 1
                    i = j + 1
                    continue
            depth += 1
        elif c == '}':
            depth = max(depth - 1, 0)
        i += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-n', type=int, default=10, help='how many to list (0: all)')
    ap.add_argument('--max', type=int, metavar='N',
                    help='list every function of N lines or more; exit 1 if there is one')
    ap.add_argument('files', nargs='*')
    a = ap.parse_args()
    files = a.files or sorted(glob.glob('src/*/*.c') + glob.glob('capture/*.c') +
                              glob.glob('capture/*/*.c') + glob.glob('capture/kernels/*.cu'))
    fns = [f for p in files for f in functions(p)]
    fns.sort(key=lambda f: (-f[3], f[1], f[2]))
    if a.max is not None:
        over = [f for f in fns if f[3] >= a.max]
        for name, path, line, nlines in over:
            print(f'{path}:{line}: {name}: {nlines} lines (the limit is under {a.max})')
        longest = f'; the longest: {fns[0][0]}, {fns[0][3]} lines' if fns else ''
        print(f'  funclen: {len(fns)} functions in {len(files)} files, '
              f'{len(over)} of {a.max} lines or more{longest}', file=sys.stderr if over else sys.stdout)
        return 1 if over else 0
    for name, path, line, nlines in fns[:a.n or None]:
        print(f'{nlines:5d}  {name}  {path}:{line}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
