#!/usr/bin/env python3
"""tests/html/memory-shots.py PAGE.html OUT.png [dark]: a screenshot of the memory chart
("memory" section) of a kprof html page and the live-at-peak table after it, in headless
chromium (the page's own css and script, the other sections left out); "dark" forces the
dark scheme.  Used for doc/memory-*.png."""
import re
import subprocess
import sys
import tempfile

page, out = sys.argv[1], sys.argv[2]
dark = len(sys.argv) > 3 and sys.argv[3] == "dark"
s = open(page, encoding="utf-8").read()
head = s[: s.index("<body>") + len("<body>")]
sec = re.search(r'<section id="memory">.*?</section>', s, re.S).group(0)
# the first table whose header starts "Live at peak"
live = re.search(r'<section><h2>[^<]*</h2>\n<div class="wrap"><table class="rows"><thead><tr>'
                 r'<th[^>]*>Live at peak.*?</section>', s, re.S)
script = re.search(r"<script>.*?</script>", s, re.S).group(0)
body = sec + (live.group(0) if live else "")
with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False, encoding="utf-8") as f:
    f.write(head + body + script + "</body></html>\n")
    tmp = f.name
subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--window-size=1100,1000", "--screenshot=" + out, "file://" + tmp]
               + (["--force-dark-mode"] if dark else []),
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=True)
print("%s: %d hover bands" % (out, sec.count('class="hv"')))
