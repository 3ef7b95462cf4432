#!/usr/bin/env bash
# Everything that needs a GPU, in one run: the tests, the sanitizers, the benchmark and the records.
# Run from the repository root on the GPU machine:
#
#   bash bench/gpu_session.sh                 all steps below, in order
#   bash bench/gpu_session.sh test [NAME ...] 1-2 only, or just the meson tests named (gpu_ch05 ...)
#   bash bench/gpu_session.sh sanitize [NN ...]  1 and 3, for the chapters named (default: all)
#   bash bench/gpu_session.sh bench [opts]    1 and 4; opts go to `conv bench` (e.g. --quick, --kernels 05)
#   bash bench/gpu_session.sh fusion          1 and 5, then 4's plots and tables
#   bash bench/gpu_session.sh examples        1 and 6, then 4's plots and tables
#   bash bench/gpu_session.sh profile         1 and 7
#   bash bench/gpu_session.sh validation [PART ...]  8 alone (it needs no build), or only its parts named:
#                                             sgemm, latency, throughput, shared
#
# 1. build (finding cuDNN/cuBLAS in Python wheels if the toolkit lacks them), record the GPU;
# 2. the build and gpu test suites (every GPU kernel against the references, PyTorch, determinism);
# 3. compute-sanitizer memcheck and racecheck over every GPU kernel on the fixed awkward shapes;
# 4. the benchmark (writes bench/results/<gpu>.csv; chapter 09 on the mobilenet suite), the plots and
#    each chapter's results table;
# 5. chapter 05's fused epilogues on the resnet50 suite (05i fused, 05l unfused, cuDNN's fused call);
# 6. chapter 10's ResNet block benchmark (rows 10a, 10b in the same CSV) and chapter 11's training run
#    on both backends (its loss curves and plot into docs/);
# 7. Nsight Compute over every GPU kernel on its chapter's reference layers (bench/ncu_profile.py: machine
#    instructions, warp states; bench/results/ncu/<gpu>.csv), then the model's table against it (emu/README.md);
# 8. the timing model's checks, measured: the SGEMM worklog's six kernels and cuBLAS timed at 4096^3
#    (bench/validation/sgemm_time.cu), then each kernel profiled by Nsight Compute, as a whole and per machine
#    instruction; the load latencies by pointer chases (bench/validation/latency.cu); throughputs and
#    instruction latencies (bench/validation/throughput.cu, on a Hopper GPU); shared memory's wavefronts per
#    access width and address pattern, counted by Nsight Compute and timed (bench/validation/shared_wavefronts.cu); into
#    bench/results/validation/ (bench/model_sgemm.py and bench/model_microbench.py compare the model with them).
# Logs go to build/gpu_session (or the folder OUT names): session.log, the CSV, PNGs.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
what=${1:-all}
[ $# -gt 0 ] && shift
out=${OUT:-build/gpu_session}
mkdir -p "$out"
log=$out/session.log
status=0
step() { echo "=== $* ($(date -u +%H:%M:%S))" | tee -a "$log"; }

# 8: the SGEMM worklog's kernels timed and profiled, the chases and throughputs measured (needs no build)
validation() {
    local parts=${*:-sgemm latency throughput shared}
    step "the timing model's checks, measured: $parts"
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    key=$(python3 -c 'import sys; sys.path.insert(0, "bench"); from ncu_profile import gpu_key; print(gpu_key(sys.argv[1]))' "$gpu")
    folder=bench/results/validation
    mkdir -p "$folder"
    nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    for part in $parts; do
        case $part in
            sgemm|latency|throughput|shared) validation_$part ;;
            *) echo "gpu_session.sh: no validation part '$part' (sgemm, latency, throughput, shared)"; exit 2 ;;
        esac
    done
    ls -l "$folder" | tee -a "$log"
}

# the SGEMM worklog's six kernels and cuBLAS timed, then counted by Nsight Compute
validation_sgemm() {
    local program=${TMPDIR:-/tmp}/sgemm_time
    "$nvcc" -O3 -arch=native -Icommon/kernel bench/validation/sgemm_time.cu common/kernel/check.c -lcublas \
        -o "$program" >>"$log" 2>&1 || { echo "sgemm_time: nvcc failed"; tail -20 "$log"; exit 1; }
    "$program" 4096 >"$folder/sgemm_$key.csv" 2>>"$log" || status=1
    cat "$folder/sgemm_$key.csv" | tee -a "$log"
    # the same launches Nsight Compute counts (as bench/ncu_profile.py does: clocks left as they are)
    "$ncu" --clock-control none --section WarpStateStats --section LaunchStats \
        --metrics gpu__time_duration.sum,smsp__inst_executed.sum --csv --page raw -k regex:^sgemm_ \
        "$program" 4096 --once >"$folder/sgemm_${key}_ncu.csv" 2>>"$log" || status=1
    # and where their loads were served: the L1's and the L2's hit rates, sectors per request, DRAM bytes
    "$ncu" --clock-control none --csv --page raw -k regex:^sgemm_ --metrics \
        l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,sm__cycles_elapsed.avg \
        "$program" 4096 --once >"$folder/sgemm_${key}_memory.csv" 2>>"$log" || status=1
    # each kernel per machine instruction: executions and warp-state samples
    for name in $(grep -o '"sgemm_[a-z0-9_]*"' bench/validation/sgemm_time.cu | tr -d '"' | grep -vx sgemm_time); do
        "$ncu" --clock-control none --section SourceCounters -k "$name" -f -o "${TMPDIR:-/tmp}/$name" "$program" 4096 --once \
            >>"$log" 2>&1 || status=1
        "$ncu" -i "${TMPDIR:-/tmp}/$name.ncu-rep" --page source --print-source sass --csv 2>>"$log" |
            gzip -9 >"$folder/sgemm_${key}_sass_$name.csv.gz"
    done
}

