#!/usr/bin/env bash
# analyze-speed.sh: time `kprof analyze` against python's json.load on the
# same files in one run; print speed, peak RSS and the ratios, and check the
# targets (>= 1 GB/s of JSON per core, >= 15x json.load, peak RSS <= 0.25x
# the JSON size).  See bench/README.md.
#
# usage: bench/analyze-speed.sh [options] [FILE...]
#   -n, --runs N       best of N runs per small file (default 3)
#   --big-runs N       best of N runs for the big trace (default 2)
#   --big-mb MB        size of the generated trace (default 600)
#   --big-source F     trace to replicate (default: shared block_bf16.json)
#   --no-big           skip the generated trace
#   --no-record        do not append the results to bench/RESULTS.md
#   --dir DIR          scratch directory (default /tmp/kprof-bench)
# FILE... replaces the default list (shared torch211-h100 traces except
# flop_counter.json, the shared hta traces inflated into DIR).
#
# Builds nothing: run `make -j2` first (or set KPROF=/path/to/kprof).

set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=$(cd "$root/../shared" 2>/dev/null && pwd || echo "$root/../shared")
kprof="${KPROF:-$root/build/kprof}"
runs=3
big_runs=2
big_mb=600
big_source="$shared/testdata/torch211-h100/block_bf16.json"
do_big=1
record=1
dir=/tmp/kprof-bench
files=()
ORIG_ARGS=("$@")

die() { echo "analyze-speed: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '7,18s/^# \{0,1\}//p' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    -n|--runs) runs=${2:?}; shift 2 ;;
    --big-runs) big_runs=${2:?}; shift 2 ;;
    --big-mb) big_mb=${2:?}; shift 2 ;;
    --big-source) big_source=${2:?}; shift 2 ;;
    --no-big) do_big=0; shift ;;
    --no-record) record=0; shift ;;
    --dir) dir=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "analyze-speed: error: unknown option '$1'" >&2; usage ;;
    *) files+=("$1"); shift ;;
    esac
done

# --- environment -----------------------------------------------------------

[ -x "$kprof" ] || die "'$kprof' is missing: build it first with 'make -j2' (this script builds nothing)"
if ! /usr/bin/time -f '%e %M' -o /dev/null true 2>/dev/null; then
    die "GNU time is missing at /usr/bin/time: install it with 'apt-get install -y time'"
fi
command -v python3 >/dev/null || die "python3 is missing"
[ "${BASH_VERSINFO[0]}" -ge 5 ] || die "bash 5 is needed (EPOCHREALTIME)"
pin=()
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
    pin=(taskset -c 0)
else
    echo "analyze-speed: warning: taskset -c 0 unavailable; the 1-core column runs unpinned" >&2
fi
mkdir -p "$dir" || die "cannot create '$dir'"
# Time a private copy, so a rebuild during the run cannot mix two binaries.
kprof_built=$(date -u -r "$kprof" '+%Y-%m-%d %H:%M UTC')
cp "$kprof" "$dir/kprof.bin" || die "cannot copy '$kprof' to '$dir'"
kprof_src=$kprof
kprof="$dir/kprof.bin"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

