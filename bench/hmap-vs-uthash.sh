#!/usr/bin/env bash
# hmap-vs-uthash.sh: kprof's maps on src/base/hmap.c against uthash (issue 27), one run.
#
# usage: bench/hmap-vs-uthash.sh [options]
#   -n N        runs per implementation and per build, the best counts (default 5)
#   --big-mb MB size of the replicated trace (bench/gen-big-trace.py; default 1000; 0: none)
#   --record    append the tables to bench/RESULTS.md
#   --dir DIR   scratch directory (default /tmp/kprof-bench/hvu)
# 1. Records the calls on every map while kprof runs (bench/hmap-record.c, linked with
#    -Wl,--wrap into a copy of build/kprof): `analyze` of the largest real trace (the HTA
#    control, inflated), `diff` of the HTA control/test pair (diff's join), `analyze --memory`
#    of testdata/torch211-h200/llama_eager_b8_mem (memory.c's maps, pytree.c's), `analyze` of the
#    kprof capture traces of testdata/capture-h200 (the streams capture's name interning and
#    per-op map see) and `analyze` of the replication.
# 2. Replays each map's calls on hmap.c, on uthash with HASH_JEN (default), HASH_FNV,
#    HASH_SFH, HASH_OAT, HASH_BER, HASH_SAX and kprof's own hash as HASH_FUNCTION, and the link
#    ids on link.c's imap (bench/hmap-vs-uthash.c), interleaved, best of N.
# 3. Peak RSS, wall and CPU time of `kprof analyze` with build/kprof (hmap) and with the uthash
#    build (bench/hmap-on-uthash.c in place of hmap.o), interleaved, best of N.
# Builds its own binaries from build/ (run `make -j2` first) and stops unless the three print the
# same analysis of the control trace; needs uthash-dev, GNU time.

set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
runs=5
big_mb=1000
record=0
dir=/tmp/kprof-bench/hvu
ORIG_ARGS=("$@")

die() { echo "hmap-vs-uthash: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '3,8s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    -n) runs=${2:?}; shift 2 ;;
    --big-mb) big_mb=${2:?}; shift 2 ;;
    --record) record=1; shift ;;
    --dir) dir=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "hmap-vs-uthash: error: unknown option '$1'" >&2; usage ;;
    esac
done
b="$root/build"
[ -f "$b/libkprof.a" ] && [ -f "$b/src/cli/main.o" ] || die "run 'make -j2' first"
[ -f /usr/include/uthash.h ] || die "uthash.h is missing: apt-get install uthash-dev"
[ -x /usr/bin/time ] || die "GNU time is missing: apt-get install time"
mkdir -p "$dir" || die "cannot create '$dir'"

CC=${CC:-cc}
CF="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -I$root/include"
LIBS="-lz -Wl,-Bstatic -lzstd -lyaml -Wl,-Bdynamic -lm -lpthread -ldl"
wraps=""
for f in hmap_init hmap_free hmap_reserve hmap_put_ptr hmap_put_int hmap_put_str hmap_get_ptr \
    hmap_get_int hmap_get_str link_trace; do
    wraps="$wraps -Wl,--wrap=$f"
done
# the recording build, the uthash build, the replay
$CC $CF -o "$dir/kprof-rec" "$here/hmap-record.c" "$b/src/cli/main.o" "$b/libkprof.a" \
    $wraps $LIBS || die "cannot build the recording kprof"
$CC $CF -o "$dir/kprof-ut" "$b/src/cli/main.o" "$here/hmap-on-uthash.c" "$b/libkprof.a" \
    $LIBS || die "cannot build the uthash kprof"
cp "$b/kprof" "$dir/kprof-hmap" || die "cannot copy build/kprof"
uts=""
for h in JEN FNV SFH OAT BER SAX KP; do
    l=$(echo $h | tr A-Z a-z)
    $CC $CF -DUT_HASH=HASH_$h -DUT_FN=hv_ut_$l -c -o "$dir/ut-$l.o" "$here/hmap-vs-uthash-ut.c" ||
        die "cannot build the uthash replay ($h)"
    uts="$uts $dir/ut-$l.o"
done
# hmap.o as kprof has it (build/libkprof.a)
$CC $CF -o "$dir/hmap-vs-uthash" "$here/hmap-vs-uthash.c" $uts "$b/libkprof.a" $LIBS ||
    die "cannot build the replay"

inflate() { # name.json.gz -> DIR/name.json
    local out="$dir/$(basename "$1" .gz)"
    if [ ! -s "$out" ]; then
        gzip -dc "$1" > "$out.tmp" && mv "$out.tmp" "$out" || die "cannot inflate '$1'"
    fi
    echo "$out"
}
ctl=$(inflate "$root/testdata/hta/trace_diff_control_2022.json.gz")
tst=$(inflate "$root/testdata/hta/trace_diff_test_2022.json.gz")
big=
if [ "$big_mb" != 0 ]; then
    big="$dir/../big$big_mb.json"
    if [ ! -s "$big" ] || [ "$here/gen-big-trace.py" -nt "$big" ]; then
        python3 "$here/gen-big-trace.py" -m "$big_mb" "$big" >&2 || die "gen-big-trace.py failed"
    fi
fi
# the three builds must print the same: recording changes nothing, uthash changes no answer
for k in hmap rec ut; do
    KPROF_HMAP_REC=/dev/null "$dir/kprof-$k" analyze --format json "$ctl" > "$dir/out-$k.json" 2>&1
