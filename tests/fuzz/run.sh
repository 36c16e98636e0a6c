#!/bin/sh
# Build and run kprof's libFuzzer harnesses (not part of `make check`: CI time).
#   tests/fuzz/run.sh [-t SECONDS] [-j JOBS] [-r RUNS] [-b | -n] [json|trace|opmodel|nvtxmsg|results|devdb|suite|summary ...]
#     -t SECONDS  run each fuzzer this long (default 60)
#     -j JOBS     run JOBS processes of each fuzzer at once (libFuzzer -jobs/-workers), one
#                 corpus; prints the executions of all of them added up
#     -r RUNS     stop each process after RUNS inputs (and at -t, whichever comes first)
#     -b          build only
#     -n          run the harnesses already built in $O/fuzz (a machine without clang)
# Needs clang with libFuzzer (Debian 12: apt-get install clang libclang-rt-14-dev).
# Binaries, corpora and crash artifacts go to $O/fuzz/ (O defaults to build).
# `make check` builds the harnesses (make fuzz-build = run.sh -b); it runs none.
# FUZZ_CFLAGS adds compiler flags (-DHOSTILE_CHECKS=0: fuzz-trace.c without its control-byte
# checks).  A changed FUZZ_CFLAGS needs a clean build/fuzz/obj.
# Reproduce a crash: build/fuzz/fuzz-NAME build/fuzz/artifacts-NAME/crash-...
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
: "${O:=build}"
: "${CLANG:=clang}"
secs=60
jobs=1
runs=-1
build_only=0
no_build=0
usage="usage: $0 [-t SECONDS] [-j JOBS] [-r RUNS] [-b | -n] [json|trace|opmodel|nvtxmsg|results|devdb|suite|summary ...]"
while [ $# -gt 0 ]; do
	case $1 in
	-t) secs=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	-r) runs=$2; shift 2 ;;
	-b) build_only=1; shift ;;
	-n) no_build=1; shift ;;
	-*) echo "$usage" >&2; exit 2 ;;
	*) break ;;
	esac
done
names=${*:-json trace opmodel nvtxmsg results devdb suite summary}

for v in "$secs" "$jobs" "$runs"; do
	case $v in
	-1 | [1-9] | [1-9]*[0-9]) ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
F=$O/fuzz
if [ $no_build = 1 ]; then
	:
elif ! "$CLANG" --version >/dev/null 2>&1; then
	echo "run.sh: $CLANG not found (apt-get install clang libclang-rt-14-dev)" >&2
	exit 4
else
# devdb-builtin.c is generated from device_db/ by make
[ -f "$O/src/devdb-builtin.c" ] || make -j2 O="$O" "$O/src/devdb-builtin.c"

# what kprof links (the Makefile's LDLIBS: zlib, static zstd and libyaml, libm, ...), so a
# library the sources start to need cannot break only the fuzzers
LDLIBS=${LDLIBS:-$(make -s --no-print-directory print-ldlibs)}

mkdir -p "$F/obj"
CFLAGS="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Iinclude -I$O -I$F \
	-DARENA_MIN_BLOCK=4096 -DTRACE_JSON_WINDOW=4096 -DINPUT_GZ_BUF=4096 \
	-DKPROF_VERSION=\"fuzz\" -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=undefined ${FUZZ_CFLAGS:-}"

# The op names of the model table (the families' rows in src/model/opmodel-*.c), for fuzz-opmodel.c,
# in the table's strcmp order.
sed -n 's/^[[:space:]]*[PS]("\([A-Za-z0-9_]*\)".*/"aten::\1",/p' src/model/opmodel*.c | LC_ALL=C sort >"$F/opnames.tmp"
{
	echo "static const char *const opnames[] = {"
	cat "$F/opnames.tmp"
	echo "};"
} >"$F/opnames.h"
rm -f "$F/opnames.tmp"

