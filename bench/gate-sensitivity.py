#!/usr/bin/env python3
"""
gate-sensitivity.py: how small a regression `kprof diff --fail-above` still catches on two
recordings of one unchanged program, and the noise it measured.

For each chosen kernel row of NEW, the row's kernel durations are scaled by a factor f
(binary search on f in [1, 2] to 0.05%), NEW' is written, and `kprof diff --name=full -f json`
says whether the gate names that row.  Printed per row: time per step, the noise the gate
measured (k=3), the floor, and the smallest growth that trips at --fail-above 0 (floor and
noise only) and at --fail-above 2.  The unscaled pair must pass at --fail-above 2.

usage: bench/gate-sensitivity.py [--rows N] [--no-record] [BASE NEW]
  default BASE NEW: testdata/torch211-h200-gate/train_a.json.gz train_b.json.gz
  --rows N      the N biggest kernel rows plus the 3 smallest above 2 us per step (default 6)
  --no-record   do not append to bench/RESULTS.md
Builds nothing: run `make -j2` first (or set KPROF=/path/to/kprof).
"""
import datetime
import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KPROF = os.environ.get("KPROF", os.path.join(ROOT, "build", "kprof"))


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def diff(base, new, pct):
    r = subprocess.run([KPROF, "diff", "--name=full", "-f", "json", "--fail-above", str(pct), base, new],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"kprof diff failed ({r.returncode}): {r.stderr}")
    return json.loads(r.stdout), r.returncode


def scaled(trace, name, f, path):
    for e in trace["traceEvents"]:
        if e.get("cat") == "kernel" and e.get("name") == name:
            e["_dur"] = e.get("_dur", e["dur"])
            e["dur"] = round(e["_dur"] * f, 3)
    with open(path, "w") as out:
        json.dump(trace, out)


def smallest_trip(base, trace, name, pct, tmp):
    """smallest f in [1, 2] (to 0.0005) whose scaled NEW trips the gate on @name"""
    def trips(f):
        scaled(trace, name, f, tmp)
        doc, _ = diff(base, tmp, pct)
        return any(c["key"] == name for c in doc["gate"]["crossed"])
    lo, hi = 1.0, 2.0
    if not trips(hi):
        return None
    while hi - lo > 0.0005:
        mid = (lo + hi) / 2
        if trips(mid):
            hi = mid
        else:
            lo = mid
    return hi


def us(ns):
    return f"{ns / 1000:.3f}"


def main(argv):
    nrows, record, paths = 6, True, []
    i = 0
    while i < len(argv):
        if argv[i] == "--rows":
            nrows = int(argv[i + 1])
            i += 1
        elif argv[i] == "--no-record":
            record = False
        else:
            paths.append(argv[i])
        i += 1
    if not paths:
        d = os.path.join(ROOT, "testdata", "torch211-h200-gate")
        paths = [os.path.join(d, "train_a.json.gz"), os.path.join(d, "train_b.json.gz")]
    base, new = paths
    doc, rc = diff(base, new, 2)
    lines = [f"- unscaled pair at --fail-above 2: exit {rc} ({'passed' if rc == 0 else 'TRIPPED'}); "
             f"total noise {us(doc['summary']['noise_ns'])} us per step on "
             f"{us(doc['summary']['base_time_ns'])} us per step "
             f"({100 * doc['summary']['noise_ns'] / doc['summary']['base_time_ns']:.2f}%)",
             f"- floor (--min-delta) {us(doc['gate']['min_delta_ns'])} us per step, noise k = {doc['gate']['noise_k']}"]
    rows = [r for r in doc["rows"] if r["status"] != "others" and r["base_time_ns"]]
    rows.sort(key=lambda r: -r["base_time_ns"])
    small = [r for r in rows if r["base_time_ns"] > 2000][-3:]
    pick = rows[:nrows] + [r for r in small if r not in rows[:nrows]]
    trace = load(new)
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    lines.append("")
    lines.append("| per step | noise | noise % | trips at --fail-above 0 | trips at --fail-above 2 | kernel |")
    lines.append("|---:|---:|---:|---:|---:|---|")
    for r in pick:
        name = r["key"]
        t0 = smallest_trip(base, trace, name, 0, tmp)
        t2 = smallest_trip(base, trace, name, 2, tmp)
        b = r["base_time_ns"]

        def fmt(f):
            return "never (f<=2)" if f is None else f"+{(f - 1) * 100:.2f}% (+{us(b * (f - 1))} us)"
        short = name if len(name) <= 70 else name[:67] + "..."
        lines.append(f"| {us(b)} us | {us(r['noise_ns'])} us | {100 * r['noise_ns'] / b:.2f}% | "
                     f"{fmt(t0)} | {fmt(t2)} | `{short}` |")
    os.unlink(tmp)
    out = "\n".join(lines)
    print(out)
    if record:
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                                text=True).stdout.strip()
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as f:
            f.write(f"\n## gate-sensitivity {now}\n\n- machine: {os.cpu_count()} CPUs (CPU only: the traces "
                    f"were recorded on an H200 by tests/gpu/record_gate.py)\n- commit: {commit}\n"
                    f"- command: `bench/gate-sensitivity.py {' '.join(argv)}` on "
                    f"`{os.path.relpath(base, ROOT)}` vs `{os.path.relpath(new, ROOT)}`\n"
                    f"- method: one kernel row of NEW scaled by f (binary search, 0.05% steps); the smallest "
                    f"growth for which the gate names that row\n{out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
