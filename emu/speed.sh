#!/usr/bin/env bash
# emu/speed.sh: how fast the emulator runs the chapters' kernels on this machine, in million
# thread-instructions per second (EMU_STATS), with racecheck on and off. A speed of the emulator on a
# CPU, never a kernel's time on a GPU.
#   bash emu/speed.sh [BUILD_DIR] [--vs OLD_BUILD_DIR] [--runs N]
# BUILD_DIR defaults to ./build. --vs times a second build in the same run, alternating with the first,
# and prints the ratio: how a change to the emulator is measured (build the old commit in a worktree:
# `git worktree add /tmp/old COMMIT && cd /tmp/old && meson setup build && ninja -C build conv emu/libcudaemu.so`).
# Each figure is the median of --runs runs (default 3), on one host thread unless EMU_THREADS says
# otherwise. The batch sizes keep each run a few seconds long, so start-up does not count.
set -euo pipefail
build=build old="" runs=3
while [ $# -gt 0 ]; do
    case "$1" in
    --vs) old=${2:?--vs needs a build folder}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    -*) echo "emu/speed.sh: unknown option $1 (usage: bash emu/speed.sh [BUILD_DIR] [--vs OLD_BUILD_DIR] [--runs N])" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
for dir in "$build" ${old:+"$old"}; do
    [ -x "$dir/conv" ] && [ -f "$dir/emu/libcudaemu.so" ] ||
        { echo "emu/speed.sh: no $dir/conv or $dir/emu/libcudaemu.so: build them first (ninja -C $dir conv emu/libcudaemu.so)" >&2; exit 2; }
done
export EMU_THREADS=${EMU_THREADS:-1} EMU_STATS=1

# one run: "million thread-instructions per second" of the kernel's launch, from EMU_STATS's line (its rate,
# computed before the counts and seconds beside it are rounded for print)
speed() {
    local dir=$1 racecheck=$2 kernel=$3 layer=$4 n=$5 line
    line=$(EMU_RACECHECK=$racecheck "$dir/conv" run "$kernel" --emulate --layer "$layer" --n "$n" --no-verify 2>&1 |
        grep '^emu: ' || true)
    [ -n "$line" ] || { echo "emu/speed.sh: $dir/conv run $kernel printed no statistics: the kernel did not run" >&2; exit 1; }
    awk '{ for (i = 2; i <= NF; i++) if ($i == "million") print $(i-1) }' <<<"$line"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

if [ -n "$old" ]; then
    printf '%-4s %-20s %-4s | %-31s | %-31s\n' "" "" "" "racecheck on: new / old = ratio" "racecheck off: new / old = ratio"
else
    printf '%-4s %-20s %-4s | %-13s | %-13s\n' "" "" "" "racecheck on" "racecheck off"
fi
while read -r kernel layer n; do
    row=$(printf '%-4s %-20s N=%-2s' "$kernel" "$layer" "$n")
    for racecheck in 1 0; do
        new_runs="" old_runs=""
        for ((i = 0; i < runs; i++)); do   # alternate the builds, so a busy moment hits both alike
            new_runs+="$(speed "$build" $racecheck "$kernel" "$layer" "$n")"$'\n'
            [ -z "$old" ] || old_runs+="$(speed "$old" $racecheck "$kernel" "$layer" "$n")"$'\n'
        done
        new_m=$(median <<<"${new_runs%$'\n'}")
        if [ -n "$old" ]; then
            old_m=$(median <<<"${old_runs%$'\n'}")
            row+=$(awk -v a="$new_m" -v b="$old_m" 'BEGIN { printf " | %7.1f / %7.1f = %5.2fx     ", a, b, a / b }')
        else
            row+=$(printf ' | %7.1f M/s  ' "$new_m")
        fi
    done
    echo "$row"
done <<'JOBS'
02b resnet50/res4_3x3 1
03b resnet50/res4_3x3 1
04d resnet50/res4_3x3 1
05h resnet50/res4_3x3 16
06b resnet50/res4_3x3 8
07b resnet50/res4_3x3 8
08b resnet50/res4_3x3 8
09b mobilenet/dw144_56 8
JOBS
echo "million thread-instructions per second, median of $runs runs, $EMU_THREADS host thread(s): the emulator's speed on this CPU, not a GPU's"
