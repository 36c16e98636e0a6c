#!/usr/bin/env python3
"""Derive testdata/rankdiff/new/ from the real ranks of testdata/ranks-h200x2/ (issue 23, item 25).

    tests/tools/derive-rankdiff.py [SRC_DIR [DST_DIR]]

Each rank's trace is dilated in time about its first timestamp: every "ts" t becomes
t0 + (t - t0) x f and every event's end t + dur becomes t0 + (t + dur - t0) x f, in integer
nanoseconds rounded half up, so order, nesting and gaps are kept and every span, step and
breakdown figure of the rank scales by f (to a nanosecond or so per interval).  Rank 0 runs
2% faster (f = 0.98), rank 1 5% slower (f = 1.05).  Only the numbers after "ts": and "dur":
change; every other byte of the JSON is kept.  Output gzip'ed with mtime 0 (reproducible).
"""
import gzip
import os
import re
import sys
from decimal import Decimal
from fractions import Fraction

FACTORS = {"rank0.json.gz": Fraction(98, 100), "rank1.json.gz": Fraction(105, 100)}
EVENT = re.compile(rb'"ts": ([0-9.]+)(, "dur": ([0-9.]+))?')


def ns(text):
    v = Decimal(text.decode()) * 1000
    if v != v.to_integral_value():
        sys.exit(f"timestamp {text!r} is finer than 1 ns")
    return int(v)


def us(v):
    return f"{v // 1000}.{v % 1000:03d}".encode()


def scale(t0, v, f):
    x = (v - t0) * f
    return t0 + (x.numerator * 2 + x.denominator) // (2 * x.denominator)  # half up


def dilate(data, f):
    t0 = min(ns(m.group(1)) for m in EVENT.finditer(data))

    def one(m):
        ts = ns(m.group(1))
        out = b'"ts": ' + us(scale(t0, ts, f))
        if m.group(3):
            end = scale(t0, ts + ns(m.group(3)), f)
            out += b', "dur": ' + us(end - scale(t0, ts, f))
        return out

    return EVENT.sub(one, data)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "testdata/ranks-h200x2"
    dst = sys.argv[2] if len(sys.argv) > 2 else "testdata/rankdiff/new"
    for name, f in FACTORS.items():
        with gzip.open(os.path.join(src, name), "rb") as fp:
            data = fp.read()
        path = os.path.join(dst, name)
        if os.path.islink(path):
            os.unlink(path)
        with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                                    filename="") as gz:
            gz.write(dilate(data, f))


main()
