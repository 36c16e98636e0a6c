#!/usr/bin/python3
"""tests/dask/check.py KPROF — the Dask driver (contrib/dask/kprof_dask.py) against kprof itself.

64 rank traces derived from testdata/ranks-h200x2 (tests/dask/gen-ranks.py), rank 63 truncated
(it warns); a LocalCluster of 4 worker processes started here and given to the driver with
--scheduler:
  - fan-in 8, one trace per shard, -f json: byte-identical to `kprof analyze DIR --ranks -f json`,
    and the same warnings on standard error;
  - fan-in 2, 3 traces per shard (the last shard short): the same bytes and warnings;
  - -o FILE (a table): FILE is `kprof merge` of that summary, and no temporary file is left;
then with --local 1 (the driver's own LocalCluster) on 8 ranks, one of them malformed JSON:
kprof's located error, the driver's line naming the file and exit status 3, no -o file written.
SKIP (status 0) when Debian's python3-distributed cannot be imported.
"""
import logging
import os
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = os.path.join(TOP, "contrib", "dask", "kprof_dask.py")
GEN = os.path.join(TOP, "tests", "dask", "gen-ranks.py")
failures = []
checks = []


T0 = time.monotonic()


def check(ok, what, detail=""):
    """@what, and @detail when it failed"""
    checks.append(what)
    if not ok:
        failures.append(what)
        print(f"FAIL dask: {what}" + ("\n" + detail if detail else ""))
    elif os.environ.get("V"):
        print(f"  ok   {time.monotonic() - T0:5.1f} s: {what}")


def driver(*args, cwd):
    # bounded: a cluster that hangs fails the check instead of stalling `make check` (CI)
    try:
        p = subprocess.run([sys.executable, DRIVER, *args], cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=300)
    except subprocess.TimeoutExpired as e:
        return -1, b"", "timed out after 300 s\n" + (e.stderr or b"").decode("utf-8", "replace")
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def first_diff(a, b):
    i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
    return f"first difference at byte {i}: {a[i:i + 60]!r} vs {b[i:i + 60]!r}"


