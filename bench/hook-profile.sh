#!/bin/bash
# bench/hook-profile.sh — where the torch hook's step time goes (issue 24): perf's CPU profile
# of tests/gpu/cnn_train.py's training steps under `kprof capture --torch off` and under
# `kprof capture` with the hook: the program's threads by samples, and its main thread's
# samples by shared object and by symbol, each mode beside the other.  For the GPU machine, which has no
# perf: PERF names a perf binary carried there (its libraries in PERF_LIBS, which the traced
# program does not inherit).  Builds nothing (build/kprof, build/*.so, build/python/).
#   PERF=... PERF_LIBS=... bench/hook-profile.sh [OUTDIR] [STEPS]
set -u
KPROF=${KPROF:-build/kprof}
DIR=${1:-${OUT:-/tmp/kprof-gpu}}/hook_profile
N=${2:-1500}
PERF=${PERF:-perf}
mkdir -p "$DIR"
export LC_ALL=C NO_COLOR=1 CNN_DTYPE=bf16
perf() { LD_LIBRARY_PATH=${PERF_LIBS:-} "$PERF" "$@"; }
echo "perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)"
for m in off hook; do
	opt=""
	[ $m = off ] && opt="--torch off"
	perf record -F 1999 -g -o "$DIR/$m.data" -- env -u LD_LIBRARY_PATH "$KPROF" capture $opt \
		-o "$DIR/$m.json" -- python3 tests/gpu/cnn_train.py plain "$N" >"$DIR/$m.out" 2>&1 ||
		{ echo "FAIL: perf record $m"; tail -5 "$DIR/$m.out"; exit 1; }
	grep step_ms "$DIR/$m.out" | sed "s/^/$m /"
	# the threads by samples; the program's busiest is its main thread (the one stepping;
	# torch names it pt_main_thread), kprof's own process aside
	perf report -i "$DIR/$m.data" --no-children --sort pid --stdio -q \
		--show-nr-samples -g none 2>/dev/null | head -8 >"$DIR/$m.tid"
	tid=$(awk '$3 !~ /:kprof$/ { split($3, a, ":"); print a[1]; exit }' "$DIR/$m.tid")
	perf report -i "$DIR/$m.data" --tid "$tid" --no-children --sort dso --stdio -q \
		--show-nr-samples -g none 2>/dev/null | head -25 >"$DIR/$m.dson"
	perf report -i "$DIR/$m.data" --tid "$tid" --no-children --sort dso,sym --stdio -q \
		--show-nr-samples -g none 2>/dev/null | head -60 >"$DIR/$m.sym"
	# the autograd thread (backward), where every node is a RecordFunction too
	bt=$(awk '$3 ~ /pt_autograd/ { split($3, a, ":"); print a[1]; exit }' "$DIR/$m.tid")
	[ -n "$bt" ] && perf report -i "$DIR/$m.data" --tid "$bt" --no-children --sort dso,sym \
		--stdio -q --show-nr-samples -g none 2>/dev/null | head -40 >"$DIR/$m.bsym"
done
for m in off hook; do
	echo "== $m: the program's threads by samples"
	cat "$DIR/$m.tid"
	echo "== $m: its main thread's samples by shared object"
	cat "$DIR/$m.dson"
done
for m in off hook; do
	echo "== $m: its main thread's top symbols"
	head -45 "$DIR/$m.sym"
	echo "== $m: its autograd thread's top symbols"
	head -30 "$DIR/$m.bsym" 2>/dev/null
done
rm -f "$DIR"/*.json "$DIR"/*.data
