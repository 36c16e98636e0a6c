#!/usr/bin/env bash
# json-speed.sh: tokenizer throughput on one core, against reading the same bytes
# through the input layer in the same run (the I/O ceiling).  Modes: every token
# with json_next(); json_next() with every "args" value skipped; every key of an
# event read and its value skipped with json_skip(); every event skipped with
# json_skip_rest(); the whole document skipped with json_skip().
#
# usage: bench/json-speed.sh [options] [FILE]
#   -n, --runs N     best of N runs per mode (default 5)
#   --mb MB          size of the generated trace when no FILE (default 200)
#   --source F       trace to replicate (default: testdata/torch211-h100/block_bf16.json,
#                    else the shared one)
#   --no-record      do not append the results to bench/RESULTS.md
#   --dir DIR        scratch directory (default /tmp/kprof-json-bench)
# Without FILE, bench/gen-big-trace.py replicates the source trace to MB.
# Compiles its own driver with -O2 (no -march) from src/ingest/json*.c and src/ingest/input.c.

set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
runs=5
mb=200
record=1
dir=/tmp/kprof-json-bench
file=
source=$root/testdata/torch211-h100/block_bf16.json
[ -r "$source" ] || source=$root/../shared/testdata/torch211-h100/block_bf16.json
ORIG_ARGS=("$@")

die() { echo "json-speed: error: $*" >&2; exit "${2:-4}"; }
usage() { sed -n '7,14s/^# \{0,1\}//p' "$0" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
    -n|--runs) runs=${2:?}; shift 2 ;;
    --mb) mb=${2:?}; shift 2 ;;
    --source) source=${2:?}; shift 2 ;;
    --no-record) record=0; shift ;;
    --dir) dir=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "json-speed: error: unknown option '$1'" >&2; usage ;;
    *) file=$1; shift ;;
    esac
done

mkdir -p "$dir" || die "cannot create '$dir'"
if [ -z "$file" ]; then
    file="$dir/trace-${mb}mb.json"
    [ -s "$file" ] || python3 "$here/gen-big-trace.py" -s "$source" -m "$mb" "$file" >&2 ||
        die "cannot generate '$file'"
fi
[ -r "$file" ] || die "cannot open '$file'"

