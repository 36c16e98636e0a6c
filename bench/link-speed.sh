#!/usr/bin/env bash
# link-speed.sh: time `kprof analyze -g op` on generated traces whose ops nest
# deeply or share one interval, against the same number of ops one after
# another (flat) in the same run; print seconds, the ratio to flat and the op
# calls reported (each generated op owns one kernel, so calls must equal N).
# See bench/README.md.
#
# usage: bench/link-speed.sh [options] [SHAPE:N...]
#   --no-record        do not append the results to bench/RESULTS.md
#   --dir DIR          scratch directory (default /tmp/kprof-bench)
#   --max-ratio R      exit 1 when a ratio exceeds R (default: no check)
#   --label TEXT       a note for the record (e.g. "before the fix")
# SHAPE:N... (SHAPE: nested or siblings) replaces the default list
# nested:100000 nested:200000 siblings:125000 siblings:250000.
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
cases=()
ORIG_ARGS=("$@")

die() { echo "link-speed: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '8,15s/^# \{0,1\}//p' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    --no-record) record=0; shift ;;
    --dir) dir=${2:?}; shift 2 ;;
    --max-ratio) max_ratio=${2:?}; shift 2 ;;
    --label) label=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "link-speed: error: unknown option '$1'" >&2; usage ;;
    nested:[0-9]*|siblings:[0-9]*) cases+=("$1"); shift ;;
    *) echo "link-speed: error: bad case '$1' (want nested:N or siblings:N)" >&2; usage ;;
    esac
done
[ ${#cases[@]} -gt 0 ] ||
    cases=(nested:100000 nested:200000 siblings:125000 siblings:250000)

[ -x "$kprof" ] || die "'$kprof' is missing: build it first with 'make -j2' (this script builds nothing)"
command -v python3 >/dev/null || die "python3 is missing"
[ "${BASH_VERSINFO[0]}" -ge 5 ] || die "bash 5 is needed (EPOCHREALTIME)"
mkdir -p "$dir" || die "cannot create '$dir'"
kprof_built=$(date -u -r "$kprof" '+%Y-%m-%d %H:%M UTC')
kprof_src=$kprof
cp "$kprof" "$dir/kprof-link.bin" || die "cannot copy '$kprof'"
kprof="$dir/kprof-link.bin"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

gen() { # shape n -> path
    local f="$dir/link-$1-$2.json"
    if [ ! -s "$f" ] || [ "$f" -ot "$here/gen-link-trace.py" ]; then
        "$here/gen-link-trace.py" "$1" "$2" "$f" || die "gen-link-trace.py $1 $2 failed"
    fi
    cat "$f" > /dev/null
    echo "$f"
}

run() { # file -> "seconds calls rc"
    local t0 t1 out rc calls
    t0=$EPOCHREALTIME
    out=$("$kprof" analyze -g op "$1" 2>&1)
    rc=$?
    t1=$EPOCHREALTIME
    calls=$(printf '%s\n' "$out" | sed -n 's/^# work .*, \([0-9]*\) op calls.*/\1/p')
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') ${calls:--} $rc"
}

table="$dir/link-table.md"
{
    printf '| %-8s | %8s | %7s | %9s | %9s | %7s | %8s |\n' shape N MB "kprof s" "flat s" ratio calls
    printf '|%s|%s|%s|%s|%s|%s|%s|\n' ---------- ---------: --------: ----------: ----------: --------: ---------:
} > "$table"
fail=0
for c in "${cases[@]}"; do
    shape=${c%%:*}; n=${c#*:}
    f=$(gen "$shape" "$n"); flat=$(gen flat "$n")
    read -r ks kc krc <<< "$(run "$f")"
    read -r fs _ frc <<< "$(run "$flat")"
    ratio=$(awk -v a="$ks" -v b="$fs" 'BEGIN { printf "%.2f", a / b }')
    mb=$(awk -v s="$(stat -c %s "$f")" 'BEGIN { printf "%.1f", s / 1e6 }')
    note=
    [ "$krc" = 0 ] && [ "$frc" = 0 ] || { note=" (exit $krc/$frc)"; fail=1; }
    [ "$kc" = "$n" ] || note="$note (calls != N)"
    if [ -n "$max_ratio" ] && awk -v r="$ratio" -v m="$max_ratio" 'BEGIN { exit !(r > m) }'; then
        note="$note (ratio > $max_ratio)"; fail=1
    fi
    printf '| %-8s | %8s | %7s | %9s | %9s | %7s | %8s |%s\n' "$shape" "$n" "$mb" "$ks" "$fs" \
        "${ratio}x" "$kc" "$note" >> "$table"
done
cat "$table"

if [ $record = 1 ]; then
    model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
    commit=$(git -C "$root" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
    {
        echo
        echo "## link-speed $(date -u '+%Y-%m-%d %H:%M:%S UTC')${label:+ — $label}"
        echo
        echo "- machine: $(nproc) CPUs, ${model:-unknown CPU}"
        echo "- commit: $commit ($kprof_src built $kprof_built)"
        echo "- load average before / after: $load_before / $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "- command: \`${KPROF:+KPROF=$KPROF }bench/link-speed.sh${ORIG_ARGS[*]:+$(printf ' %q' "${ORIG_ARGS[@]}")}\` (one run each, wall seconds incl. start-up)"
        echo "- kprof: \`analyze -g op FILE\`; flat = the same N ops one after another (\`gen-link-trace.py flat N\`); ratio = kprof s / flat s; calls = op calls reported (N is right)"
        echo
        cat "$table"
    } >> "$here/RESULTS.md"
    echo "link-speed: appended to bench/RESULTS.md" >&2
fi
exit $fail
