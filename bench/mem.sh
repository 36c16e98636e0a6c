#!/usr/bin/env bash
# mem.sh: peak RSS of two kprof builds on the same traces, in one run (runs interleaved):
# `analyze -j 1`, `analyze` (one parse thread per CPU), and `diff A B` against the sum of the
# two analyses' peaks.  Prints RSS / JSON size, new/base ratios and the diff check (issue 14:
# RSS <= 0.15x the JSON size on real traces, <= 0.3x on compact synthetic ones; diff <= the
# sum of the two analyses' peaks).
#
# usage: bench/mem.sh [options] BASE_KPROF NEW_KPROF
#   -n N        runs per build and command, the smallest peak counts (default 3)
#   --big-mb MB size of the generated trace (default 200; 0: none)
#   --record    append the tables to bench/RESULTS.md
#   --dir DIR   scratch directory (default /tmp/kprof-bench)
# Inputs: the largest shared torch211-h100 trace, the shared HTA control/test pair (inflated
# into DIR) and DIR/bigMB.json (bench/gen-big-trace.py, synthetic).  Diff pairs: control vs
# test, big vs big.  The floor row is `analyze` of an empty trace (the process alone).
# Builds nothing: run `make -j2` (and build the base elsewhere, e.g. a git worktree).

set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=$(cd "$root/../shared" 2>/dev/null && pwd || echo "$root/../shared")
runs=3
big_mb=200
record=0
dir=/tmp/kprof-bench
ORIG_ARGS=("$@")

die() { echo "mem: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '8,12s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    -n) runs=${2:?}; shift 2 ;;
    --big-mb) big_mb=${2:?}; shift 2 ;;
    --record) record=1; shift ;;
    --dir) dir=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "mem: error: unknown option '$1'" >&2; usage ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || usage
base=$1 new=$2
[ -x "$base" ] || die "'$base' is not an executable"
[ -x "$new" ] || die "'$new' is not an executable"
[ -x /usr/bin/time ] || die "GNU time is missing: apt-get install -y time"
command -v python3 >/dev/null || die "python3 is missing"
mkdir -p "$dir" || die "cannot create '$dir'"
cp "$base" "$dir/mem-base.bin" && cp "$new" "$dir/mem-new.bin" || die "cannot copy the builds"

