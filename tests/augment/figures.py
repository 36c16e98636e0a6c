#!/usr/bin/env python3
"""
figures.py -- are the numbers kprof augment inserts the ones kprof analyze reports?
  figures.py OUT.json ANALYZE.json     (OUT: augment's output, plain; ANALYZE: kprof analyze
                                        -g kernel -n 0 --name=full -f json of the same trace)
Checks, independently of kprof's own arithmetic (see tests/augment/check.sh):
  - OUT parses as JSON;
  - per kernel name, the sums of "kprof flops" and "kprof bytes" over the events that carry
    them equal analyze's row FLOPs and bytes exactly (a row that also holds unlinked events,
    which augment leaves alone, must be at least the sum);
  - per event, "kprof TFLOP/s" is its flops over its own "dur", rounded to 0.001, and
    "kprof % peak" is that rate over the peak implied by its analyze row (rows of one call);
  - the "kprof TFLOP/s" and "kprof GB/s" counter tracks integrate to the events' FLOPs and
    bytes (within the rounding of the values), are non-zero when any event has FLOPs, and in
    the middle of a long kernel that nothing overlaps read its own FLOPs over duration.
Prints one summary line; exits 1 with the first failures listed.
"""
import json
import sys
from decimal import Decimal

fails = []


def fail(msg):
    if len(fails) < 10:
        fails.append(msg)


def main():
    out_path, an_path = sys.argv[1], sys.argv[2]
    try:
        with open(out_path, encoding="utf-8") as f:
            doc = json.load(f, parse_float=Decimal)
    except ValueError as e:
        print(f"figures: {out_path}: not JSON: {e}")
        return 1
    with open(an_path, encoding="utf-8") as f:
        rows = {r["name"]: r for r in json.load(f)["rows"]}
    events = doc["traceEvents"] if isinstance(doc, dict) else doc

    per = {}  # name -> [count, flops or None, bytes or None]
    evs = []  # (ts_ns, end_ns, flops, bytes, args, name)
    counters = {"kprof TFLOP/s": [], "kprof GB/s": []}
    for e in events:
        if not isinstance(e, dict):
            continue
        a = e.get("args")
        if e.get("ph") == "C" and e.get("name") in counters:
            counters[e["name"]].append((Decimal(e["ts"]) * 1000, a))
            continue
        if not isinstance(a, dict) or "kprof op" not in a:
            continue
        s = per.setdefault(e["name"], [0, None, None])
        s[0] += 1
        fl, by = a["kprof flops"], a["kprof bytes"]
        if fl is not None:
            s[1] = (s[1] or 0) + fl
        if by is not None:
            s[2] = (s[2] or 0) + by
        t0 = Decimal(e["ts"]) * 1000
        evs.append((t0, t0 + Decimal(e.get("dur", 0)) * 1000, fl, by, a, e["name"]))

    # per kernel name against analyze's rows
    exact = 0
    for name, (n, fl, by) in per.items():
        r = rows.get(name)
        if r is None:
            fail(f"kernel {name!r}: in the output, no analyze row")
            continue
        if r["calls"] == n:
            exact += 1
            if fl != r["flops"] or by != r["bytes"]:
                fail(f"kernel {name!r}: augment sums flops {fl} bytes {by}, "
                     f"analyze {r['flops']} {r['bytes']}")
        elif n > r["calls"] or (fl or 0) > (r["flops"] or 0) or (by or 0) > (r["bytes"] or 0):
            fail(f"kernel {name!r}: {n} events, flops {fl} bytes {by} exceed analyze's "
                 f"{r['calls']} calls, {r['flops']} {r['bytes']}")

    # per event: its rate and % of peak
    npct = 0
    for t0, t1, fl, by, a, name in evs:
        secs = (t1 - t0) / Decimal(10**9)
        if fl is None or secs <= 0:
            if a["kprof TFLOP/s"] is not None:
                fail(f"{name!r} at {t0} ns: TFLOP/s {a['kprof TFLOP/s']} without flops")
            continue
        tf = Decimal(fl) / secs / Decimal(10**12)
        if abs(Decimal(a["kprof TFLOP/s"]) - tf) > Decimal("0.0005") + tf * Decimal("1e-9"):
            fail(f"{name!r} at {t0} ns: TFLOP/s {a['kprof TFLOP/s']}, flops/dur {tf:.4f}")
        r = rows.get(name)
        if r and r["calls"] == 1 and r["pct_peak_flops"] and r["flops_per_s"]:
            peak = Decimal(r["flops_per_s"]) / (Decimal(r["pct_peak_flops"]) / 100)
            pct = 100 * tf * 10**12 / peak
            npct += 1
            if a["kprof % peak"] is None or abs(Decimal(a["kprof % peak"]) - pct) > Decimal("0.051"):
                fail(f"{name!r} at {t0} ns: % peak {a['kprof % peak']}, analyze's peak gives {pct:.2f}")

    # counter tracks: step functions over the GPU span
    tot = {"kprof TFLOP/s": sum((Decimal(e[2]) for e in evs if e[2] is not None), Decimal(0)),
           "kprof GB/s": sum((Decimal(e[3]) for e in evs if e[3] is not None), Decimal(0))}
    unit = {"kprof TFLOP/s": (Decimal(10**12), Decimal("0.0005")),
            "kprof GB/s": (Decimal(10**9), Decimal("0.05"))}
    for track, pts in counters.items():
        pts.sort(key=lambda p: p[0])
        key = track[len("kprof "):]
        if tot[track] > 0 and not any(v[key] for _, v in pts):
            fail(f"{track}: every value is 0, the events hold {tot[track]}")
            continue
        if not pts:
            continue
        if pts[-1][1][key] != 0:
            fail(f"{track}: does not end at 0")
        area = sum(Decimal(pts[k][1][key]) * (pts[k + 1][0] - pts[k][0]) / Decimal(10**9)
                   for k in range(len(pts) - 1))
        scale, half = unit[track]
        span = (pts[-1][0] - pts[0][0]) / Decimal(10**9)
        # each bucket's value rounded: at most half a unit over the span, and one bucket of slack
        tol = half * span * scale + tot[track] / 500 + 1
        if abs(area * scale - tot[track]) > tol:
            fail(f"{track}: integrates to {area * scale:.6e}, the events hold {tot[track]:.6e}")

    # the middle of a long kernel alone on the GPU reads its own FLOPs over duration
    pts = counters["kprof TFLOP/s"]
    span = pts[-1][0] - pts[0][0] if pts else 0
    alone = 0
    for t0, t1, fl, _, a, name in evs:
        if fl is None or not fl or t1 - t0 < span / 50:
            continue
        if any(u0 < t1 and u1 > t0 and (u0, u1) != (t0, t1) for u0, u1, *_ in evs):
            continue
        mid = (t0 + t1) / 2
        v = [p[1]["TFLOP/s"] for p in pts if p[0] <= mid][-1]
        tf = Decimal(fl) / ((t1 - t0) / Decimal(10**9)) / Decimal(10**12)
        alone += 1
        if abs(Decimal(v) - tf) > Decimal("0.0005") + tf * Decimal("1e-6"):
            fail(f"{name!r} at {t0} ns: the TFLOP/s track reads {v} in its middle, "
                 f"flops/dur {tf:.4f}")

    if fails:
        print(f"figures: {out_path}:")
        for m in fails:
            print("  " + m)
        return 1
    print(f"figures: {len(evs)} events, {exact} of {len(per)} kernel rows exact, "
          f"{npct} % peak, {alone} lone kernels read on the track")
    return 0


if __name__ == "__main__":
    sys.exit(main())
