#!/usr/bin/env bash
# inflate-speed.sh: zlib's inflate() against ISA-L's isal_inflate() on the same .gz files, in
# one run (runs alternating); prints MB/s of output for both and ISA-L's speedup.
# See bench/README.md.
#
# usage: bench/inflate-speed.sh [options] [FILE.gz...]
#   -n N          runs per file and decoder, best counts (default 5)
#   --big-mb MB   size of the generated trace gzipped for the bench (default 200; 0: none)
#   --record      append the table to bench/RESULTS.md
#   --dir DIR     scratch directory (default /tmp/kprof-bench)
#   --no-kprof    skip the end-to-end part: `kprof analyze --format json -j J FILE` with
#                 KPROF_INFLATE=zlib against the default (ISA-L), J = 1 and nproc
# FILE... replaces the default list: the shared hta traces trace_diff_control_2022.json.gz and
# ns_resolution_2024.json.gz, and DIR/bigMB.json (gen-big-trace.py) gzipped three ways:
# `gzip -6` (gzip's default), `gzip -9` (python's gzip.open default, what profilers write), and
# 8 concatenated `gzip -6` members (pigz-like multi-member files).
#
# Builds DIR/inflate-speed from bench/inflate-speed.c against zlib and libisal-dev (bench-only:
# apt-get install -y libisal-dev).

set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=$(cd "$root/../shared" 2>/dev/null && pwd || echo "$root/../shared")
runs=5
big_mb=200
record=0
e2e=1
kprof="${KPROF:-$root/build/kprof}"
dir=/tmp/kprof-bench
files=()
ORIG_ARGS=("$@")

die() { echo "inflate-speed: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '6,16s/^# \{0,1\}//p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    -n) runs=${2:?}; shift 2 ;;
    --big-mb) big_mb=${2:?}; shift 2 ;;
    --record) record=1; shift ;;
    --dir) dir=${2:?}; shift 2 ;;
    --no-kprof) e2e=0; shift ;;
    -h|--help) usage ;;
    -*) echo "inflate-speed: error: unknown option '$1'" >&2; usage ;;
    *) files+=("$1"); shift ;;
    esac
done
command -v gcc >/dev/null || die "gcc is missing"
[ -e /usr/include/isa-l/igzip_lib.h ] ||
    die "ISA-L is missing: apt-get install -y libisal-dev (needed by this script only)"
mkdir -p "$dir" || die "cannot create '$dir'"
bin="$dir/inflate-speed"
if [ ! -x "$bin" ] || [ "$here/inflate-speed.c" -nt "$bin" ]; then
    gcc -O2 -std=c11 -D_GNU_SOURCE -o "$bin" "$here/inflate-speed.c" -lisal -lz ||
        die "cannot build '$bin'"
fi

