#!/usr/bin/env bash
# emu/speed.sh: how fast the emulator runs the chapters' kernels on this machine, in million
# thread-instructions per second (EMU_STATS), with racecheck on and off. A speed of the emulator on a
# CPU, never a kernel's time on a GPU.
#   bash emu/speed.sh [BUILD_DIR] [--vs OLD_BUILD_DIR] [--runs N]
#   bash emu/speed.sh [BUILD_DIR] --host-instructions [--vs OLD_BUILD_DIR]
# BUILD_DIR defaults to ./build. --vs times a second build in the same run, alternating with the first,
# and prints the ratio: how a change to the emulator is measured (build the old commit in a worktree:
# `git worktree add /tmp/old COMMIT && cd /tmp/old && meson setup build && ninja -C build conv emu/libcudaemu.so`).
# Each figure is the median of --runs runs (default 3), on one host thread unless EMU_THREADS says
# otherwise. A run's figure is its launch's own rate (EMU_STATS), so start-up does not count; a launch lasts
# from a fraction of a second to a few seconds.
# A busy or shared machine's speed varies by several percent from run to run, more than a small change
# to the emulator gains; --host-instructions counts instead what does not vary: the host instructions
# each thread-instruction of the launch took (valgrind's callgrind, the launch alone, one run of each
# kernel at N=1 on the smaller problem the job list gives it; about fifty times slower than running it).
# Fewer is faster on the same CPU, as a rule, not always: memory traffic and branches cost time that a
# count does not see.
set -euo pipefail
build=build old="" runs=3 count=""
usage="usage: bash emu/speed.sh [BUILD_DIR] [--vs OLD_BUILD_DIR] [--runs N | --host-instructions]"
while [ $# -gt 0 ]; do
    case "$1" in
    --vs) old=${2:?--vs needs a build folder}; shift 2 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --host-instructions) count=1; shift ;;
    -*) echo "emu/speed.sh: unknown option $1 ($usage)" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
measure=speed unit=M/s
[ -z "$count" ] || measure=host_instructions unit=inst runs=1
if [ -n "$count" ] && ! command -v valgrind >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "emu/speed.sh: installing valgrind with apt-get (for --host-instructions)" >&2
        apt-get install -y -qq valgrind >/dev/null 2>&1 ||
            { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq valgrind >/dev/null 2>&1; } || true
    fi
    command -v valgrind >/dev/null 2>&1 ||
        { echo "emu/speed.sh: --host-instructions needs valgrind (Debian: apt-get install valgrind)" >&2; exit 2; }
fi
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

# one run under callgrind: host instructions per thread-instruction of the kernel's launch (emu_launch alone).
# valgrind cannot follow conv's restart on the emulator (common/harness/device.c execs /proc/self/exe with
# the library preloaded), so the restart's environment is given here and conv starts on the emulator.
host_instructions() {
    local dir=$1 racecheck=$2 kernel=$3 layer=$4 library out stats instructions
    shift 5   # the problem's size past the layer: the job's smaller one
    library=$(readlink -f "$dir/emu/libcudaemu.so")
    out=$(mktemp)
    stats=$(EMU_RACECHECK=$racecheck CONV_EMULATOR_LOADED=$library LD_PRELOAD=$library valgrind --tool=callgrind \
        --toggle-collect=emu_launch --callgrind-out-file="$out" "$dir/conv" run "$kernel" --emulate --layer "$layer" \
        --n 1 "$@" --no-verify --no-cudnn 2>&1 | grep -E '^emu: |Collected' || true)
    rm -f "$out"
    instructions=$(awk '/Collected/ { print $NF }' <<<"$stats")
    [ -n "$instructions" ] && grep -q '^emu: ' <<<"$stats" ||
        { echo "emu/speed.sh: $dir/conv run $kernel under valgrind gave no count: the kernel did not run" >&2; exit 1; }
    awk -v ir="$instructions" '/^emu: / { for (i = 1; i < NF; i++) if ($i == "launches,") printf "%.1f\n", ir / $(i+1) }' \
        <<<"$stats"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

if [ -n "$count" ] && [ -n "$old" ]; then
    printf '%-4s %-20s %-4s | %-31s | %-31s\n' "" "" "" "racecheck on: new / old = faster" "racecheck off: new / old = faster"
elif [ -n "$old" ]; then
    printf '%-4s %-20s %-4s | %-31s | %-31s\n' "" "" "" "racecheck on: new / old = ratio" "racecheck off: new / old = ratio"
else
    printf '%-4s %-20s %-4s | %-13s | %-13s\n' "" "" "" "racecheck on" "racecheck off"
fi
while read -r kernel layer n smaller; do
    [ -z "$count" ] || n=1
    row=$(printf '%-4s %-20s N=%-2s' "$kernel" "$layer" "$n")
    for racecheck in 1 0; do
        new_runs="" old_runs=""
        for ((i = 0; i < runs; i++)); do   # alternate the builds, so a busy moment hits both alike
            new_runs+="$($measure "$build" $racecheck "$kernel" "$layer" "$n" $smaller)"$'\n'
            [ -z "$old" ] || old_runs+="$($measure "$old" $racecheck "$kernel" "$layer" "$n" $smaller)"$'\n'
        done
        new_m=$(median <<<"${new_runs%$'\n'}")
        if [ -n "$old" ]; then
            old_m=$(median <<<"${old_runs%$'\n'}")
            # a speed-up either way: more thread-instructions a second, or fewer host instructions for each
            row+=$(awk -v a="$new_m" -v b="$old_m" -v count="$count" \
                'BEGIN { printf " | %7.1f / %7.1f = %5.2fx     ", a, b, count ? b / a : a / b }')
        else
            row+=$(printf ' | %7.1f %-4s ' "$new_m" "$unit")
        fi
    done
    echo "$row"
done <<'JOBS'
02b resnet50/res4_3x3 1 --k 16
03b resnet50/res4_3x3 1 --k 16
04d resnet50/res4_3x3 1 --k 16
05h resnet50/res4_3x3 16 --k 16
06b resnet50/res4_3x3 8 --k 16
07b resnet50/res4_3x3 8 --k 16
08b resnet50/res4_3x3 8 --k 16
09b mobilenet/dw144_56 8 --c 16 --k 16 --groups 16
JOBS
if [ -n "$count" ]; then
    echo "host instructions per thread-instruction (callgrind, the launch alone, N=1 and the smaller problems above, one host thread): the emulator's cost, not a GPU's"
else
    echo "million thread-instructions per second, median of $runs runs, $EMU_THREADS host thread(s): the emulator's speed on this CPU, not a GPU's"
fi
