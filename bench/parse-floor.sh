#!/usr/bin/env bash
# parse-floor.sh: `kprof analyze` against simdjson's DOM parse and python's json.load of the
# same files, in one run, runs interleaved; prints seconds, MB/s, peak RSS and the ratios.
# See bench/README.md.
#
# usage: bench/parse-floor.sh [options] [FILE...]
#   -n N             runs per file and command, best counts (default 5)
#   -k 'LABEL=ARGS'  a kprof variant to time (repeatable; default 'kprof=analyze --format json');
#                    ARGS may start with VAR=VALUE words (its environment, e.g. KPROF_SIMD=sse2)
#                    and then @PATH (another kprof build, e.g. @/tmp/kprof-main: before/after)
#   --big-mb MB      size of the generated trace (default 200; 0: none)
#   --no-python-big  skip json.load on the generated trace (it needs ~10x its size in RAM)
#   --record         append the table to bench/RESULTS.md
#   --dir DIR        scratch directory (default /tmp/kprof-bench)
# FILE... replaces the default list (the largest shared torch211-h100 trace and the shared
# trace_diff_control_2022.json.gz, inflated into DIR).
#
# Builds kprof nothing (run `make -j2`, or set KPROF=); builds DIR/simdjson-parse from
# bench/simdjson-parse.cc against libsimdjson-dev (bench-only: apt-get install -y libsimdjson-dev).

set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=$(cd "$root/../shared" 2>/dev/null && pwd || echo "$root/../shared")
kprof="${KPROF:-$root/build/kprof}"
runs=5
big_mb=200
py_big=1
record=0
dir=/tmp/kprof-bench
files=()
variants=()
ORIG_ARGS=("$@")

die() { echo "parse-floor: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '6,16s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    -n) runs=${2:?}; shift 2 ;;
    -k) variants+=("${2:?}"); shift 2 ;;
    --big-mb) big_mb=${2:?}; shift 2 ;;
    --no-python-big) py_big=0; shift ;;
    --record) record=1; shift ;;
    --dir) dir=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "parse-floor: error: unknown option '$1'" >&2; usage ;;
    *) files+=("$1"); shift ;;
    esac
