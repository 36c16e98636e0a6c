#!/bin/sh
# Install the Debian packages kprof builds and tests with, if any is missing.
# Needs root or sudo when something is missing; prints what it does.
set -e
# clang and libclang-rt-14-dev: the libFuzzer harnesses `make check` builds (tests/fuzz/)
# python3-distributed: Dask, for contrib/dask/kprof_dask.py and `make check`'s dask-check
# (tests/dask/check.py runs it on a LocalCluster); kprof itself never imports it
# g++: `make check`'s obs-check (tests/obs/) compiles the torch hook's C++ op observer against a
# stand-in of torch's headers; kprof itself is C
# uthash-dev (header only): bench/hmap-vs-uthash.sh, the figures that keep kprof's maps on
# src/base/hmap.c (README "Dependencies and why"); kprof itself includes no uthash header
pkgs="gcc make libc6-dev zlib1g-dev libisal-dev libcmocka-dev libyaml-dev libzstd-dev zstd python3
	clang libclang-rt-14-dev python3-distributed uthash-dev g++"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "kprof: installing Debian packages:$missing"
if [ "$(id -u)" = 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1; then
	sudo="sudo"
else
	echo "kprof: error: need root or sudo to install:$missing" >&2
	exit 4
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq $missing >/dev/null