if [ ${#files[@]} -eq 0 ]; then
    for f in "$shared"/testdata/torch211-h100/*.json; do
        [ "$(basename "$f")" = flop_counter.json ] || files+=("$f")
    done
    mkdir -p "$dir/hta"
    for gz in "$shared"/testdata/hta/*.json.gz; do
        out="$dir/hta/$(basename "$gz" .gz)"
        if [ ! -s "$out" ] || [ "$gz" -nt "$out" ]; then
            gzip -dc "$gz" > "$out.tmp" && mv "$out.tmp" "$out" ||
                die "cannot inflate '$gz'"
        fi
        files+=("$out")
    done
fi
big=
if [ $do_big = 1 ]; then
    big="$dir/big.json"
    min_bytes=$(awk -v m="$big_mb" 'BEGIN{printf "%.0f", m*1e6}')
    if [ ! -s "$big" ] || [ "$(stat -c %s "$big")" -lt "$min_bytes" ] ||
       [ "$big_source" -nt "$big" ] || [ "$here/gen-big-trace.py" -nt "$big" ]; then
        python3 "$here/gen-big-trace.py" -s "$big_source" -m "$big_mb" "$big" ||
            die "gen-big-trace.py failed"
    fi
    files+=("$big")
fi

# --- measuring -------------------------------------------------------------

pybase='import json,sys; json.load(open(sys.argv[1]))'

# timed CMD...: run CMD once under GNU time, stdout to /dev/null; sets
# T (wall seconds, from EPOCHREALTIME around the run), K (peak RSS, KiB) and
# RC (exit status).
timed() {
    local t0 t1
    t0=$EPOCHREALTIME
    /usr/bin/time -f '%e %M' -o "$dir/time.out" "$@" >/dev/null 2>"$dir/stderr.out"
    RC=$?
    t1=$EPOCHREALTIME
    T=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", b-a}')
    K=$(tail -n 1 "$dir/time.out" | awk '{print $2}')
}

# best N CMD...: best (least) time of N runs and the largest peak RSS; sets
# BT, BK, BRC (first non-zero status, else 0), ERR (its first stderr line).
best() {
    local n=$1 i
    shift
    BT= BK=0 BRC=0 ERR=
    for ((i = 0; i < n; i++)); do
        timed "$@"
        if [ "$RC" -ne 0 ] && [ "$BRC" -eq 0 ]; then
            BRC=$RC
            ERR=$(head -n 1 "$dir/stderr.out")
        fi
        if [ -z "$BT" ] || awk -v a="$T" -v b="$BT" 'BEGIN{exit !(a<b)}'; then BT=$T; fi
        [ "${K:-0}" -gt "$BK" ] && BK=$K
    done
}

rows="$dir/rows.tsv"
: > "$rows"
errs=()
for f in "${files[@]}"; do
    [ -r "$f" ] || { errs+=("$f: cannot read"); continue; }
    n=$runs
    [ "$f" = "$big" ] && n=$big_runs
    cat "$f" > /dev/null                      # same page-cache state for all
    echo "analyze-speed: $(basename "$f") ($n run(s) each)" >&2
    best "$n" "$kprof" analyze --format json "$f";            kt=$BT kk=$BK krc=$BRC kerr=$ERR
    best "$n" "${pin[@]}" "$kprof" analyze --format json "$f"; k1t=$BT k1k=$BK
    best "$n" python3 -c "$pybase" "$f";                      pt=$BT pk=$BK prc=$BRC
    [ "$krc" -ne 0 ] && errs+=("$(basename "$f"): kprof exit $krc: $kerr")
    [ "$prc" -ne 0 ] && errs+=("$(basename "$f"): python exit $prc")
    # bytes, kprof s, 1-core s, kprof KiB (max of both), python s, python KiB, rc, path
    [ "$k1k" -gt "$kk" ] && kk=$k1k
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(stat -c %s "$f")" "$kt" "$k1t" "$kk" \
        "$pt" "$pk" "$krc" "$f" >> "$rows"
done

# --- report ----------------------------------------------------------------

table="$dir/table.md"
awk -F'\t' -v big="$big" '
function verdict(ok) { return ok ? "PASS" : "MISS" }
BEGIN {
    printf "| %8s | %8s | %8s | %9s | %8s | %8s | %8s | %8s | %8s | %-7s | %-6s | %-6s | %s |\n",
        "MB", "kprof s", "1-core s", "MB/s 1c", "kprof RSS", "RSS/size", "python s",
        "py RSS", "speedup", ">=1GB/s", ">=15x", "<=.25x", "file"
    printf "|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", "---------:", "---------:",
        "---------:", "----------:", "---------:", "---------:", "---------:", "---------:",
        "---------:", "---------", "--------", "--------", "---"
}
{
    mb = $1 / 1e6; rate = mb / $3; rss = $4 * 1024 / 1e6; ratio = $4 * 1024 / $1
    pyrss = $6 * 1024 / 1e6; speed = $5 / $2
    name = $8; sub(/.*\//, "", name)
    if ($8 == big) name = name " (generated)"
    if ($7 != 0) { r1 = r2 = r3 = "FAIL"; name = name " (kprof exit " $7 ")" }
    else { r1 = verdict(rate >= 1000); r2 = verdict(speed >= 15); r3 = verdict(ratio <= 0.25) }
    printf "| %8.3f | %8.4f | %8.4f | %9.1f | %9.1f | %8.3f | %8.4f | %8.1f | %7.2fx | %-7s | %-6s | %-6s | %s |\n",
        mb, $2, $3, rate, rss, ratio, $5, pyrss, speed, r1, r2, r3, name
}' "$rows" > "$table"

summary="$dir/summary.txt"
awk -F'\t' -v big="$big" '
{
    n++; ok = ($7 == 0); rate = $1 / 1e6 / $3; speed = $5 / $2; ratio = $4 * 1024 / $1
    p1 += ok && rate >= 1000; p2 += ok && speed >= 15; p3 += ok && ratio <= 0.25
    if ($8 == big && !ok) {
        printf "big trace (%.1f MB): FAIL, kprof exit %d\n", $1 / 1e6, $7
    } else if ($8 == big) {
        printf "big trace (%.1f MB): %.0f MB/s on 1 core (target 1000: %s), %.2fx json.load (target 15x: %s), RSS %.3fx size (target 0.25x: %s)\n",
            $1 / 1e6, rate, (rate >= 1000 ? "PASS" : sprintf("MISS by %.1fx", 1000 / rate)),
            speed, (speed >= 15 ? "PASS" : sprintf("MISS by %.1fx", 15 / speed)),
            ratio, (ratio <= 0.25 ? "PASS" : sprintf("MISS by %.1fx", ratio / 0.25))
    }
}
END { printf "all files: >=1GB/s %d/%d, >=15x %d/%d, RSS<=0.25x %d/%d (small files are dominated by process start-up)\n", p1, n, p2, n, p3, n }
' "$rows" > "$summary"

cat "$table"
echo
cat "$summary"
for e in "${errs[@]}"; do echo "error: $e"; done

if [ $record = 1 ]; then
    model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
    commit=$(git -C "$root" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
    block="$dir/record.md"
    {
        echo
        echo "## analyze-speed $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        echo
        echo "- machine: $(nproc) CPUs, ${model:-unknown CPU}; $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM"
        echo "- commit: $commit ($kprof_src built $kprof_built)"
        echo "- load average before / after: $load_before / $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "- command: \`${KPROF:+KPROF=$KPROF }bench/analyze-speed.sh${ORIG_ARGS[*]:+$(printf ' %q' "${ORIG_ARGS[@]}")}\` (best of $runs runs, big trace best of $big_runs; 1-core = \`${pin[*]:-unpinned}\`)"
        echo "- kprof: \`${kprof_src#"$root"/} analyze --format json FILE >/dev/null\`; baseline: \`python3 -c '$pybase' FILE\` ($(python3 --version 2>&1))"
        echo "- MB = 10^6 bytes; RSS = GNU time %M; speedup = python s / kprof s (both unpinned)"
        echo
        cat "$table"
        echo
        sed 's/^/- /' "$summary"
        for e in "${errs[@]}"; do echo "- error: $e"; done
    } > "$block"
    [ -e "$here/RESULTS.md" ] ||
        printf '# Benchmark results\n\nAppend-only log of bench/ runs, newest last.\n' > "$here/RESULTS.md"
    cat "$block" >> "$here/RESULTS.md"
    echo "analyze-speed: appended to bench/RESULTS.md" >&2
fi
