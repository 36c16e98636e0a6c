#!/usr/bin/env bash
# ranks-speed.sh: time `kprof analyze` of N copies of one real trace as N ranks, with 1 and
# with all CPUs as jobs, against one `kprof analyze` of the same trace in the same run; print
# wall seconds, seconds per trace, the speed-up of the extra jobs, and the peak RSS against
# the single trace's (it must stay near jobs x one trace, not grow with N).
# See bench/README.md.
#
# usage: bench/ranks-speed.sh [options] [N...]
#   --no-record        do not append the results to bench/RESULTS.md
#   --dir DIR          scratch directory (default /tmp/kprof-bench)
#   --trace FILE       the trace to copy (default testdata/hta/trace_diff_control_2022.json.gz,
#                      inflated: 35 MB)
#   --max-rss-ratio R  exit 1 when a peak RSS exceeds R x (jobs x the single trace's) (default 1.5)
#   --label TEXT       a note for the record
# N... replaces the default list 2 8 32.
#
# Builds nothing: run `make -j2` first (or set KPROF=/path/to/kprof).

set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
kprof="${KPROF:-$root/build/kprof}"
dir=/tmp/kprof-bench
record=1
trace="$root/testdata/hta/trace_diff_control_2022.json.gz"
max_rss=1.5
label=
ns=()
ORIG_ARGS=("$@")

die() { echo "ranks-speed: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '8,15s/^# \{0,1\}//p' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --no-record) record=0; shift ;;
    --dir) dir=${2:?}; shift 2 ;;
    --trace) trace=${2:?}; shift 2 ;;
    --max-rss-ratio) max_rss=${2:?}; shift 2 ;;
    --label) label=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "ranks-speed: error: unknown option '$1'" >&2; usage ;;
    [0-9]*) ns+=("$1"); shift ;;
    *) echo "ranks-speed: error: bad N '$1'" >&2; usage ;;
    esac
done
[ ${#ns[@]} -gt 0 ] || ns=(2 8 32)

[ -x "$kprof" ] || die "'$kprof' is missing: build it first with 'make -j2' (this script builds nothing)"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) is missing"
[ -r "$trace" ] || die "cannot read '$trace'"
mkdir -p "$dir/ranks" || die "cannot create '$dir/ranks'"
kprof_built=$(date -u -r "$kprof" '+%Y-%m-%d %H:%M UTC')
kprof_src=$kprof
cp "$kprof" "$dir/kprof-ranks.bin" || die "cannot copy '$kprof'"
kprof="$dir/kprof-ranks.bin"
cpus=$(nproc)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

base="$dir/ranks/base.json"
case "$trace" in
*.gz) gzip -dc "$trace" > "$base" || die "cannot inflate '$trace'" ;;
*) cp "$trace" "$base" || die "cannot copy '$trace'" ;;
esac
mb=$(awk -v s="$(stat -c %s "$base")" 'BEGIN { printf "%.1f", s / 1e6 }')

run() { # args... -> "seconds peak_kb rc"
    local out rc
    out=$(/usr/bin/time -f '%e %M' "$kprof" analyze "$@" 2>&1 >/dev/null | tail -1)
    rc=$?
    echo "$out $rc"
}

read -r s1 kb1 _ <<< "$(run -j 1 "$base")"
table="$dir/ranks-table.md"
{
    echo "single trace ($mb MB): $s1 s, peak RSS $((kb1 / 1024)) MB"
    echo
    printf '| %5s | %4s | %8s | %9s | %8s | %8s | %9s |\n' N jobs "wall s" "s/trace" speedup "RSS MB" "RSS ratio"
    printf '|%s|%s|%s|%s|%s|%s|%s|\n' ------: -----: ---------: ----------: ---------: ---------: ----------:
} > "$table"
fail=0
for n in "${ns[@]}"; do
    rm -f "$dir"/ranks/rank*.json
    for ((i = 0; i < n; i++)); do ln -s base.json "$dir/ranks/rank$i.json"; done
    one=
    for j in 1 "$cpus"; do
        [ "$j" = 1 ] || [ "$j" != "$cpus" ] || [ "$cpus" != 1 ] || continue
        read -r s kb rc <<< "$(run -j "$j" "$dir"/ranks/rank*.json)"
        [ -n "$one" ] || one=$s
        per=$(awk -v s="$s" -v n="$n" 'BEGIN { printf "%.3f", s / n }')
        sp=$(awk -v a="$one" -v b="$s" 'BEGIN { printf "%.2f", a / b }')
        # the RSS bound: jobs traces in memory at once, whatever N
        jj=$(( j < n ? j : n ))
        ratio=$(awk -v a="$kb" -v b="$kb1" -v j="$jj" 'BEGIN { printf "%.2f", a / (b * j) }')
        note=
        [ "$rc" = 0 ] || { note=" (exit $rc)"; fail=1; }
        if awk -v r="$ratio" -v m="$max_rss" 'BEGIN { exit !(r > m) }'; then
            note="$note (RSS ratio > $max_rss)"; fail=1
        fi
        printf '| %5s | %4s | %8s | %9s | %7sx | %8s | %9s |%s\n' "$n" "$j" "$s" "$per" "$sp" \
            "$((kb / 1024))" "$ratio" "$note" >> "$table"
    done
done
rm -f "$dir"/ranks/rank*.json
cat "$table"

if [ $record = 1 ]; then
    model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
    commit=$(git -C "$root" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
    {
        echo
        echo "## ranks-speed $(date -u '+%Y-%m-%d %H:%M:%S UTC')${label:+ — $label}"
        echo
        echo "- machine: $cpus CPUs, ${model:-unknown CPU}"
        echo "- commit: $commit ($kprof_src built $kprof_built)"
        echo "- load average before / after: $load_before / $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "- command: \`${KPROF:+KPROF=$KPROF }bench/ranks-speed.sh${ORIG_ARGS[*]:+$(printf ' %q' "${ORIG_ARGS[@]}")}\` (one run each; GNU time wall seconds and max RSS)"
        echo "- kprof: \`analyze -j JOBS rank0.json ... rankN-1.json\`, N symlinks to $(basename "$trace") inflated; speedup = wall(jobs 1) / wall; RSS ratio = peak RSS / (min(jobs, N) x the single trace's peak RSS)"
        echo
        cat "$table"
    } >> "$here/RESULTS.md"
    echo "ranks-speed: appended to bench/RESULTS.md" >&2
fi
exit $fail
