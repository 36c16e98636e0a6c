#!/usr/bin/env python3
"""Write N rank traces of one job derived from the real ranks of testdata/ranks-h200x2/.

    tests/dask/gen-ranks.py N DST_DIR [SRC_DIR]

Rank r is rank (r mod 2) of SRC_DIR with distributedInfo's rank and world_size set to r and N,
and its timeline dilated about its first timestamp t0 and shifted: every "ts" t becomes
t0 + s + (t - t0) x f, every event's end t + dur likewise (integer nanoseconds, half up), with
f = 1 + ((37 r) mod 101 - 50) / 2000 (within 2.5%) and s = ((13 r) mod 17) us, so each rank's
steps, breakdown and collective starts differ (stragglers and skew vary with r) while order,
nesting and gaps are kept.  Only those numbers change; every other byte is kept (as
tests/tools/derive-rankdiff.py).  Files rank<r>.json.gz (unpadded: name order is not rank
order), gzip level 1, mtime 0, so the set is reproducible.  Used by tests/dask/check.py.
"""
import gzip
import os
import re
import sys

EVENT = re.compile(rb'"ts": ([0-9]+)(?:\.([0-9]{1,3}))?(, "dur": ([0-9]+)(?:\.([0-9]{1,3}))?)?')
DIST = re.compile(rb'("distributedInfo": \{[^}]*?"rank": )[0-9]+(, "world_size": )[0-9]+')


def ns(whole, frac):
    return int(whole) * 1000 + (int(frac.ljust(3, b"0")) if frac else 0)


def us(v):
    return b"%d.%03d" % (v // 1000, v % 1000)


def derive(data, r, n):
    num, den = 2000 + (37 * r) % 101 - 50, 2000
    shift = ((13 * r) % 17) * 1000
    t0 = min(ns(m.group(1), m.group(2)) for m in EVENT.finditer(data))

    def at(v):
        return t0 + shift + ((v - t0) * num * 2 + den) // (2 * den)

    def one(m):
        ts = ns(m.group(1), m.group(2))
        out = b'"ts": ' + us(at(ts))
        if m.group(3):
            out += b', "dur": ' + us(at(ts + ns(m.group(4), m.group(5))) - at(ts))
        return out

    data, k = DIST.subn(lambda m: m.group(1) + b"%d" % r + m.group(2) + b"%d" % n, data, 1)
    if k != 1:
        sys.exit("gen-ranks: no distributedInfo rank and world_size in the source trace")
    return EVENT.sub(one, data)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    n, dst = int(sys.argv[1]), sys.argv[2]
    src = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata", "ranks-h200x2")
    base = []
    for i in range(2):
        with gzip.open(os.path.join(src, "rank%d.json.gz" % i), "rb") as fp:
            base.append(fp.read())
    os.makedirs(dst, exist_ok=True)
    for r in range(n):
        with open(os.path.join(dst, "rank%d.json.gz" % r), "wb") as fp:
            with gzip.GzipFile(fileobj=fp, mode="wb", compresslevel=1, mtime=0) as gz:
                gz.write(derive(base[r % 2], r, n))


if __name__ == "__main__":
    main()