# The library: src/*/*.c without src/cli/ (main.c and the cmd-*.c wiring), plus the device
# table.  The suite parser lives in capture/suites/ (it needs capture's option parsers and
# libyaml; no harness reads suites).
objs=
for src in $(ls src/*/*.c | grep -v -e /cli/) "$O/src/devdb-builtin.c"; do
	obj=$F/obj/$(basename "$src" .c).o
	if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find include -newer "$obj" -name '*.h')" ]; then
		echo "  CC   $src"
		$CLANG $CFLAGS -c -o "$obj" "$src"
	fi
	objs="$objs $obj"
done
for n in $names; do
	# capture's NVTX message parser is not in the library: compiled into its harness
	extra=
	[ "$n" = nvtxmsg ] && extra="-Icapture capture/intercept/nvtxmsg.c"
	# the suite parser and the capture options it fills (no CUDA: KPROF_HAVE_CUPTI unset)
	[ "$n" = suite ] &&
		extra="-Icapture capture/suites/suite.c capture/capture.c capture/record/cmsg.c capture/workloads/shapes.c"
	echo "  LINK $F/fuzz-$n"
	$CLANG $CFLAGS -fsanitize=fuzzer -o "$F/fuzz-$n" "tests/fuzz/fuzz-$n.c" $extra $objs $LDLIBS
done
fi
[ $build_only = 1 ] && exit 0

# Seed corpora from testdata/ (copied, so libFuzzer may add to the corpus dirs freely).
seed() {
	s=$F/seeds-$1
	rm -rf "$s"
	mkdir -p "$s"
	case $1 in
	json)
		cp testdata/jsontestsuite/test_parsing/* testdata/bad/*.json "$s/"
		cp testdata/torch211-h100/flop_counter.json "$s/" ;;
	trace)
		cp testdata/bad/* testdata/torch211-h100/flop_counter.json \
			testdata/torch211-h100/compiled_fp32.json "$s/"
		for f in testdata/hta/*.json.gz; do
			[ "$(wc -c <"$f")" -le 65536 ] && cp "$f" "$s/"
		done
		# the first events of each real trace: small enough to mutate quickly
		if command -v python3 >/dev/null; then
			for f in testdata/torch211-h100/*.json; do
				python3 - "$f" "$s/head-$(basename "$f")" <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
ev = d.get("traceEvents", [])
seen, keep = {}, []
for e in ev:
    c = e.get("cat")
    if seen.get(c, 0) < 6:
        seen[c] = seen.get(c, 0) + 1
        keep.append(e)
d["traceEvents"] = keep
json.dump(d, open(sys.argv[2], "w"), indent=0)
PY
			done
		fi ;;
	nvtxmsg)
		# emit_nvtx's and the op observer's forms, a label, and lists past the bounds
		printf 'aten::mm, seq = 12, op_id = 7, sizes = [[4, 8], [8, 2]], input_op_ids = [(3,0), (5,0)]' >"$s/emit"
		printf 'aten::addmm, seq = 5, sizes = [[128], [4, 64], [64, 128], [], []], dtypes = [c10::BFloat16, c10::BFloat16, c10::BFloat16, , ], concrete = ["", "", "", "1", "1."]' >"$s/obs"
		printf 'entire_frame_compile_data: fn_name=f, compile_id=0/0, seq = -1' >"$s/label"
		printf 'aten::convolution, seq = 0, sizes = [[8, 3, 32, 32], [16, 3, 3, 3], [], [], [], [], [], [], []], dtypes = [float, float, , , , , , , ], concrete = ["", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "False", "[0, 0]", "1"]' >"$s/conv"
		printf 'aten::view, seq = 9, sizes = [[1, 1, 1, 1, 1, 1, 1, 1, 1]], dtypes = [float], concrete = [""]' >"$s/dims9" ;;
	results)
		cp testdata/handmade/capture_results.json testdata/handmade/capture_results.csv "$s/" ;;
	suite)
		cp capture/suites/example.yaml "$s/" ;;
	summary)
		# summaries of real traces, two as the ranks of one job, and one alone
		if [ -x "$O/kprof" ]; then
			"$O/kprof" analyze --ranks -f json -o "$s/two.json" testdata/hta/alexnet_2023.json.gz \
				testdata/hta/ns_resolution_2024.json.gz 2>/dev/null || true
			"$O/kprof" analyze --ranks -f json -o "$s/one.json" testdata/hta/amd_mi250_rocm62.json.gz \
				2>/dev/null || true
		fi
		printf '{"kprof_summary_version": 1, "ranks": []}' >"$s/empty.json" ;;
	devdb)
		# the built-in table, and its first stanzas alone (small enough to mutate quickly)
		cp device_db/devices.txt "$s/"
		awk '/^\[/ { n++ } n <= 3' device_db/devices.txt >"$s/three" ;;
	opmodel)
		# bytes are a decoding, not a format: a few hand-made starts
		printf '\000\001\002\000\002\002\005\000\000\002\002\011\005\000\000' >"$s/mm"
		printf '\000\020\005\000\003\002\012\005\000\000\002\012\005\000\000' >"$s/bmm"
		printf '\000\030\004\004\004\002\001\002\003\003\000' >"$s/conv" ;;
	esac
}

rc=0
for n in $names; do
	case $n in
	json) maxlen=8192; dict="-dict=tests/fuzz/json.dict" ;;
	trace) maxlen=65536; dict="-dict=tests/fuzz/trace.dict" ;;
	nvtxmsg) maxlen=4096; dict= ;;
	results) maxlen=16384; dict= ;;
	devdb) maxlen=65536; dict= ;;
	suite) maxlen=8192; dict= ;;
	summary) maxlen=65536; dict="-dict=tests/fuzz/json.dict" ;;
	*) maxlen=512; dict= ;;
	esac
	seed "$n"
	mkdir -p "$F/corpus-$n" "$F/artifacts-$n"
	echo "== fuzz-$n for ${secs}s x $jobs (corpus $F/corpus-$n, crashes in $F/artifacts-$n/)"
	if [ "$jobs" = 1 ]; then
		"$F/fuzz-$n" -max_total_time="$secs" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
			-max_len=$maxlen $dict -artifact_prefix="$F/artifacts-$n/" -print_final_stats=1 \
			"$F/corpus-$n" "$F/seeds-$n" || rc=1
		continue
	fi
	# -jobs: each process logs to fuzz-K.log in the current folder
	rm -rf "$F/logs-$n"
	mkdir -p "$F/logs-$n"
	Fa=$(cd "$F" && pwd)
	(cd "$F/logs-$n" && "$Fa/fuzz-$n" -jobs="$jobs" -workers="$jobs" \
		-max_total_time="$secs" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=$maxlen $(echo "$dict" | sed "s|=|=$top/|") \
		-artifact_prefix="$Fa/artifacts-$n/" -print_final_stats=1 \
		"$Fa/corpus-$n" "$Fa/seeds-$n" >/dev/null 2>&1) || rc=1
	execs=$(cat "$F/logs-$n"/fuzz-*.log | sed -n 's/^stat::number_of_executed_units: *//p' |
		awk '{ s += $1 } END { print s + 0 }')
	found=$(ls "$F/artifacts-$n" | wc -l)
	echo "fuzz-$n: $jobs processes, $execs inputs executed in all, $found findings"
	[ "$found" = 0 ] || { ls "$F/artifacts-$n"; rc=1; }
done
exit $rc
