#!/bin/sh
# kprof analyze --jobs 1 and --jobs N print the same bytes: stdout (json, every row), stderr
# (every warning with its location, or the error and where) and exit status, on every bundled
# trace (testdata/, jsontestsuite included) and on generated ones: a trace full of traps for
# the chunk cuts (gen-traps.py), a replicated real one (bench/gen-big-trace.py), their gzip and
# zstd, cuts of them at many offsets (truncation; zstd also cut after compression), copies
# with one byte broken (malformed), and one with many threads and ops for the parallel link and
# analysis (gen-threads.py).
# KPROF_PARSE_CHUNK makes chunks of 64 bytes up, so small files split many times.  The -j 3 runs
# take the JSON kernel levels in turn (KPROF_SIMD=scalar, sse2, avx2; the -j 1 run: the CPU's
# best), so every level is held to the same bytes too.
#   KPROF=build/kprof tests/jobs/check.sh
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
: "${KPROF:=$top/build/kprof}"
export LC_ALL=C NO_COLOR=1 TZ=UTC
unset KPROF_DEVICE_DB KPROF_PARSE_CHUNK KPROF_SIMD KPROF_TIMING
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0

# same FILE CHUNK ARGS...: -j 1 against -j 3 with chunks of CHUNK bytes (empty: from the size)
same() {
	f=$1 chunk=$2
	shift 2
	"$KPROF" analyze -j 1 "$@" "$f" >"$tmp/o1" 2>"$tmp/e1"
	s1=$?
	simd=$(echo scalar sse2 avx2 | cut -d' ' -f$((n % 3 + 1)))
	KPROF_SIMD=$simd KPROF_PARSE_CHUNK=$chunk "$KPROF" analyze -j 3 "$@" "$f" >"$tmp/o2" 2>"$tmp/e2"
	s2=$?
	n=$((n + 1))
	if [ $s1 != $s2 ] || ! cmp -s "$tmp/o1" "$tmp/o2" || ! cmp -s "$tmp/e1" "$tmp/e2"; then
		echo "FAIL jobs: $f (chunk $chunk, KPROF_SIMD=$simd, $*): status $s1 vs $s2"
		diff "$tmp/e1" "$tmp/e2" | head -5
		diff "$tmp/o1" "$tmp/o2" | head -5
		fail=1
	fi
}