if [ ${#files[@]} -eq 0 ]; then
    files+=("$shared/testdata/hta/trace_diff_control_2022.json.gz"
            "$shared/testdata/hta/ns_resolution_2024.json.gz")
    if [ "$big_mb" != 0 ]; then
        big="$dir/big$big_mb.json"
        if [ ! -s "$big" ] || [ "$here/gen-big-trace.py" -nt "$big" ]; then
            python3 "$here/gen-big-trace.py" -m "$big_mb" "$big" >&2 ||
                die "gen-big-trace.py failed"
        fi
        for lvl in 6 9; do
            if [ ! -s "$big.$lvl.gz" ] || [ "$big" -nt "$big.$lvl.gz" ]; then
                gzip -"$lvl" -c "$big" > "$big.$lvl.gz.tmp" && mv "$big.$lvl.gz.tmp" "$big.$lvl.gz" ||
                    die "cannot gzip '$big'"
            fi
            files+=("$big.$lvl.gz")
        done
        multi="$big.8m.gz"
        if [ ! -s "$multi" ] || [ "$big" -nt "$multi" ]; then
            size=$(stat -c %s "$big")
            step=$(( (size + 7) / 8 ))
            : > "$multi.tmp"
            for k in 0 1 2 3 4 5 6 7; do
                tail -c +$((k * step + 1)) "$big" | head -c "$step" | gzip -6 >> "$multi.tmp"
            done
            mv "$multi.tmp" "$multi" || die "cannot write '$multi'"
        fi
        files+=("$multi")
    fi
fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
table="$dir/inflate-speed.md"
"$bin" -n "$runs" "${files[@]}" > "$dir/inflate-speed.raw" || die "measurement failed" 3
{
    echo "| input | gz MB | out MB | members | zlib s | ISA-L s | zlib MB/s | ISA-L MB/s | ISA-L/zlib |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    while read -r f gz out mem tz ti; do
        awk -v f="$(basename "$f")" -v gz="$gz" -v out="$out" -v mem="$mem" -v tz="$tz" -v ti="$ti" \
            'BEGIN { printf "| %s | %.1f | %.1f | %d | %.4f | %.4f | %.0f | %.0f | %.2f |\n",
                     f, gz / 1e6, out / 1e6, mem, tz, ti, out / 1e6 / tz, out / 1e6 / ti, tz / ti }'
    done < "$dir/inflate-speed.raw"
} > "$table"
if [ $e2e = 1 ]; then
    [ -x "$kprof" ] || die "'$kprof' is missing: build it first with 'make -j2' (or --no-kprof)"
    cp "$kprof" "$dir/kprof-inflate.bin" || die "cannot copy '$kprof'"
    k="$dir/kprof-inflate.bin"
    jn=$(nproc)
    best() { # best wall seconds of $runs runs of "$@", output to /dev/null
        local b=1e30 t0 t1
        for _ in $(seq "$runs"); do
            t0=$EPOCHREALTIME
            "$@" > /dev/null 2>&1 || { echo "inflate-speed: error: $* failed" >&2; return 1; }
            t1=$EPOCHREALTIME
            b=$(awk -v a="$b" -v t="$t0" -v u="$t1" 'BEGIN { d = u - t; print (d < a ? d : a) }')
        done
        echo "$b"
    }
    {
        echo
        echo "| input (kprof analyze --format json) | out MB | zlib -j1 s | ISA-L -j1 s | zlib -j$jn s | ISA-L -j$jn s | -j1 zlib/ISA-L | -j$jn zlib/ISA-L | ISA-L -j$jn MB/s |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
        while read -r f gz out mem tz ti; do
            z1=$(KPROF_INFLATE=zlib best "$k" analyze --format json -j 1 "$f") || exit 3
            i1=$(best "$k" analyze --format json -j 1 "$f") || exit 3
            zn=$(KPROF_INFLATE=zlib best "$k" analyze --format json -j "$jn" "$f") || exit 3
            in=$(best "$k" analyze --format json -j "$jn" "$f") || exit 3
            awk -v f="$(basename "$f")" -v out="$out" -v z1="$z1" -v i1="$i1" -v zn="$zn" -v iN="$in" \
                'BEGIN { printf "| %s | %.1f | %.4f | %.4f | %.4f | %.4f | %.2f | %.2f | %.0f |\n",
                         f, out / 1e6, z1, i1, zn, iN, z1 / i1, zn / iN, out / 1e6 / iN }'
        done < "$dir/inflate-speed.raw"
    } >> "$table"
fi
cat "$table"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load average before: $load_before, after: $load_after" >&2
if [ $record = 1 ]; then
    {
        printf '\n## inflate-speed %s\n\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
        printf -- '- machine: %s CPUs, %s; zlib %s, ISA-L %s (Debian packages)\n' "$(nproc)" \
            "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)" \
            "$(dpkg-query -W -f='${Version}' zlib1g 2>/dev/null)" \
            "$(dpkg-query -W -f='${Version}' libisal2 2>/dev/null)"
        printf -- '- load average before %s, after %s\n' "$load_before" "$load_after"
        printf -- '- command: `bench/inflate-speed.sh %s` (best of %s runs each, alternating;\n' \
            "$(printf '%q ' "${ORIG_ARGS[@]}" | sed 's/ $//')" "$runs"
        printf -- '  in memory, 256 KiB of output a call; MB/s = output MB / s)\n'
        [ $e2e = 1 ] && printf -- '- kprof: %s (built %s); end to end: wall s from bash EPOCHREALTIME, best of %s\n' \
            "$(cd "$root" && git describe --always --dirty)" "$(date -u -r "$kprof" '+%Y-%m-%d %H:%M UTC')" "$runs"
        echo
        cat "$table"
    } >> "$here/RESULTS.md"
    echo "inflate-speed: appended to bench/RESULTS.md" >&2
fi