inflate() { # name.json.gz -> DIR/name.json
    local out="$dir/$(basename "$1" .gz)"
    if [ ! -s "$out" ]; then
        gzip -dc "$1" > "$out.tmp" && mv "$out.tmp" "$out" || die "cannot inflate '$1'"
    fi
    echo "$out"
}
largest=$(ls -S "$shared"/testdata/torch211-h100/*.json | head -1)
ctl=$(inflate "$shared/testdata/hta/trace_diff_control_2022.json.gz")
tst=$(inflate "$shared/testdata/hta/trace_diff_test_2022.json.gz")
files=("$largest" "$ctl" "$tst")
big=
if [ "$big_mb" != 0 ]; then
    big="$dir/big$big_mb.json"
    if [ ! -s "$big" ] || [ "$here/gen-big-trace.py" -nt "$big" ]; then
        python3 "$here/gen-big-trace.py" -m "$big_mb" "$big" >&2 || die "gen-big-trace.py failed"
    fi
    files+=("$big")
fi
empty="$dir/empty.json"
echo '{"traceEvents":[]}' > "$empty"

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
table="$dir/mem.md"
python3 - "$dir" "$runs" "$empty" "$ctl" "$tst" "$big" "${files[@]}" > "$table" <<'PY' ||
import os, subprocess, sys

d, runs, empty, ctl, tst, big = sys.argv[1], int(sys.argv[2]), *sys.argv[3:7]
files = sys.argv[7:]
bins = {"base": os.path.join(d, "mem-base.bin"), "new": os.path.join(d, "mem-new.bin")}
RSSF = os.path.join(d, "mem-rss.txt")

def peak(argv):
    """peak RSS in MB of one command (GNU time), the smallest of @runs"""
    best = None
    for _ in range(runs):
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", RSSF] + argv,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if p.returncode not in (0, 1):
            sys.exit("mem: error: %s failed (status %d)" % (" ".join(argv), p.returncode))
        with open(RSSF) as fh:
            m = int(fh.read().split()[-1]) / 1024
        best = m if best is None else min(best, m)
    return best

def both(args):
    """{build: MB}, the builds' runs interleaved"""
    out = {}
    for b in ("base", "new"):
        out[b] = peak([bins[b]] + args)
    return out

CMDS = [("j1", ["analyze", "--format", "json", "-j", "1"]), ("jN", ["analyze", "--format", "json"])]
print("| input | MB | " + " | ".join("%s %s RSS MB" % (b, c) for c, _ in CMDS for b in ("base", "new"))
      + " | " + " | ".join("%s %s RSS/size" % (b, c) for c, _ in CMDS for b in ("base", "new"))
      + " | " + " | ".join("%s new/base" % c for c, _ in CMDS) + " |")
print("|---|" + "---:|" * (1 + 4 * len(CMDS) + len(CMDS)))
fl = {c: both(a + [empty]) for c, a in CMDS}
print("| (empty trace: the process) | 0.0 | " +
      " | ".join("%.1f" % fl[c][b] for c, _ in CMDS for b in ("base", "new")) + " | " +
      " | ".join("-" for _ in range(2 * len(CMDS))) + " | " +
      " | ".join("%.3f" % (fl[c]["new"] / fl[c]["base"]) for c, _ in CMDS) + " |")
an = {}
for f in files:
    mb = os.path.getsize(f) / 1e6
    r = {c: both(a + [f]) for c, a in CMDS}
    an[f] = r["jN"]
    print("| %s | %.1f | " % (os.path.basename(f), mb) +
          " | ".join("%.1f" % r[c][b] for c, _ in CMDS for b in ("base", "new")) + " | " +
          " | ".join("%.3f" % (r[c][b] / mb) for c, _ in CMDS for b in ("base", "new")) + " | " +
          " | ".join("%.3f" % (r[c]["new"] / r[c]["base"]) for c, _ in CMDS) + " |", flush=True)
print()
print("| diff | base diff MB | base sum of analyses MB | base diff/sum | new diff MB | "
      "new sum of analyses MB | new diff/sum | diff new/base |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
pairs = [(ctl, tst)] + ([(big, big)] if big else [])
for a, b in pairs:
    r = both(["diff", "--format", "json", a, b])
    s = {k: an[a][k] + an[b][k] for k in ("base", "new")}
    print("| %s vs %s | %.1f | %.1f | %.3f | %.1f | %.1f | %.3f | %.3f |" % (
        os.path.basename(a), os.path.basename(b), r["base"], s["base"], r["base"] / s["base"],
        r["new"], s["new"], r["new"] / s["new"], r["new"] / r["base"]), flush=True)
PY
    die "measurement failed" 3
cat "$table"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before: $load_before, after: $load_after" >&2
if [ $record = 1 ]; then
    {
        printf '\n## mem %s\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
        printf -- '- machine: %s CPUs, %s\n' "$(nproc)" \
            "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
        printf -- '- base: %s (built %s); new: %s (built %s); load average before %s, after %s\n' \
            "$base" "$(date -u -r "$base" '+%Y-%m-%d %H:%M UTC')" "$new" \
            "$(date -u -r "$new" '+%Y-%m-%d %H:%M UTC')" "$load_before" "$load_after"
        printf -- '- command: `bench/mem.sh %s` (peak RSS by GNU time, smallest of %s runs each;' \
            "$(printf '%q ' "${ORIG_ARGS[@]}" | sed 's/ $//')" "$runs"
        printf ' jN = one parse thread per CPU, the default)\n\n'
        cat "$table"
    } >> "$here/RESULTS.md"
    echo "mem: appended to bench/RESULTS.md" >&2
fi
