#!/usr/bin/env python3
"""Skipped values cost constant memory (issue 23 item 17): kprof analyze on traces holding a
50 MB string -- a top-level member nobody reads, a device name -- stays under 32 MB of RSS
(it needs about 14 MB here, of which some 10 MB are the forking Python's pages that
ru_maxrss counts; holding the string would take more than 50).
Before the fix the string was held whole in the parser's window (a 300 MB string: 310 MB RSS,
a 300 MB device name: 617 MB).  Usage: KPROF=build/kprof check.py WORKDIR"""
import gzip
import os
import subprocess
import sys

STRING_MB = 50
LIMIT_KB = 32 * 1024
kprof = os.environ.get("KPROF", "build/kprof")
work = sys.argv[1] if len(sys.argv) > 1 else "build/tests"
os.makedirs(work, exist_ok=True)
base = open("testdata/torch211-h100/matmul_bf16.json", "rb").read()
rest = base[base.index(b"{") + 1:]  # the trace's members after its '{'
chunk = b"a" * (1 << 20)


def write(name, head, tail):
    path = os.path.join(work, name)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(head)
        for _ in range(STRING_MB):
            f.write(chunk)
        f.write(tail + rest)
    return path


cases = [
    (write("bounds-top-string.json.gz", b'{"junk": "', b'", '), None),
    (write("bounds-device-name.json.gz", b'{"deviceProperties": [{"id": 0, "name": "', b'"}], '),
     b"device name longer than 256 bytes; cut"),
]
fail = 0
for path, warning in cases:
    p = subprocess.Popen([kprof, "analyze", path], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)  # this child's own peak RSS, in kB
    code = os.waitstatus_to_exitcode(status)
    rss = ru.ru_maxrss
    ok = code == 0 and rss <= LIMIT_KB and (warning is None or warning in err)
    print("  bounds: %s: status %d, max RSS %d kB (limit %d kB)%s" %
          (os.path.basename(path), code, rss, LIMIT_KB, "" if ok else "  FAIL"))
    if not ok:
        sys.stderr.write(err.decode(errors="replace")[-2000:])
        fail = 1
    os.remove(path)
sys.exit(fail)
