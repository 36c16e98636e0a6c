#!/bin/sh
# kprof augment on bundled traces: every input byte survives (augcheck removes exactly what
# augment inserts and compares the rest), and kprof analyze reads the output with the same
# rows as the input (csv, kernel and op-shape grouping), and the figures it inserts are
# analyze's: per kernel, the events' "kprof flops"/"kprof bytes" sum to the row's, and the
# counter tracks integrate to them (tests/augment/figures.py); a truncated trace gives JSON
# holding its complete events.
#   KPROF=build/kprof AUGCHECK=build/tests/augcheck tests/augment/check.sh
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
: "${KPROF:=$top/build/kprof}" "${AUGCHECK:=$top/build/tests/augcheck}"
export LC_ALL=C NO_COLOR=1 TZ=UTC
unset KPROF_DEVICE_DB
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
for f in testdata/torch211-h100/block_bf16.json testdata/torch211-h100/sdpa_flash.json \
	testdata/torch211-h100/matmul_bf16.json testdata/torch211-h100/compiled_fp32.json \
	testdata/torch211-h100/conv_fp32.json \
	testdata/torch211-h200-gate/train_a.json.gz testdata/hta/trace_diff_test_2022.json.gz \
	testdata/hta/amd_mi250_rocm62.json.gz testdata/hta/triton_example_2024.json.gz; do
	case $f in
	*.gz) out=$tmp/out.json.gz; gunzip -c "$f" >"$tmp/in.json" ;;
	*) out=$tmp/out.json; cp "$f" "$tmp/in.json" ;;
	esac
	if ! "$KPROF" augment -o "$out" "$f" 2>/dev/null; then
		echo "FAIL augment $f"
		fail=1
		continue
	fi
	case $out in *.gz) gunzip -c "$out" >"$tmp/out.json" ;; esac
	"$AUGCHECK" "$tmp/in.json" "$tmp/out.json" >/dev/null || { echo "FAIL augcheck $f"; fail=1; }
	for g in kernel op-shape; do
		"$KPROF" analyze -n 0 -g $g -f csv "$f" >"$tmp/a" 2>/dev/null
		"$KPROF" analyze -n 0 -g $g -f csv "$out" >"$tmp/b" 2>/dev/null
		cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL analyze -g $g of the augmented $f differs"; fail=1; }
	done
	"$KPROF" analyze -n 0 -g kernel --name=full -f json "$f" >"$tmp/a.json" 2>/dev/null
	python3 tests/augment/figures.py "$tmp/out.json" "$tmp/a.json" >"$tmp/fig" ||
		{ echo "FAIL figures of the augmented $f"; cat "$tmp/fig"; fail=1; }
	n=$((n + 1))
done
# truncated traces: the output is JSON holding the complete events (analyze reads the rows
# it reads from the input, without a truncation warning) with analyze's figures
for f in testdata/bad/truncated.json testdata/bad/truncated-events.json.gz \
	testdata/bad/truncated-events.json.zst; do
	out=$tmp/out.json
	if ! "$KPROF" augment -o "$out" "$f" 2>"$tmp/err"; then
		echo "FAIL augment $f"
		fail=1
		continue
	fi
	grep -q "warning: the trace is truncated: the output holds the input up to byte" "$tmp/err" ||
		{ echo "FAIL augment $f: no truncation warning"; fail=1; }
	for g in kernel op-shape; do
		"$KPROF" analyze -n 0 -g $g -f csv "$f" >"$tmp/a" 2>/dev/null
		"$KPROF" analyze -n 0 -g $g -f csv "$out" >"$tmp/b" 2>"$tmp/err"
		cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL analyze -g $g of the augmented $f differs"; fail=1; }
		! grep -q truncated "$tmp/err" || { echo "FAIL the augmented $f is truncated"; fail=1; }
	done
	"$KPROF" analyze -n 0 -g kernel --name=full -f json "$f" >"$tmp/a.json" 2>/dev/null
	python3 tests/augment/figures.py "$out" "$tmp/a.json" >"$tmp/fig" ||
		{ echo "FAIL figures of the augmented $f"; cat "$tmp/fig"; fail=1; }
	n=$((n + 1))
done
[ $fail = 0 ] && echo "  augment: $n traces: every input byte kept (truncated: the complete events, closed), analyze rows unchanged, figures analyze's"
exit $fail
