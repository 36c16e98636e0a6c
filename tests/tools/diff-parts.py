#!/usr/bin/env python3
"""Check kprof diff's headline against the two traces' own rows (issue 23, item 4).

    diff-parts.py KPROF BASE NEW [DIFF-OPTION...]

From `kprof analyze --group-by op-shape -f json` of each trace, independently of diff.c: the
rows keyed by (op, shapes, dtype), each side's times divided by its ProfilerStep count (rounded
to 1 ns as diff divides), paired by key.  Then the total's change must be, to the ns, the paired
rows' deltas + the new rows' time - the gone rows' time, and diff's json summary, its '# total'
and '# rows' lines and its gate line must say the same.  Only for pairs with no pairs across
dtypes or backends (the script says so and fails otherwise).  Prints the parts; exit 1 on a
mismatch.
"""
import json
import re
import subprocess
import sys


def run(*args):
    """stdout of one kprof command"""
    return subprocess.run(args, check=False, capture_output=True, text=True).stdout


def side(kprof, path):
    doc = json.loads(run(kprof, "analyze", "-q", "--group-by", "op-shape", "-f", "json", path))
    steps = doc["totals"]["steps"] or 1
    rows = {}
    for r in doc["rows"]:
        dt = r["dtype"]
        if dt and r["prec"] and not r["prec"].startswith(dt):
            dt = dt + "/" + r["prec"]
        key = " ".join(x for x in (r["op"] or r["name"], r["shape"], dt) if x)
        rows[key] = rows.get(key, 0) + r["time_ns"]
    # diff divides each joined row's sum, rounding half away from zero (llround)
    return {k: int(v / steps + 0.5) for k, v in rows.items()}


def main():
    kprof, base, new, opts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    b, n = side(kprof, base), side(kprof, new)
    paired = [k for k in b if k in n]
    paired_delta = sum(n[k] - b[k] for k in paired)
    new_ns = sum(v for k, v in n.items() if k not in b)
    gone_ns = sum(v for k, v in b.items() if k not in n)
    total = sum(n.values()) - sum(b.values())
    nnew, ngone = len(n) - len(paired), len(b) - len(paired)
    ok = paired_delta + new_ns - gone_ns == total
    print(f"analyze: paired {len(paired)} rows {paired_delta:+d} ns + new {nnew} rows {new_ns} ns"
          f" - gone {ngone} rows {gone_ns} ns = {paired_delta + new_ns - gone_ns:+d} ns;"
          f" total {total:+d} ns")

    args = [kprof, "diff", "-q", "--key", "op-shape", *opts, base, new]
    s = json.loads(run(*args, "-f", "json"))["summary"]
    if s["cross_dtype"] or s["cross_backend"]:
        print("this pair has rows paired across dtypes or backends: not checkable here")
        return 1
    got = (s["delta_ns"], s["paired_delta_ns"], s["new_rows_time_ns"], s["gone_rows_time_ns"],
           s["matched"], s["new"], s["gone"], s["geomean_rows"])
    want = (total, paired_delta, new_ns, gone_ns, len(paired), nnew, ngone, len(paired))
    print(f"diff json: delta {got[0]:+d}, paired {got[1]:+d}, new {got[2]}, gone {got[3]},"
          f" rows {got[4]}/{got[5]}/{got[6]}, geomean over {got[7]}")
    ok &= got == want

    text = run(*args)
    tot = re.search(r"^# total .*= paired (\S+ \S+) \+ new (\S+ \S+) - gone (\S+ \S+)$", text, re.M)
    rows = re.search(r"^# rows +\w+: (\d+) paired .*\), (\d+) new, (\d+) gone; "
                     r"geomean speedup of (\d+) paired rows? .*$", text, re.M)
    print("table:", tot.group(0) if tot else "no '# total' parts")
    print("table:", rows.group(0) if rows else "no '# rows' counts")
    ok &= bool(tot and rows)
    if tot:
        # each shown part is the exact one to the digits shown (units.c rounds half up)
        for shown, exact in zip(tot.groups(), (paired_delta, new_ns, gone_ns)):
            v, unit = shown.split()
            scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]
            digits = len(v.split(".")[1]) if "." in v else 0
            ok &= abs(float(v) * scale - exact) <= 0.5 * scale * 10 ** -digits
    if rows:
        ok &= tuple(int(x) for x in rows.groups()) == (len(paired), nnew, ngone, len(paired))
    gate = re.search(r"^# gate .*: (passed|tripped by .*)$", text, re.M)
    if gate:
        crossed = json.loads(run(*args, "-f", "json"))["gate"]["crossed"]
        parts = (["the total"] if any(c["key"] is None for c in crossed) else []) + [
            f"{c} {w} row{'s' if c != 1 else ''}"
            for w, c in (("paired", sum(1 for c in crossed if c["key"] and c["status"] != "new")),
                         ("new", sum(1 for c in crossed if c["status"] == "new")))
            if c]
        want_gate = ("tripped by " + ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "")
                     + parts[-1]) if parts else "passed"
        print("table:", gate.group(0))
        ok &= gate.group(1) == want_gate
        # every crossing row is counted where the rows line counts it
        ok &= sum(1 for c in crossed if c["status"] == "new") <= nnew
    print("adds up" if ok else "MISMATCH")
    return 0 if ok else 1


sys.exit(main())
