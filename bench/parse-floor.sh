#!/usr/bin/env bash
# parse-floor.sh: `kprof analyze` against simdjson's DOM parse and python's json.load of the
# same files, in one run, runs interleaved; prints seconds, MB/s, peak RSS and the ratios against
# both simdjson baselines: the warmed parse (the same parse repeated in one process, parser and
# document reused) and the whole process (load + parse in a fresh process).  --linear adds a
# table of per-MB time at 1x against 8x replication of each input.  See bench/README.md.
#
# usage: bench/parse-floor.sh [options] [FILE...]
#   -n N             runs per file and command, best counts (default 5)
#   -k 'LABEL=ARGS'  a kprof variant to time (repeatable; default 'kprof=analyze --format json');
#                    ARGS may start with VAR=VALUE words (its environment, e.g. KPROF_SIMD=sse2)
#                    and then @PATH (another kprof build, e.g. @/tmp/kprof-main: before/after)
#   -w W             warmed simdjson parses per run after the first (default 5)
#   --big-mb MB      size of the generated trace (default 200; 0: none)
#   --no-python-big  skip json.load on the generated trace (it needs ~10x its size in RAM)
#   --linear         also time 1x against 8x copies of each FILE (not the generated trace)
#   --lin-min-mb MB  the 1x of --linear is the fewest copies of at least MB (default 25)
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
warm=5
linear=0
lin_min=25
big_mb=200
py_big=1
record=0
dir=/tmp/kprof-bench
files=()
variants=()
ORIG_ARGS=("$@")

die() { echo "parse-floor: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '8,22s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    -n) runs=${2:?}; shift 2 ;;
    -k) variants+=("${2:?}"); shift 2 ;;
    -w) warm=${2:?}; shift 2 ;;
    --linear) linear=1; shift ;;
    --lin-min-mb) lin_min=${2:?}; shift 2 ;;
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

lin=()
if [ $linear = 1 ]; then
    # 1x = the fewest copies of at least --lin-min-mb MB (1 for the control trace: its bytes),
    # 8x = eight times as many, both written by gen-big-trace.py -c
    for f in "${files[@]}"; do
        [ "$f" != "$big" ] || continue
        size=$(stat -c %s "$f") || die "cannot stat '$f'"
        c1=$(( (lin_min * 1000000 + size - 1) / size ))
        [ $c1 -ge 1 ] || c1=1
        stem=$(basename "$f" .json)
        for c in $c1 $((8 * c1)); do
            out="$dir/lin-$stem-x$c.json"
            if [ ! -s "$out" ] || [ "$here/gen-big-trace.py" -nt "$out" ] || [ "$f" -nt "$out" ]; then
                python3 "$here/gen-big-trace.py" -s "$f" -c $c "$out" >&2 ||
                    die "gen-big-trace.py failed on '$f'"
            fi
            lin+=("$out")
        done
    done
fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
table="$dir/parse-floor.md"
python3 - "$dir/kprof.bin" "$sj" "$runs" "$warm" "$big" "$py_big" "${#variants[@]}" \
    "${variants[@]}" "${#files[@]}" "${files[@]}" "${lin[@]}" > "$table" <<'PY' || die "measurement failed" 3
import os, resource, shutil, subprocess, sys, time

kprof, sj, runs, warm, big, py_big, nv = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5], sys.argv[6] == "1", int(sys.argv[7])
variants = [v.split("=", 1) for v in sys.argv[8:8 + nv]]
nf = int(sys.argv[8 + nv])
files = sys.argv[9 + nv:9 + nv + nf]
lin = sys.argv[9 + nv + nf:]
lin = list(zip(lin[0::2], lin[1::2]))

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
labs = [lab for lab, _ in variants]
PYLOAD = "import json,sys; json.load(open(sys.argv[1]))"

RSSF = os.path.join(os.path.dirname(kprof), "rss.txt")

LAST_CPU = [0.0]

def run(argv, env=None):
    """wall s, peak RSS MB, stdout of one command (its CPU s, user + sys, in LAST_CPU).  GNU
    time reads the RSS: a child forked from python keeps python's peak in its ru_maxrss
    across exec"""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", RSSF] + argv,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    w = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU[0] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode != 0:
        sys.exit("parse-floor: error: %s failed (status %d)" % (" ".join(argv), p.returncode))
    with open(RSSF) as fh:
        m = int(fh.read().split()[-1]) / 1024
    return w, m, p.stdout

def cache(f):
    with open(f, "rb") as fh:
        while fh.read(1 << 24):
            pass

def simdjson(f, best, rss):
    """the whole process (read + first parse, fresh process, no repeats), then the warmed
    parse: best of `warm` parses after the first, in another process"""
    w, m, out = run([sj, f])
    best["simdjson proc"] = min(best["simdjson proc"], w)
    best["simdjson 1st"] = min(best["simdjson 1st"], float(out.split()[2]))
    rss["simdjson"] = max(rss["simdjson"], m)
    _, _, out = run([sj, "-n", str(warm), f])
    best["simdjson warm"] = min(best["simdjson warm"], float(out.split()[3]))