cat > "$dir/driver.c" <<'EOF'
/* json-speed driver: one mode over one file, prints "seconds json-bytes tokens". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kprof/diag.h"
#include "kprof/input.h"
#include "kprof/json.h"

struct src {
	struct kp_input in;
	struct kp_diag d;
};

static ssize_t src_read(void *ctx, void *buf, size_t cap)
{
	struct src *s = ctx;
	return input_read(&s->in, buf, cap, &s->d);
}

static int is_key(const struct kp_json_tok *t, const char *k)
{
	return t->type == JT_KEY && t->len == strlen(k) && memcmp(t->s, k, t->len) == 0;
}

int main(int argc, char **argv)
{
	const char *mode = argv[1];
	struct src s;
	if (argc != 3 || input_open(&s.in, argv[2], &s.d) < 0) {
		fprintf(stderr, "usage: driver read|next|skip-args|skip-values|skip-events|"
				"skip-all FILE\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long long ntok = 0, nbytes = 0;
	if (strcmp(mode, "read") == 0) {
		char *buf = malloc(JSON_DEFAULT_WINDOW);
		ssize_t n;
		while ((n = input_read(&s.in, buf, JSON_DEFAULT_WINDOW, &s.d)) > 0)
			nbytes += n;
		free(buf);
	} else {
		struct kp_json p;
		struct kp_json_tok t;
		enum kp_json_type ty = JT_END;
		json_init(&p, src_read, &s, 0);
		if (strcmp(mode, "skip-all") == 0) {
			if (json_skip(&p) == 0)
				ty = json_next(&p, &t);
			else
				ty = JT_ERROR;
		} else {
			int args = strcmp(mode, "skip-args") == 0;
			int values = strcmp(mode, "skip-values") == 0;
			int events = strcmp(mode, "skip-events") == 0;
			int in_events = 0;
			while ((ty = json_next(&p, &t)) != JT_END && ty != JT_ERROR) {
				ntok++;
				if (args && is_key(&t, "args") && json_skip(&p) < 0)
					break;
				if (values && ty == JT_KEY && t.depth >= 3 && json_skip(&p) < 0)
					break;
				if (events && t.depth == 1 && is_key(&t, "traceEvents"))
					in_events = 1;
				else if (events && in_events && ty == JT_OBJ && t.depth == 3 &&
					 json_skip_rest(&p) < 0)
					break;
			}
			if (p.err)
				ty = JT_ERROR;
		}
		if (ty == JT_ERROR) {
			fprintf(stderr, "%s: %s at %lld\n", argv[2], p.err, (long long)p.err_off);
			return 3;
		}
		nbytes = p.base + p.end;
		json_free(&p);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	input_close(&s.in);
	printf("%.6f %lld %lld\n", (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       nbytes, ntok);
	return 0;
}
EOF
cc=${CC:-cc}
$cc -std=c11 -D_GNU_SOURCE -O2 -I"$root/include" -o "$dir/driver" "$dir/driver.c" \
    "$root/src/ingest/json.c" "$root"/src/ingest/json-*.c "$root/src/ingest/input.c" "$root/src/base/arena.c" \
    "$root/src/base/diag.c" "$root/src/base/utf8.c" -lz -lzstd ||
    die "cannot build the driver"

pin=()
command -v taskset >/dev/null && pin=(taskset -c "$(($(nproc) - 1))")
cat "$file" > /dev/null # into the page cache
bytes= # of JSON, inflated when FILE is gzip: from the read mode
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

table="$dir/table.txt"
printf '%-12s %9s %8s %7s\n' mode MB/s seconds x-read > "$table"
base=
for mode in read next skip-args skip-values skip-events skip-all; do
    best=
    for _ in $(seq "$runs"); do
        out=$("${pin[@]}" "$dir/driver" "$mode" "$file") || die "driver $mode failed" 3
        sec=${out%% *}
        [ -n "$bytes" ] || bytes=$(echo "$out" | cut -d' ' -f2)
        best=$(awk -v a="$sec" -v b="${best:-1e9}" 'BEGIN { print (a < b ? a : b) }')
    done
    [ -z "$base" ] && base=$best
    awk -v m="$mode" -v s="$best" -v n="$bytes" -v b="$base" \
        'BEGIN { printf "%-12s %9.0f %8.3f %7.2f\n", m, n / 1e6 / s, s, b / s }' >> "$table"
done
cat "$table"

if [ $record = 1 ]; then
    model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
    commit=$(git -C "$root" describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
    {
        echo
        echo "## json-speed $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        echo
        echo "- machine: $(nproc) CPUs, ${model:-unknown CPU}"
        echo "- commit: $commit; $($cc --version | head -1), -O2"
        echo "- load average before / after: $load_before / $(cut -d' ' -f1-3 /proc/loadavg)"
        args=${ORIG_ARGS[*]:+$(printf ' %q' "${ORIG_ARGS[@]}")}
        size=$(awk -v n="$bytes" 'BEGIN { printf "%.1f MB of JSON", n / 1e6 }')
        echo "- command: \`bench/json-speed.sh$args\` on $(basename "$file") ($size)," \
             "best of $runs, 1 core = \`${pin[*]:-unpinned}\`"
        echo "- MB/s: 10^6 bytes of JSON (inflated for gzip) per second; x-read: speed" \
             "relative to reading the same bytes through input.c (page cache)"
        echo
        sed 's/^/    /' "$table"
    } >> "$here/RESULTS.md"
    echo "json-speed: appended to bench/RESULTS.md" >&2
fi
