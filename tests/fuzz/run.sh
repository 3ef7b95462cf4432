#!/usr/bin/env bash
# tests/fuzz/run.sh: builds the libFuzzer harnesses with AddressSanitizer and UndefinedBehaviorSanitizer
# and runs them (tests/README.md, "Fuzzing").
#
#   bash tests/fuzz/run.sh [--seconds N] [--out DIR] [--build DIR] [--build-only] [--replay-only] [HARNESS...]
#
#   HARNESS      fuzz_ptx, fuzz_ptx_run, fuzz_npy, fuzz_ptxrun_cli (libFuzzer), cli_mutate (the programs'
#                command lines from outside, tests/fuzz/cli_mutate.py) (default: all five)
#   --seconds N  fuzz each for N seconds (default 15, what CI runs), after replaying its regression
#                inputs (tests/fuzz/regressions/HARNESS/: every finding so far, each must pass)
#   --out DIR    where the binaries, the working corpora and the findings go (default build/fuzz)
#   --jobs N     run N harnesses at once (default 1)
#   --build DIR  the meson build: its emu/*.ptx start the PTX harnesses' corpora, cli_mutate runs its programs
#                (default build)
#
# Exit 0 when no harness found anything; 1 with the finding's file named (crash-*, leak-*, timeout-*,
# oom-* under DIR/findings/HARNESS/; copy it to tests/fuzz/regressions/HARNESS/ once fixed); 77 when
# clang or libFuzzer is missing (the meson test `fuzz` then skips, saying why).
set -uo pipefail
{ # the whole script is read before it runs, so editing it cannot disturb a run in progress
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=15 out=$root/build/fuzz build_only=0 replay_only=0 jobs=1 meson_build=$root/build
harnesses=()
while (($#)); do
    case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --build) meson_build=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --replay-only) replay_only=1; shift ;;
    fuzz_* | cli_mutate) harnesses+=("$1"); shift ;;
    *) echo "run.sh: unknown argument '$1' (see the comment at the top of tests/fuzz/run.sh)"; exit 2 ;;
    esac
done
((${#harnesses[@]})) || harnesses=(fuzz_ptx fuzz_ptx_run fuzz_npy fuzz_ptxrun_cli cli_mutate)
ptx_dir=$meson_build/emu
libfuzzer=()
for h in "${harnesses[@]}"; do [ "$h" = cli_mutate ] || libfuzzer+=("$h"); done

cc=${FUZZ_CC:-}
for candidate in clang clang-14 clang-15 clang-16 clang-17 clang-18; do
    [ -n "$cc" ] && break
    command -v "$candidate" >/dev/null 2>&1 && cc=$candidate
done
if [ -z "$cc" ]; then
    echo "run.sh: skipped: no clang (apt-get install clang libclang-rt-14-dev gives clang with libFuzzer)"
    exit 77
fi
mkdir -p "$out/obj"
probe=$out/obj/probe
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n' >"$probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" >/dev/null 2>&1; then
    echo "run.sh: skipped: $cc cannot link -fsanitize=fuzzer,address,undefined (apt-get install libclang-rt-14-dev)"
    exit 77
fi

# ---- build: each source once, then one link per harness ------------------------------------------------
flags=(-g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -pthread -fno-omit-frame-pointer
       -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
       -I"$root/emu" -I"$root/common/kernel" -I"$root/common/harness" -I"$here" -I"$out/obj")
# the emulator's sources: the ones emu/meson.build builds its core library from (one list, not two)
mapfile -t emu_sources < <(python3 -c '
import re, sys
core = re.search(r"static_library\(\x27emu_core\x27,(.*?)c_args", open(sys.argv[1]).read(), re.S)[1]
print("\n".join(re.findall(r"\x27(\w+)\.c\x27", core)))' "$root/emu/meson.build")
[ "${#emu_sources[@]}" -gt 10 ] || { echo "fuzz: no emulator sources found in emu/meson.build" >&2; exit 1; }
start=$(date +%s)
# the timing model's GPU table, generated from the GPU files as the meson build does (emu/meson.build)
python3 "$root/emu/gpu_table.py" "$out/obj/gpu_table.h.new" "$root"/bench/{h100,a100,a6000}.json || exit 1
cmp -s "$out/obj/gpu_table.h.new" "$out/obj/gpu_table.h" 2>/dev/null || mv "$out/obj/gpu_table.h.new" "$out/obj/gpu_table.h"
objects=()
pids=()
compile() { # SOURCE OBJECT [extra flags]: only when the object is older than the source or a header
    local src=$1 obj=$2
    shift 2
    if [ "$obj" -nt "$src" ] && [ -z "$(find "$root/emu" "$root/common" "$here" "$out/obj/gpu_table.h" \( -name '*.h' -o -name '*.def' \) -newer "$obj" -print -quit)" ]; then
        return 0
    fi
    "$cc" "${flags[@]}" "$@" -c "$src" -o "$obj"
}
for s in "${emu_sources[@]}"; do
    compile "$root/emu/$s.c" "$out/obj/$s.o" & pids+=($!)
    objects+=("$out/obj/$s.o")
done
compile "$root/common/harness/npy.c" "$out/obj/npy.o" & pids+=($!)
compile "$root/emu/ptxrun.c" "$out/obj/ptxrun.o" -include "$here/ptxrun_hooks.h" & pids+=($!)
for h in "${libfuzzer[@]}"; do
    compile "$here/$h.c" "$out/obj/$h.o" & pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
((failed)) && { echo "run.sh: the build failed"; exit 1; }
for h in "${libfuzzer[@]}"; do
    case $h in
    fuzz_ptx) extra=("$out/obj/parse.o" "$out/obj/poison.o" "$out/obj/counters.o") ;; # the parser, its analysis of
        # registers, and its instructions' counter classes
    fuzz_ptx_run) extra=("${objects[@]}") ;;
    fuzz_npy) extra=("$out/obj/npy.o") ;;
    fuzz_ptxrun_cli) extra=("$out/obj/ptxrun.o" "$out/obj/npy.o" "${objects[@]}") ;;
    esac
    "$cc" -fsanitize=fuzzer,address,undefined -pthread "$out/obj/$h.o" "${extra[@]}" -lm -o "$out/$h" ||
        { echo "run.sh: linking $h failed"; exit 1; }