done
[ ${#variants[@]} -gt 0 ] || variants=("kprof=analyze --format json")
[ -x "$kprof" ] || die "'$kprof' is missing: build it first with 'make -j2'"
command -v python3 >/dev/null || die "python3 is missing"
[ -x /usr/bin/time ] || die "GNU time is missing: apt-get install -y time"
command -v g++ >/dev/null || die "g++ is missing (apt-get install -y g++)"
[ -e /usr/include/simdjson.h ] ||
    die "simdjson is missing: apt-get install -y libsimdjson-dev (needed by this script only)"
mkdir -p "$dir" || die "cannot create '$dir'"
sj="$dir/simdjson-parse"
if [ ! -x "$sj" ] || [ "$here/simdjson-parse.cc" -nt "$sj" ]; then
    g++ -O2 -std=c++17 -o "$sj" "$here/simdjson-parse.cc" -lsimdjson ||
        die "cannot build '$sj'"
fi
cp "$kprof" "$dir/kprof.bin" || die "cannot copy '$kprof'"
kprof_built=$(date -u -r "$kprof" '+%Y-%m-%d %H:%M UTC')

if [ ${#files[@]} -eq 0 ]; then
    largest=$(ls -S "$shared"/testdata/torch211-h100/*.json | head -1)
    files+=("$largest")
    ctl="$dir/trace_diff_control_2022.json"
    if [ ! -s "$ctl" ]; then
        gzip -dc "$shared/testdata/hta/trace_diff_control_2022.json.gz" > "$ctl.tmp" &&
            mv "$ctl.tmp" "$ctl" || die "cannot inflate the control trace"
    fi
    files+=("$ctl")
fi
big=
if [ "$big_mb" != 0 ]; then
    big="$dir/big$big_mb.json"
    if [ ! -s "$big" ] || [ "$here/gen-big-trace.py" -nt "$big" ]; then
        python3 "$here/gen-big-trace.py" -m "$big_mb" "$big" >&2 || die "gen-big-trace.py failed"
    fi
    files+=("$big")
fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
table="$dir/parse-floor.md"
python3 - "$dir/kprof.bin" "$sj" "$runs" "$big" "$py_big" "${#variants[@]}" "${variants[@]}" \
    "${files[@]}" > "$table" <<'PY' || die "measurement failed" 3
import os, resource, shutil, subprocess, sys, time

kprof, sj, runs, big, py_big, nv = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], \
    sys.argv[5] == "1", int(sys.argv[6])
variants = [v.split("=", 1) for v in sys.argv[7:7 + nv]]

def command(lab, args):
    """a variant's ARGS -> (argv, environment): leading VAR=VALUE words, then @PATH (copied
    beside kprof.bin, as kprof is)"""
    words, env = args.split(), dict(os.environ)
    while words and "=" in words[0] and not words[0].startswith("-"):
        var, val = words.pop(0).split("=", 1)
        env[var] = val
    exe = kprof
    if words and words[0].startswith("@"):
        exe = os.path.join(os.path.dirname(kprof), "kprof-%s.bin" % lab.replace("/", "_"))
        shutil.copy(words.pop(0)[1:], exe)
    return [exe] + words, env

cmds = {lab: command(lab, args) for lab, args in variants}
files = sys.argv[7 + nv:]
PYLOAD = "import json,sys; json.load(open(sys.argv[1]))"

RSSF = os.path.join(os.path.dirname(kprof), "rss.txt")

def run(argv, env=None):
    """wall s, peak RSS MB, stdout of one command.  GNU time reads the RSS: a child forked
    from python keeps python's peak in its ru_maxrss across exec"""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", RSSF] + argv,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    w = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit("parse-floor: error: %s failed (status %d)" % (" ".join(argv), p.returncode))
    with open(RSSF) as fh:
        m = int(fh.read().split()[-1]) / 1024
    return w, m, p.stdout

cols = [lab for lab, _ in variants] + ["simdjson parse", "simdjson proc", "json.load"]
print("| input | MB | " + " | ".join(c + " s" for c in cols) + " | " +
      " | ".join(lab + " MB/s" for lab, _ in variants) + " | " +
      " | ".join(lab + "/simdjson" for lab, _ in variants) + " | json.load/" + variants[0][0] +
      " | " + " | ".join(lab + " RSS/size" for lab, _ in variants) +
      " | simdjson RSS/size | json.load RSS/size |")
print("|---|" + "---:|" * (1 + len(cols) + 3 * len(variants) + 3))
for f in files:
    size = os.path.getsize(f)
    with open(f, "rb") as fh:
        while fh.read(1 << 24):
            pass
    best = {c: 1e30 for c in cols}
    rss = {c: 0.0 for c in cols}
    do_py = py_big or f != big
    for _ in range(runs):
        for lab, _ in variants:
            argv, env = cmds[lab]
            w, m, _ = run(argv + [f], env)
            best[lab] = min(best[lab], w)
            rss[lab] = max(rss[lab], m)
        w, m, out = run([sj, f])
        best["simdjson proc"] = min(best["simdjson proc"], w)
        best["simdjson parse"] = min(best["simdjson parse"], float(out.split()[-1]))
        rss["simdjson proc"] = rss["simdjson parse"] = max(rss["simdjson proc"], m)
        if do_py:
            w, m, _ = run([sys.executable, "-c", PYLOAD, f])
            best["json.load"] = min(best["json.load"], w)
            rss["json.load"] = max(rss["json.load"], m)
    mb = size / 1e6
    fmt = lambda c: ("%.4f" % best[c]) if best[c] < 1e29 else "-"
    row = [os.path.basename(f), "%.1f" % mb] + [fmt(c) for c in cols]
    row += ["%.0f" % (mb / best[lab]) for lab, _ in variants]
    row += ["%.2f" % (best[lab] / best["simdjson parse"]) for lab, _ in variants]
    row += ["%.1f" % (best["json.load"] / best[variants[0][0]]) if do_py else "-"]
    row += ["%.3f" % (rss[lab] / mb) for lab, _ in variants]
    row += ["%.3f" % (rss["simdjson proc"] / mb)]
    row += ["%.3f" % (rss["json.load"] / mb) if do_py else "-"]
    print("| " + " | ".join(row) + " |", flush=True)
PY
cat "$table"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before: $load_before, after: $load_after" >&2
if [ $record = 1 ]; then
    {
        printf '\n## parse-floor %s\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
        printf -- '- machine: %s CPUs, %s\n' "$(nproc)" \
            "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
        printf -- '- kprof: %s (built %s); load average before %s, after %s\n' \
            "$(cd "$root" && git describe --always --dirty)" "$kprof_built" "$load_before" "$load_after"
        printf -- '- command: `bench/parse-floor.sh %s` (best of %s runs each, interleaved)\n\n' \
            "$(printf '%q ' "${ORIG_ARGS[@]}" | sed 's/ $//')" "$runs"
        cat "$table"
    } >> "$here/RESULTS.md"
    echo "parse-floor: appended to bench/RESULTS.md" >&2
fi
