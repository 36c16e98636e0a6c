#!/usr/bin/env bash
# host-speed.sh: `kprof analyze` end to end at -j 1, 4, 8, 16 against simdjson's DOM parse of
# the same generated traces, on a many-core host (the GPU machine's CPUs), in one run; prints
# seconds, GB/s, speedups, CPU seconds and an Amdahl fit (serial seconds + parallel seconds / j).
# See bench/README.md.
#
# usage: bench/host-speed.sh [options]
#   -n N           runs per file and command, best counts (default 3)
#   --mb 'A B'     sizes of the generated traces in MB (default '1000 200')
#   --jobs 'J...'  -j values (default '1 4 8 16')
#   --no-stages    skip the stage table (KPROF_TIMING: load, link, analyze, write seconds and
#                  the load's thread details, the largest trace at every -j; bench/stage-times.sh)
#   --no-gz        skip the gzip run (the smallest trace as `gzip -6`: -j 1 and the largest
#                  -j, default inflater against KPROF_INFLATE=zlib)
#   --dir DIR      scratch directory on local disk (default /tmp/kprof-host)
#   --src FILE     the real trace the generated ones replicate, .json or .json.gz (default
#                  testdata/torch211-h100/block_bf16.json; e.g. the 34.8 MB HTA control trace)
#   --record       append the table to bench/RESULTS.md
#   --out FILE     also write the table to FILE
# Self-contained for a host without network: needs bash, python3, gzip, the kprof binary
# (KPROF=, default build/kprof) and bench/simdjson-parse built elsewhere (SIMDJSON=; a missing
# one leaves the simdjson columns out); KPROF_DESC= names the kprof build in the record.  Traces come from bench/gen-big-trace.py replicating
# testdata/torch211-h100/block_bf16.json.  Every -j's json output is checked to be the -j 1
# output byte for byte.

set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
kprof="${KPROF:-$root/build/kprof}"
sj="${SIMDJSON:-}"
runs=3
sizes="1000 200"
jobs="1 4 8 16"
gz=1
stages=1
dir=/tmp/kprof-host
record=0
out=
src=
ORIG_ARGS=("$@")

die() { echo "host-speed: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '7,20s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    -n) runs=${2:?}; shift 2 ;;
    --mb) sizes=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --no-gz) gz=0; shift ;;
    --no-stages) stages=0; shift ;;
    --dir) dir=${2:?}; shift 2 ;;
    --src) src=${2:?}; shift 2 ;;
    --record) record=1; shift ;;
    --out) out=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "host-speed: error: unknown argument '$1'" >&2; usage ;;
    esac
done
[ -x "$kprof" ] || die "'$kprof' is missing: build it with 'make -j2' or set KPROF="
command -v python3 >/dev/null || die "python3 is missing"
[ -z "$sj" ] || [ -x "$sj" ] || die "SIMDJSON='$sj' is not executable"
mkdir -p "$dir" || die "cannot create '$dir'"
tag=  # generated traces of another source are named after it: big1000-<name>.json
[ -n "$src" ] && tag=-$(basename "${src%.gz}" .json | tr -c 'A-Za-z0-9_.\n-' '_')
src=${src:-$root/testdata/torch211-h100/block_bf16.json}
[ -f "$src" ] && [ -r "$src" ] || die "--src '$src' is not a readable file"
case "$src" in
*.gz) # gen-big-trace.py reads JSON: inflated once into DIR
    mkdir -p "$dir" || die "cannot create '$dir'"
    # again when the source is newer; whole or not at all (a failed inflate leaves nothing)
    if [ ! -s "$dir/src$tag.json" ] || [ "$src" -nt "$dir/src$tag.json" ]; then
        gzip -dc "$src" > "$dir/src$tag.json.tmp" && mv "$dir/src$tag.json.tmp" "$dir/src$tag.json" ||
            { rm -f "$dir/src$tag.json.tmp"; die "cannot inflate '$src'"; }
    fi
    src="$dir/src$tag.json" ;;
