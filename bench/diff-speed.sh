#!/usr/bin/env bash
# diff-speed.sh: time `kprof diff A B` against `kprof analyze A` + `kprof analyze B`
# on two generated ~80 MB traces, in one run; print both timings and the ratio, and
# check the target (diff <= analyzing both, ratio <= 1.00).
#
# usage: bench/diff-speed.sh [options]
#   -n, --runs N       best of N runs of each command (default 3)
#   --mb MB            size of each generated trace (default 80)
#   --base-source F    trace replicated into the base (default: shared hta control trace)
#   --new-source F     trace replicated into the new one (default: shared hta test trace)
#   --no-record        do not append the results to bench/RESULTS.md
#   --dir DIR          scratch directory (default /tmp/kprof-bench-diff)
#
# The traces are written by bench/gen-big-trace.py (copies of a real trace with
# shifted ts, External ids, correlations and flow ids) and kept for later runs.
# Builds nothing: run `make -j2` first (or set KPROF=/path/to/kprof).

set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=$(cd "$root/../shared" 2>/dev/null && pwd || echo "$root/../shared")
kprof="${KPROF:-$root/build/kprof}"
runs=3
mb=80
base_source="$shared/testdata/hta/trace_diff_control_2022.json.gz"
new_source="$shared/testdata/hta/trace_diff_test_2022.json.gz"
record=1
dir=/tmp/kprof-bench-diff
ORIG_ARGS=("$@")

die() { echo "diff-speed: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '6,13s/^# \{0,1\}//p' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    -n|--runs) runs=${2:?}; shift 2 ;;
    --mb) mb=${2:?}; shift 2 ;;
    --base-source) base_source=${2:?}; shift 2 ;;
    --new-source) new_source=${2:?}; shift 2 ;;
    --no-record) record=0; shift ;;
    --dir) dir=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "diff-speed: error: unknown argument '$1'" >&2; usage ;;
    esac
done

[ -x "$kprof" ] || die "'$kprof' is missing: build it first with 'make -j2' (this script builds nothing)"
command -v python3 >/dev/null || die "python3 is missing"
[ "${BASH_VERSINFO[0]}" -ge 5 ] || die "bash 5 is needed (EPOCHREALTIME)"
mkdir -p "$dir" || die "cannot create '$dir'"
# Time a private copy, so a rebuild during the run cannot mix two binaries.
kprof_built=$(date -u -r "$kprof" '+%Y-%m-%d %H:%M UTC')
cp "$kprof" "$dir/kprof.bin" || die "cannot copy '$kprof' to '$dir'"
kprof_src=$kprof
kprof="$dir/kprof.bin"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

gen() { # gen SOURCE OUT
    local min_bytes
    min_bytes=$(awk -v m="$mb" 'BEGIN{printf "%.0f", m*1e6}')
    if [ ! -s "$2" ] || [ "$(stat -c %s "$2")" -lt "$min_bytes" ] ||
       [ "$1" -nt "$2" ] || [ "$here/gen-big-trace.py" -nt "$2" ]; then
        python3 "$here/gen-big-trace.py" -s "$1" -m "$mb" "$2" >&2 ||
            die "gen-big-trace.py failed on '$1'"
    fi
}
a="$dir/base.json"
b="$dir/new.json"
gen "$base_source" "$a"
gen "$new_source" "$b"
cat "$a" "$b" > /dev/null                     # same page-cache state for all

# wall CMD...: seconds of one run (stdout discarded); RC its status
wall() {
    local t0 t1
    t0=$EPOCHREALTIME
    "$@" > /dev/null 2> "$dir/stderr.out"
    RC=$?
    t1=$EPOCHREALTIME
    W=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.4f", b-a}')
}

# lt X Y: X < Y, or Y unset
lt() { awk -v x="$1" -v y="$2" 'BEGIN{exit !(y == "" || x < y)}'; }

best_a= best_b= best_both= best_diff=
for ((i = 0; i < runs; i++)); do
    echo "diff-speed: run $((i + 1))/$runs" >&2
    wall "$kprof" analyze --format json "$a"; ta=$W; [ $RC -eq 0 ] || die "analyze '$a' exited $RC: $(head -n1 "$dir/stderr.out")"
    wall "$kprof" analyze --format json "$b"; tb=$W; [ $RC -eq 0 ] || die "analyze '$b' exited $RC: $(head -n1 "$dir/stderr.out")"
    wall "$kprof" diff --format json "$a" "$b"; td=$W; [ $RC -le 1 ] || die "diff exited $RC: $(head -n1 "$dir/stderr.out")"
    both=$(awk -v x="$ta" -v y="$tb" 'BEGIN{printf "%.4f", x+y}')
    lt "$ta" "$best_a" && best_a=$ta
    lt "$tb" "$best_b" && best_b=$tb
    lt "$both" "$best_both" && best_both=$both
    lt "$td" "$best_diff" && best_diff=$td
done

size_a=$(stat -c %s "$a")
size_b=$(stat -c %s "$b")
ratio=$(awk -v d="$best_diff" -v s="$best_both" 'BEGIN{printf "%.3f", d/s}')
verdict=$(awk -v r="$ratio" 'BEGIN{print (r <= 1.0 ? "PASS" : "MISS")}')
report="$dir/report.txt"
{
    printf 'base  %s  %.1f MB (from %s)\n' "$a" "$(awk -v s="$size_a" 'BEGIN{print s/1e6}')" "$(basename "$base_source")"
    printf 'new   %s  %.1f MB (from %s)\n' "$b" "$(awk -v s="$size_b" 'BEGIN{print s/1e6}')" "$(basename "$new_source")"
    printf 'analyze base: %s s; analyze new: %s s; analyze both (sum of one run each): %s s\n' "$best_a" "$best_b" "$best_both"
    printf 'diff base new: %s s\n' "$best_diff"
    printf 'ratio diff / analyze both: %s (target <= 1.00: %s)\n' "$ratio" "$verdict"
} > "$report"
cat "$report"

if [ $record = 1 ]; then
    model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
    commit=$(git -C "$root" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
    [ -e "$here/RESULTS.md" ] ||
        printf '# Benchmark results\n\nAppend-only log of bench/ runs, newest last.\n' > "$here/RESULTS.md"
    {
        echo
        echo "## diff-speed $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        echo
        echo "- machine: $(nproc) CPUs, ${model:-unknown CPU}; $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM"
        echo "- commit: $commit ($kprof_src built $kprof_built)"
        echo "- load average before / after: $load_before / $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "- command: \`bench/diff-speed.sh${ORIG_ARGS[*]:+$(printf ' %q' "${ORIG_ARGS[@]}")}\` (best of $runs runs each)"
        echo "- timed: \`kprof analyze --format json A\`, \`... B\`, \`kprof diff --format json A B\` (stdout to /dev/null)"
        echo
        sed 's/^/- /' "$report"
    } >> "$here/RESULTS.md"
    echo "diff-speed: appended to bench/RESULTS.md" >&2
fi
[ "$verdict" = PASS ]
