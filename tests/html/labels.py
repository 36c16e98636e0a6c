#!/usr/bin/env python3
"""tests/html/labels.py FILE...: in every <svg> chart of the html/svg FILEs, labels whose full
text (the <title> kprof puts in each shortened label, src/report/svg.c svg_short_labels) differs must
show different text (issue 23 item 23).  Prints each clash; exits 1 when there is one."""
import html
import re
import sys

svg_re = re.compile(r"<svg\b.*?</svg>", re.S)
label_re = re.compile(r"<text\b[^>]*><title>(.*?)</title>(.*?)</text>", re.S)
bad = 0
charts = labels = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    for svg in svg_re.findall(doc):
        charts += 1
        seen = {}
        for full, shown in label_re.findall(svg):
            labels += 1
            full, shown = html.unescape(full), html.unescape(shown)
            if shown in seen and seen[shown] != full:
                print(f"FAIL labels: {path}: '{shown}' stands for '{seen[shown]}' and '{full}'")
                bad = 1
            seen.setdefault(shown, full)
print(f"  labels: {labels} chart labels in {charts} charts, unique per chart" if not bad else "",
      end="\n" if not bad else "")
sys.exit(bad)
