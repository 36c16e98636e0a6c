#!/usr/bin/env bash
# load-loop.sh: trace_load() of two builds' libkprof.a in a loop, rounds interleaved, on the same
# files: the parse alone (no start-up, link, analysis or rendering), timed in thread CPU seconds
# and the best of many loads, so a 1-5% change shows on a shared machine where ab-speed.sh's
# best whole runs move by more than that.  Prints per input the best seconds of one load for
# each build and new/base; with KPROF_SIMD set, both builds parse at that level.
#
# usage: bench/load-loop.sh [-r ROUNDS] [-n LOADS] BASE_TREE NEW_TREE FILE...
#   -r ROUNDS  rounds, base then new in each (default 6)
#   -n LOADS   loads per round and build (default 10; one process each, so the page cache
#              and the allocator are warm after the first)
#   BASE_TREE, NEW_TREE: kprof source trees with build/libkprof.a built (`make -j2`), e.g. a
#   git worktree of the commit before a change and this one
# Builds a small driver against each tree; records nothing (paste the table into RESULTS.md).

set -u
export LC_ALL=C
rounds=6
loads=10
while [ $# -gt 0 ]; do
    case "$1" in
    -r) rounds=${2:?}; shift 2 ;;
    -n) loads=${2:?}; shift 2 ;;
    -h|--help) sed -n '8,14s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
    *) break ;;
    esac
done
[ $# -ge 3 ] || { sed -n '8,14s/^# \{0,1\}//p' "$0" >&2; exit 2; }
base=$1 new=$2
shift 2
dir=$(mktemp -d /tmp/kprof-load-loop.XXXXXX) || exit 4
trap 'rm -rf "$dir"' EXIT

cat > "$dir/loop.c" <<'EOF'
/* loop N FILE: trace_load(-j 1) N times; prints the least thread CPU seconds of one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kprof/diag.h"
#include "kprof/trace.h"

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int n = argc == 3 ? atoi(argv[1]) : 0;
	double best = 1e30;
	for (int i = 0; i < n; i++) {
		struct kp_trace t;
		struct kp_diag d;
		struct kp_load_opts o = { .jobs = 1 };
		memset(&d, 0, sizeof(d));
		double t0 = cpu_s();
		if (trace_load(&t, argv[2], &o, &d) != 0) {
			fprintf(stderr, "%s: %s\n", argv[2], d.msg);
			return 3;
		}
		double s = cpu_s() - t0;
		best = s < best ? s : best;
		trace_free(&t);
	}
	printf("%.5f\n", best);
	return n > 0 ? 0 : 2;
}
EOF
for side in base new; do
    tree=${!side}
    [ -r "$tree/build/libkprof.a" ] ||
        { echo "load-loop: error: '$tree/build/libkprof.a' is missing: run make -j2 there" >&2; exit 4; }
    ${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -I"$tree/include" -o "$dir/$side" "$dir/loop.c" \
        "$tree/build/libkprof.a" -lz -Wl,-Bstatic -lzstd -lyaml -Wl,-Bdynamic -lm -lpthread -ldl ||
        { echo "load-loop: error: cannot build the driver against '$tree'" >&2; exit 4; }
done

printf '| input | MB | base s | new s | new/base |\n|---|---:|---:|---:|---:|\n'
for f in "$@"; do
    cat "$f" > /dev/null
    b=1e30 n=1e30
    for ((i = 0; i < rounds; i++)); do
        x=$("$dir/base" "$loads" "$f") || exit 3
        b=$(awk -v a="$x" -v c="$b" 'BEGIN { print (a < c ? a : c) }')
        x=$("$dir/new" "$loads" "$f") || exit 3
        n=$(awk -v a="$x" -v c="$n" 'BEGIN { print (a < c ? a : c) }')
    done
    awk -v f="$(basename "$f")" -v mb="$(stat -c %s "$f")" -v b="$b" -v n="$n" \
        'BEGIN { printf "| %s | %.1f | %.5f | %.5f | %.3f |\n", f, mb / 1e6, b, n, n / b }'
done