esac
if [ -n "$sj" ] && ! "$sj" "$src" > /dev/null; then
    echo "host-speed: warning: '$sj' does not run here: no simdjson columns" >&2
    sj=
fi

files=()
for mb in $sizes; do
    f="$dir/big$mb$tag.json"
    if [ ! -s "$f" ] || [ "$src" -nt "$f" ]; then
        python3 "$here/gen-big-trace.py" -s "$src" -m "$mb" "$f" >&2 || die "gen-big-trace.py failed"
    fi
    files+=("$f")
done
gzf=
if [ $gz = 1 ]; then
    small=$(ls -S "${files[@]}" | tail -1)
    gzf="$small.gz"
    [ -s "$gzf" ] || gzip -6 -c "$small" > "$gzf" || die "cannot gzip '$small'"
fi

cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
table="$dir/host-speed.md"
python3 - "$kprof" "${sj:--}" "$runs" "$jobs" "$gzf" "${files[@]}" > "$table" <<'PY' ||
import hashlib, os, resource, subprocess, sys, time

kprof, sj, runs, jobs, gzf = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    [int(j) for j in sys.argv[4].split()], sys.argv[5]
files = sys.argv[6:]

def run(argv, env=None):
    """wall s, CPU s (user + sys of the child), md5 of stdout"""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       env=dict(os.environ, **(env or {})))
    w = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("host-speed: error: %s failed (status %d)" % (" ".join(argv), p.returncode))
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return w, cpu, hashlib.md5(p.stdout).hexdigest(), p.stdout

def warm(f):
    with open(f, "rb") as fh:
        while fh.read(1 << 24):
            pass

def amdahl(js, ts):
    """least squares t = s + p / j"""
    xs = [1.0 / j for j in js]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ts) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    p = sum((x - mx) * (t - my) for x, t in zip(xs, ts)) / sxx if sxx else 0.0
    return my - p * mx, p

print("| input | GB | " + " | ".join("-j%d s" % j for j in jobs) +
      " | simdjson warm s | simdjson proc s | " +
      " | ".join("-j%d GB/s" % j for j in jobs) + " | simdjson warm GB/s | speedup -j%d | " % jobs[-1] +
      "-j1/sj-warm | -j%d/sj-warm | -j%d/sj-proc | -j1 CPU s | -j%d CPU s | serial s | parallel s | "
      "serial share | limit GB/s |" % (jobs[-1], jobs[-1], jobs[-1]))
print("|---|---:|" + "---:|" * (2 * len(jobs) + 13))
for f in files:
    size = os.path.getsize(f)
    gb = size / 1e9
    warm(f)
    best = {j: 1e30 for j in jobs}
    cpu = {j: 0.0 for j in jobs}
    ref = None
    sjp = sjw = 1e30
    for _ in range(runs):
        for j in jobs:
            w, c, h, _ = run([kprof, "analyze", "--format", "json", "-j", str(j), f])
            if ref is None:
                ref = h
            elif h != ref:
                sys.exit("host-speed: error: -j %d output differs from -j %d on %s" % (j, jobs[0], f))
            if w < best[j]:
                best[j], cpu[j] = w, c
        if sj != "-":
            # the whole process (start, read, one parse), then the warmed parse (best of 5
            # repeats after the first, parser reused; simdjson-parse.cc)
            w, _, _, o = run([sj, f])
            sjp = min(sjp, w)
            _, _, _, o = run([sj, "-n", "5", f])
            sjw = min(sjw, float(o.split()[3]))
    s, p = amdahl(jobs, [best[j] for j in jobs])
    row = [os.path.basename(f), "%.3f" % gb] + ["%.4f" % best[j] for j in jobs]
    have = sjp < 1e29
    row += ["%.4f" % sjw, "%.4f" % sjp] if have else ["-", "-"]
    row += ["%.2f" % (gb / best[j]) for j in jobs]
    row += ["%.2f" % (gb / sjw) if have else "-"]
    row += ["%.2f" % (best[jobs[0]] / best[jobs[-1]])]
    row += ["%.2f" % (best[jobs[0]] / sjw), "%.2f" % (best[jobs[-1]] / sjw),
            "%.2f" % (best[jobs[-1]] / sjp)] if have else ["-", "-", "-"]
    row += ["%.3f" % cpu[jobs[0]], "%.3f" % cpu[jobs[-1]], "%.4f" % s, "%.4f" % p,
            "%.2f" % (s / (s + p)), "%.2f" % (gb / s) if s > 0 else "-"]
    print("| " + " | ".join(row) + " |", flush=True)

