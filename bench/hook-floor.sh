#!/bin/bash
# bench/hook-floor.sh — what each layer of the torch hook costs a step (issue 24), in ROUNDS
# interleaved rounds of STEPS steps of one program (tests/gpu/cnn_train.py by default, PROG=):
#   plain        the program alone
#   off          kprof capture --torch off (CUPTI, the library shim)
#   off-noblas   off without the library calls' records (--no-blas)
#   off-noapi    off without the API calls' records (--trace-api=none)
#   off-nvml100  off with the clock sampled every 100 ms, not 10 (--sample-period=100)
#   (the three off-* modes run only when MODES names them)
#   noop         off + RecordFunction callbacks that do nothing (bench/rf-floor.py noop)
#   noop-inputs  off + the same asking for the ops' inputs, as the observer does: what torch
#                itself costs any observer with shapes, torch.profiler's included
#   unrecorded   off + the observer's messages composed, not recorded (rf-floor.py unrecorded)
#   obs          off + kprof's op observer (bench/rf-floor.py shapes; no module hooks)
#   hook         kprof capture (the hook: observer, module hooks)
#   prof         torch.profiler(record_shapes=True)
# BUILDS="NAME=DIR ..." adds a mode hook-NAME per build (a folder with kprof, its .so files
# and python/, as bench/hook-ab.sh's), timed like hook.
# Prints, per mode, the best mean step (step_ms) and the medians over rounds of its ratio to
# that round's plain run, for the mean step and for the median step (step_med_ms).
# Builds nothing: build/kprof, build/*.so, build/python/.
#   bench/hook-floor.sh OUTDIR ROUNDS STEPS
set -u
DIR=$1/hook_floor
R=$2
N=$3
KPROF=${KPROF:-build/kprof}
PROG=${PROG:-tests/gpu/cnn_train.py}
HERE=$(dirname "$0")
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1 CNN_DTYPE=bf16 KPROF_PYTHON="${KPROF%/*}/python"
MODES=${MODES:-plain off noop noop-inputs unrecorded obs hook prof}
for b in ${BUILDS:-}; do
	MODES="$MODES hook-${b%%=*}"
	python3 -c "import sys; sys.path.insert(0, '${b#*=}/python'); import torch, kprof_torch_hook as h; so, why = h.observer_so(torch); sys.exit(why if so is None else 0)" ||
		{ echo "FAIL: ${b%%=*}: the op observer does not build"; exit 1; }
done
val() { grep -o "^$2 [0-9.]*" "$1" | tail -1 | awk '{print $2}'; }
python3 -c "import sys; sys.path.insert(0, '${KPROF%/*}/python'); import torch, kprof_torch_hook as h; so, why = h.observer_so(torch); sys.exit(why if so is None else 0)" ||
	{ echo "FAIL: the op observer does not build"; exit 1; }
run() { # MODE ROUND
	local o="$DIR/$1.$2" off=("$KPROF" capture --torch off -o "$DIR/t.json" --)
	case $1 in
	plain) python3 "$PROG" plain "$N" ;;
	off) "${off[@]}" python3 "$PROG" plain "$N" ;;
	off-noblas) "$KPROF" capture --torch off --no-blas -o "$DIR/t.json" -- python3 "$PROG" plain "$N" ;;
	off-noapi) "$KPROF" capture --torch off --trace-api=none -o "$DIR/t.json" -- python3 "$PROG" plain "$N" ;;
	off-nvml100) "$KPROF" capture --torch off --sample-period=100 -o "$DIR/t.json" -- python3 "$PROG" plain "$N" ;;
	noop | noop-inputs) "${off[@]}" python3 "$HERE/rf-floor.py" "$1" "$PROG" plain "$N" ;;
	unrecorded) "${off[@]}" python3 "$HERE/rf-floor.py" unrecorded "$PROG" plain "$N" ;;
	obs) "${off[@]}" python3 "$HERE/rf-floor.py" shapes "$PROG" plain "$N" ;;
	hook) "$KPROF" capture -o "$DIR/t.json" -- python3 "$PROG" plain "$N" ;;
	hook-*)
		local b
		for b in ${BUILDS:-}; do
			[ "hook-${b%%=*}" = "$1" ] && "${b#*=}/kprof" capture -o "$DIR/t.json" -- python3 "$PROG" plain "$N"
		done ;;
	prof) python3 "$PROG" profiler "$N" "$DIR/t.json" ;;
	esac >"$o" 2>&1
	[ -n "$(val "$o" step_ms)" ] || { echo "FAIL: $1 round $2: no step_ms"; tail -3 "$o"; }
	! grep -q "no op observer" "$o" || echo "FAIL: $1 round $2: the hook fell back to emit_nvtx"
}
for r in $(seq "$R"); do
	for m in $MODES; do run "$m" "$r"; done
done
rm -f "$DIR/t.json"
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo "$(basename "$PROG") ($R rounds, $N steps)"
echo "| mode | best ms/step | median ms/step (median step) | per-round ratio, mean step | median | per-round ratio, median step | median |"
echo "|---|---:|---:|---|---:|---|---:|"
for m in $MODES; do
	best= rs=() qs=() meds=()
	for r in $(seq "$R"); do
		v=$(val "$DIR/$m.$r" step_ms) p=$(val "$DIR/plain.$r" step_ms)
		vq=$(val "$DIR/$m.$r" step_med_ms) pq=$(val "$DIR/plain.$r" step_med_ms)
		[ -n "$v" ] && [ -n "$p" ] && [ -n "$vq" ] && [ -n "$pq" ] || continue
		rs+=("$(awk -v a="$v" -v b="$p" 'BEGIN { printf "%.3f", a / b }')")
		qs+=("$(awk -v a="$vq" -v b="$pq" 'BEGIN { printf "%.3f", a / b }')")
		meds+=("$vq")
		best=$(printf '%s\n' $best "$v" | sort -g | head -1)
	done
	echo "| $m | $best | $(printf '%s\n' "${meds[@]}" | median) | ${rs[*]} | $(printf '%s\n' "${rs[@]}" | median)x | ${qs[*]} | $(printf '%s\n' "${qs[@]}" | median)x |"
done