J="-f json -n 0 --warnings=all --memory"
for f in $(find testdata -name '*.json' -o -name '*.json.gz' -o -name '*.json.zst' | sort); do
	case $f in
	testdata/jsontestsuite/*) same "$f" 64 $J ;;
	*)
		# at most about 2000 and 50 chunks: tiny chunks on a 35 MB trace cost system time
		case $f in
		*.gz) size=$(gzip -dc "$f" 2>/dev/null | wc -c) ;;
		*.zst) size=$(zstd -dc "$f" 2>/dev/null | wc -c) ;;
		*) size=$(wc -c <"$f") ;;
		esac
		small=$((size / 2000 > 64 ? size / 2000 : 64))
		large=$((size / 50 > 5000 ? size / 50 : 5000))
		for c in $small $large; do same "$f" $c $J; done ;;
	esac
done

# the Python frame tree (python_function events, src/ingest/pytree.c): -g module and -g source
for f in testdata/handmade/pytree.json testdata/torch211-h200/*.json.gz; do
	for c in 64 5000; do
		same "$f" $c $J -g module
		same "$f" $c $J -g source
		same "$f" $c -g source -f folded
	done
done

python3 tests/jobs/gen-traps.py "$tmp/traps.json" 3000 || exit 2
python3 bench/gen-big-trace.py -s testdata/torch211-h100/block_bf16.json -m 3 "$tmp/big.json" \
	>/dev/null 2>&1 || exit 2
gzip -c "$tmp/traps.json" >"$tmp/traps.json.gz"
zstd -q -c "$tmp/traps.json" >"$tmp/traps.json.zst"
for g in traps big; do
	f=$tmp/$g.json
	# 64-byte chunks on the 3 MB trace would be 50000 chunks: system time, nothing new
	cs="64 700 5000 65536"
	[ $g = big ] && cs="700 5000 65536"
	for c in $cs; do
		same "$f" $c $J
		same "$f" $c -f json -n 0 -g op-shape --breakdown --launches --warnings=all
	done
	size=$(wc -c <"$f")
	# cuts (truncated files) and one broken byte (malformed) at offsets spread over the file
	for k in 1 2 3 5 7 11 13 17 19 23 29 31; do
		off=$((size * k / 37 + k))
		head -c "$off" "$f" >"$tmp/cut.json"
		same "$tmp/cut.json" 700 $J
		head -c "$off" "$f" | gzip -c >"$tmp/cut.json.gz"
		same "$tmp/cut.json.gz" 5000 $J
		head -c "$off" "$f" | zstd -q -c >"$tmp/cut.json.zst"
		same "$tmp/cut.json.zst" 5000 $J
		zstd -q -c "$f" | head -c $((off / 8 + 4)) >"$tmp/zcut.json.zst"
		same "$tmp/zcut.json.zst" 700 $J
		same "$tmp/zcut.json.zst" 5000 $J --strict
		same "$tmp/cut.json" 5000 $J --strict
		for b in x '"' '}' ']' ','; do
			{ head -c "$off" "$f"; printf '%s' "$b"; tail -c +"$((off + 2))" "$f"; } >"$tmp/bad.json"
			same "$tmp/bad.json" 700 $J
		done
	done
done
same "$tmp/traps.json.gz" 5000 $J
same "$tmp/traps.json.zst" 5000 $J
# the bare array form (depth 1), and events longer than the reader's 64 kB look-back
python3 - "$tmp" <<'PY' || exit 2
import sys
d = sys.argv[1]
s = open(d + "/traps.json", "rb").read()
a = s.index(b'"traceEvents": [') + len(b'"traceEvents": ')
open(d + "/bare.json", "wb").write(s[a:s.rindex(b"]") + 1] + b"\n")
ev = ['{"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7, "ts": %d, "args": {%s,'
      ' "correlation": %d}, "dur": 0}' % (i, 1000 + i * 10,
      ", ".join('"a%d": %d' % (k, k) for k in range(7000)), i) for i in range(14)]
open(d + "/long.json", "w").write('{"traceEvents": [\n' + ",\n".join(ev) + "\n]}\n")
PY
for c in 64 5000 65536; do same "$tmp/bare.json" $c $J; done
for c in 5000 300000; do same "$tmp/long.json" $c $J; done
# chunk sizes from the file size (no KPROF_PARSE_CHUNK): a trace over the 4 MiB threshold
python3 bench/gen-big-trace.py -s testdata/torch211-h100/block_bf16.json -m 5 "$tmp/big5.json" \
	>/dev/null 2>&1 || exit 2
gzip -c "$tmp/big5.json" >"$tmp/big5.json.gz"
zstd -q -c "$tmp/big5.json" >"$tmp/big5.json.zst"
same "$tmp/big5.json" "" $J
same "$tmp/big5.json.gz" "" $J
same "$tmp/big5.json.zst" "" $J
same "$tmp/big5.json" "" -f json -n 0 -g op-shape --breakdown --launches --warnings=all
# KPROF_TIMING: the same report and messages, and one line a stage after them; -j 3 parses
# big5 on 2 threads (its budget, 1 MB, holds 4 chunks of 256 kB)
for j in 1 3; do
	"$KPROF" analyze -j $j $J "$tmp/big5.json" >"$tmp/o1" 2>"$tmp/e1"
	KPROF_TIMING=1 "$KPROF" analyze -j $j $J "$tmp/big5.json" >"$tmp/o2" 2>"$tmp/e2"
	grep -v '^kprof: timing: ' "$tmp/e2" >"$tmp/e3"
	stages=$(sed -n 's/^kprof: timing: \([a-z]*\) [0-9.]* s.*/\1/p' "$tmp/e2" | tr '\n' ' ')
	if ! cmp -s "$tmp/o1" "$tmp/o2" || ! cmp -s "$tmp/e1" "$tmp/e3" ||
		[ "$stages" != "load link analyze write " ] ||
		{ [ $j = 3 ] && ! grep -q '^kprof: timing: load .*(2 threads, chunks read by the workers; ' "$tmp/e2"; }; then
		echo "FAIL jobs: KPROF_TIMING=1 -j $j: stages '$stages'"
		fail=1
	fi
done
# linking and analysis on threads: 40 CPU threads, 60000 ops, sparse ids (sorted id maps)
python3 tests/jobs/gen-threads.py "$tmp/threads.json" 40 60000 || exit 2
same "$tmp/threads.json" "" $J
same "$tmp/threads.json" "" -f json -n 0 -g op --warnings=all
same "$tmp/threads.json" "" -f json -n 0 -g op-shape --breakdown --launches --warnings=all
# two threads of 40000 ops each, out of order: each run checked in ranges and sorted in runs
python3 tests/jobs/gen-threads.py "$tmp/two.json" 2 80000 || exit 2
same "$tmp/two.json" "" -f json -n 0 -g op --warnings=all
# dense ids with repeats: the External id map's array filled by ranges at once (first op wins)
python3 tests/jobs/gen-threads.py "$tmp/dense.json" 4 70000 dense || exit 2
same "$tmp/dense.json" "" -f json -n 0 -g op --warnings=all
# forward/backward conv links (2021 trace without Concrete Inputs) over ops scanned in ranges
python3 bench/gen-big-trace.py -s testdata/legacy-2021/conv_train_2021.json -m 3 "$tmp/conv.json" \
	>/dev/null 2>&1 || exit 2
same "$tmp/conv.json" "" -f json -n 0 -g op --warnings=all
same "$tmp/conv.json" "" -f json -n 0 -g op-shape --warnings=all
[ $fail = 0 ] && echo "  jobs: $n comparisons of -j 1 and -j 3 (KPROF_SIMD scalar, sse2, avx2 in turn):" \
	"stdout, stderr, status identical"
exit $fail
