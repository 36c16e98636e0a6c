#!/usr/bin/env bash
# stage-times.sh: KPROF_TIMING's stage seconds (load, link, analyze, write) of kprof builds on
# the same inputs in one run, runs interleaved (A B A B ...), so load on a shared machine falls
# on all alike.  Prints, per input and build, the median and the best of each stage over the
# runs ("median; best"), the wall seconds, and the load line's details (main thread's merge, release and waits,
# chunk parsing) of the run with the median load.
#
# usage: bench/stage-times.sh [-n N] [-c 'CMD ARGS'] LABEL=KPROF... -- FILE...
#   -n N    runs per build and input (default 7)
#   -c CMD  the kprof command line before FILE (default 'analyze --format json')
# A build without KPROF_TIMING (older than 2026-11-26) prints nothing for the stages.
# Builds nothing; records nothing (paste the table into bench/RESULTS.md with the context).

set -u
export LC_ALL=C
runs=7
cmd='analyze --format json'
usage() { sed -n '8,11s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    -n) runs=${2:?}; shift 2 ;;
    -c) cmd=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) break ;;
    esac
done
builds=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do builds+=("$1"); shift; done
[ $# -gt 1 ] && [ ${#builds[@]} -gt 0 ] || usage
shift
python3 - "$runs" "$cmd" "${#builds[@]}" "${builds[@]}" "$@" <<'PY' || exit 3
import re, statistics, subprocess, sys, time, os
runs, cmd, nb = int(sys.argv[1]), sys.argv[2].split(), int(sys.argv[3])
builds = [b.split("=", 1) for b in sys.argv[4:4 + nb]]
files = sys.argv[4 + nb:]
STAGES = ["load", "link", "analyze", "write"]
env = dict(os.environ, KPROF_TIMING="1")
print("| input | build | wall s | " + " | ".join("%s s" % s for s in STAGES) +
      " | load details of the median run |")
print("|---|---|---:|" + "---:|" * len(STAGES) + "---|")
for f in files:
    with open(f, "rb") as fh:
        while fh.read(1 << 24):
            pass
    got = {lab: [] for lab, _ in builds}
    for _ in range(runs):
        for lab, exe in builds:
            t0 = time.perf_counter()
            p = subprocess.run([exe] + cmd + [f], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=env)
            w = time.perf_counter() - t0
            if p.returncode != 0:
                sys.exit("stage-times: error: %s failed on %s" % (lab, f))
            st, det = {}, ""
            for line in p.stderr.decode().splitlines():
                m = re.match(r"kprof: timing: (\w+) ([0-9.]+) s(?: \((.*)\))?$", line)
                if m:
                    st[m.group(1)] = float(m.group(2))
                    if m.group(1) == "load":
                        det = m.group(3) or ""
            got[lab].append((w, st, det))
    for lab, _ in builds:
        rs = got[lab]
        def col(key):
            xs = [r[1][key] for r in rs if key in r[1]]
            return "%.4f; %.4f" % (statistics.median(xs), min(xs)) if xs else "-"
        ws = [r[0] for r in rs]
        loads = sorted((r[1].get("load", 0), r[2]) for r in rs)
        print("| %s | %s | %.4f; %.4f | %s | %s |" % (
            os.path.basename(f), lab, statistics.median(ws), min(ws),
            " | ".join(col(s) for s in STAGES), loads[len(loads) // 2][1]))
PY
