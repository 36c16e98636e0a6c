#!/usr/bin/env bash
# suite-dedupe.sh: time `kprof capture --config FILE --list-cases` on generated suites of
# N cases (each its own output file) and print seconds per size and the ratio of the
# largest to the smallest against the ratio of their sizes: the check that every file a
# case writes is written by no other case is one hash-map lookup per file, so the time
# grows linearly (a pairwise check grew with N^2: 100k cases took 46 s; issue 23 item 19).
#
# usage: bench/suite-dedupe.sh [options] [N...]
#   --no-record        do not append the results to bench/RESULTS.md
#   --dir DIR          scratch directory (default /tmp/kprof-bench)
#   --max-ratio R      exit 1 when time ratio / size ratio exceeds R (default: no check)
#   --label TEXT       a note for the record (e.g. "before the fix")
# N... replaces the default sizes 10000 100000.
#
# Builds nothing: run `make -j2` first (or set KPROF=/path/to/kprof).

set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
kprof="${KPROF:-$root/build/kprof}"
dir=/tmp/kprof-bench
record=1
max_ratio=
label=
sizes=()
ORIG_ARGS=("$@")

die() { echo "suite-dedupe: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '8,14s/^# \{0,1\}//p' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --no-record) record=0; shift ;;
    --dir) dir=${2:?}; shift 2 ;;
    --max-ratio) max_ratio=${2:?}; shift 2 ;;
    --label) label=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) usage ;;
    *) sizes+=("$1"); shift ;;
    esac
done
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
[ -x "$kprof" ] || die "no $kprof (run make -j2 first)"
mkdir -p "$dir" || die "cannot create $dir"

gen() { # N FILE: N cases, each writing cI.json and cI.csv (100k cases: 2.8 MB, under 4 MiB)
    awk -v n="$1" 'BEGIN { print "cases:"; for (i = 1; i <= n; i++)
        printf "- {name: c%d, results: c%d.csv}\n", i, i }' >"$2"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A secs
for n in "${sizes[@]}"; do
    f=$dir/suite-$n.yaml
    gen "$n" "$f"
    t0=$(date +%s.%N)
    "$kprof" capture --config "$f" --list-cases >/dev/null || die "kprof failed on $f" 3
    t1=$(date +%s.%N)
    secs[$n]=$(echo "$t1 - $t0" | bc -l)
    printf '%8d cases: %8.3f s\n' "$n" "${secs[$n]}"
done
lo=${sizes[0]} hi=${sizes[${#sizes[@]}-1]}
ratio=$(echo "(${secs[$hi]} / ${secs[$lo]}) / ($hi / $lo)" | bc -l)
printf 'time ratio / size ratio (%d vs %d cases): %.2f (1 = linear)\n' "$hi" "$lo" "$ratio"
load1=$(cut -d' ' -f1-3 /proc/loadavg)

if [ $record = 1 ]; then
    {
        echo
        echo "## suite-dedupe $(date -u '+%Y-%m-%d %H:%M:%S') UTC"
        echo
        echo "- machine: $(nproc) CPUs; load average before / after: $load0 / $load1"
        echo "- commit: $(git -C "$root" rev-parse --short=12 HEAD)$(git -C "$root" diff --quiet || echo -dirty)${label:+ ($label)}"
        echo "- command: \`bench/suite-dedupe.sh ${ORIG_ARGS[*]}\`"
        for n in "${sizes[@]}"; do printf -- '- %d cases: %.3f s\n' "$n" "${secs[$n]}"; done
        printf -- '- time ratio / size ratio: %.2f\n' "$ratio"
    } >>"$root/bench/RESULTS.md"
fi
if [ -n "$max_ratio" ] && [ "$(echo "$ratio > $max_ratio" | bc -l)" = 1 ]; then
    echo "suite-dedupe: ratio $ratio above $max_ratio" >&2
    exit 1
fi
