#!/usr/bin/env python3
"""capture_report_check.py DIR — tests/gpu/capture_report.sh's checks on DIR: capture.out (the
capture's summary table), charts-*.json (analyze -f json --chart results of --results r.json and
of the trace t.json), page-*.html (their pages) and r.html (capture --report), r.svg.  Every
chart point equals the table's TFLOP/s or GB/s (as printed) and time of its case; >= 3 charts
of >= 6 shapes; the trace's charts equal the results file's; the pages draw --report's charts.
Runs without a GPU on fixtures too (testdata/handmade/capture_results*.json)."""
import glob, json, re, sys
d = sys.argv[1]
out = open(d + "/capture.out", encoding="utf-8").read().splitlines()
# capture's summary table: Time ms TFLOP/s GB/s %Peak Speedup Err Acc Dtype Backend Layout Mode Shape... Op
i = next(k for k, l in enumerate(out) if l.split()[:3] == ["Time", "TFLOP/s", "GB/s"])
table = {}
for l in out[i + 2:]:
    t = l.split()
    if len(t) < 14 or t[1] != "ms":
        break
    key = (t[-1], " ".join(t[12:-1]), t[9], t[10] if t[10] != "-" else "")
    table[key] = {"ms": float(t[0]), "tflops": t[2], "gbs": t[3]}
print("capture table: %d rows" % len(table))
bad = 0
jsons = sorted(glob.glob(d + "/charts-*.json"))
charts = [json.load(open(f)) for f in jsons]
def lines(doc):
    return {k: v for k, v in doc.items() if isinstance(v, dict) and v.get("kind") == "lines"}
a, b = lines(charts[0]), lines(charts[1])
if a != b:
    print("FAIL: the charts of --results r.json and of the trace differ"); bad = 1
if len(a) < 3:
    print("FAIL: %d charts, want >= 3 workloads/ops" % len(a)); bad = 1
npts = 0
for name, ch in sorted(a.items()):
    op = ch["title"].split()[1]
    if len(ch["lanes"]) < 6:
        print("FAIL %s: %d shapes, want >= 6" % (name, len(ch["lanes"]))); bad = 1
    for p in ch["points"]:
        be = ch["series"][p["series"]].split()
        layout = be[1] if len(be) > 1 and be[1] in ("nchw", "nhwc") else ""
        row = None
        for (o, shape, backend, lay), r in table.items():
            if o == op and shape == p["label"] and backend == be[0] and (not layout or lay == layout):
                row = r
        if row is None:
            print("FAIL %s: no table row for %s %s" % (name, be[0], p["label"])); bad = 1; continue
        col = "tflops" if ch["unit"] == "TFLOP/s" else "gbs"
        want = row[col]
        got = ("%.1f" if col == "tflops" else "%.0f") % p["y"]
        if got != want:
            print("FAIL %s %s %s: chart %s, table %s" % (name, be[0], p["label"], got, want)); bad = 1
        if abs(p["w"] / 1e6 - row["ms"]) > 0.0005 * row["ms"] + 1e-6:
            print("FAIL %s %s %s: time %g ms, table %g" % (name, be[0], p["label"], p["w"] / 1e6, row["ms"])); bad = 1
        npts += 1
    print("%s: %s, %d shapes, series %s, marks %s" % (name, ch["title"], len(ch["lanes"]),
          ch["series"], [m["label"] for m in ch["marks"]]))
print("%d points checked against the table" % npts)
def fig(s):
    """the results charts' figures of a page (a trace's page has its analysis charts too)"""
    return [f for f in re.findall(r"<figure.*?</figure>", s, re.S) if 'id="chart-results-' in f]
rep = open(d + "/r.html", encoding="utf-8").read()
if len(fig(rep)) != len(a):
    print("FAIL: r.html has %d results charts, want %d" % (len(fig(rep)), len(a))); bad = 1
for f in glob.glob(d + "/page-*.html"):
    if fig(open(f, encoding="utf-8").read()) != fig(rep):
        print("FAIL: %s draws other charts than --report r.html" % f); bad = 1
svg = open(d + "/r.svg", encoding="utf-8").read()
if 'id="chart-results-1"' not in svg:
    print("FAIL: r.svg is not results-1"); bad = 1
sys.exit(bad)