def same(got, want, what, stderr=""):
    check(got == want, what, "" if got == want else f"{first_diff(got, want)}\n{stderr}")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tests/dask/check.py KPROF")
    kprof = os.path.abspath(sys.argv[1])
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        print(f"  dask: SKIP: cannot import distributed ({e}); make deps installs python3-distributed")
        return 0
    t0 = time.monotonic()
    # names reach the terminal through _vis: control, format and separator characters escaped
    sys.path.insert(0, os.path.dirname(DRIVER))
    import kprof_dask
    check(kprof_dask._vis("bad/r\x1b[2J\u202e\n.json") == "bad/r\\u001b[2J\\u202e\\u000a.json",
          "a file name's control characters are escaped for the terminal")
    # a working directory missing on the worker is said to be one, not a missing kprof
    try:
        kprof_dask._run([kprof, "--version"], "/nonexistent-kprof-dask-cwd", "x")
        check(False, "a missing working directory fails")
    except RuntimeError as e:
        check("bad cwd" in e.args[4], "a missing working directory is named as one", e.args[4])
    with tempfile.TemporaryDirectory(prefix="kprof-dask-check-") as tmp:
        subprocess.run([sys.executable, GEN, "64", os.path.join(tmp, "job")], check=True)
        truncate_rank(tmp, 63)
        p = subprocess.run([kprof, "analyze", "job", "--ranks", "-f", "json"], cwd=tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
        ref, ref_warn = p.stdout, warnings(p.stderr.decode())
        check(any("job/rank63.json:" in w and "truncated" in w for w in ref_warn),
              "kprof analyze warns of the truncated rank", "\n".join(ref_warn))
        cluster = LocalCluster(n_workers=4, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
        try:
            addr = cluster.scheduler_address
            rc, out, err = driver("--scheduler", addr, "--kprof", kprof, "-f", "json", "job",
                                  cwd=tmp)
            check(rc == 0, "fan-in 8: exit 0", f"got {rc}\n{err}")
            same(out, ref, "fan-in 8: the summary is kprof analyze job --ranks -f json's bytes", err)
            check(warnings(err) == ref_warn, "fan-in 8: kprof analyze's warnings, once each", err)
            check("64 traces in 64 shards" in err and "73/73 tasks (100%)" in err,
                  "fan-in 8: progress shown", err)
            rc, out, err = driver("--scheduler", addr, "--kprof", kprof, "-f", "json",
                                  "--fan-in", "2", "--shard-size", "3", "job", cwd=tmp)
            check(rc == 0, "fan-in 2: exit 0", f"got {rc}\n{err}")
            same(out, ref, "fan-in 2, shards of 3: the same bytes", err)
            check(warnings(err) == ref_warn, "fan-in 2: kprof analyze's warnings, once each", err)
            rc, out, err = driver("--scheduler", addr, "--kprof", kprof, "-o", "job.txt", "-q",
                                  "job/", cwd=tmp)
            with open(os.path.join(tmp, "ref.json"), "wb") as fp:
                fp.write(ref)
            want = subprocess.run([kprof, "merge", "ref.json"], cwd=tmp, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, check=True).stdout
            with open(os.path.join(tmp, "job.txt"), "rb") as fp:
                got = fp.read()
            check(rc == 0 and out == b"" and err.splitlines() == ref_warn,
                  "-o job.txt -q: exit 0, no progress, the warnings", f"{rc}: {err}")
            same(got, want, "table -o: kprof merge of the summary (README's Slurm recipe)")
            check(not [n for n in os.listdir(tmp) if n.startswith(".kprof-dask-")],
                  "-o: no temporary file left")
        finally:
            client.close()
            cluster.close()
        bad_case(kprof, tmp)
    print(f"  dask: {len(checks) - len(failures)} of {len(checks)} checks passed in "
          f"{time.monotonic() - t0:.1f} s (64 ranks, a LocalCluster of 4 worker processes)")
    return 1 if failures else 0


def warnings(stderr):
    return [line for line in stderr.splitlines() if line.startswith("kprof: ")]


def truncate_rank(tmp, r):
    """rank @r as a plain .json cut at 80%: a trace that warns (its warnings travel in its
    summary: the merged json and warnings are analyze's)"""
    import gzip

    gz = os.path.join(tmp, "job", f"rank{r}.json.gz")
    with gzip.open(gz, "rb") as fp:
        data = fp.read()
    os.unlink(gz)
    with open(os.path.join(tmp, "job", f"rank{r}.json"), "wb") as fp:
        fp.write(data[:len(data) * 4 // 5])


def bad_case(kprof, tmp):
    """8 ranks, rank5 a plain .json with one malformed value."""
    bad = os.path.join(tmp, "bad")
    os.mkdir(bad)
    for r in range(8):
        if r != 5:
            os.symlink(os.path.join(tmp, "job", f"rank{r}.json.gz"), os.path.join(bad, f"rank{r}.json.gz"))
    import gzip

    with gzip.open(os.path.join(tmp, "job", "rank5.json.gz"), "rb") as fp:
        data = fp.read()
    at = data.index(b'"ph": "X"', len(data) // 2)
    with open(os.path.join(bad, "rank5.json"), "wb") as fp:
        fp.write(data[:at] + b'"ph": X"' + data[at + 9:])  # a value without its opening quote
    kerr = subprocess.run([kprof, "analyze", "--ranks", "-f", "json", "bad/rank5.json"], cwd=tmp,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    rc, out, err = driver("--local", "1", "--kprof", kprof, "-f", "json", "-o", "bad.json", "bad",
                          cwd=tmp)
    line = kerr.stderr.decode().strip().splitlines()[-1]
    check(kerr.returncode == 3 and line.startswith("kprof: bad/rank5.json:") and ": error:" in line,
          "kprof itself: exit 3, located error", f"{kerr.returncode}: {line}")
    check(rc == 3, "corrupt rank: the driver exits 3", f"got {rc}\n{err}")
    check(line in err, "corrupt rank: kprof's located error shown", err)
    check("kprof-dask: error: kprof analyze of bad/rank5.json exited 3 (bad input) on worker tcp://"
          in err, "corrupt rank: the driver names the file and the status", err)
    check(not os.path.exists(os.path.join(tmp, "bad.json")), "corrupt rank: no -o file written")


if __name__ == "__main__":
    sys.exit(main())