done
cmp -s "$dir/out-hmap.json" "$dir/out-rec.json" && cmp -s "$dir/out-hmap.json" "$dir/out-ut.json" ||
    die "the builds disagree on $ctl (see $dir/out-*.json)" 3
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# 1. recordings
rec() { # NAME ARGS...: run the recording kprof, its calls into DIR/NAME
    local n=$1; shift
    KPROF_HMAP_REC="$dir/$n" "$dir/kprof-rec" "$@" > /dev/null 2>&1
    [ $? -le 1 ] || die "kprof-rec $* failed"
    recs+=("$dir/$n")
}
recs=()
rec analyze-control analyze --format json "$ctl"
rec diff-control-test diff --format json "$ctl" "$tst"
rec analyze-memory analyze --format json --memory "$root/testdata/torch211-h200/llama_eager_b8_mem.json.gz"
for f in "$root"/testdata/capture-h200/*.json*; do
    rec "capture-$(basename "${f%%.*}")" analyze --format json "$f"
done
bigrec=
if [ -n "$big" ]; then
    KPROF_HMAP_REC="$dir/analyze-big$big_mb" "$dir/kprof-rec" analyze --format json "$big" \
        > /dev/null 2>&1
    [ $? -le 1 ] || die "kprof-rec analyze $big failed"
    bigrec="$dir/analyze-big$big_mb"
fi

# 2. replays: the real traces' recordings together (-g: one row per map), then the replication
table="$dir/maps.md"
"$dir/hmap-vs-uthash" -n "$runs" -m 100 -g --exe "$dir/kprof-rec" "${recs[@]}" > "$table" ||
    die "the replay failed" 3
cat "$table"
btable="$dir/maps-big.md"
: > "$btable"
if [ -n "$big" ]; then
    "$dir/hmap-vs-uthash" -n "$runs" -g --exe "$dir/kprof-rec" "$bigrec" > "$btable" ||
        die "the replay failed" 3
    rm -f "$bigrec"
    cat "$btable"
fi

# 3. the two builds on whole runs
rss="$dir/rss.md"
{
    echo "| input | MB | hmap wall s | uthash wall s | hmap CPU s | uthash CPU s | uthash/hmap CPU | hmap RSS MB | uthash RSS MB | uthash/hmap RSS |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for f in "$ctl" ${big:+"$big"}; do
        declare -A bt bc br
        bt=([hmap]=999999 [ut]=999999) bc=([hmap]=999999 [ut]=999999) br=([hmap]=999999999 [ut]=999999999)
        for ((i = 0; i < runs; i++)); do
            for k in hmap ut; do
                t0=$EPOCHREALTIME
                /usr/bin/time -f '%U %S %M' -o "$dir/time.txt" "$dir/kprof-$k" analyze --format json "$f" > /dev/null 2>&1
                t1=$EPOCHREALTIME
                read -r u sy m < <(tail -1 "$dir/time.txt")
                t=$(echo "$t1 - $t0" | bc -l)
                c=$(echo "$u + $sy" | bc -l)
                (( $(echo "$t < ${bt[$k]}" | bc -l) )) && bt[$k]=$t
                (( $(echo "$c < ${bc[$k]}" | bc -l) )) && bc[$k]=$c
                (( m < br[$k] )) && br[$k]=$m
            done
        done
        mb=$(echo "scale=1; $(stat -c %s "$f") / 1000000" | bc -l)
        printf '| %s | %s | %.2f | %.2f | %.2f | %.2f | %.3f | %.1f | %.1f | %.3f |\n' "$(basename "$f")" "$mb" \
            "${bt[hmap]}" "${bt[ut]}" "${bc[hmap]}" "${bc[ut]}" "$(echo "${bc[ut]} / ${bc[hmap]}" | bc -l)" \
            "$(echo "${br[hmap]} / 1024" | bc -l)" "$(echo "${br[ut]} / 1024" | bc -l)" \
            "$(echo "${br[ut]} / ${br[hmap]}" | bc -l)"
    done
} > "$rss"
cat "$rss"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before: $load_before, after: $load_after" >&2
if [ $record = 1 ]; then
    {
        printf '\n## hmap-vs-uthash %s\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
        printf 'Command: `bench/hmap-vs-uthash.sh %s` (commit %s, %s CPUs; load average before %s, after %s).\n\n' \
            "${ORIG_ARGS[*]}" "$(git -C "$root" rev-parse --short HEAD)" "$(nproc)" \
            "$load_before" "$load_after"
        echo 'Real traces (HTA control analyze, HTA control/test diff, llama_eager_b8_mem analyze --memory,'
        echo 'testdata/capture-h200 analyze; hmap-vs-uthash -m 100 -g),'
        echo 'one row per map (the hmap_init site). Per map: calls replayed (put + get), entries held,'
        echo 'ns of thread CPU per call (best of the runs), bytes per entry (the table only; keys are the'
        echo 'trace'"'"'s), each implementation on the same calls:'
        echo
        cat "$table"
        echo
        if [ -n "$big" ]; then
            echo "The same on \`analyze\` of the ${big_mb} MB replication (bench/gen-big-trace.py):"
            echo
            cat "$btable"
            echo
        fi
        echo '`kprof analyze --format json` whole runs, hmap build (build/kprof) and uthash build'
        echo '(bench/hmap-on-uthash.c), interleaved, best of the runs (CPU: user + sys):'
        echo
        cat "$rss"
    } >> "$root/bench/RESULTS.md"
fi
