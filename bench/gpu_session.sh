#!/usr/bin/env bash
# Everything a session with a lent GPU owes, in one call (GPU time is scarce: build, test and time in
# one go). Run from the repository root on the GPU machine:
#
#   bash bench/gpu_session.sh [conv bench options, e.g. --quick or --kernels 02,03]
#
# 1. builds (finding cuDNN/cuBLAS in Python wheels if the toolkit lacks them) and records the GPU;
# 2. the build and gpu test suites (every GPU kernel against the references);
# 3. compute-sanitizer memcheck and racecheck over every GPU kernel on the fixed shapes + a few random;
# 4. the benchmark (writes bench/results/<gpu>.csv) and the plots.
# Logs go to $OUT (the device tool's return folder) or build/gpu_session: session.log, the CSV, the PNGs.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${OUT:-build/gpu_session}
mkdir -p "$out"
log=$out/session.log
status=0
step() { echo "=== $* ($(date -u +%H:%M:%S))" | tee -a "$log"; }

step build
(source bench/setup.sh) >>"$log" 2>&1 || { echo "build failed" | tee -a "$log"; tail -30 "$log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
    >>"$log" 2>&1

step "test suites: build, gpu"
meson test -C build --suite build --suite gpu --print-errorlogs >>"$log" 2>&1 || status=1
grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped):" build/meson-logs/testlog.txt | tail -40 | tee -a "$log"

step "compute-sanitizer"
if command -v compute-sanitizer >/dev/null 2>&1; then
    gpu_ids=$(./build/conv list | awk '$5 == "gpu" { print $1 }')
    for tool in memcheck racecheck; do
        for id in $gpu_ids; do
            compute-sanitizer --tool "$tool" --error-exitcode 3 ./build/conv check "$id" --random 3 \
                >>"$log" 2>&1 && echo "$tool $id: clean" | tee -a "$log" \
                || { echo "$tool $id: ERRORS (see session.log)" | tee -a "$log"; status=1; }
        done
    done
else
    echo "compute-sanitizer not found" | tee -a "$log"
fi

step "benchmark"
./build/conv bench "$@" >>"$log" 2>&1 || status=1
grep -E "^bench:|FAIL" "$log" | tail -20
python3 bench/plot.py --results bench/results --out docs >>"$log" 2>&1 || status=1
cp bench/results/*.csv docs/*.png "$out"/ 2>/dev/null

step "done (status $status)"
exit $status