if gzf:
    size = os.path.getsize(gzf)
    warm(gzf)
    jl = jobs[-1]
    cols = [("zlib -j1", {"KPROF_INFLATE": "zlib"}, 1), ("default -j1", {}, 1),
            ("zlib -j%d" % jl, {"KPROF_INFLATE": "zlib"}, jl), ("default -j%d" % jl, {}, jl)]
    best = {c[0]: 1e30 for c in cols}
    ref = None
    for _ in range(runs):
        for lab, env, j in cols:
            w, _, h, _ = run([kprof, "analyze", "--format", "json", "-j", str(j), gzf], env)
            ref = ref or h
            if h != ref:
                sys.exit("host-speed: error: %s output differs on %s" % (lab, gzf))
            best[lab] = min(best[lab], w)
    out = os.path.getsize(gzf[:-3]) / 1e9
    print()
    print("| input (gzip -6) | gz MB | json GB | " + " | ".join(c[0] + " s" for c in cols) +
          " | default -j%d GB/s of json | zlib/default -j1 | zlib/default -j%d |" % (jl, jl))
    print("|---|---:|---:|" + "---:|" * (len(cols) + 3))
    print("| %s | %.1f | %.3f | %s | %.2f | %.2f | %.2f |" % (
        os.path.basename(gzf), size / 1e6, out, " | ".join("%.4f" % best[c[0]] for c in cols),
        out / best[cols[3][0]], best[cols[0][0]] / best[cols[1][0]],
        best[cols[2][0]] / best[cols[3][0]]))
PY
    die "measurement failed" 3
if [ $stages = 1 ]; then
    big=$(ls -S "${files[@]}" | head -1)
    echo >> "$table"
    k=0
    for j in $jobs; do
        "$here/stage-times.sh" -n "$runs" -c "analyze --format json -j $j" "-j $j=$kprof" -- "$big" |
            { [ $k = 0 ] && cat || tail -n +3; } >> "$table" || die "stage-times.sh failed" 3
        k=1
    done
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
isal=$(python3 -c 'import ctypes; ctypes.CDLL("libisal.so.2"); print("loads")' 2>/dev/null || echo "missing: zlib only")
{
    printf '\n## host-speed %s\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
    printf -- '- machine: %s CPUs, %s; %s GB RAM; libisal.so.2 %s\n' "$(nproc)" "$cpu" \
        "$(awk '/MemTotal/ { printf "%.0f", $2 / 1e6 }' /proc/meminfo)" "$isal"
    printf -- '- kprof: %s; load average before %s, after %s\n' \
        "${KPROF_DESC:-$(git -C "$root" describe --always --dirty 2>/dev/null || echo "?")}" \
        "$load_before" "$load_after"
    printf -- '- command: `bench/host-speed.sh %s` (best of %s runs each, interleaved;\n' \
        "$(printf '%q ' "${ORIG_ARGS[@]}" | sed 's/ $//')" "$runs"
    printf -- '  kprof analyze --format json -j J, wall s; sj-warm = simdjson in-memory DOM parse, best of\n'
    printf -- '  5 repeats after the first in one process; sj-proc = simdjson whole process (read + parse);\n'
    printf -- '  serial/parallel s = least-squares fit of s + p / j over the -j runs)\n\n'
    cat "$table"
} > "$table.rec"
cat "$table.rec"
[ -z "$out" ] || cp "$table.rec" "$out"
if [ $record = 1 ]; then
    cat "$table.rec" >> "$here/RESULTS.md"
    echo "host-speed: appended to bench/RESULTS.md" >&2
fi