done
echo "run.sh: built ${libfuzzer[*]} in $(($(date +%s) - start)) s"
((build_only)) && exit 0

# ---- where each corpus starts: the committed inputs, the build's own PTX, NumPy-written .npy files -- ----------------------------
start_dirs() { # HARNESS: the folders its run starts from
    local h=$1
    echo "$here/corpus/$h"
    case $h in
    fuzz_ptx | fuzz_ptx_run)
        echo "$root/tests/emu"
        if [ "$h" = fuzz_ptx ] && ls "$ptx_dir"/*.ptx >/dev/null 2>&1; then echo "$out/start/build_ptx"; fi
        ;;
    fuzz_npy) echo "$out/start/numpy" ;;
    esac
}
mkdir -p "$out/start/build_ptx" "$out/start/numpy"
if ls "$ptx_dir"/*.ptx >/dev/null 2>&1; then
    # the build's PTX, each cut to its first 64 KiB (its first kernels): whole files are up to 1.3 MB,
    # and libFuzzer mutates small inputs faster
    for f in "$ptx_dir"/*.ptx; do head -c 65536 "$f" >"$out/start/build_ptx/$(basename "$f")"; done
fi
python3 - "$out/start/numpy" <<'PY' 2>/dev/null || true
import sys, numpy as np
d = sys.argv[1]
for name, a in {"f32_2x3": np.arange(6, dtype=np.float32).reshape(2, 3), "f16_4": np.ones(4, np.float16),
                "f64_scalar": np.float64(2.5), "u32_0": np.zeros(0, np.uint32), "i8x2x2x2": np.ones((2, 2, 2), np.int64),
                "u64_3": np.arange(3, dtype=np.uint64), "i4_5": np.arange(5, dtype=np.int32)}.items():
    np.save(f"{d}/{name}.npy", a)
np.lib.format.write_array(open(f"{d}/v2_f32.npy", "wb"), np.ones(3, np.float32), version=(2, 0))
PY

status=0
run_one() { # HARNESS
    local h=$1 log=$out/logs/$1.log
    mkdir -p "$out/corpus/$h" "$out/findings/$h" "$out/logs"
    if [ "$h" = cli_mutate ]; then # replays tests/fuzz/regressions/cli, then mutates for the time given
        ((replay_only)) && seconds=0
        if python3 "$here/cli_mutate.py" "$meson_build" --seconds "$seconds" --out "$out" >"$log" 2>&1; then
            echo "run.sh: cli_mutate: $(grep -m1 'runs' "$log" | sed 's/^cli_mutate: //'), nothing found"
            return 0
        fi
        echo "run.sh: cli_mutate FOUND something: $(grep -m1 FOUND "$log") (log: $log)"
        return 1
    fi
    local options=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1
                   -artifact_prefix="$out/findings/$h/")
    [ "$h" = fuzz_ptx ] || [ "$h" = fuzz_ptx_run ] && options+=(-dict="$here/ptx.dict")
    [ "$h" = fuzz_ptxrun_cli ] && options+=(-close_fd_mask=1 -detect_leaks=0 -max_len=1024)
    [ "$h" = fuzz_npy ] && options+=(-max_len=4096)
    # every regression input first: each was a finding once, and must pass now
    local regressions=("$here/regressions/$h"/*)
    if [ -e "${regressions[0]}" ]; then
        if ! ASAN_OPTIONS=detect_leaks=1 "$out/$h" "${options[@]}" "${regressions[@]}" >"$log.replay" 2>&1; then
            echo "run.sh: $h fails on a regression input: $(grep -m1 -E 'ERROR|SUMMARY|fuzz:' "$log.replay") (log: $log.replay)"
            return 1
        fi
        echo "run.sh: $h: ${#regressions[@]} regression inputs pass"
    fi
    ((replay_only)) && return 0
    local dirs=()
    while read -r d; do [ -d "$d" ] && dirs+=("$d"); done < <(start_dirs "$h")
    "$out/$h" "${options[@]}" -max_total_time="$seconds" "$out/corpus/$h" "${dirs[@]}" >"$log" 2>&1
    local rc=$?
    local runs
    runs=$(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$')
    if ((rc != 0)); then
        echo "run.sh: $h FOUND something after ${runs:-?} runs: $(grep -m1 -E 'ERROR|fuzz:|SUMMARY' "$log") (input: $(ls -t "$out/findings/$h" | head -1); log: $log)"
        return 1
    fi
    echo "run.sh: $h: ${runs:-?} runs in ${seconds} s, nothing found (corpus: $(ls "$out/corpus/$h" | wc -l) inputs)"
}
running=0
for h in "${harnesses[@]}"; do
    run_one "$h" &
    running=$((running + 1))
    if ((running >= jobs)); then
        wait -n || status=1
        running=$((running - 1))
    fi
done
while ((running > 0)); do
    wait -n || status=1
    running=$((running - 1))
done
exit $status
}
