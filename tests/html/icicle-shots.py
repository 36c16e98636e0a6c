#!/usr/bin/env python3
"""tests/html/icicle-shots.py PAGE.html OUT.png [BOX]: a screenshot of the icicle ("flame")
section of a kprof html page in headless chromium (the page's own css and script, the other
sections left out); with BOX, after a click on the box labelled BOX (the zoom).  Used for
doc/icicle-*.png."""
import re
import subprocess
import sys
import tempfile

page, out = sys.argv[1], sys.argv[2]
box = sys.argv[3] if len(sys.argv) > 3 else None
s = open(page, encoding="utf-8").read()
head = s[: s.index("<body>") + len("<body>")]
sec = re.search(r'<section id="flame">.*?</section>', s, re.S).group(0)
script = re.search(r"<script>.*?</script>", s, re.S).group(0)
click = ""
if box:
    click = ("<script>//<![CDATA[\nArray.prototype.filter.call(document.querySelectorAll('g.ib'),"
             "function(g){return (g.getAttribute('data-n')||g.querySelector('text').textContent)===%r})[0]"
             ".dispatchEvent(new Event('click'));\n//]]>\n</script>" % box)
n = sec.count("data-d=")
depth = max([int(d) for d in re.findall(r'data-d="(\d+)"', sec)] or [4])
h = 260 + 20 * depth
with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False, encoding="utf-8") as f:
    f.write(head + sec + script + click + "</body></html>\n")
    tmp = f.name
subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--window-size=1100,%d" % h, "--screenshot=" + out, "file://" + tmp],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=True)
print(f"{out}: {n} boxes, {depth + 1} levels")