# the load latencies by pointer chases, as bench/model_microbench.py's chases walk them
validation_latency() {
    "$nvcc" -O3 -arch=native -Icommon/kernel bench/validation/latency.cu common/kernel/check.c \
        -o "${TMPDIR:-/tmp}/latency" >>"$log" 2>&1 || status=1
    "${TMPDIR:-/tmp}/latency" >"$folder/latency_$key.csv" 2>>"$log" || status=1
    cat "$folder/latency_$key.csv" | tee -a "$log"
}

# throughputs and instruction latencies; its wgmma needs the Hopper-specific target, not what native gives
validation_throughput() {
    if [ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)" = 9.0 ]; then
        "$nvcc" -O3 -arch=sm_90a -Icommon/kernel bench/validation/throughput.cu common/kernel/check.c \
            -o "${TMPDIR:-/tmp}/throughput" >>"$log" 2>&1 || status=1
        timeout 300 "${TMPDIR:-/tmp}/throughput" >"$folder/throughput_$key.csv" 2>>"$log" || status=1
        cat "$folder/throughput_$key.csv" | tee -a "$log"
    else
        echo "throughput: written for a Hopper GPU (wgmma), not run on this one" | tee -a "$log"
    fi
}

# shared memory's wavefronts per access width and pattern: timed, then each access counted by Nsight Compute
validation_shared() {
    local program=${TMPDIR:-/tmp}/shared_wavefronts
    "$nvcc" -O3 -arch=native -Icommon/kernel bench/validation/shared_wavefronts.cu common/kernel/check.c \
        -o "$program" >>"$log" 2>&1 || { status=1; return; }
    "$program" >"$folder/shared_wavefronts_$key.csv" 2>>"$log" || status=1
    "$program" --count >"$folder/shared_wavefronts_${key}_launches.csv" 2>>"$log" || status=1
    "$ncu" --clock-control none --csv --page raw --metrics \
        l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,\
smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum \
        "$program" --count 2>>"$log" | gzip -9 >"$folder/shared_wavefronts_${key}_ncu.csv.gz" || status=1
    head -c 3000 "$folder/shared_wavefronts_$key.csv" | tee -a "$log"
}

if [ "$what" = validation ]; then
    validation "$@"
    step "done (status $status)"
    exit $status
fi

step build
(source bench/setup.sh) >>"$log" 2>&1 || { echo "build failed"; tail -30 "$log"; exit 1; }
grep -E "cuDNN|setup:" "$log" | tail -3
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
    2>&1 | tee -a "$log"
# which chapters have a GPU measurement of their code as it is now (before this run's)
python3 bench/measured.py 2>&1 | tee -a "$log"