cols = labs + ["simdjson warm", "simdjson proc", "simdjson 1st", "json.load"]
print("| input | MB | " + " | ".join(c + " s" for c in cols) + " | " +
      " | ".join(lab + " MB/s" for lab in labs) + " | " +
      " | ".join(lab + "/sj-warm" for lab in labs) + " | " +
      " | ".join(lab + "/sj-proc" for lab in labs) + " | json.load/" + labs[0] +
      " | " + " | ".join(lab + " RSS/size" for lab in labs) +
      " | simdjson RSS/size | json.load RSS/size |")
print("|---|" + "---:|" * (1 + len(cols) + 4 * len(labs) + 3))
for f in files:
    size = os.path.getsize(f)
    cache(f)
    best = {c: 1e30 for c in cols}
    rss = {c: 0.0 for c in labs + ["simdjson", "json.load"]}
    do_py = py_big or f != big
    for _ in range(runs):
        for lab in labs:
            argv, env = cmds[lab]
            w, m, _ = run(argv + [f], env)
            best[lab] = min(best[lab], w)
            rss[lab] = max(rss[lab], m)
        simdjson(f, best, rss)
        if do_py:
            w, m, _ = run([sys.executable, "-c", PYLOAD, f])
            best["json.load"] = min(best["json.load"], w)
            rss["json.load"] = max(rss["json.load"], m)
    mb = size / 1e6
    fmt = lambda c: ("%.4f" % best[c]) if best[c] < 1e29 else "-"
    row = [os.path.basename(f), "%.1f" % mb] + [fmt(c) for c in cols]
    row += ["%.0f" % (mb / best[lab]) for lab in labs]
    row += ["%.2f" % (best[lab] / best["simdjson warm"]) for lab in labs]
    row += ["%.2f" % (best[lab] / best["simdjson proc"]) for lab in labs]
    row += ["%.1f" % (best["json.load"] / best[labs[0]]) if do_py else "-"]
    row += ["%.3f" % (rss[lab] / mb) for lab in labs]
    row += ["%.3f" % (rss["simdjson"] / mb)]
    row += ["%.3f" % (rss["json.load"] / mb) if do_py else "-"]
    print("| " + " | ".join(row) + " |", flush=True)

if lin:
    # per-MB time of the 8x copy over that of the 1x copy: 1.00 = linear, above = superlinear
    lcols = labs + ["simdjson warm"]
    print()
    print("| input (1x / 8x) | 1x MB | 8x MB | " +
          " | ".join("%s 1x s | %s 8x s" % (c, c) for c in lcols) + " | " +
          " | ".join(c + " 8x/1x per MB" for c in lcols) + " | " +
          " | ".join(lab + " 8x/1x per MB CPU" for lab in labs) + " | " +
          " | ".join(lab + " 8x RSS/size" for lab in labs) + " |")
    print("|---|" + "---:|" * (2 + 3 * len(lcols) + 2 * len(labs)))
    for f1, f8 in lin:
        s1, s8 = os.path.getsize(f1), os.path.getsize(f8)
        best = {(c, f): 1e30 for c in lcols for f in (f1, f8)}
        cpu = {(c, f): 1e30 for c in labs for f in (f1, f8)}
        rss8 = {lab: 0.0 for lab in labs}
        for f in (f1, f8):
            cache(f)
        for _ in range(runs):
            for f in (f1, f8):
                for lab in labs:
                    argv, env = cmds[lab]
                    w, m, _ = run(argv + [f], env)
                    best[lab, f] = min(best[lab, f], w)
                    cpu[lab, f] = min(cpu[lab, f], LAST_CPU[0])
                    if f == f8:
                        rss8[lab] = max(rss8[lab], m)
                _, _, out = run([sj, "-n", str(warm), f])
                best["simdjson warm", f] = min(best["simdjson warm", f], float(out.split()[3]))
        row = ["%s / %s" % (os.path.basename(f1), os.path.basename(f8)),
               "%.1f" % (s1 / 1e6), "%.1f" % (s8 / 1e6)]
        row += ["%.4f | %.4f" % (best[c, f1], best[c, f8]) for c in lcols]
        row += ["%.3f" % ((best[c, f8] / s8) / (best[c, f1] / s1)) for c in lcols]
        row += ["%.3f" % ((cpu[c, f8] / s8) / (cpu[c, f1] / s1)) for c in labs]
        row += ["%.3f" % (rss8[lab] / (s8 / 1e6)) for lab in labs]
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
        printf -- '- command: `bench/parse-floor.sh %s` (best of %s runs each, interleaved;\n' \
            "$(printf '%q ' "${ORIG_ARGS[@]}" | sed 's/ $//')" "$runs"
        printf -- '  sj-warm = simdjson DOM parse, best of %s repeats in one process after its first;\n' "$warm"
        printf -- '  sj-proc = simdjson whole process: start, read, first parse, exit)\n\n'
        cat "$table"
    } >> "$here/RESULTS.md"
    echo "parse-floor: appended to bench/RESULTS.md" >&2
fi
