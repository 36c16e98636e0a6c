#!/bin/bash
# bench/hook-ab.sh — the torch hook's step time, builds side by side (issue 24): one program
# (tests/gpu/cnn_train.py by default) plain, under `kprof capture` of each build named, and
# under torch.profiler(record_shapes=True), ROUNDS interleaved rounds of STEPS steps; prints
# each mode's best ms/step and the median of its per-round ratios to that round's plain run.
# A build is a folder with kprof, its .so files and python/ (kprof finds both beside itself).
#   bench/hook-ab.sh OUTDIR ROUNDS STEPS NAME=DIR [NAME=DIR ...]
set -u
DIR=$1/hook_ab
R=$2
N=$3
shift 3
PROG=${PROG:-tests/gpu/cnn_train.py}
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1 CNN_DTYPE=bf16
step_ms() { grep -o 'step_ms [0-9.]*' "$1" | tail -1 | awk '{print $2}'; }
names=()
for b in "$@"; do
	name=${b%%=*} dir=${b#*=}
	names+=("$name")
	# each build's op observer compiled before the timed runs (kprof_torch_hook.observer_so)
	python3 -c "import sys; sys.path.insert(0, '$dir/python'); import torch, kprof_torch_hook as h; so, why = h.observer_so(torch); sys.exit(why if so is None else 0)" ||
		{ echo "FAIL: $name: the op observer does not build"; exit 1; }
done
for r in $(seq "$R"); do
	python3 "$PROG" plain "$N" >"$DIR/plain.$r" 2>&1
	for b in "$@"; do
		name=${b%%=*} dir=${b#*=}
		"$dir/kprof" capture -o "$DIR/$name.json" -- python3 "$PROG" plain "$N" >"$DIR/$name.$r" 2>&1
		! grep -q "no op observer" "$DIR/$name.$r" || echo "FAIL: $name fell back to emit_nvtx"
	done
	python3 "$PROG" profiler "$N" "$DIR/prof.json" >"$DIR/prof.$r" 2>&1
done
echo "| mode | best ms/step | per-round ratios to plain | median |"
echo "|---|---:|---|---:|"
for m in plain "${names[@]}" prof; do
	best= rs=()
	for r in $(seq "$R"); do
		v=$(step_ms "$DIR/$m.$r") p=$(step_ms "$DIR/plain.$r")
		[ -n "$v" ] && [ -n "$p" ] || { echo "FAIL: $m round $r: no step_ms"; continue; }
		rs+=("$(awk -v a="$v" -v b="$p" 'BEGIN { printf "%.3f", a / b }')")
		best=$(printf '%s\n' $best "$v" | sort -g | head -1)
	done
	med=$(printf '%s\n' "${rs[@]}" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
	echo "| $m | $best | ${rs[*]} | ${med}x |"
done
rm -f "$DIR"/*.json
