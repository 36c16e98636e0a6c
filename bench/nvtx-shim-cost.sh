#!/bin/bash
# nvtx-shim-cost.sh — ns per NVTX push/pop pair (bench/nvtx-shim-cost.c): no injection library,
# and each kprof-shim.so given (default build/kprof-shim.so), runs interleaved, best of ROUNDS.
# The snprintf of the message is in every column (the "none" column is its cost).
#   bench/nvtx-shim-cost.sh [-n PAIRS] [-r ROUNDS] [LABEL=SHIM.so ...]
set -eu
n=1000000 rounds=3
while getopts n:r: o; do case $o in n) n=$OPTARG ;; r) rounds=$OPTARG ;; *) exit 2 ;; esac; done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- "shim=build/kprof-shim.so"
cuda=${CUDA_HOME:-/usr/local/cuda}
bin=$(mktemp -d)/nvtx-shim-cost
trap 'rm -rf "$(dirname "$bin")"' EXIT
cc -O2 -I"$cuda/include" "$(dirname "$0")/nvtx-shim-cost.c" -o "$bin" -ldl
declare -A best
labels=(none)
for a in "$@"; do labels+=("${a%%=*}"); done
for r in $(seq "$rounds"); do
	v=$("$bin" "$n"); [ -z "${best[none]:-}" ] || awk -v a="$v" -v b="${best[none]}" 'BEGIN{exit !(a<b)}' && best[none]=$v || true
	[ -n "${best[none]:-}" ] || best[none]=$v
	for a in "$@"; do
		l=${a%%=*} so=$(realpath "${a#*=}")
		v=$(NVTX_INJECTION64_PATH=$so "$bin" "$n")
		if [ -z "${best[$l]:-}" ] || awk -v a="$v" -v b="${best[$l]}" 'BEGIN{exit !(a<b)}'; then best[$l]=$v; fi
	done
done
printf '| pairs |'; for l in "${labels[@]}"; do printf ' %s ns/pair |' "$l"; done; echo
printf '| %s |' "$n"; for l in "${labels[@]}"; do printf ' %s |' "${best[$l]}"; done; echo
