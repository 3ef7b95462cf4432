#!/usr/bin/env bash
# emu/speed.sh: how fast the emulator runs the chapters' kernels on this machine, in thread-instructions
# per second (EMU_STATS). A speed of the emulator on a CPU, never a kernel's time on a GPU.
#   bash emu/speed.sh [BUILD_DIR]        (default ./build; EMU_THREADS picks the host threads)
# The batch sizes keep each launch long enough (seconds, not milliseconds) for start-up not to count.
set -euo pipefail
build=${1:-build}
while read -r kernel layer n; do
    line=$(EMU_STATS=1 "$build/conv" run "$kernel" --emulate --layer "$layer" --n "$n" --no-verify 2>&1 |
        grep '^emu: ' || true)
    printf '%-4s %-20s N=%-3s %s\n' "$kernel" "$layer" "$n" "${line:-no statistics: the kernel did not run}"
done <<'JOBS'
02b resnet50/res4_3x3 2
03b resnet50/res4_3x3 2
04d resnet50/res4_3x3 2
05h resnet50/res4_3x3 16
06b resnet50/res4_3x3 16
07b resnet50/res4_3x3 16
08b resnet50/res4_3x3 16
09b mobilenet/dw144_56 8
JOBS
