#!/usr/bin/env bash
# ab-speed.sh: two kprof builds on the same inputs in one run, runs interleaved (A B A B ...),
# so load on a shared machine falls on both alike.  Prints, per input, the best wall seconds,
# the best CPU seconds (user + sys) and the peak RSS of each build, and the ratios new/base.
#
# usage: bench/ab-speed.sh [-n N] [-c 'CMD ARGS'] BASE_KPROF NEW_KPROF FILE...
#   -n N    runs per build and input (default 7; best of N counts)
#   -c CMD  the kprof command line before FILE (default 'analyze --format json')
# Builds nothing; records nothing (paste the table into bench/RESULTS.md with the context).

set -u
export LC_ALL=C
runs=7
cmd='analyze --format json'
while [ $# -gt 0 ]; do
    case "$1" in
    -n) runs=${2:?}; shift 2 ;;
    -c) cmd=${2:?}; shift 2 ;;
    -h|--help) sed -n '6,9s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -ge 3 ] || { sed -n '6,9s/^# \{0,1\}//p' "$0" >&2; exit 2; }
base=$1 new=$2
shift 2
[ -x /usr/bin/time ] || { echo "ab-speed: error: GNU time is missing at /usr/bin/time" >&2; exit 4; }
dir=$(mktemp -d /tmp/kprof-ab.XXXXXX) || exit 4
trap 'rm -rf "$dir"' EXIT
cp "$base" "$dir/base" && cp "$new" "$dir/new" || exit 4

# one BIN FILE: sets W (wall s), C (user + sys s, from getrusage: microseconds, where
# GNU time's %U and %S have only 10 ms steps) and M (peak RSS, MB)
one() {
    # shellcheck disable=SC2086
    read -r W C M < <(python3 - "$dir/$1" $cmd "$2" <<'PY'
import resource, subprocess, sys, time
t0 = time.perf_counter()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
w = time.perf_counter() - t0
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.4f %.4f %.1f" % (w, r.ru_utime + r.ru_stime, r.ru_maxrss / 1024) if rc == 0 else "FAIL FAIL FAIL")
PY
)
    [ "$W" != FAIL ] || { echo "ab-speed: error: $1 failed on '$2'" >&2; exit 3; }
}
min() { awk -v a="$1" -v b="$2" 'BEGIN{print (b == "" || a < b) ? a : b}'; }

printf '| input | MB | base wall s | new wall s | wall new/base | base cpu s | new cpu s | cpu new/base | base RSS MB | new RSS MB |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for f in "$@"; do
    cat "$f" > /dev/null
    bw= nw= bc= nc= bm= nm=
    for ((i = 0; i < runs; i++)); do
        one base "$f"; bw=$(min "$W" "$bw"); bc=$(min "$C" "$bc"); bm=$M
        one new "$f"; nw=$(min "$W" "$nw"); nc=$(min "$C" "$nc"); nm=$M
    done
    awk -v f="$(basename "$f")" -v mb="$(stat -c %s "$f")" -v bw="$bw" -v nw="$nw" -v bc="$bc" \
        -v nc="$nc" -v bm="$bm" -v nm="$nm" 'BEGIN{printf "| %s | %.1f | %.4f | %.4f | %.3f | %.4f | %.4f | %s | %.1f | %.1f |\n",
        f, mb / 1e6, bw, nw, nw / bw, bc, nc, (bc > 0 ? sprintf("%.3f", nc / bc) : "N/A"), bm, nm}'
done
