#!/usr/bin/env bash
# emu/speed.sh: how fast the emulator runs the chapters' kernels on this machine, in thread-instructions
# per second (EMU_STATS). A speed of the emulator on a CPU, never a kernel's time on a GPU.
#   bash emu/speed.sh [BUILD_DIR]        (default ./build; EMU_THREADS picks the host threads)
set -euo pipefail
build=${1:-build}
for kernel in 02b 03b 04d 05c 06b 07b; do
    line=$(EMU_STATS=1 "$build/conv" run "$kernel" --emulate --layer resnet50/res4_3x3 --n 2 --no-verify 2>&1 |
        grep '^emu: ' || true)
    printf '%-4s %s\n' "$kernel" "${line:-no statistics: the kernel did not run}"
done
printf '09b  %s\n' "$(EMU_STATS=1 "$build/conv" run 09b --emulate --layer mobilenet/dw144_56 --n 2 --no-verify 2>&1 |
    grep '^emu: ' || echo 'no statistics')"
