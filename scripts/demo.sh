#!/bin/sh
# The main job on bundled real traces: analyze, diff, and (with a GPU) capture -> analyze -> diff.
#   scripts/demo.sh [build/kprof]
set -e
K=${1:-build/kprof}
T=testdata/torch211-h100
run() {
	printf '\n$ %s\n' "$*"
	"$@"
}
run "$K" analyze --top 8 "$T/matmul_bf16.json"
run "$K" analyze --group-by op "$T/block_bf16.json"
run "$K" analyze --group-by op-shape --top 6 "$T/conv_fp32.json"
run "$K" analyze --top 5 testdata/hta/trace_diff_control_2022.json.gz
if "$K" diff -h >/dev/null 2>&1; then
	run "$K" diff --key op-shape "$T/matmul_bf16.json" "$T/matmul_fp16.json"
	run "$K" diff --top 10 testdata/hta/trace_diff_control_2022.json.gz testdata/hta/trace_diff_test_2022.json.gz
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	out=${TMPDIR:-/tmp}/kprof-demo
	mkdir -p "$out"
	run "$K" capture --workload matmul --dtype bf16 --shapes custom:4096x4096x4096 -o "$out/bf16.json"
	run "$K" capture --workload matmul --dtype fp16 --shapes custom:4096x4096x4096 -o "$out/fp16.json"
	run "$K" analyze --group-by op "$out/bf16.json"
	run "$K" diff --key op-shape "$out/bf16.json" "$out/fp16.json"
else
	printf '\n(no GPU here: skipping kprof capture; see README)\n'
fi