if [ "$what" = all ] || [ "$what" = test ]; then
    # the tests named after `test` (e.g. `test gpu_ch05 gpu_ch08`: a 10-minute device call may not hold
    # the whole gpu suite), else the build and gpu suites
    step "tests: ${*:-the build and gpu suites}"
    if [ $# -gt 0 ]; then
        meson test -C build --print-errorlogs "$@" >>"$log" 2>&1 || status=1
    else
        meson test -C build --suite build --suite gpu --print-errorlogs >>"$log" 2>&1 || status=1
    fi
    grep -E "^ *[0-9]+/[0-9]+ " build/meson-logs/testlog.txt | tee -a "$log"
    grep -E "^FAIL|pass, [1-9][0-9]* fail" build/meson-logs/testlog.txt | head -40
    # the PyTorch cross-check's table, as the script wrote it (commit it: it is the record in docs/)
    cp build/tests/torch_crosscheck.md docs/ 2>/dev/null && cp docs/torch_crosscheck.md "$out"/
fi

if [ "$what" = all ] || [ "$what" = sanitize ]; then
    step "compute-sanitizer"
    if command -v compute-sanitizer >/dev/null 2>&1; then
        # the chapters named after `sanitize` (e.g. `sanitize 05 08`: a 10-minute device call may not
        # hold them all), else every chapter with GPU kernels
        chapters=${*:-$(./build/conv list | awk '$5 == "gpu" { print substr($1, 1, 2) }' | sort -u)}
        # every (chapter, tool) at once, each in its own process and log: one after another they take
        # longer than a device call (racecheck alone is minutes per chapter), all together a few minutes
        runs=()
        for chapter in $chapters; do
            tools="memcheck racecheck"
            # chapter 08 synchronizes through mbarriers and async proxies: synccheck too
            [ "$chapter" = 08 ] && tools="$tools synccheck"
            for tool in $tools; do
                # every GPU kernel of the chapter on the 17 fixed awkward shapes, in one process
                (timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 3 \
                    ./build/conv check "$chapter" --random 0 >"$out/sanitize_${tool}_$chapter.log" 2>&1
                 echo $? >"$out/sanitize_${tool}_$chapter.rc") &
                runs+=("$tool $chapter")
            done
        done
        wait
        for run in "${runs[@]}"; do
            read -r tool chapter <<<"$run"
            cat "$out/sanitize_${tool}_$chapter.log" >>"$log"
            case $(cat "$out/sanitize_${tool}_$chapter.rc") in
            0) verdict=clean ;;
            124) verdict="timed out after 300 s" ;;
            *) verdict="ERRORS (see session.log)"; status=1 ;;
            esac
            echo "$tool chapter $chapter: $verdict" | tee -a "$log"
        done
    else
        echo "compute-sanitizer not found" | tee -a "$log"
    fi
fi

if [ "$what" = all ] || [ "$what" = bench ]; then
    step "benchmark"
    ./build/conv bench "$@" >>"$log" 2>&1 || status=1
    # chapter 09's depthwise kernels support no resnet50 layer: they are measured on their own suite
    ./build/conv bench --suite mobilenet --kernels 09 "$@" >>"$log" 2>&1 || status=1
    grep -E "^bench:|FAIL" "$log" | tail -20
fi

if [ "$what" = all ] || [ "$what" = fusion ]; then
    step "fused epilogues on resnet50: 05i fused vs 05l unfused vs cuDNN's fused call"
    # the kernels and epilogues of the comparison: their registry rows' (compared_epilogues)
    compared=$(./build/conv list --json | python3 -c '
import json, sys
rows = [k for k in json.load(sys.stdin) if k["compared_epilogues"]]
print(",".join(k["id"] for k in rows), *dict.fromkeys(e for k in rows for e in k["compared_epilogues"]))')
    read -r fused_kernels fused_epilogues <<<"$compared"
    for ops in $fused_epilogues; do
        ./build/conv bench --kernels "$fused_kernels" --epilogue "$ops" >>"$log" 2>&1 || status=1
    done
    grep -E "^bench:|FAIL" "$log" | tail -6
fi

if [ "$what" = all ] || [ "$what" = examples ]; then
    step "chapter 10: the ResNet basic block, fused / unfused / cuDNN"
    ./build/chapters/10_resnet_block/resnet_block bench >>"$log" 2>&1 || status=1
    tail -12 "$log"
    step "chapter 11: training, our kernels and cuDNN side by side"
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    # the record bench/measured.py looks for
    record=docs/gpu_ch11_train_cnn_compare.csv
    ./build/chapters/11_train_cnn/train_cnn --compare --log "$record" >>"$log" 2>&1 || status=1
    tail -8 "$log"
    python3 chapters/11_train_cnn/plot_loss.py "$record" --out docs/train_cnn_loss.png \
        --title "train_cnn --compare on ${gpu:-unknown GPU}: batch loss" >>"$log" 2>&1 || status=1
    cp "$record" docs/train_cnn_loss.png "$out"/ 2>/dev/null
fi

if [ "$what" = all ] || [ "$what" = profile ]; then
    step "Nsight Compute: every GPU kernel on its chapter's reference layers"
    python3 bench/ncu_profile.py --raw "$out/ncu" --deadline "${NCU_DEADLINE:-600}" >>"$log" 2>&1 || status=1
    tail -2 "$log"
    python3 bench/model_validation.py --write >>"$log" 2>&1 || status=1
    cp bench/results/ncu/*.csv "$out"/ 2>/dev/null
fi

if [ "$what" = all ] || [ "$what" = bench ] || [ "$what" = fusion ] || [ "$what" = examples ]; then
    python3 bench/plot.py --results bench/results --out docs >>"$log" 2>&1 || status=1
    # each chapter's results table, generated from the GPUs' CSVs (emulator.csv holds counts, no times)
    python3 bench/tables.py $(ls bench/results/*.csv | grep -v '/emulator\.csv$') --readmes . --marker results \
        >>"$log" 2>&1 || status=1
    cp bench/results/*.csv docs/*.png "$out"/ 2>/dev/null
fi

[ "$what" = all ] && validation
step "done (status $status)"
exit $status
